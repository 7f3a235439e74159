"""The public benchmarks' hub mirrors through `hf:`: OSWorld-G's table (MMInstruction/OSWorld-G, written
here with pyarrow in its published columns) converted by osworld_g.py's own row rules, and the file
repositories (UI-Vision, MMBench-GUI, Showdown-Clicks, ScreenSpot-v2-variants) from faked snapshots,
read by their formats: the same targets, slices and benchmark tags as the benchmarks' own loaders."""

import io
import json
import shutil
import zipfile
from fnmatch import fnmatch

import pytest

pytest.importorskip("pyarrow", reason="the hf extra is not installed")

from hf_tables import OSWORLD_ROWS, SIZE, osworld_rows, pro_rows, write_table
from test_benchmarks import run

from helpers import FIXTURES, SERIAL, assert_counts
from pytest_grounding.core.targets import RAY, Absent, AnyOf, Polygon
from pytest_grounding.core.types import Box
from pytest_grounding.datasets import DatasetError, hf_files, load_dataset, with_language
from pytest_grounding.datasets.validate import validate_path

SHARD = "test-00000-of-00001.parquet"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("PYTEST_GROUNDING_CACHE", str(folder))
    return folder / "hf"


def osworld_table(folder, rows=None):
    write_table(folder / "data" / SHARD, rows if rows is not None else osworld_rows())
    return folder


def classification_file(path):
    classified = {
        "text_matching": [{"id": "og-1"}, {"id": "og-3"}],
        "element_recognition": [{"id": "og-1"}, {"id": "og-2"}, {"id": "og-4"}],
        "refusal": [{"id": "og-5"}, {"id": "og-6"}],
    }
    path.write_text(json.dumps({"classified": classified}))
    return path


# -- OSWorld-G's table ---------------------------------------------------------------------------


def test_osworld_g_mirror_rows_keep_their_box_types(tmp_path):
    table = osworld_table(tmp_path / "OSWorld-G")
    samples = {s.id: s for s in load_dataset(f"hf:{table}:test").samples}
    assert [s for s in samples] == [row[0] for row in OSWORLD_ROWS]
    assert samples["og-1"].bbox == Box(20, 20, 50, 50) and samples["og-1"].target is None  # x,y,w,h converted
    square = samples["og-3"].target
    assert isinstance(square, AnyOf) and isinstance(square.shapes[0], Polygon) and square.shapes[0].rule == RAY
    assert square.shapes[0].points == ((90, 40), (130, 40), (130, 80), (90, 80))
    assert samples["og-3"].bbox == Box(90, 40, 130, 80)  # the polygon's bounds
    assert isinstance(samples["og-5"].target, Absent) and samples["og-5"].defect is None
    assert samples["og-7"].defect.startswith(f"row 6 of {SHARD}: unusable bbox")
    bench = samples["og-4"].extra["benchmark"]
    assert bench == {
        "name": "osworld-g",
        "category": ["unclassified"],  # the mirror carries no classification_result.json
        "box_type": "polygon",
        "instructions": "instruction",
        "gui_types": ["Icon"],
    }
    assert samples["og-4"].image_size == SIZE and samples["og-4"].extra["split"] == "test"
    assert samples["og-4"].image.read_bytes()[:4] == b"\x89PNG"


def test_osworld_g_mirror_converts_rows_as_the_json_loader_does(tmp_path):
    """The same rows through osworld_g.py's own loader: the same targets, boxes and defects."""
    table = osworld_table(tmp_path / "mirror")
    folder = tmp_path / "json"
    (folder / "images").mkdir(parents=True)
    json_rows = [{k: v for k, v in row.items() if k != "image"} for row in osworld_rows()]
    for row, table_row in zip(json_rows, osworld_rows(), strict=True):
        (folder / "images" / row["image_path"]).write_bytes(table_row["image"]["bytes"])
    (folder / "OSWorld-G.json").write_text(json.dumps(json_rows))

    def essentials(sample):
        bench = dict(sample.extra["benchmark"], instructions=None)
        return (sample.id, sample.bbox, sample.target, sample.app_category, bench, bool(sample.defect))

    mirror = [essentials(s) for s in load_dataset(f"hf:{table}").samples]
    assert mirror == [essentials(s) for s in load_dataset(str(folder)).samples]


OSWORLD_ANSWERS = {
    "Open the red menu": [50, 50],  # the far corner of x,y,w,h [20, 20, 30, 30], edges included: hit
    "Press the green button": [89, 60],  # one pixel left of [90, 40, 130, 80]: miss
    "Select the green tile": [130, 60],  # on the polygon's right edge: outside under ray casting: miss
    "Pick the blue triangle": [170, 20],  # inside the triangle: hit
    "Click the purple star": "refuse",  # refusal row, refused: hit
    "Click the orange moon": [10, 10],  # refusal row, clicked: miss
}  # og-7's coordinates are three numbers: an error, not scored


