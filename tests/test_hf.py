"""The hf format: tables shaped like the published ScreenSpot-v2 / ScreenSpot-Pro mirrors, written
here with pyarrow; loading, box conventions, the image cache, bad rows, validate and whole runs."""

import json
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("pyarrow", reason="the hf extra is not installed")

from hf_tables import (
    SIZE,
    SQUARES,
    as_json_text,
    image_cell,
    normalized_rows,
    pro_rows,
    screen_png,
    v2_rows,
    write_table,
)

from helpers import SERIAL, assert_counts, read_json
from pytest_grounding.core.types import Box
from pytest_grounding.datasets import DatasetError, load_dataset


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Every test extracts images into its own cache folder."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PYTEST_GROUNDING_CACHE", str(folder))
    return folder / "hf"


def by_id(dataset):
    return {s.id: s for s in dataset.samples}


def test_screenspot_pro_mirror_is_recognised_by_its_columns(tmp_path, cache):
    write_table(tmp_path / "ScreenSpot-Pro" / "data" / "train-00000-of-00001.parquet", pro_rows(4, screens=2))
    dataset = load_dataset(str(tmp_path / "ScreenSpot-Pro"))  # no prefix: a folder of parquet is sniffed
    assert dataset.format == "hf" and dataset.name == "screenspot-pro" and len(dataset.samples) == 4
    sample = by_id(dataset)["vscode_macos_1"]
    assert sample.bbox == Box(*SQUARES["green"])  # xyxy pixels, kept as they are
    assert (sample.element_type, sample.app, sample.app_category, sample.platform) == ("icon", "vscode", "Dev", "macos")
    assert sample.image_size == SIZE and sample.defect is None
    assert sample.extra["split"] == "train" and sample.extra["row"] == 1
    # two screens, four rows: each screenshot written once, inside the cache, decodable
    images = {s.image for s in dataset.samples}
    assert len(images) == 2 and all(p.parent.parent == cache and p.read_bytes()[:4] == b"\x89PNG" for p in images)
    assert by_id(dataset)["vscode_macos_0"].image == by_id(dataset)["vscode_macos_2"].image


def test_v2_mirror_boxes_are_converted_from_xywh(tmp_path):
    write_table(tmp_path / "v2" / "train-00000-of-00001.parquet", v2_rows())
    dataset = load_dataset(f"hf:{tmp_path / 'v2'}")
    assert [s.bbox for s in dataset.samples] == [Box(*SQUARES[c]) for c in SQUARES]
    assert dataset.samples[0].id == "train_00000" and dataset.samples[0].element_type == "text"
    assert dataset.samples[0].image_size == SIZE  # from the image header: the table has no size column


def test_normalized_mirrors_scale_by_the_image_size(tmp_path):
    write_table(tmp_path / "roots" / "test-00000-of-00001.parquet", normalized_rows("file_name"))
    dataset = load_dataset(f"hf:{tmp_path / 'roots'}")  # rootsautomation's layout: file_name, 0-1 xyxy
    assert [s.bbox.as_list() for s in dataset.samples] == [pytest.approx(list(SQUARES[c])) for c in SQUARES]
    # HongxinLi's layout has no file column: its columns alone do not say the convention
    write_table(tmp_path / "hongxin" / "test-00000-of-00001.parquet", normalized_rows())
    with pytest.raises(DatasetError, match=r"no known column layout \(columns: image, bbox, instruction.*mapping="):
        load_dataset(f"hf:{tmp_path / 'hongxin'}")
    dataset = load_dataset(f"hf:{tmp_path / 'hongxin'}:test:mapping=screenspot-v2-normalized")
    assert dataset.samples[2].bbox.as_list() == pytest.approx(list(SQUARES["blue"]))


