"""The `ocr` detector through the plugin: the provider its sessions really use is printed after
collection (without xdist), and is in the summary and the JSON report, with and without xdist."""

import pytest

from helpers import XDIST, read_json

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
