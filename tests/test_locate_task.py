"""The element-at-click task through the plugin (--grounding-task locate): records, summary,
JSON, gates and resume, serial and under xdist."""

import json

import pytest

from helpers import FIXTURES, SERIAL, assert_counts, read_json

MINI = str(FIXTURES / "mini")


@SERIAL
def test_locate_task_summarises_hit_rate_false_positives_and_attempts(project, tmp_path, workers):
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={MINI}",
        "--detector",
        "colour",
        "--detector",
        "center",
        "--grounding-task",
        "locate",
        "--grounding-json",
        str(report),
        *workers,
    )
    text = result.stdout.str()
    assert "grounding task: locate (element at the recorded click; hit at IoU >= 0.5)" in text
    assert "detector colour (locate)" in text and "detector center (locate)" in text
    document = read_json(report)
    assert document["run"]["settings"]["task"] == "locate"
    assert {r["task"] for r in document["samples"]} == {"locate"}
    colour = document["summary"]["colour (locate)"]
    center = document["summary"]["center (locate)"]
    assert colour["task"] == "locate" and colour["detector"] == "colour"
    # colour finds the square under each click exactly; the 32 px floor box rarely fits it
    assert colour["accuracy"] > center["accuracy"]
    assert colour["locate"]["detection_rate"] == 1.0 and colour["mean_iou"] > 0.9
    assert center["locate"]["false_positive_rate"] > 0
    assert colour["errors"] == center["errors"] == 2  # the broken and the missing image
    hits = [r for r in document["samples"] if r["detector"] == "colour" and r["outcome"] == "hit"]
    assert hits and all(r["transform"] == "original" and r["attempts"] == 1 for r in hits)
    assert "element at click: hit rate" in text and "mean attempts" in text
    assert_counts(result, passed=8, missed=4, errors=4)


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_locate_summary_is_the_same_with_and_without_xdist(project, tmp_path):
    summaries = []
    for workers in ([], ["-n", "2"]):
        report = tmp_path / f"r{len(workers)}.json"
        project.runpytest(
            f"--dataset={MINI}",
            "--detector",
            "colour",
            "--grounding-task",
            "locate",
            "--grounding-json",
            str(report),
            *workers,
        )
        document = read_json(report)
        for record in document["samples"]:
            record.pop("latency_ms")
            for tried in record.get("meta", {}).get("tried", ()):
                tried.pop("ms")
        for block in document["summary"].values():
            block.pop("latency_ms")
        summaries.append((document["summary"], document["samples"]))
    assert summaries[0] == summaries[1]


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_a_gate_on_the_locate_task_reads_the_hit_rate(project, workers):
    passed = project.runpytest(
        f"--dataset={MINI}",
        "--detector",
        "colour",
        "--grounding-task",
        "locate",
        "--grounding-max-errors",
        "0.5",
        "--grounding-min-accuracy",
        "0.9",
        *workers,
    )
    passed.stdout.fnmatch_lines(
        ["gate passed: detector colour (locate) overall: hit rate 100.0% of 6 >= threshold 90.0%"]
    )
    assert passed.ret == 1  # the broken and the missing image are errors: they fail their items
    failed = project.runpytest(
        f"--dataset={MINI}",
        "--detector",
        "center",
        "--grounding-task",
        "locate",
        "--grounding-max-errors",
        "0.5",
        "--grounding-min-accuracy",
        "0.9",
        *workers,
    )
    failed.stdout.fnmatch_lines(
        ["gate FAILED: detector center (locate) overall: hit rate 33.3% of 6 < threshold 90.0%"]
    )
    assert failed.ret == 1


def test_a_detector_without_locate_gives_one_clear_error_per_sample(project):
    project.makeconftest(
        project.path.joinpath("conftest.py").read_text()
        + """
class PointOnly:
    name = "pointonly"

    def predict(self, query):
        return (1, 1)


def pytest_grounding_register_detectors(registry):
    registry.register("colour", Colour)
    registry.register("pointonly", PointOnly)
"""
    )
    result = project.runpytest(f"--dataset={MINI}", "--detector", "pointonly", "--grounding-task", "locate")
    result.stdout.fnmatch_lines(
        ["*detector pointonly has no locate(query) method: it answers the grounding task only*"]
    )
    assert_counts(result, errors=8)


def test_bad_task_and_threshold_values_are_usage_errors(project):
    for args, message in (
        (["--grounding-task", "find"], "'find' is not one of grounding, locate"),
        (["--grounding-iou-threshold", "1.5"], "--grounding-iou-threshold"),
    ):
        result = project.runpytest(f"--dataset={MINI}", "--detector", "center", *args)
        assert result.ret == 4, result.stdout.str()
        assert message in result.stdout.str() + result.stderr.str()


def test_resume_keeps_locate_records_and_runs_only_the_rest(project, tmp_path):
    predictions = tmp_path / "p.jsonl"
    common = [
        f"--dataset={MINI}",
        "--detector",
        "colour",
        "--grounding-task",
        "locate",
        "--grounding-predictions",
        str(predictions),
        "--grounding-max-errors",
        "0.5",
    ]
    project.runpytest(*common)
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(lines) == 8 and {line["task"] for line in lines} == {"locate"}
    again = project.runpytest(*common, "--grounding-resume", "--grounding-json", str(tmp_path / "r.json"))
    document = read_json(tmp_path / "r.json")
    assert len(document["samples"]) == 8
    assert_counts(again, errors=2, deselected=6)  # only the two errors run again


def test_resume_refuses_a_predictions_file_from_the_other_task(project, tmp_path):
    predictions = tmp_path / "p.jsonl"
    common = [f"--dataset={MINI}", "--detector", "colour", "--grounding-predictions", str(predictions)]
    project.runpytest(*common)  # the grounding task
    before = predictions.read_text()
    result = project.runpytest(*common, "--grounding-task", "locate", "--grounding-resume")
    assert result.ret == 4  # a usage error
    result.stderr.fnmatch_lines(["*p.jsonl:1 is from the grounding task; this run measures locate*"])
    assert predictions.read_text() == before  # the file is left as it was
