"""Serial and `-n 2` give the same predictions, point for point, for the `ocr` and `omniparser`
detectors on real screens (ScreenAgent dev, ../shared/data) with the real OmniParser v2 icon
detector (../shared/models). Under xdist the two detectors' items of one screen can land on different
workers (each parses the screen itself, with a share of the cores as its ONNX Runtime threads), so
this is the check that a figure does not depend on how the run was split."""

import pytest

from helpers import REPO, SHARED_DATA, read_jsonl

# Imported here, once: pytester's in-process runs cannot load these extension modules twice. (The
# ocr and omniparser extras; a core install skips this file.)
for _module in ("rapidfuzz", "rapidocr", "onnxruntime", "cv2"):
    pytest.importorskip(_module)

DEV = SHARED_DATA / "screenagent-dev"
MODEL = REPO.parent / "shared" / "models" / "omniparser-v2-icon-detect-640.onnx"
SAMPLES = 16  # the first 16 samples: 16 screens, about a minute per run on 2 cores

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not DEV.is_dir(), reason=f"{DEV} is not here (a user's machine)"),
    pytest.mark.skipif(not MODEL.is_file(), reason=f"{MODEL} is not here (the AGPL model is not shipped)"),
]


def predictions(project, tmp_path, label, *workers):
    out = tmp_path / f"{label}.jsonl"
    result = project.runpytest(
        f"--dataset={DEV}",
        "--detector",
        "ocr",
        "--detector",
        f"omniparser:model={MODEL}",
        "--grounding-limit",
        str(SAMPLES),
        "--grounding-predictions",
        str(out),
        *workers,
    )
    assert result.ret in (0, 1), result.stdout.str()[-3000:]  # misses fail items; nothing may error
    records = read_jsonl(out)
    by_key = {(r["detector"], r["id"]): r for r in records}
    assert len(by_key) == len(records) == 2 * SAMPLES, f"{label}: {len(records)} lines"
    return by_key


def test_serial_and_xdist_give_the_same_points(project, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    serial = predictions(project, tmp_path, "serial")
    xdist = predictions(project, tmp_path, "xdist", "-n", "2")
    assert serial.keys() == xdist.keys()
    answered = 0
    for key, record in serial.items():
        other = xdist[key]
        assert (record["point"], record["outcome"]) == (other["point"], other["outcome"]), key
        answered += record["outcome"] != "wrong_format"
    assert answered >= SAMPLES // 2, f"only {answered} answers: the comparison would prove little"
    for name in ("ocr", "omniparser"):
        assert any(detector.startswith(name) for detector, _ in serial), name