def test_tiger_lab_style_json_text_columns(tmp_path):
    rows = as_json_text(pro_rows(3), "bbox", "img_size")
    write_table(tmp_path / "tiger" / "test-00000-of-00001.parquet", rows)
    sample = by_id(load_dataset(f"hf:{tmp_path / 'tiger'}"))["vscode_macos_2"]
    assert sample.bbox == Box(*SQUARES["blue"]) and sample.image_size == SIZE


def test_unknown_layout_names_its_columns_and_spec_options_map_it(tmp_path):
    rows = [
        {"screenshot": image_cell(screen_png()), "query": "Click the red square", "target": [20, 20, 30, 30]},
    ]
    write_table(tmp_path / "mine" / "eval.parquet", rows)
    with pytest.raises(DatasetError) as info:
        load_dataset(f"hf:{tmp_path / 'mine'}")
    message = str(info.value)
    assert "columns: screenshot, query, target" in message and "image=COL" in message and "box=xyxy|xywh" in message
    spec = f"hf:{tmp_path / 'mine'}:image=screenshot:instruction=query:bbox=target:box=xywh:units=px"
    assert load_dataset(spec).samples[0].bbox == Box(*SQUARES["red"])
    with pytest.raises(DatasetError, match="box=xyzw is not one of xyxy, xywh"):
        load_dataset(spec.replace("box=xywh", "box=xyzw"))
    with pytest.raises(DatasetError, match="unknown option"):
        load_dataset(spec + ":colour=blue")
    with pytest.raises(DatasetError, match=r"needs column.*query2"):
        load_dataset(spec.replace("instruction=query", "instruction=query2"))


def test_bad_rows_are_defects_naming_the_row_the_rest_load(tmp_path):
    rows = pro_rows(5)
    rows[1]["image"] = image_cell(None, None)  # no image bytes
    rows[2]["bbox"] = [1, 2]  # not a box
    rows[3]["bbox"] = [50, 50, 40, 60]  # x2 < x1
    write_table(tmp_path / "bad" / "train-00000-of-00001.parquet", rows)
    dataset = load_dataset(f"hf:{tmp_path / 'bad'}")
    defects = {s.id: s.defect for s in dataset.samples if s.defect}
    assert set(defects) == {"vscode_macos_1", "vscode_macos_2", "vscode_macos_3"}
    assert defects["vscode_macos_1"].startswith("row 1 of train-00000-of-00001.parquet: no image")
    assert defects["vscode_macos_2"] == "row 2 of train-00000-of-00001.parquet: unusable bbox [1, 2]"
    assert "row 3 of" in defects["vscode_macos_3"] and "degenerate bbox" in defects["vscode_macos_3"]
    # a normalized mirror whose column holds pixels: each row says so instead of scoring wrong boxes
    rows = normalized_rows("file_name")
    rows[0]["bbox"] = list(SQUARES["red"])
    write_table(tmp_path / "roots" / "test-00000-of-00001.parquet", rows)
    first = load_dataset(f"hf:{tmp_path / 'roots'}").samples[0]
    assert "is not in 0-1 fractions" in first.defect and "units=px" in first.defect