@pytest.mark.slow
@SERIAL
def test_suite_scores_the_osworld_g_mirror_as_its_authors(project, workers, tmp_path):
    table = osworld_table(tmp_path / "OSWorld-G")
    classes = classification_file(tmp_path / "classification_result.json")
    result, document = run(project, f"hf:{table}:test:classification={classes}", OSWORLD_ANSWERS, *workers)
    assert_counts(result, passed=3, missed=3, errors=1)
    assert {r["id"]: r["outcome"] for r in document["samples"]} == {
        "og-1": "hit",
        "og-2": "miss",
        "og-3": "miss",
        "og-4": "hit",
        "og-5": "hit",
        "og-6": "miss",
        "og-7": "error",
    }
    block = document["summary"]["table"]
    assert (block["hits"], block["scored"], block["errors"]) == (3, 6, 1)
    assert (block["refusals"]["absent_targets"], block["refusals"]["refused"]) == (2, 1)
    (bench,) = block["benchmarks"]
    assert bench["benchmark"] == "osworld-g" and bench["value"] == pytest.approx(3 / 6)  # refusal rows counted
    categories = {r["value"]: (r["hits"], r["scored"]) for r in bench["slices"]["category"]}
    assert categories == {
        "element_recognition": (2, 3),  # og-1 hit, og-2 miss, og-4 hit
        "refusal": (1, 2),
        "text_matching": (1, 2),  # og-1 hit, og-3 miss
        "unclassified": (0, 0),  # og-7, an error
    }
    assert {r["value"]: r["hits"] for r in bench["slices"]["box_type"]} == {"bbox": 1, "polygon": 1, "refusal": 1}
    result.stdout.fnmatch_lines(["*row 6 of test-00000-of-00001.parquet: unusable bbox*"])


def test_the_hub_name_picks_osworld_g_and_its_split(tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    rows = osworld_rows()
    columns = {k: [row[k] for row in rows] for k in rows[0]}
    data = datasets.Dataset.from_dict(columns).cast_column("image", datasets.Image())
    datasets.DatasetDict({"test": data}).save_to_disk(str(tmp_path / "hub"))
    asked = []

    def load_dataset_offline(name, split=None):
        asked.append((name, split))
        return datasets.load_from_disk(str(tmp_path / "hub"))[split]

    monkeypatch.setattr(datasets, "load_dataset", load_dataset_offline)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dataset = load_dataset("hf:MMInstruction/OSWorld-G")
    assert asked == [("MMInstruction/OSWorld-G", "test")]
    kinds = [type(s.target).__name__ for s in dataset.samples]
    assert kinds == ["NoneType", "NoneType", "AnyOf", "AnyOf", "Absent", "Absent", "NoneType"]


def test_another_instruction_column_is_named_in_the_spec(tmp_path):
    # another instruction column (a refined text, say) is named in the spec; the slice says which
    rows = [dict(row, refined=f"{row['instruction']}, refined") for row in osworld_rows()]
    table = osworld_table(tmp_path / "og", rows)
    sample = load_dataset(f"hf:{table}:instruction=refined").samples[0]
    assert sample.instruction == "Open the red menu, refined"
    assert sample.extra["benchmark"]["instructions"] == "refined"
    with pytest.raises(DatasetError, match="classification= is OSWorld-G's categories file"):
        load_dataset(f"hf:{table}:mapping=screenspot-pro:bbox=box_coordinates:classification=x.json")


def test_validate_passes_good_mirror_rows_and_names_bad_ones(tmp_path):
    good = osworld_table(tmp_path / "good", osworld_rows(OSWORLD_ROWS[:6]))
    out = io.StringIO()
    assert validate_path(f"hf:{good}", out=out) == 0, out.getvalue()
    assert "6 samples on 2 images: 0 errors" in out.getvalue()
    bad = osworld_table(tmp_path / "bad")
    out = io.StringIO()
    assert validate_path(f"hf:{bad}", out=out) == 1, out.getvalue()
    lines = out.getvalue().splitlines()
    assert any(fnmatch(line, f"*og-7*row 6 of {SHARD}: unusable bbox*") for line in lines), out.getvalue()
    assert not any("og-5" in line for line in lines)  # a refusal row needs no box


# -- file repositories ------------------------------------------------------------------------------


def snapshots(tmp_path):
    """Each repository as huggingface_hub would leave it: the fixtures are in the published layouts;
    MMBench-GUI's images are zipped as published (offline_images/<platform>/...)."""
    root = tmp_path / "snapshots"
    folders = {}
    for name, fixture in (
        ("ServiceNow/ui-vision", "ui-vision"),
        ("generalagents/showdown-clicks", "showdown-clicks"),
        ("likaixin/ScreenSpot-v2-variants", "screenspot-v2-variants"),
    ):
        folders[name] = shutil.copytree(FIXTURES / fixture, root / fixture)
    mmbench = root / "mmbench-gui"
    mmbench.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "mmbench-gui" / "L2_annotations.json", mmbench / "L2_annotations.json")
    with zipfile.ZipFile(mmbench / "MMBench-GUI-OfflineImages.zip", "w") as bundle:
        for image in sorted((FIXTURES / "mmbench-gui" / "offline_images").rglob("*.png")):
            bundle.write(image, f"MMBench-GUI-OfflineImages/offline_images/{image.parent.name}/{image.name}")
        bundle.writestr("../../escape.png", b"not here")
    folders["OpenGVLab/MMBench-GUI"] = mmbench
    return folders


