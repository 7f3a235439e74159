"""ci/github-actions.yml, shown working: its commands run as a script on the embedded default, with a
baseline, and its job summary is the markdown of `python -m pytest_grounding summary`. A stand-in
detector replays answers from a file the test writes (what a model change changes): the gate is what
is under test here, not a model. The markdown writer's units come first."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import FIXTURES, REPO
from pytest_grounding.cli.main import main
from pytest_grounding.render.markdown import report_markdown

WORKFLOW = REPO / "ci" / "github-actions.yml"
LIMIT = 24  # samples of the embedded default: both element types, a few apps; seconds, not minutes

REPLAY_CONFTEST = """
import json
import os

from pytest_grounding.core.types import Prediction


class Replay:
    name = "recorded"

    def __init__(self):
        with open(os.environ["GROUNDING_REPLAY"], encoding="utf-8") as handle:
            self.answers = json.load(handle)

    def predict(self, query):
        point = self.answers.get(query.image_key + "|" + query.instruction)
        return Prediction.no_answer(raw="?") if point is None else Prediction(point=tuple(point))


def pytest_grounding_register_detectors(registry):
    registry.register("recorded", Replay)
"""


# ---- the markdown ----------------------------------------------------------------------------------


def report(**baseline):
    block = {
        "accuracy": 0.5,
        "hits": 1,
        "scored": 2,
        "misses": 1,
        "wrong_format": 0,
        "errors": 0,
        "latency_ms": {"p50": 1.0, "p95": 2.0},
    }
    return {
        "partial": False,
        "summary": {"d": block},
        "gates": [{"detector": "d", "slice": "overall", "threshold": 0.4, "accuracy": 0.5, "passed": True}],
        "errors_check": [],
        "baseline": baseline or None,
    }


def test_a_run_with_no_gate_is_not_said_to_pass():
    ungated = report_markdown({**report(), "gates": []})
    assert "**passed**" not in ungated and "**no gates**: nothing judged this run" in ungated
    assert "**passed**" in report_markdown({**report(), "gates": [], "robustness_gates": [{"passed": True}]})


def test_markdown_says_the_verdict_and_names_what_failed():
    passed = report_markdown(report())
    assert (
        "**passed**" in passed and "| d | 50.0% | - | 1/2 | 1 | 0 | 0 | - | - | 0 | 1.00 | 2.00 |" in passed
    )  # core/numbers.ms
    failed = report_markdown(
        report(
            path="ci/b.json",
            status="compared",
            problem="worse",
            compared=2,
            known_misses=0,
            regressions=[{"detector": "d", "dataset": "s", "id": "a|b", "uid": "u", "outcome": "miss"}],
            improvements=[],
            slices=[
                {
                    "detector": "d",
                    "slice": "app=X",
                    "baseline": 1.0,
                    "accuracy": 0.5,
                    "tolerance": 0.02,
                    "passed": False,
                }
            ],
            latency=[],
        )
    )
    assert failed.startswith("## Grounding benchmark\n\n**FAILED**: 1 regressions against the baseline; 1 slices")
    assert "- d s/a\\|b: now miss" in failed  # data escaped for markdown (issue 29)
    assert "| d | app=X | 100.0% | 50.0% | -50.0 | 2.0 |" in failed


@pytest.mark.slow
def test_summary_command_appends_and_says_when_there_is_no_report(project, tmp_path, capsys):
    path, out = tmp_path / "r.json", tmp_path / "summary.md"
    # a real report: `summary` checks it against the schema before it says anything (issue 29)
    project.runpytest(
        f"--dataset={FIXTURES / 'mini'}",
        "--detector",
        "center",
        "--grounding-limit",
        "2",
        "--grounding-json",
        str(path),
    )
    assert main(["summary", str(path), "--append", str(out)]) == 0
    assert main(["summary", str(path), "--append", str(out)]) == 0
    assert out.read_text().count("## Grounding benchmark") == 2
    assert main(["summary", str(tmp_path / "none.json")]) == 0
    assert "no report at" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("{")
    assert main(["summary", str(tmp_path / "bad.json")]) == 2


# ---- the workflow, run --------------------------------------------------------------------------------


def workflow_steps():
    yaml = pytest.importorskip("yaml")
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["grounding"]["steps"]
    return {step.get("name"): step for step in steps}


def script(step, update=False):
    """A step's command as bash runs it here: the workflow's expression resolved, the OCR detector
    replaced by the stand-in, the run cut to LIMIT samples."""
    text = step["run"].strip()
    text = re.sub(r"\$\{\{[^}]*\}\}", "--grounding-update-baseline" if update else "", text)
    if text.startswith("pytest "):
        text = text.replace("--detector ocr", "--detector recorded") + f" --grounding-limit {LIMIT}"
        assert "--detector recorded" in text
    return text


def test_workflow_keeps_the_baseline_and_writes_the_job_summary():
    steps = workflow_steps()
    bench = next(step for name, step in steps.items() if name and name.startswith("Run the benchmark"))
    assert "--grounding-baseline ci/grounding-baseline.json" in bench["run"] and "--junitxml" in bench["run"]
    assert "GITHUB_STEP_SUMMARY" in steps["Job summary"]["run"] and steps["Job summary"]["if"] == "always()"
    kept = steps["Keep the report, the predictions and the baseline"]
    assert kept["if"] == "always()" and "ci/grounding-baseline.json" in kept["with"]["path"]


@pytest.fixture(scope="module")
def default_set():
    from pytest_grounding.datasets.synth import default_dataset_dir

    return default_dataset_dir()


def answers_for(default_set, hit):
    """Points for the first LIMIT samples: the target's centre where `hit(sample)`, else a corner."""
    from pytest_grounding.core.types import Query
    from pytest_grounding.datasets import load_dataset
    from pytest_grounding.evaluate.runner import read_image

    samples = load_dataset(f"pointerbench:{default_set}").samples[:LIMIT]
    keys = {}
    answers = {}
    for sample in samples:
        if sample.image not in keys:
            image, problem = read_image(sample)
            assert problem is None
            keys[sample.image] = Query(image=image, instruction="").image_key
        point = sample.bbox.center if hit(sample) else (1.0, 1.0)
        answers[keys[sample.image] + "|" + sample.instruction] = list(point)
    return samples, answers


