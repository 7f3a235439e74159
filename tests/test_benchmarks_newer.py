"""VenusBench-GD, WinDeskGround and CAGUI-Grounding (issue 28) end to end: each fixture
(fixtures/build_benchmarks.py, in the benchmark's published schema) runs with and without xdist,
answered from a table keyed by instruction, and is scored exactly as counted by hand here."""

import io
import shutil
from fnmatch import fnmatch

import pytest
from test_benchmarks import check_schema, outcomes, run

from helpers import FIXTURES, SERIAL, assert_counts
from pytest_grounding.datasets import DatasetError, load_dataset
from pytest_grounding.datasets.validate import validate_path


def slice_of(bench, key):
    return {r["value"]: (r["hits"], r["scored"]) for r in bench["slices"][key]}


# -- VenusBench-GD ----------------------------------------------------------------------------------

VENUS = {
    "Click the red login button": [50, 30],  # element, box [10, 10, 50, 30]: its corner, edges included: hit
    "Open the blue cart icon": [99, 75],  # element: one pixel left of [100, 60, 130, 90]: miss
    "Tap the card below the header": [40, 100],  # spatial: hit
    "Create a new note": [20, 80],  # functional: the corner: hit
    "Click the purple settings gear": "refuse",  # refusal row, refused: hit
    "Open the video call button": [30, 20],  # refusal row, clicked: miss
}  # "Check out the basket" (functional) is not in the table: wrong format, a miss in the denominator


@SERIAL
def test_venusbench_gd_scored_as_its_authors(project, workers):
    result, document = run(project, FIXTURES / "venusbench-gd", VENUS, *workers)
    assert_counts(result, passed=4, missed=3)
    assert outcomes(document) == {
        "element_grounding_0": "hit",
        "element_grounding_1": "miss",
        "spatial_grounding_0": "hit",
        "functional_grounding_0": "wrong_format",
        "functional_grounding_1": "hit",
        "refusal_spatial_0": "hit",
        "refusal_spatial_1": "miss",
    }
    block = document["summary"]["table"]
    refusals = block["refusals"]
    assert (refusals["absent_targets"], refusals["refused"], refusals["clicked"]) == (2, 1, 1)
    (bench,) = block["benchmarks"]
    assert bench["benchmark"] == "venusbench-gd" and bench["value"] == pytest.approx(4 / 7)
    assert slice_of(bench, "task") == {
        "element_grounding": (1, 2),
        "functional_grounding": (1, 2),
        "refusal_spatial": (1, 2),
        "spatial_grounding": (1, 1),
    }
    assert slice_of(bench, "tier") == {"advanced": (2, 4), "basic": (2, 3)}
    assert slice_of(bench, "group") == {"Mobile": (2, 2), "Web": (2, 5)}
    assert slice_of(bench, "ui_type") == {"icon": (1, 4), "text": (3, 3)}
    result.stdout.fnmatch_lines(
        [
            "*venusbench-gd (venusbench-gd) headline 57.1%: action_acc: correct over all rows*; pooled 57.1%*",
            "*by group: Mobile 100.0% (2/2), Web 40.0% (2/5)*",
        ]
    )
    check_schema(document)


VENUS_CN = {
    "点击红色登录按钮": [30, 20],  # hit
    "打开蓝色购物车图标": [115, 75],  # hit
    "点击标题下方的卡片": [0, 0],  # miss
    "结算购物篮": [115, 75],  # hit
    "点击紫色设置齿轮": [-1, -1],  # refusal row, the [-1, -1] refusal sentinel: hit
    "打开视频通话按钮": "refuse",  # refusal row: hit
    "Click the red login button": [0, 0],  # the English table's answer: must not be asked under cn
}  # "Create a new note" has no instruction_zh: an error under cn


@SERIAL
def test_venusbench_gd_in_chinese(project, workers):
    result, document = run(project, FIXTURES / "venusbench-gd", VENUS_CN, "--grounding-language", "cn", *workers)
    assert_counts(result, passed=5, missed=1, errors=1)
    assert outcomes(document)["functional_grounding_1"] == "error"
    error = next(r["error"] for r in document["samples"] if r["outcome"] == "error")
    assert "no instruction_cn in this row" in error
    (bench,) = document["summary"]["table"]["benchmarks"]
    assert bench["value"] == pytest.approx(5 / 6) and document["run"]["settings"]["language"] == "cn"
    check_schema(document)


