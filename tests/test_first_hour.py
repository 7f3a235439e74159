"""A new user's first hour (issue 15): what the README promises, the run delivers."""

import json
import subprocess
import sys

import pytest

from helpers import FIXTURES, REPO, SERIAL, XDIST, assert_counts, read_json

MINI = str(FIXTURES / "mini")


def test_the_public_api_is_importable_from_the_package():
    import pytest_grounding
    from pytest_grounding import Box, Detector, Prediction, Query, Sample

    assert {"Box", "Prediction", "Query", "Sample", "Detector"} <= set(pytest_grounding.__all__)
    assert Prediction(box=Box(0, 0, 4, 2)).click == (2.0, 1.0)
    assert Query and Sample and Detector


def test_the_locate_protocol_is_public_and_the_floors_follow_it():
    from PIL import Image

    from pytest_grounding import Detector, LocateQuery, Locator
    from pytest_grounding.detectors.floors import CenterDetector

    floor = CenterDetector()
    assert isinstance(floor, Detector) and isinstance(floor, Locator)
    answer = floor.locate(LocateQuery(Image.new("RGB", (100, 80)), (50.0, 40.0)))
    assert answer.box is not None and answer.box.contains((50.0, 40.0))
    assert not isinstance(object(), Locator)


@pytest.mark.slow
def test_the_embedded_default_is_named_the_same_with_and_without_xdist(project, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_GROUNDING_CACHE", str(tmp_path / "cache"))  # a first use: generated here
    documents, outputs = [], []
    for workers in ([], ["-n", "2"]):
        report = tmp_path / f"r{len(workers)}.json"
        result = project.runpytest(
            "--detector", "center", "--grounding-limit", "5", "--grounding-json", str(report), *workers
        )
        outputs.append(result.stdout.str())
        documents.append(read_json(report))
    assert "grounding: generating the embedded synthetic benchmark into" in outputs[0]
    assert "generating" not in outputs[1]  # made once, reused
    for output in outputs:
        assert "dataset synthetic: pointerbench, 5 of 300 samples (--grounding-limit), fingerprint" in output
    assert documents[0]["run"]["datasets"] == documents[1]["run"]["datasets"] != []
    assert documents[0]["run"]["datasets"][0]["limit"] == 5
    for document in documents:
        document["summary"]["center"].pop("latency_ms")
    assert documents[0]["summary"] == documents[1]["summary"]


@pytest.mark.slow
@SERIAL
def test_a_benchmark_run_reads_in_a_few_lines_and_ends_with_a_verdict(project, workers):
    result = project.runpytest(f"--dataset={MINI}", "--detector", "center", "--grounding-show-misses", "3", *workers)
    assert_counts(result, missed=6, errors=2)  # an ungated run: no case for the errors share
    lines = result.stdout.lines
    summary_at = next(i for i, line in enumerate(lines) if "grounding summary" in line)
    assert summary_at < 45, "\n".join(lines[:summary_at])
    text = "\n".join(lines)
    assert "FAILURES" not in text  # misses are not failure blocks...
    result.stdout.fnmatch_lines(
        [  # ...but one line each, once, capped
            "failed items (6: 6 misses; each fails its item, listed here once):",
            "  center mini/m01: clicked *",
            "  center mini/m02: clicked *",
            "  center mini/m03: clicked *",
            "  ... 3 more in the JSON report and the predictions file (--grounding-show-misses all lists them)",
        ]
    )
    assert text.count("mini/m01") == 1
    verdict = [line for line in lines if line.startswith("verdict: ")]
    assert verdict == [
        "verdict: too many errors for center (--grounding-max-errors): FAILED; 6 failed items (6 misses) fail "
        "the run: expected for a benchmark run; set a gate (--grounding-min-accuracy) to make the exit "
        "status a verdict; 2 errors (samples not scored: see ERROR above)"
    ]
    assert lines.index(verdict[0]) > summary_at
    assert result.ret == 1


@pytest.mark.slow
def test_pytest_benchmark_table_is_left_out_unless_asked_but_its_json_keeps_every_sample(
    project, tmp_path, monkeypatch
):
    # pytest-benchmark switches itself off when it sees this variable, which an outer -n sets.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    bench = tmp_path / "bench.json"
    quiet = project.runpytest(f"--dataset={MINI}", "--detector", "colour", f"--benchmark-json={bench}")
    assert "benchmark 'grounding'" not in quiet.stdout.str()
    assert len(json.loads(bench.read_text())["benchmarks"]) == 6  # every timed sample (2 errors never ran)
    shown = project.runpytest(f"--dataset={MINI}", "--detector", "colour", "--grounding-benchmark-table")
    shown.stdout.fnmatch_lines(["*benchmark 'grounding'*"])


@pytest.mark.slow
@XDIST
def test_progress_says_samples_rate_and_eta(project, workers):
    result = project.runpytest(
        f"--dataset={MINI}", "--detector", "colour", "--detector", "center:label=mid", "--grounding-progress", "on",
        *workers,
    )  # fmt: skip
    result.stdout.fnmatch_lines(["grounding progress: 16/16 samples (100%) in *, done; colour 8 (*/s)  mid 8 (*/s)"])
    quiet = project.runpytest(f"--dataset={MINI}", "--detector", "colour", *workers)  # not a terminal: off
    assert "grounding progress" not in quiet.stdout.str()


def test_every_app_table_is_sorted_by_sample_count_also_when_all_are_shown():
    from pytest_grounding.render.common.headline import table

    rows = [
        {
            "value": name,
            "samples": n,
            "scored": n,
            "hits": 0,
            "accuracy": 0.0,
            "wrong_format": 0,
            "errors": 0,
            "mean_iou": None,
        }
        for name, n in (("Alpha", 1), ("Beta", 5), ("Gamma", 3))
    ]
    for limit in (None, 2):
        shown = [
            line.split()[0]
            for line in table("app", rows, limit, by_count=True)[1:]
            if not line.strip().startswith("...")
        ]
        assert shown == ["Beta", "Gamma", "Alpha"][: limit or 3]


@pytest.mark.slow
def test_the_cpu_install_resolves_to_the_cpu_build_of_torch(tmp_path):
    """constraints.txt must pin the CPU wheel: `torch==X` alone resolves to the CUDA build and a
    dozen nvidia-* packages. Resolved for real by pip (a dry run, nothing installed)."""
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "-c",
            str(REPO / "constraints.txt"),
            "torch",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 and ("No matching distribution" in done.stderr or "Could not find" in done.stderr):
        pytest.skip(f"pip cannot reach a CPU build of torch from here: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    installed = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    assert installed["torch"].endswith("+cpu")
    assert not [name for name in installed if name.startswith("nvidia")]