@pytest.mark.slow
def test_workflow_commands_fail_a_broken_slice_pass_unchanged_and_report_an_improvement(tmp_path, default_set):
    steps = workflow_steps()
    bench = next(step for name, step in steps.items() if name and name.startswith("Run the benchmark"))
    work = tmp_path / "repo"
    (work / "suites").mkdir(parents=True)
    shutil.copy(REPO / "suites" / "test_grounding.py", work / "suites")
    (work / "suites" / "conftest.py").write_text(REPLAY_CONFTEST)
    replay, summary = tmp_path / "answers.json", tmp_path / "step-summary.md"
    env = {
        **os.environ,
        "GROUNDING_REPLAY": str(replay),
        "GITHUB_STEP_SUMMARY": str(summary),
        "PYTEST_GROUNDING_CACHE": str(default_set.parent),
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),  # this python first
    }
    for key in [k for k in env if k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))]:
        del env[key]

    def run_workflow(hit, update=False):
        samples, answers = answers_for(default_set, hit)
        replay.write_text(json.dumps(answers))
        summary.write_text("")
        results = []
        for name in ("Generate and check the embedded benchmark", bench["name"], "Job summary"):
            command = script(steps[name], update=update)
            results.append(subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True))
        assert results[0].returncode == 0, results[0].stdout + results[0].stderr
        assert results[2].returncode == 0, results[2].stderr
        return samples, results[1], summary.read_text()

    # The model misses every fifth sample; everything else is a hit.
    def usual(sample):
        return int(re.sub(r"\D", "", sample.id) or 0) % 5 != 0

    samples, first, markdown = run_workflow(usual)
    assert first.returncode == 1, first.stdout[-3000:]
    assert "baseline FAILED: baseline" in first.stdout and "did not exist: written now with 24 samples" in first.stdout
    assert "no baseline yet: written by this run" in markdown
    assert (work / "ci" / "grounding-baseline.json").is_file()
    kinds = {s.element_type for s in samples}
    assert {"icon", "text"} <= kinds  # the cut keeps both, so one can break alone

    _, unchanged, markdown = run_workflow(usual)
    assert unchanged.returncode == 0, unchanged.stdout[-3000:]
    assert "**passed**" in markdown and "0 regressions, 0 improvements" in markdown

    _, broken, markdown = run_workflow(lambda s: usual(s) and s.element_type != "icon")
    assert broken.returncode == 1
    assert "baseline FAILED: detector recorded element_type=icon: accuracy 0.0% (baseline" in broken.stdout
    assert "REGRESSION against the baseline" in broken.stdout
    assert "| recorded | element_type=icon |" in markdown and "**FAILED**" in markdown
    assert "element_type=text" not in markdown.split("### Baseline")[1]  # the slice that did not drop: not named

    missed = next(s for s in samples if not usual(s))
    _, better, markdown = run_workflow(lambda s: usual(s) or s is missed or s.id == missed.id)
    assert better.returncode == 0, better.stdout[-3000:]
    assert f"improvement: recorded synthetic/{missed.id}" in better.stdout
    assert "**Improvements** (1):" in markdown and f"synthetic/{missed.id}: now hit" in markdown
    assert (work / "grounding-out" / "junit.xml").is_file() and (work / "grounding-out" / "report.json").is_file()