def essentials(dataset):
    return [(s.id, s.bbox, s.target, s.instruction, s.extra.get("benchmark"), s.defect) for s in dataset.samples]


@pytest.mark.parametrize(
    ("name", "fixture", "tag"),
    [
        ("ServiceNow/ui-vision", "ui-vision", "ui-vision"),
        ("OpenGVLab/MMBench-GUI", "mmbench-gui", "mmbench-gui"),
        ("generalagents/showdown-clicks", "showdown-clicks", "showdown-clicks"),
        ("likaixin/ScreenSpot-v2-variants", "screenspot-v2-variants", "screenspot-v2-variants"),
    ],
)
def test_repositories_load_as_their_benchmarks_own_loaders(tmp_path, monkeypatch, cache, name, fixture, tag):
    huggingface_hub = pytest.importorskip("huggingface_hub")
    folders = snapshots(tmp_path)
    asked = []

    def snapshot_download(repo_id, repo_type=None, allow_patterns=None):
        asked.append((repo_id, repo_type, tuple(allow_patterns)))
        return str(folders[repo_id])

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    mirror = load_dataset(f"hf:{name}")
    own = load_dataset(str(FIXTURES / fixture))
    assert essentials(mirror) == essentials(own) and len(mirror.samples) > 0
    assert {s.extra["benchmark"]["name"] for s in mirror.samples if not s.defect} == {tag}
    assert mirror.format == "hf" and asked[0][:2] == (name, "dataset")
    assert all(s.image.is_file() for s in mirror.samples if not s.defect)
    with pytest.raises(DatasetError, match=r"publishes files, read by the .* format as published"):
        load_dataset(f"hf:{name}:mapping=screenspot-pro")
    if name == "generalagents/showdown-clicks":  # its one split may be named
        assert essentials(load_dataset(f"hf:{name}:dev")) == essentials(own)
        with pytest.raises(DatasetError, match="split dev"):
            load_dataset(f"hf:{name}:test")
    if name == "OpenGVLab/MMBench-GUI":  # unpacked once into the cache, nothing outside it
        assert all(cache in s.image.parents for s in mirror.samples)
        assert not (tmp_path / "escape.png").exists() and not (cache / "escape.png").exists()


def test_zip_entries_stay_inside_the_unpacked_folder():
    place = hf_files.entry_path
    assert str(place("MMBench-GUI-OfflineImages/offline_images/os_mac/a.png", "offline_images")) == (
        "offline_images/os_mac/a.png"
    )
    assert str(place("os_mac/a.png", "offline_images")) == "offline_images/os_mac/a.png"  # no such component
    assert str(place("screenspotv2_image/web_0.png", None)) == "images/web_0.png"
    for hostile in ("../../escape.png", "/etc/passwd/../x.png", "C:/x.png", "a/.hidden.png"):
        assert place(hostile, "offline_images") is None, hostile


def test_screenspot_pro_tables_keep_the_chinese_instructions(tmp_path):
    rows = pro_rows(3)
    rows[0]["instruction_cn"] = "点击红色方块"
    rows[2]["instruction_cn"] = None
    dataset = load_dataset(f"hf:{write_table(tmp_path / 'pro' / 'train-00000-of-00001.parquet', rows).parent}")
    chinese = with_language(dataset, "cn")
    assert [s.instruction for s in chinese.samples[:2]] == ["点击红色方块", "点击"]
    assert chinese.samples[2].defect == "no instruction_cn in this row" and chinese.fingerprint.endswith("-cn")
    assert dataset.samples[0].instruction == "Click the red square"  # English unless asked
