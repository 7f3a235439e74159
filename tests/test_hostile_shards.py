"""Hostile inputs (issue 42; docs/security.md says what each class guarantees). A predictions file is held by one
run at a time, a shard resumes only its own share, and shard counts are bounded by the samples.
"""

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import FIXTURES, REPO, SERIAL
from hostile import no_crash, run_suite

MINI = FIXTURES / "mini"
SUITE = (REPO / "suites" / "test_grounding.py").read_text()


@pytest.fixture
def workers():
    """Serial runs: the refusals here are usage errors raised before any worker starts."""
    return []


# -- one predictions file, one run ---------------------------------------------------------------------------


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_a_shard_resuming_another_shards_file_is_refused(tmp_path, workers):
    predictions = tmp_path / "shared.jsonl"
    common = (f"--dataset={MINI}", "--detector", "center", "--grounding-predictions", str(predictions))
    first = run_suite(tmp_path / "one", *common, "--grounding-shard", "1/2", *workers)
    assert predictions.is_file(), first.stdout[-2000:]
    before = predictions.read_text()
    second = run_suite(tmp_path / "two", *common, "--grounding-shard", "2/2", "--grounding-resume", *workers)
    text = no_crash(second)
    assert second.returncode == 4 and "outside shard 2/2's share" in text, text[-2000:]
    assert predictions.read_text() == before  # the other shard's lines are not rewritten


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_a_predictions_file_held_by_another_run_is_refused_naming_it(tmp_path, workers):
    from pytest_grounding.store.reports import PredictionsHold

    predictions = tmp_path / "shared.jsonl"
    hold = PredictionsHold(predictions, "pid 4242 on ci-7: pytest --grounding-shard 1/3")
    try:
        result = run_suite(
            tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-predictions", str(predictions),
            *workers,
        )  # fmt: skip
    finally:
        hold.release()
    text = no_crash(result)
    assert result.returncode == 4 and "being written by another run (pid 4242 on ci-7" in text, text[-2000:]
    again = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-predictions", str(predictions)
    )
    assert again.returncode == 1 and len(predictions.read_text().splitlines()) == 8  # released: the next run writes
    assert not list(tmp_path.glob(".shared.jsonl.lock"))


@pytest.mark.slow
def test_concurrent_runs_never_share_a_predictions_file(tmp_path):
    predictions = tmp_path / "one.jsonl"
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "test_grounding.py").write_text(SUITE)
    environ = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_grounding.py", f"--dataset={MINI}"]
    command += ["--detector", "center", "--grounding-predictions", str(predictions)]
    runs = [
        subprocess.Popen(command, cwd=folder, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(3)
    ]
    outputs = [(run.communicate(timeout=120)[0], run.returncode) for run in runs]
    refused = [code for text, code in outputs if "being written by another run" in text]
    wrote = [code for text, code in outputs if "being written by another run" not in text]
    assert all(code == 4 for code in refused) and all(code == 1 for code in wrote)  # 1: the misses fail
    lines = predictions.read_text().splitlines()
    assert wrote and len(lines) == 8  # one run's file, whole (each writer starts it afresh)
    assert all(json.loads(line)["dataset"] == "mini" for line in lines)


# -- shard counts bounded by the samples ---------------------------------------------------------------------


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize(
    "args, env, message",
    [
        (["--grounding-shard", "1/100000000"], None, "at most 10,000 shards"),
        (["--grounding-shard", "env"], {"GROUNDING_SHARD": "1/" + "1" + "0" * 20}, "at most 10,000 shards"),
        (["--grounding-shard", "3/2"], None, "1 <= K <= N"),
        (["--grounding-shard", "9/9"], None, "9 shards of 8 samples"),
    ],
)
@SERIAL
def test_shard_counts_are_bounded_by_the_samples(tmp_path, args, env, message, workers):
    started = time.monotonic()
    result = run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", "center", *args, *workers, env=env)
    text = no_crash(result)
    assert result.returncode == 4 and message in text, text[-2000:]  # one usage error, before any worker
    assert time.monotonic() - started < 60


def test_the_plan_allocates_for_the_samples_not_the_shards():
    from pytest_grounding.datasets import load_dataset, sharding

    samples = load_dataset(str(MINI)).samples
    started = time.monotonic()
    assert sharding.plan(samples, 10**12) == sharding.plan(samples, len(samples))
    assert time.monotonic() - started < 1
