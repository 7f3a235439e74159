"""The `ocr` detector through the plugin: the provider its sessions really use is printed after
collection (without xdist), and is in the summary and the JSON report, with and without xdist."""

import pytest

from helpers import SERIAL, XDIST, read_json

pytestmark = pytest.mark.slow  # the fast tier leaves this file out


# Imported here, once: pytester's in-process runs cannot load these extension modules twice.
# (The `ocr` extra; the core install skips these tests.)
for _module in ("rapidfuzz", "rapidocr", "onnxruntime", "torch", "transformers"):
    pytest.importorskip(_module)


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    from pytest_grounding.datasets.synth import generate

    return generate(tmp_path_factory.mktemp("synthetic"), count=8, seed=5)


@XDIST
def test_ocr_runs_in_the_suite_and_reports_its_provider(project, workers, screens, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    report = tmp_path / "r.json"
    result = project.runpytest(f"--dataset={screens}", "--detector", "ocr", "--grounding-json", str(report), *workers)
    assert result.ret in (0, 1)  # misses fail items; nothing may error
    document = read_json(report)
    info = document["run"]["detectors"]["ocr"]
    assert info["providers"] and set(info["providers"]) <= {"CUDAExecutionProvider", "CPUExecutionProvider"}
    block = document["summary"]["ocr"]
    assert block["samples"] == 8 and block["errors"] == 0
    result.stdout.fnmatch_lines([f"detector ocr  (rapidocr * providers {', '.join(info['providers'])}*"])
    if not workers:  # after collection: the detector loads in this process, before the first sample
        result.stdout.fnmatch_lines([f"grounding: detector ocr: rapidocr * providers {', '.join(info['providers'])}*"])


@pytest.mark.slow
@SERIAL
def test_parallel_line_recognition_gives_the_points_of_one_line_at_a_time(
    project, workers, screens, tmp_path, monkeypatch
):
    """`rec_streams` (two lines at once, one thread each) next to one line at a time on two threads,
    in one run through the plugin, serial and under `-n 2`: the same point for every sample."""
    from helpers import read_jsonl

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out, report = tmp_path / "p.jsonl", tmp_path / "r.json"
    specs = ("ocr:threads=2,rec_streams=2", "ocr:threads=2,rec_streams=1")
    # In a subprocess: a second in-process run cannot import torch's extension modules again.
    result = project.runpytest_subprocess(
        f"--dataset={screens}",
        *(arg for spec in specs for arg in ("--detector", spec)),
        "--grounding-predictions",
        str(out),
        "--grounding-json",
        str(report),
        *workers,
    )
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    detectors = read_json(report)["run"]["detectors"]
    assert [detectors[spec]["rec_streams"] for spec in specs] == [2, 1]
    points: dict[str, dict[str, tuple]] = {spec: {} for spec in specs}
    for record in read_jsonl(out):
        points[record["detector"]][record["id"]] = (record["point"], record["outcome"])
    assert len(points[specs[1]]) == 8 and points[specs[0]] == points[specs[1]]
    answered = sum(point is not None for point, _ in points[specs[1]].values())
    assert answered >= 3, points[specs[1]]  # answers worth comparing
