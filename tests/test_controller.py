"""plugin/controller/hooks.py: the gathering process's hooks: one summary at the end from the run's one
result, a failed gate failing the exit status, the outputs named."""

import pytest

from helpers import FIXTURES, make_project

MINI = str(FIXTURES / "mini")


def test_the_summary_ends_with_the_verdict_and_a_failed_gate_fails_the_run(pytester, tmp_path):
    make_project(pytester)
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        f"--dataset={MINI}", "--detector=center", "--grounding-min-accuracy=0.9", f"--grounding-json={report}"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = result.stdout.lines
    summary = next(i for i, line in enumerate(lines) if "grounding summary" in line)
    assert any(line.startswith("gate FAILED: detector center overall") for line in lines[summary:])
    assert any(line == f"grounding JSON report: {report}" for line in lines[summary:])
    verdict = next(line for line in lines[summary:] if line.startswith("verdict: "))
    assert "1 of 1 gates FAILED" in verdict and report.exists()


def test_a_run_that_scores_nothing_writes_no_summary(pytester):
    make_project(pytester)
    result = pytester.runpytest(f"--dataset={MINI}", "--detector=center", "-k", "no-such-sample")
    assert "grounding summary" not in result.stdout.str()