def test_venusbench_gd_refusal_rows_excluded_from_the_pooled_figure_only(project):
    _, document = run(project, FIXTURES / "venusbench-gd", VENUS, "--grounding-refusal-rows", "exclude")
    block = document["summary"]["table"]
    assert (block["hits"], block["scored"]) == (3, 5)
    (bench,) = block["benchmarks"]
    assert bench["value"] == pytest.approx(4 / 7) and bench["pooled_accuracy"] == pytest.approx(3 / 5)


# -- WinDeskGround ----------------------------------------------------------------------------------

WINDESK = {
    "the 'Save' button in the toolbar": [50, 30],  # x, y, w, h [10, 10, 40, 20]: the far corner: hit
    "the address bar of the browser": [99, 75],  # one pixel left of [100, 60, 130, 90]: miss
    "the call button at the bottom right": [200, 150],  # box past the image clipped to it: its corner: hit
    "the 7-Zip extract button": [60, 120],  # gt_bbox x1, y1, x2, y2 (no bbox): the corner: hit
    "the tab strip at the top right": [205, 20],  # inside the box as given, outside it clipped: miss
    "the solitaire card": [0, 0],  # a row without a box: skipped, never asked
    "the missing screen's button": [5, 5],  # a row without its image: skipped
}  # "the settings gear" (the target window's box) is not in the table: wrong format, counted


@SERIAL
def test_windeskground_counts_only_the_rows_its_authors_count(project, workers):
    result, document = run(project, FIXTURES / "windeskground", WINDESK, *workers)
    assert_counts(result, passed=3, missed=3, errors=3)
    got = outcomes(document)
    assert [got[f"row{i:05d}"] for i in range(9)] == [
        "hit",
        "miss",
        "hit",
        "error",
        "error",
        "error",
        "hit",
        "miss",
        "wrong_format",
    ]
    errors = {r["id"]: r["error"] for r in document["samples"] if r["outcome"] == "error"}
    assert all("skipped and not counted" in e for e in errors.values()), errors
    assert "no bbox" in errors["row00003"] and "image not found" in errors["row00004"]
    assert "no instruction" in errors["row00005"]
    (bench,) = document["summary"]["table"]["benchmarks"]
    assert bench["value"] == pytest.approx(3 / 6) and bench["not_counted"] == 3
    assert slice_of(bench, "category") == {
        "Browsers": (0, 2),
        "Communication": (1, 1),
        "Gaming": (0, 0),
        "Productivity": (1, 1),
        "Utilities": (1, 2),
    }
    result.stdout.fnmatch_lines(
        ["*windeskground (windeskground) headline 50.0%: accuracy: correct over the rows counted*3 rows not counted*"]
    )
    from pytest_grounding.render.markdown import report_markdown

    row = "| table | windeskground | windeskground | 50.0% (3 rows not counted) | 50.0% | - |"
    assert row in report_markdown(document)
    check_schema(document)


# -- CAGUI-Grounding --------------------------------------------------------------------------------

CAGUI = {
    "该按钮用于返回上一页。": [50, 30],  # fun2point: the corner: hit
    "点击后打开搜索面板。": [131, 75],  # fun2point: one pixel right: miss
    "设置": [30, 20],  # text2point: hit
    "通讯录": [100, 90],  # text2point: the corner: hit
}  # fun2point "用于发送消息的按钮。" is unanswered: wrong format; text2point-2's abs_position is broken: an error


@SERIAL
def test_cagui_mean_of_fun2point_and_text2point(project, workers):
    result, document = run(project, FIXTURES / "cagui-grounding", CAGUI, *workers)
    assert_counts(result, passed=3, missed=2, errors=1)
    assert outcomes(document) == {
        "fun2point-0": "hit",
        "fun2point-1": "miss",
        "fun2point-2": "wrong_format",
        "text2point-0": "hit",
        "text2point-1": "hit",
        "text2point-2": "error",
    }
    (bench,) = document["summary"]["table"]["benchmarks"]
    assert bench["parts"] == {"fun2point": pytest.approx(1 / 3), "text2point": 1.0}
    assert bench["value"] == pytest.approx(2 / 3) and bench["pooled_accuracy"] == pytest.approx(3 / 5)
    result.stdout.fnmatch_lines(["*(cagui-grounding) headline 66.7%: mean of fun2point and text2point*"])
    check_schema(document)


# -- layouts, sniffing, validate --------------------------------------------------------------------

NEWER = {"venusbench-gd": "venusbench-gd", "windeskground": "windeskground", "cagui-grounding": "cagui-grounding"}


