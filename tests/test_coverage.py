"""Parser coverage (issue 56): the `ocr` detector on drawn screens tells a target its parser cannot
read (not detected: a label too faint for it) from one it read but did not match (not matched: an
instruction that names the target by its purpose, not its label), serially and under `-n 2`."""

import json

import pytest

from helpers import XDIST, make_project, read_json, read_jsonl

# Imported here, once: pytester's in-process runs cannot load these extension modules twice.
for _module in ("rapidfuzz", "rapidocr", "onnxruntime"):
    pytest.importorskip(_module)

from pytest_grounding.core.coverage import covered  # noqa: E402

FONTS = __import__("pathlib").Path(__file__).resolve().parents[1] / "pytest_grounding" / "datasets" / "synth" / "fonts"


def test_a_target_is_covered_by_a_box_holding_its_centre_or_overlapping_it_enough():
    target = [100, 100, 140, 120]
    assert covered([[90, 95, 200, 130]], target)  # holds the centre
    assert covered([[105, 100, 145, 121]], target)  # IoU about 0.8, centre held too
    assert not covered([[0, 0, 50, 50], [130, 100, 200, 120]], target)  # beside it, IoU 0.1
    assert covered([[102, 102, 112, 108]], target)  # a small text inside a large target: its centre is in the box
    assert covered([], target) is False and covered([[1, 2, 3, 4]], None) is None


def drawn(folder):
    """Three 640x360 screens: a labelled Save button, a label too faint to read, a dialog's Cancel."""
    from PIL import Image, ImageDraw, ImageFont

    face = ImageFont.truetype(str(FONTS / "DejaVuSans.ttf"), 22)
    data = folder / "data" / "test"
    data.mkdir(parents=True)
    rows = []

    def screen(name, paint, instruction, box):
        image = Image.new("RGB", (640, 360), (246, 246, 246))
        draw = ImageDraw.Draw(image)
        draw.text((20, 20), "Project settings", font=face, fill=(20, 20, 20))
        paint(draw)
        image.save(data / f"{name}.png")
        rows.append({"file_name": f"{name}.png", "id": name, "instruction": instruction, "bbox": box,
                     "answer_type": "point", "element_type": "text", "app": "A", "app_category": "office",
                     "platform": "linux", "image_size": [640, 360]})  # fmt: skip

    def save(draw):
        draw.rectangle((300, 150, 420, 200), fill=(225, 225, 225), outline=(160, 160, 160))
        draw.text((325, 162), "Save", font=face, fill=(20, 20, 20))

    def gear(draw):  # a label drawn too faint for the OCR to see (a disabled control on a light theme)
        draw.text((510, 270), "Help", font=face, fill=(241, 241, 241))

    def cancel(draw):
        draw.rectangle((200, 250, 340, 300), fill=(225, 225, 225), outline=(160, 160, 160))
        draw.text((220, 262), "Cancel", font=face, fill=(20, 20, 20))

    screen("save", save, "Click Save", [300, 150, 420, 200])
    screen("gear", gear, "Click Help", [500, 260, 570, 300])
    screen("cancel", cancel, "Close the dialog without keeping anything", [200, 250, 340, 300])
    (data / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@XDIST
def test_ocr_tells_a_target_it_cannot_read_from_one_it_read_and_did_not_match(pytester, workers, tmp_path):
    make_project(pytester)
    dataset = drawn(tmp_path / "screens")
    # In a process of its own: the OCR engine's packages, first imported inside an in-process run, would
    # leave copies that the OCR tests after it in this process cannot use.
    result = pytester.runpytest_subprocess(
        f"--dataset={dataset}",
        "--detector",
        "ocr:semantic=false",
        "--grounding-frame-check=off",
        "--grounding-json",
        str(tmp_path / "r.json"),
        "--grounding-predictions",
        str(tmp_path / "p.jsonl"),
        *workers,
    )
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    records = {r["id"]: r for r in read_jsonl(tmp_path / "p.jsonl")}
    assert records["save"]["outcome"] == "hit" and records["save"]["parser_covered"] is True
    assert records["gear"]["parser_covered"] is False and records["gear"]["parser_miss"] == "not_detected"
    assert records["cancel"]["parser_covered"] is True and records["cancel"]["parser_miss"] == "not_matched"
    assert all("candidate_boxes" not in r["meta"] and r["parser_candidates"] >= 1 for r in records.values())
    block = read_json(tmp_path / "r.json")["summary"]["ocr:semantic=false"]["coverage"]
    assert (block["samples"], block["covered"], block["hits"]) == (3, 2, 1)
    assert block["misses"] == {"not_detected": 1, "not_matched": 1}
    assert block["by"]["element_type"]["text"]["coverage"] == pytest.approx(2 / 3)
    assert "parser coverage  66.7%" in result.stdout.str() and "not_detected 1, not_matched 1" in result.stdout.str()
