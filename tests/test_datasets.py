"""Every loader on small data: the formats' own box conventions end up as absolute x1 y1 x2 y2."""

import json
import sys

import pytest

from helpers import FIXTURES, SERIAL, SHARED_DATA, assert_counts, needs_shared, read_json, read_jsonl
from pytest_grounding.core.types import Box
from pytest_grounding.datasets import DatasetError, load_dataset


def by_id(dataset):
    return {s.id: s for s in dataset.samples}


def test_pointerbench_imagefolder_bare_folder_and_file_all_load():
    for path in (
        FIXTURES / "mini",
        FIXTURES / "mini" / "data" / "test",
        FIXTURES / "mini" / "data" / "test" / "metadata.jsonl",
    ):
        dataset = load_dataset(str(path))
        assert dataset.format == "pointerbench" and len(dataset.samples) == 8
    sample = by_id(load_dataset(str(FIXTURES / "mini")))["m01"]
    assert sample.bbox == Box(10, 10, 30, 30) and sample.image_size == (160, 120)
    assert (sample.element_type, sample.app, sample.app_category, sample.platform) == (
        "icon",
        "Blender",
        "creative",
        "linux",
    )
    assert sample.uid == "mini-m01-blender-icon" and sample.point == (20, 20)


def test_screenspot_boxes_are_converted_from_xywh():
    dataset = load_dataset(str(FIXTURES / "screenspot"))
    assert dataset.format == "screenspot" and len(dataset.samples) == 5
    sample = by_id(dataset)["desktop_0000"]
    assert sample.bbox == Box(10, 10, 30, 30)  # stored as [10, 10, 20, 20]
    assert sample.platform == "desktop" and sample.app == "blender"


def test_screenspot_pro_keeps_odd_boxes_and_reports_them():
    dataset = load_dataset(str(FIXTURES / "screenspot-pro"))
    assert dataset.format == "screenspot-pro" and len(dataset.samples) == 6
    odd = by_id(dataset)["pro_odd"]
    assert odd.bbox == Box(10, -1, 30, 30) and odd.defect is None
    assert any("pro_odd" in p and "outside" in p for p in dataset.problems)
    assert by_id(dataset)["pro_m01"].image.name == "s1.png"


def test_harness_boxes_are_scaled_from_normalized_one_item_per_element():
    dataset = load_dataset(str(FIXTURES / "harness"))
    assert dataset.format == "harness" and dataset.name == "harness-mini"
    assert len(dataset.samples) == 5
    sample = by_id(dataset)["s2-e0"]
    assert sample.bbox.as_list() == pytest.approx([100, 15, 140, 35])
    assert sample.instruction == "Click the green square" and sample.element_type == "button"
    assert sample.point == pytest.approx((120, 25))


def test_format_can_be_forced_and_an_unknown_folder_names_the_path(tmp_path):
    assert load_dataset(f"screenspot:{FIXTURES / 'screenspot'}").format == "screenspot"
    with pytest.raises(DatasetError, match="not a dataset this plugin recognises"):
        load_dataset(str(tmp_path))
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(str(tmp_path / "nope"))


def test_broken_files_name_file_and_line(tmp_path):
    (tmp_path / "metadata.jsonl").write_text('{"id": "a", "file_name": "x.png", "bbox": [0,0,1,1]}\n{oops\n')
    with pytest.raises(DatasetError, match=r"metadata.jsonl:2: invalid JSON"):
        load_dataset(str(tmp_path))
    (tmp_path / "metadata.jsonl").write_text("")
    with pytest.raises(DatasetError, match="no samples"):
        load_dataset(str(tmp_path))


def test_unusable_rows_become_defects_not_crashes(tmp_path):
    rows = [
        {"id": "bad-box", "file_name": "x.png", "instruction": "a", "bbox": [5, 5, 1, 1]},
        {"id": "no-box", "file_name": "x.png", "instruction": "b", "bbox": "here"},
        {"id": "no-text", "file_name": "x.png", "instruction": "", "bbox": [0, 0, 2, 2]},
    ]
    (tmp_path / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    defects = {s.id: s.defect for s in load_dataset(str(tmp_path)).samples}
    assert "degenerate bbox" in defects["bad-box"]
    assert "unusable bbox" in defects["no-box"]
    assert defects["no-text"] == "empty instruction"


def test_duplicate_ids_get_distinct_test_ids(tmp_path):
    row = {"id": "same", "file_name": "x.png", "instruction": "a", "bbox": [0, 0, 2, 2], "app": "A"}
    (tmp_path / "metadata.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(dict(row, instruction="b")) + "\n")
    uids = [s.uid for s in load_dataset(str(tmp_path)).samples]
    assert len(set(uids)) == 2 and uids[1].endswith("-dup2")


@SERIAL
@pytest.mark.parametrize("name, expected", [("screenspot", 5), ("screenspot-pro", 6), ("harness", 5)])
def test_every_format_runs_end_to_end_with_exact_boxes(project, workers, name, expected, tmp_path):
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={FIXTURES / name}", "--detector", "colour", "--grounding-json", str(report), *workers
    )
    assert_counts(result, passed=expected)
    samples = read_json(report)["samples"]
    # the colour detector boxes the drawn pixels: IoU 1 proves the loader's conversion is exact
    assert [r["iou"] for r in samples if r["id"] != "pro_odd"] == [1.0] * (expected - (name == "screenspot-pro"))


@pytest.mark.slow
@needs_shared
def test_shared_screenspot_v1_in_its_original_format(project):
    path = SHARED_DATA / "screenspot-v1"
    dataset = load_dataset(str(path))
    assert len(dataset.samples) == 1272
    assert sum(s.image.exists() for s in dataset.samples) == 4
    result = project.runpytest(f"--dataset={path}", "--detector", "center", "-q", "--tb=no")
    assert_counts(result, missed=4, errors=1268)
    result.stdout.fnmatch_lines(["*samples 1272*errors 1268*"])


@pytest.mark.slow
@needs_shared
@SERIAL
def test_shared_screenagent_accuracy_matches_an_independent_scorer(project, workers, tmp_path):
    path = SHARED_DATA / "screenagent-dev"
    predictions, report = tmp_path / "p.jsonl", tmp_path / "r.json"
    project.runpytest(
        f"--dataset={path}",
        "--detector",
        "center",
        "--detector",
        "random",
        "--grounding-predictions",
        str(predictions),
        "--grounding-json",
        str(report),
        *workers,
    )
    truth = {row["id"]: row["bbox"] for row in read_jsonl(path / "data" / "test" / "metadata.jsonl")}
    document = read_json(report)
    for detector in ("center", "random"):
        lines = [line for line in read_jsonl(predictions) if line["detector"] == detector]
        assert sorted(line["id"] for line in lines) == sorted(truth)
        hits = 0
        for line in lines:
            x1, y1, x2, y2 = truth[line["id"]]
            x, y = line["point"]
            hits += x1 <= x <= x2 and y1 <= y <= y2
        assert document["summary"][detector]["hits"] == hits
        assert document["summary"][detector]["accuracy"] == pytest.approx(hits / len(truth))


def test_hf_tables_without_the_extra_say_how_to_install_it(tmp_path, monkeypatch):
    (tmp_path / "test-00000-of-00001.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(DatasetError, match=r"pip install 'pytest-grounding\[hf\]'"):
        load_dataset(str(tmp_path))
    with pytest.raises(DatasetError, match=r"hf:lmms-lab/ScreenSpot-Pro: the hf extra is not installed"):
        load_dataset("hf:lmms-lab/ScreenSpot-Pro")
