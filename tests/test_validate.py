"""The dataset checker on crafted broken datasets: one per kind of problem."""

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from helpers import SHARED_DATA, needs_shared
from pytest_grounding.datasets import load_dataset, validate
from pytest_grounding.datasets.validate import KINDS, Problem, check_dataset, loader_notes, validate_path


def row(**fields):
    base = {
        "file_name": "a.png",
        "id": "s1",
        "instruction": "Click Save",
        "bbox": [10, 10, 40, 30],
        "point": [25, 20],
        "element_type": "icon",
        "app": "Demo",
        "app_category": "office",
        "platform": "windows",
        "image_size": [640, 480],
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def write_set(root: Path, rows, images=None) -> Path:
    """A Pointerbench-Pro folder: data/test/metadata.jsonl + images (name -> (w, h) or raw bytes)."""
    folder = root / "data" / "test"
    folder.mkdir(parents=True)
    for name, content in (images if images is not None else {"a.png": (640, 480)}).items():
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            Image.new("RGB", content, (200, 200, 200)).save(folder / name)
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def kinds(root: Path):
    return [(p.kind, p.sample_id) for p in check_dataset(load_dataset(str(root)))]


def truncated_png() -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((64, 64), 60).save(buffer, format="PNG")
    return buffer.getvalue()[:300]


CASES = {
    "missing-file": ([row(file_name="gone.png")], None, [("missing-file", "s1")]),
    "path-outside-dataset": (
        [row(file_name="/etc/hostname"), row(id="s2", file_name="../../../../outside.png")],
        None,
        [("path-outside-dataset", "s1"), ("path-outside-dataset", "s2")],
    ),
    "undecodable-image": (
        [row(file_name="bad.png", image_size=None)],
        {"bad.png": truncated_png()},
        [("undecodable-image", "s1")],
    ),
    "size-mismatch": ([row(image_size=[800, 600])], None, [("size-mismatch", "s1")]),
    "box-outside-image": ([row(bbox=[600, 400, 700, 500], point=[620, 420])], None, [("box-outside-image", "s1")]),
    "degenerate-box": ([row(bbox=[30, 10, 30, 40], point=None)], None, [("degenerate-box", "s1")]),
    "oversized-box": ([row(bbox=[0, 0, 640, 400], point=[300, 200])], None, [("oversized-box", "s1")]),
    "duplicate-id": (
        [row(), row(instruction="Click Open", bbox=[50, 50, 60, 60], point=[55, 55])],
        None,
        [("duplicate-id", "s1")],
    ),
    "point-outside-box": ([row(point=[5, 5])], None, [("point-outside-box", "s1")]),
    "duplicate-instruction": (
        [row(), row(id="s2", bbox=[100, 100, 120, 120], point=[110, 110])],
        None,
        [("duplicate-instruction", "s2")],
    ),
    "unusable-sample": ([row(instruction="  ")], None, [("unusable-sample", "s1")]),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_kind_of_problem_is_found(tmp_path, kind):
    rows, images, expected = CASES[kind]
    assert kinds(write_set(tmp_path, rows, images)) == expected


def test_every_kind_has_a_crafted_case_or_a_unit_test():
    # draft-element is the harness format's own: test_curation.py crafts it
    assert set(KINDS) == set(CASES) | {"loader-note", "draft-element"}


def test_a_clean_dataset_has_no_problems_and_exits_zero(tmp_path, capsys):
    root = write_set(tmp_path, [row(), row(id="s2", instruction="Click Open", bbox=[50, 50, 60, 60], point=[55, 55])])
    assert kinds(root) == []
    assert validate_path(str(root)) == 0
    out = capsys.readouterr().out
    assert "2 samples on 1 images: 0 errors, 0 warnings" in out


def test_output_has_one_line_per_problem_and_counts_per_kind(tmp_path, capsys):
    root = write_set(
        tmp_path, [row(point=[5, 5]), row(id="s2", file_name="gone.png"), row(id="s3", file_name="gone2.png")]
    )
    assert validate_path(str(root)) == 1
    lines = capsys.readouterr().out.splitlines()
    image = tmp_path / "data" / "test" / "a.png"
    assert lines[0] == f"s1: point-outside-box: point [5, 5] is 7.1 px outside box [10, 10, 40, 30] ({image.resolve()})"
    assert lines[1].startswith("s2: missing-file: image not found (") and lines[1].endswith("gone.png)")
    assert "3 samples on 3 images: 3 errors, 0 warnings" in lines[3]
    assert lines[4].startswith("  missing-file: 2 (error: ")
    assert lines[5].startswith("  point-outside-box: 1 (error: ")


def test_warnings_alone_exit_zero(tmp_path, capsys):
    root = write_set(tmp_path, [row(), row(id="s2", bbox=[100, 100, 120, 120], point=[110, 110])])
    assert validate_path(str(root)) == 0
    assert "0 errors, 1 warnings" in capsys.readouterr().out


def test_max_per_kind_caps_lines_but_not_counts(tmp_path, capsys):
    rows = [row(id=f"s{i}", file_name=f"gone{i}.png", instruction=f"Click {i}") for i in range(5)]
    assert validate_path(str(write_set(tmp_path, rows)), max_per_kind=2) == 1
    out = capsys.readouterr().out
    assert out.count(": missing-file: ") == 2
    assert "... 3 more lines not shown" in out and "missing-file: 5 (error" in out


def test_a_dataset_that_cannot_be_loaded_exits_two(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert validate_path(str(tmp_path / "empty")) == 2
    assert capsys.readouterr().out.startswith("error: ")


def test_each_image_is_decoded_once(tmp_path, monkeypatch):
    rows = [row(id=f"s{i}", instruction=f"Click {i}") for i in range(6)]
    calls = []
    real = validate.inspect_image
    monkeypatch.setattr(validate, "inspect_image", lambda path: calls.append(path) or real(path))
    assert kinds(write_set(tmp_path, rows)) == []
    assert len(calls) == 1


def test_a_box_past_the_declared_edge_is_reported_once(tmp_path):
    """The loader notes it too; the checker keeps its own error and drops the duplicate note."""
    root = write_set(tmp_path, [row(file_name="gone.png", bbox=[600, 400, 700, 500], point=[650, 450])])
    assert load_dataset(str(root)).problems  # the loader did note it
    assert kinds(root) == [("missing-file", "s1"), ("box-outside-image", "s1")]


def test_negative_boxes_are_outside_even_without_a_size(tmp_path):
    root = write_set(tmp_path, [row(file_name="gone.png", image_size=None, bbox=[10, -1, 40, 30], point=None)])
    assert kinds(root) == [("missing-file", "s1"), ("box-outside-image", "s1")]


def test_loader_notes_name_their_sample_when_they_can():
    notes = loader_notes(["s1: odd thing", "the file has a BOM"], ["s1"], "meta.jsonl", covered=[])
    assert notes == [
        Problem("loader-note", "warning", "s1", "meta.jsonl", "odd thing"),
        Problem("loader-note", "warning", "-", "meta.jsonl", "the file has a BOM"),
    ]


@needs_shared
def test_the_shared_real_data(capsys):
    """What the checker finds in ../shared/data (recorded in the README)."""
    assert validate_path(str(SHARED_DATA / "screenagent-dev")) == 0
    out = capsys.readouterr().out
    assert "sa_dev_0063: oversized-box:" in out and "0 errors, 1 warnings" in out
    assert validate_path(str(SHARED_DATA / "screenspot-v1"), max_per_kind=3) == 1
    out = capsys.readouterr().out
    assert "1272 samples on 610 images: 1268 errors, 0 warnings" in out
    assert "  missing-file: 1268 (error" in out
