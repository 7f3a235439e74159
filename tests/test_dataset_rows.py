"""The one row loop (datasets/rows.py): what it refuses and reports for every format alike."""

import json

import pytest

from pytest_grounding.datasets import load_dataset


def test_hf_file_rows_outside_the_folder_are_refused_and_never_opened_in_normalized_units(tmp_path, monkeypatch):
    """Issue 29: with units=normalized the loader read the header of a file outside the dataset."""
    pytest.importorskip("pyarrow", reason="the hf extra is not installed")
    from hf_tables import SQUARES, normalized, screen_png, write_table
    from PIL import Image

    folder = tmp_path / "files"
    (folder / "shots").mkdir(parents=True)
    (folder / "shots" / "s0.png").write_bytes(screen_png())
    secret = tmp_path / "secret.png"
    secret.write_bytes(screen_png(7))
    rows = [
        {"image": "shots/s0.png", "instruction": "Click the red square", "bbox": normalized(SQUARES["red"])},
        {"image": "../secret.png", "instruction": "Click the red square", "bbox": normalized(SQUARES["red"])},
        {"image": str(secret), "instruction": "Click the red square", "bbox": normalized(SQUARES["red"])},
    ]
    write_table(folder / "test.parquet", rows)
    opened = []
    real_open = Image.open
    monkeypatch.setattr(Image, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    dataset = load_dataset(f"hf:{folder}:image=image:instruction=instruction:bbox=bbox:box=xyxy:units=normalized")
    by_row = {s.extra["row"]: s for s in dataset.samples}
    assert by_row[0].defect is None and by_row[0].bbox.as_list() == pytest.approx(list(SQUARES["red"]))
    for row in (1, 2):
        assert by_row[row].defect.startswith(f"row {row} of test.parquet: image path ")
        assert "leads outside the dataset folder" in by_row[row].defect
        assert by_row[row].image_size is None
    assert not [p for p in opened if "secret" in p]


@pytest.mark.parametrize("declared", [[-1, 5], [0, 0], "abc", [640], [640, "wide"], "[640, 480]"])
def test_a_malformed_declared_image_size_is_that_samples_error(tmp_path, declared):
    """Issue 29: a declared size that is no size was dropped silently (the box then read in no frame)."""
    rows = [
        {"id": "good", "file_name": "x.png", "instruction": "a", "bbox": [0, 0, 2, 2], "image_size": [640, 480]},
        {"id": "none", "file_name": "x.png", "instruction": "b", "bbox": [0, 0, 2, 2]},
        {"id": "bad", "file_name": "x.png", "instruction": "c", "bbox": [0, 0, 2, 2], "image_size": declared},
    ]
    (tmp_path / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples = {s.id: s for s in load_dataset(str(tmp_path)).samples}
    assert samples["good"].defect is None and samples["good"].image_size == (640, 480)
    assert samples["none"].defect is None and samples["none"].image_size is None
    assert samples["bad"].defect == f"declared image size {str(declared)!r} is not [width, height] in positive pixels"


def test_a_malformed_size_in_a_normalized_format_names_the_size_not_the_box(tmp_path):
    from helpers import FIXTURES

    rows = json.loads((FIXTURES / "mmbench-gui" / "L2_annotations.json").read_text())
    rows[0]["image_size"] = [0, 768]
    (tmp_path / "L2_annotations.json").write_text(json.dumps(rows))
    first = {s.id: s for s in load_dataset(str(tmp_path)).samples}[str(rows[0]["index"])]
    assert first.defect == "declared image size '[0, 768]' is not [width, height] in positive pixels"


def test_screenspot_pro_is_declared_once_for_its_folders_and_its_hub_mirrors():
    from pytest_grounding.datasets import hf_columns, screenspot_pro

    mirror, folder = hf_columns.MAPPINGS["screenspot-pro"], screenspot_pro.SCHEMA
    for field in ("instruction", "bbox", "box", "units", "id", "element_type", "app", "app_category", "platform"):
        assert getattr(mirror, field) == getattr(folder, field), field
    assert (mirror.image_size, mirror.instruction_cn, mirror.file_name) == ("img_size", "instruction_cn", folder.image)


def test_every_builtin_row_format_reads_through_the_one_loop():
    """Each built-in format declares a RowSchema and hands its rows to rows.sample_of; none builds
    its Samples by hand."""
    import importlib

    from pytest_grounding.datasets import BUILTIN, rows

    for name, target in BUILTIN.items():
        module = importlib.import_module(target.partition(":")[0])
        assert module.sample_of is rows.sample_of, name
        assert not hasattr(module, "build_sample"), name
        if name != "hf":  # hf's schemas are the mirrors' mappings (hf_columns) and the benchmarks' own
            assert isinstance(module.SCHEMA, rows.RowSchema), name