def test_a_corrupt_file_is_a_dataset_error_naming_it(tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "test-00000-of-00001.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetError, match=r"test-00000-of-00001.parquet: cannot read as parquet"):
        load_dataset(f"hf:{tmp_path / 'broken'}")


def test_splits_are_chosen_by_name(tmp_path):
    write_table(tmp_path / "two" / "data" / "test-00000-of-00001.parquet", v2_rows(2))
    write_table(tmp_path / "two" / "data" / "train-00000-of-00001.parquet", v2_rows(3))
    with pytest.raises(DatasetError, match="holds splits test, train: name one"):
        load_dataset(str(tmp_path / "two"))
    assert len(load_dataset(f"hf:{tmp_path / 'two'}:test").samples) == 2
    assert len(load_dataset(f"hf:{tmp_path / 'two'}:train").samples) == 3
    with pytest.raises(DatasetError, match=r"no split 'dev' \(splits here: test, train\)"):
        load_dataset(f"hf:{tmp_path / 'two'}:dev")


def test_images_are_extracted_once_and_shared_by_concurrent_loaders(tmp_path, cache):
    write_table(tmp_path / "pro" / "train-00000-of-00001.parquet", pro_rows(6, screens=3))
    spec = f"hf:{tmp_path / 'pro'}"
    with ThreadPoolExecutor(4) as pool:  # as xdist workers loading at once
        loaded = list(pool.map(lambda _: load_dataset(spec), range(4)))
    assert len({tuple(s.image for s in d.samples) for d in loaded}) == 1
    folders = [p for p in cache.iterdir()]
    assert len(folders) == 1 and not folders[0].name.startswith(".")  # no scratch folder left behind
    assert len(list(folders[0].glob("*.png"))) == 3
    stamp = (folders[0] / "manifest.json").stat().st_mtime_ns
    again = load_dataset(spec)
    assert (folders[0] / "manifest.json").stat().st_mtime_ns == stamp  # read, not written again
    assert again.fingerprint == loaded[0].fingerprint


def test_fingerprint_follows_the_annotations(tmp_path):
    write_table(tmp_path / "a" / "train-00000-of-00001.parquet", pro_rows(3))
    rows = pro_rows(3)
    rows[0]["bbox"] = [21, 20, 50, 50]
    write_table(tmp_path / "b" / "train-00000-of-00001.parquet", rows)
    assert load_dataset(f"hf:{tmp_path / 'a'}").fingerprint != load_dataset(f"hf:{tmp_path / 'b'}").fingerprint


def test_rows_referring_to_files_stay_inside_the_folder(tmp_path):
    folder = tmp_path / "files"
    (folder / "shots").mkdir(parents=True)
    (folder / "shots" / "s0.png").write_bytes(screen_png())
    rows = [
        {"image": "shots/s0.png", "instruction": "Click the red square", "bbox": list(SQUARES["red"])},
        {"image": "../../etc/passwd", "instruction": "Click the red square", "bbox": list(SQUARES["red"])},
    ]
    write_table(folder / "test.parquet", rows)
    dataset = load_dataset(f"hf:{folder}:image=image:instruction=instruction:bbox=bbox:box=xyxy:units=px")
    good, bad = sorted(dataset.samples, key=lambda s: s.id)
    assert good.image == folder / "shots" / "s0.png" and good.defect is None
    assert "leads outside the dataset folder" in bad.defect


def test_negative_flag_is_carried_in_extra(tmp_path):
    rows = pro_rows(2)
    rows[0]["is_absent"], rows[1]["is_absent"] = False, True
    rows[1]["bbox"] = None
    write_table(tmp_path / "neg" / "train-00000-of-00001.parquet", rows)
    first, second = load_dataset(f"hf:{tmp_path / 'neg'}:negative=is_absent").samples
    assert "negative" not in first.extra and first.defect is None
    assert second.extra["negative"] is True and second.defect is None


def test_datasets_save_to_disk_folder_loads(tmp_path):
    datasets = pytest.importorskip("datasets")
    table = {k: [row[k] for row in pro_rows(3)] for k in pro_rows(1)[0]}
    data = datasets.Dataset.from_dict(table).cast_column("image", datasets.Image())
    datasets.DatasetDict({"test": data}).save_to_disk(str(tmp_path / "saved"))
    dataset = load_dataset(f"hf:{tmp_path / 'saved'}:test")
    assert len(dataset.samples) == 3 and by_id(dataset)["vscode_macos_0"].bbox == Box(*SQUARES["red"])
    assert all(s.image.is_file() for s in dataset.samples)


def test_hub_name_without_network_fails_fast_with_a_clear_error(monkeypatch):
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there: a refused connection
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    started = time.monotonic()
    with pytest.raises(DatasetError, match=r"hf:lmms-lab/ScreenSpot-Pro: cannot reach 127.0.0.1:9.*HF_HUB_OFFLINE=1"):
        load_dataset("hf:lmms-lab/ScreenSpot-Pro")
    assert time.monotonic() - started < 10


def test_repositories_of_files_are_read_by_their_own_formats(tmp_path, monkeypatch, cache):
    """OS-Copilot/ScreenSpot-v2 (JSON + a zip of images) and likaixin/ScreenSpot-Pro (annotations/ +
    images/) as huggingface_hub would download them, without network."""
    huggingface_hub = pytest.importorskip("huggingface_hub")
    v2 = tmp_path / "snapshots" / "abc123"
    v2.mkdir(parents=True)
    rows = [
        {
            "img_filename": "web_0.png",
            "bbox": [20, 20, 30, 30],
            "instruction": "Click the red square",
            "data_type": "icon",
            "data_source": "gitlab",
        }
    ]
    (v2 / "screenspot_web_v2.json").write_text(json.dumps(rows))
    with zipfile.ZipFile(v2 / "screenspotv2_image.zip", "w") as bundle:
        bundle.writestr("screenspotv2_image/web_0.png", screen_png())
        bundle.writestr("../../escape.png", b"not here")  # unpacked by base name: stays inside
    pro = tmp_path / "pro-snapshot"
    (pro / "annotations").mkdir(parents=True)
    (pro / "images" / "vscode_macos").mkdir(parents=True)
    (pro / "images" / "vscode_macos" / "s0.png").write_bytes(screen_png())
    row = {
        "img_filename": "vscode_macos/s0.png",
        "bbox": list(SQUARES["blue"]),
        "instruction": "Click the blue square",
        "id": "vscode_macos_0",
        "application": "vscode",
        "platform": "macos",
        "img_size": list(SIZE),
        "ui_type": "icon",
        "group": "Dev",
    }
    (pro / "annotations" / "vscode_macos.json").write_text(json.dumps([row]))
    asked = []

    def snapshot_download(name, repo_type=None, allow_patterns=None):
        asked.append((name, repo_type))
        return str(v2 if "v2" in name.lower() else pro)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dataset = load_dataset("hf:OS-Copilot/ScreenSpot-v2")
    (sample,) = dataset.samples
    assert sample.bbox == Box(*SQUARES["red"]) and sample.image.read_bytes()[:4] == b"\x89PNG"  # xywh converted
    assert sample.image.parent.parent.parent == cache and not (tmp_path / "escape.png").exists()
    assert load_dataset("hf:likaixin/ScreenSpot-Pro").samples[0].bbox == Box(*SQUARES["blue"])
    assert asked == [("OS-Copilot/ScreenSpot-v2", "dataset"), ("likaixin/ScreenSpot-Pro", "dataset")]
    with pytest.raises(DatasetError, match="is not a hub name"):
        load_dataset("hf:./nowhere/at-all")


@pytest.mark.slow
def test_validate_reports_bad_rows_by_row(tmp_path):
    rows = pro_rows(3)
    rows[1]["image"] = image_cell(None, None)
    rows[2]["img_size"] = [400, 300]  # declared size differs from the image
    write_table(tmp_path / "pro" / "train-00000-of-00001.parquet", rows)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_grounding", "validate", f"hf:{tmp_path / 'pro'}"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "vscode_macos_1: degenerate-box" not in done.stdout
    assert "vscode_macos_1: missing-file" in done.stdout or "vscode_macos_1: unusable-sample" in done.stdout
    assert "row 1 of train-00000-of-00001.parquet: no image" in done.stdout
    assert "vscode_macos_2: size-mismatch: declared 400x300, file is 200x120" in done.stdout
    clean = tmp_path / "clean"
    write_table(clean / "train-00000-of-00001.parquet", pro_rows(3))
    done = subprocess.run(
        [sys.executable, "-m", "pytest_grounding", "validate", f"hf:{clean}"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "3 samples on 2 images: 0 errors" in done.stdout, done.stdout


@SERIAL
def test_suite_runs_on_a_parquet_mirror(project, workers, tmp_path):
    rows = pro_rows(6, screens=2)
    rows[5]["image"] = image_cell(None, None)
    write_table(tmp_path / "pro" / "data" / "train-00000-of-00001.parquet", rows)
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset=hf:{tmp_path / 'pro'}:train", "--detector", "colour", "--grounding-json", str(report), *workers
    )
    assert_counts(result, passed=5, errors=1)
    result.stdout.fnmatch_lines(["dataset pro: hf, 6 samples, 1 unusable, fingerprint *"])
    result.stdout.fnmatch_lines(["*row 5 of train-00000-of-00001.parquet: no image*"])
    document = read_json(report)
    assert document["summary"]["colour"]["hits"] == 5


@pytest.mark.slow
@SERIAL
def test_suite_runs_on_a_sniffed_folder_with_the_center_floor(project, workers, tmp_path):
    write_table(tmp_path / "v2" / "train-00000-of-00001.parquet", v2_rows())
    result = project.runpytest(f"--dataset={tmp_path / 'v2'}", "--detector", "center", *workers)
    # the centre (100, 60) lies in the green square only
    assert_counts(result, passed=1, missed=2)


def test_hub_name_picks_the_mirrors_mapping_and_split(tmp_path, monkeypatch):
    """The hub path end to end without network: the datasets library's answer replaced by the same
    memory-mapped arrow files it would keep in its cache."""
    datasets = pytest.importorskip("datasets")
    rows = normalized_rows()  # HongxinLi's columns: only the hub name says the boxes are 0-1 fractions
    table = {k: [row[k] for row in rows] for k in rows[0]}
    data = datasets.Dataset.from_dict(table).cast_column("image", datasets.Image())
    datasets.DatasetDict({"test": data}).save_to_disk(str(tmp_path / "hub"))
    asked = []

    def load_dataset_offline(name, split=None):
        asked.append((name, split))
        return datasets.load_from_disk(str(tmp_path / "hub"))[split]

    monkeypatch.setattr(datasets, "load_dataset", load_dataset_offline)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # skips the reachability check, as a user's offline cache would
    dataset = load_dataset("hf:HongxinLi/ScreenSpot_v2")
    assert asked == [("HongxinLi/ScreenSpot_v2", "test")]
    assert dataset.name == "screenspot_v2" and dataset.format == "hf"
    assert [s.bbox.as_list() for s in dataset.samples] == [pytest.approx(list(SQUARES[c])) for c in SQUARES]


def test_a_damaged_image_cache_is_an_error_naming_it(tmp_path, cache):
    write_table(tmp_path / "pro" / "train-00000-of-00001.parquet", pro_rows(2))
    load_dataset(f"hf:{tmp_path / 'pro'}")
    (manifest,) = cache.glob("*/manifest.json")
    manifest.write_text("{broken")
    with pytest.raises(DatasetError, match=r"manifest.json: unreadable image cache.*delete"):
        load_dataset(f"hf:{tmp_path / 'pro'}")


def test_a_mapping_file_maps_a_teams_own_table(tmp_path):
    rows = [{"shot": image_cell(screen_png()), "ask": "Click the green square", "where": [90, 40, 40, 40]}]
    write_table(tmp_path / "ours" / "test.parquet", rows)
    columns = {"image": "shot", "instruction": "ask", "bbox": "where", "box": "xywh", "units": "px"}
    (tmp_path / "columns.json").write_text(json.dumps(columns))
    # relative to the base folder (a suite's folder, or the working directory on the command line)
    dataset = load_dataset("hf:ours:mapping=columns.json", base=tmp_path)
    assert dataset.samples[0].bbox == Box(*SQUARES["green"])
    (tmp_path / "columns.json").write_text(json.dumps({**columns, "colour": "x"}))
    with pytest.raises(DatasetError, match=r"mapping file .*columns.json: unknown key\(s\) colour"):
        load_dataset("hf:ours:mapping=columns.json", base=tmp_path)