@pytest.mark.parametrize("folder", sorted(NEWER))
def test_each_newer_fixture_is_recognised_and_forceable(folder):
    found = load_dataset(str(FIXTURES / folder))
    assert found.format == NEWER[folder]
    forced = load_dataset(f"{NEWER[folder]}:{FIXTURES / folder}")
    assert [s.id for s in forced.samples] == [s.id for s in found.samples]


def test_the_published_layouts_load_from_each_level():
    venus = FIXTURES / "venusbench-gd"
    assert len(load_dataset(str(venus / "instruction")).samples) == 7  # the --anns_dir folder itself
    element = load_dataset(f"venusbench-gd:{venus / 'instruction' / 'element_grounding.json'}")
    assert [s.id for s in element.samples] == ["element_grounding_0", "element_grounding_1"]
    assert all(s.image.is_file() for s in element.samples)
    level = load_dataset(str(FIXTURES / "windeskground" / "simulation" / "L3"))  # one condition's folder
    assert level.format == "windeskground" and len(level.samples) == 9
    assert {s.extra["benchmark"]["condition"] for s in level.samples} == {"L3"}
    code = FIXTURES / "cagui-grounding" / "eval" / "grounding_eval" / "dataset" / "code"
    ocr = load_dataset(f"cagui-grounding:{code / 'ocr.jsonl'}")
    assert [s.id for s in ocr.samples] == ["text2point-0", "text2point-1", "text2point-2"]
    assert all(s.image.is_file() for s in ocr.samples[:2])


def test_windeskground_conditions_are_named_apart(tmp_path):
    for level in ("L1", "L2"):
        shutil.copytree(FIXTURES / "windeskground" / "simulation" / "L3", tmp_path / "simulation" / level)
    found = load_dataset(str(tmp_path))
    assert found.format == "windeskground" and len(found.samples) == 18
    assert len({s.id for s in found.samples}) == 18  # ids carry their condition
    assert {s.extra["benchmark"]["condition"] for s in found.samples} == {"simulation/L1", "simulation/L2"}


def test_a_wrong_forced_format_names_what_it_looked_for():
    with pytest.raises(DatasetError, match=r"no instruction/<task>\.json"):
        load_dataset(f"venusbench-gd:{FIXTURES / 'windeskground'}")
    with pytest.raises(DatasetError, match=r"no CAGUI cap\.jsonl or ocr\.jsonl"):
        load_dataset(f"cagui-grounding:{FIXTURES / 'venusbench-gd'}")
    with pytest.raises(DatasetError, match=r"no WinDeskGround test\.json"):
        load_dataset(f"windeskground:{FIXTURES / 'cagui-grounding'}")


@pytest.mark.parametrize(
    ("folder", "status", "expected"),
    [
        ("venusbench-gd", 0, "*: loader-note: refusal_spatial.json: 1 refusal rows carry a bbox*"),
        ("windeskground", 1, "row00004: *skipped and not counted*image not found: desktop_000009.jpg*"),
        ("windeskground", 1, "row00002: loader-note: box ?150.0, 100.0, 230.0, 180.0? clipped to the 200x150 image*"),
        ("cagui-grounding", 1, "text2point-2: degenerate-box: ocr.jsonl:3: unusable bbox*"),
    ],
)
def test_validate_checks_the_newer_formats(folder, status, expected):
    out = io.StringIO()
    assert validate_path(str(FIXTURES / folder), out=out) == status, out.getvalue()
    assert any(fnmatch(line, expected) for line in out.getvalue().splitlines()), out.getvalue()


def test_a_folder_of_datasets_is_not_taken_for_windeskground_conditions():
    with pytest.raises(DatasetError, match="not a dataset this plugin recognises"):
        load_dataset(str(FIXTURES))


def test_a_full_venusbench_gd_run_is_known_to_the_reproduction_check():
    from pytest_grounding.analysis.reproduce import shipped_table

    table = shipped_table()
    found = table.identify({"format": "venusbench-gd", "samples": 6166, "name": "venusbench-gd"})
    assert found is not None and found.id == "venusbench-gd"
    assert table.identify({"format": "venusbench-gd", "samples": 7, "name": "venusbench-gd"}) is None
    figures = {r.model: r.figure for r in table.candidates("ui-venus-1.5", "venusbench-gd")}
    assert figures == {"UI-Venus-1.5-2B": 67.3, "UI-Venus-1.5-8B": 72.3, "UI-Venus-1.5-30B-A3B": 75.0}
