"""The public benchmarks end to end: each fixture (fixtures/build_benchmarks.py, in the benchmark's
published schema) loads, runs with and without xdist, and a detector that answers from a table
(keyed by instruction, never by the target) is scored exactly as counted by hand here."""

import io
import json
from importlib.resources import files

import pytest

from helpers import FIXTURES, SERIAL, assert_counts, read_json
from pytest_grounding.datasets import DatasetError, load_dataset
from pytest_grounding.datasets.validate import validate_path

TABLE_CONFTEST = '''
import json
from pathlib import Path

from pytest_grounding.core.types import Prediction

HERE = Path(__file__).parent


class Table:
    """Answers from answers.json: instruction -> [x, y], [[x, y], ...] or "refuse"."""

    name = "table"

    def __init__(self):
        self.answers = json.loads((HERE / "answers.json").read_text(encoding="utf-8"))

    def predict(self, query):
        answer = self.answers.get(query.instruction)
        if answer is None:
            return Prediction.no_answer(raw="no idea")
        if answer == "refuse":
            return Prediction.refusal("not on this screen", raw="NONE")
        if isinstance(answer[0], list):
            return Prediction(points=[tuple(p) for p in answer], raw=str(answer))
        return Prediction(point=tuple(answer), raw=str(answer))


def pytest_grounding_register_detectors(registry):
    registry.register("table", Table)
'''


def run(project, dataset, answers, *args):
    project.makeconftest(TABLE_CONFTEST)
    (project.path / "answers.json").write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
    report = project.path / "report.json"
    result = project.runpytest(f"--dataset={dataset}", "--detector", "table", "--grounding-json", str(report), *args)
    return result, read_json(report) if report.exists() else None


def outcomes(document):
    return {r["id"]: r["outcome"] for r in document["samples"]}


def check_schema(document):
    """The report validates against the published schema (where jsonschema is installed: the
    core-only CI run has none; the scoring asserts above ran either way)."""
    try:
        import jsonschema
    except ImportError:
        return
    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


# -- OSWorld-G ------------------------------------------------------------------------------------

OSWORLD = {
    "Open the red menu": [50, 30],  # x,y,w,h [10, 10, 40, 20]: the far corner, edges included: hit
    "Press the blue button": [99, 75],  # one pixel left of [100, 60, 130, 90]: miss
    "Select the red tile": [60, 100],  # a polygon's right edge: outside under ray casting: miss
    "Pick the blue triangle": [150, 20],  # inside the triangle: hit
    "Click the purple star": "refuse",  # refusal row, refused: hit
    "Click the orange moon": [10, 10],  # refusal row, clicked: miss
}  # og-7's box is broken: an error, not scored


@SERIAL
def test_osworld_g_scored_as_its_authors(project, workers):
    result, document = run(project, FIXTURES / "osworld-g", OSWORLD, *workers)
    assert_counts(result, passed=3, missed=3, errors=1)
    assert outcomes(document) == {
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
    assert block["refusals"] == {
        "policy": "include",
        "absent_targets": 2,
        "refused": 1,
        "clicked": 1,
        "refusal_accuracy": 0.5,
        "false_refusals": 0,
        "present_targets": 4,
    }
    (bench,) = block["benchmarks"]
    assert bench["benchmark"] == "osworld-g" and bench["value"] == pytest.approx(3 / 6)
    categories = {r["value"]: (r["hits"], r["scored"]) for r in bench["slices"]["category"]}
    assert categories == {
        "element_recognition": (2, 3),  # og-1 hit, og-2 miss, og-4 hit
        "refusal": (1, 2),
        "text_matching": (1, 2),  # og-1 hit, og-3 miss
        "unclassified": (0, 0),  # og-7, an error
    }
    assert {r["value"]: r["hits"] for r in bench["slices"]["box_type"]} == {"bbox": 1, "polygon": 1, "refusal": 1}
    result.stdout.fnmatch_lines(
        [
            "*absent targets 2: refused 1 (hits), clicked 1 (misses)*refusals on present targets 0*",
            "*osworld-g-original (osworld-g) headline 50.0%: accuracy over all rows, refusal rows included*",
            "*by category: element_recognition 66.7% (2/3), refusal 50.0% (1/2), text_matching 50.0% (1/2)*",
        ]
    )
    check_schema(document)


@pytest.mark.slow
def test_osworld_g_refusal_rows_excluded_and_a_false_refusal(project):
    answers = dict(OSWORLD, **{"Open the red menu": "refuse"})
    result, document = run(project, FIXTURES / "osworld-g", answers, "--grounding-refusal-rows", "exclude")
    block = document["summary"]["table"]
    # og-1 refused though present (miss), og-4 hit; og-5 and og-6 left out of the pooled figure
    assert (block["hits"], block["scored"]) == (1, 4)
    assert block["refusals"]["false_refusals"] == 1 and block["refusals"]["policy"] == "exclude"
    assert block["benchmarks"][0]["value"] == pytest.approx(2 / 6)  # the authors' figure keeps them
    assert document["run"]["settings"]["refusal_rows"] == "exclude"
    result.stdout.fnmatch_lines(["*og-1: refused (said not on screen)*", "*left out of the accuracy above*"])
    from pytest_grounding.render.markdown import report_markdown

    markdown = report_markdown(document)
    assert "| table | osworld-g-original | osworld-g | 33.3% | 25.0% | - |" in markdown
    assert "refusals on present targets 1; absent-target rows left out of the accuracy" in markdown
    check_schema(document)


@pytest.mark.slow
def test_osworld_g_refined_file_and_bad_policy(project):
    _, document = run(project, f"osworld-g:{FIXTURES / 'osworld-g' / 'OSWorld-G_refined.json'}", {})
    assert {r["instruction"].split(":")[0] for r in document["samples"] if r["outcome"] != "error"} == {"Refined"}
    assert document["run"]["datasets"][0]["name"] == "osworld-g-refined"
    bad, _ = run(project, FIXTURES / "osworld-g", {}, "--grounding-refusal-rows", "maybe")
    assert bad.ret != 0
    bad.stderr.fnmatch_lines(["*--grounding-refusal-rows: 'maybe' is not one of include, exclude*"])


# -- UI-Vision, MMBench-GUI -----------------------------------------------------------------------


@SERIAL
def test_ui_vision_mean_of_splits(project, workers):
    answers = {
        "Click the red square": [20, 10],  # basic: the corner of a box given with reversed corners: hit
        "Click the blue square": [115, 75],  # basic: hit
        "Open the project settings": [0, 0],  # functional: miss
        "Click the element right of the red square": [130, 90],  # spatial: hit
    }  # "Click the element below the toolbar" (spatial) is not in the table: wrong format
    result, document = run(project, FIXTURES / "ui-vision", answers, *workers)
    assert_counts(result, passed=3, missed=2)
    (bench,) = document["summary"]["table"]["benchmarks"]
    assert bench["parts"] == {"basic": 1.0, "functional": 0.0, "spatial": 0.5}
    assert bench["value"] == pytest.approx(0.5) and bench["pooled_accuracy"] == pytest.approx(3 / 5)
    result.stdout.fnmatch_lines(["*(ui-vision) headline 50.0%: Final Avg*; pooled 60.0%*"])
    check_schema(document)


@pytest.mark.slow
@SERIAL
def test_mmbench_gui_mean_of_basic_and_advanced(project, workers):
    answers = {
        "Click the red button": [40, 30],  # basic, windows: hit
        "Click the blue button": [10, 10],  # basic, windows: miss
        "Click the corner button": [0, 0],  # basic, mac: box with -1 read as 0: hit on the edge
        "Open what saves the file": [140, 105],  # advanced, windows, box in pixels: corner hit
        "Open the item that shows help": [10, 10],  # advanced, mac: miss
    }
    result, document = run(project, FIXTURES / "mmbench-gui", answers, *workers)
    assert_counts(result, passed=3, missed=2)
    (bench,) = document["summary"]["table"]["benchmarks"]
    assert bench["parts"] == {"advanced": 0.5, "basic": pytest.approx(2 / 3)}
    assert bench["value"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    platforms = {r["value"]: (r["hits"], r["scored"]) for r in bench["slices"]["platform"]}
    assert platforms == {"os_mac": (1, 2), "os_windows": (2, 3)}
    check_schema(document)


# -- ScreenSpot-v2 variants and ScreenSpot-Pro in Chinese -------------------------------------------

VARIANTS = {
    "Open the red tab": [30, 20],  # instruction: hit
    "Press the blue key": [115, 75],  # instruction: hit
    "Tap the red card": [0, 0],  # instruction: miss
    "Click to open the red tab": [10, 10],  # action: hit (corner)
    "Click to press the blue key": "refuse",  # action: a refusal on a present target: miss
    "A red tab at the top left": [50, 30],  # description (from `decription`): hit
    "A blue key in the middle": [99, 59],  # description: miss
    "A red card on the left": [40, 100],  # description: hit
    "Open the gold tab": "refuse",  # negative: hit
    "Press the grey key": [115, 75],  # negative: a click on an absent target: miss
    "Tap the violet card": [-1, -1],  # negative: the [-1, -1] refusal sentinel: hit
}


@pytest.mark.slow
@SERIAL
def test_screenspot_variants_styles_and_negatives(project, workers):
    result, document = run(project, FIXTURES / "screenspot-v2-variants", VARIANTS, *workers)
    assert_counts(result, passed=7, missed=4)
    block = document["summary"]["table"]
    assert (block["hits"], block["scored"]) == (7, 11)
    refusals = block["refusals"]
    assert (refusals["absent_targets"], refusals["refused"], refusals["clicked"], refusals["false_refusals"]) == (
        3,
        2,
        1,
        1,
    )
    (bench,) = block["benchmarks"]
    assert bench["parts"] == {
        "action": 0.5,
        "description": pytest.approx(2 / 3),
        "instruction": pytest.approx(2 / 3),
        "negative": pytest.approx(2 / 3),
    }
    check_schema(document)


def test_screenspot_variants_one_style_by_keyword(project):
    result, document = run(project, FIXTURES / "screenspot-v2-variants", VARIANTS, "-k", "negative")
    assert_counts(result, passed=2, missed=1, deselected=8)
    assert sorted(outcomes(document)) == ["d1-negative", "d2-negative", "m1-negative"]


@pytest.mark.slow
@SERIAL
def test_screenspot_pro_in_chinese(project, workers):
    answers = {"打开红色菜单": [30, 20], "按下蓝色按钮": [0, 0], "Open the red menu": [0, 0]}
    result, document = run(project, FIXTURES / "screenspot-pro-cn", answers, "--grounding-language", "cn", *workers)
    assert_counts(result, passed=1, missed=1, errors=1)
    assert outcomes(document) == {"cn-1": "hit", "cn-2": "miss", "cn-3": "error"}
    errors = [r["error"] for r in document["samples"] if r["outcome"] == "error"]
    assert "no instruction_cn in this row" in errors[0]
    assert document["run"]["settings"]["language"] == "cn"
    _, english_doc = run(project, FIXTURES / "screenspot-pro-cn", answers)
    assert outcomes(english_doc)["cn-1"] == "miss"  # asked in English: the table's English answer
    assert english_doc["run"]["datasets"][0]["fingerprint"] != document["run"]["datasets"][0]["fingerprint"]


def test_chinese_on_a_dataset_without_translations_is_a_usage_error(project):
    result, _ = run(project, FIXTURES / "mini", {}, "--grounding-language", "cn")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*has no instruction_cn in any row*--grounding-language cn*"])


# -- Showdown-Clicks, CUActSpot ---------------------------------------------------------------------


@pytest.mark.slow
@SERIAL
def test_showdown_clicks_with_bootstrap_interval(project, workers):
    answers = {
        "Click the red button": [10, 10],  # corner: hit
        "Click left of the red button": [9, 30],  # corner: hit
        "Click the blue button": [131, 75],  # miss
        "Click the blue button's edge": [101, 90],  # corner: hit
        "Click the empty area": [30, 20],  # hit
    }  # sc-6 has a coordinate that is not a number: an error naming its line
    result, document = run(project, FIXTURES / "showdown-clicks", answers, *workers)
    assert_counts(result, passed=4, missed=1, errors=1)
    (bench,) = document["summary"]["table"]["benchmarks"]
    assert bench["value"] == pytest.approx(0.8)
    low, high = bench["ci95"]
    assert 0 <= low <= 0.8 <= high <= 1
    assert document["intervals"]["cluster"].startswith("screen")
    error = next(r["error"] for r in document["samples"] if r["outcome"] == "error")
    assert "line 7" in error and "'abc'" in error
    result.stdout.fnmatch_lines(["*(showdown-clicks) headline 80.0%: accuracy (with its 95% interval*; 95% CI *-*"])
    check_schema(document)


CUACTSPOT = {
    "Drag the red box onto the blue box": [[30, 20], [115, 75]],  # rank 1 then rank 2: hit
    "Drag the blue box onto the red box": [[30, 20], [115, 75]],  # the drag in the wrong order: miss
    "Click the save button": [40, 100],  # one unranked target: hit
    "Click the close button, not the delete button": [[40, 100], [150, 120]],  # a point in a banned region
    "Select both header cells": [[115, 75], [30, 20]],  # unranked targets, any order: hit
    "点击三角形的边": [165, 30],  # on the triangle's slanted edge: inside (boundary inclusive): hit
    "Draw a path through the three marks": [[20, 20], [90, 70]],  # 2 of 3 ranked points: miss
}


@pytest.mark.slow
@SERIAL
def test_cuactspot_mean_over_modalities(project, workers):
    result, document = run(project, FIXTURES / "cuactspot", CUACTSPOT, *workers)
    assert_counts(result, passed=4, missed=3)
    assert outcomes(document) == {
        "Canvas-001": "hit",
        "Canvas-002": "miss",
        "GUI-001": "hit",
        "GUI-002": "miss",
        "Table-001": "hit",
        "Text-001": "hit",
        "Image-001": "miss",
    }
    (bench,) = document["summary"]["table"]["benchmarks"]
    assert bench["parts"] == {"Canvas": 0.5, "GUI": 0.5, "Image": 0.0, "Table": 1.0, "Text": 1.0}
    assert bench["value"] == pytest.approx(0.6) and bench["pooled_accuracy"] == pytest.approx(4 / 7)
    drag = next(r for r in document["samples"] if r["id"] == "Canvas-001")
    assert drag["points"] == [[30, 20], [115, 75]] and drag["target_shape"]["ordered"] is True
    kinds = {r["value"] for r in bench["slices"]["task_kind"]}
    assert kinds == {"drag", "multi-click", "sequence", "single"}
    check_schema(document)


# -- loading, sniffing, validate ------------------------------------------------------------------

BENCHMARKS = {
    "osworld-g": "osworld-g",
    "ui-vision": "ui-vision",
    "mmbench-gui": "mmbench-gui",
    "screenspot-v2-variants": "screenspot-v2-variants",
    "screenspot-pro-cn": "screenspot-pro",
    "showdown-clicks": "showdown-clicks",
    "cuactspot": "cuactspot",
}


@pytest.mark.parametrize("folder", sorted(BENCHMARKS))
def test_each_fixture_is_recognised_and_forceable(folder):
    found = load_dataset(str(FIXTURES / folder))
    assert found.format == BENCHMARKS[folder]
    forced = load_dataset(f"{BENCHMARKS[folder]}:{FIXTURES / folder}")
    assert [s.id for s in forced.samples] == [s.id for s in found.samples]


def test_a_wrong_forced_format_is_a_clear_error():
    with pytest.raises(DatasetError, match=r"no OSWorld-G\.json or OSWorld-G_refined\.json"):
        load_dataset(f"osworld-g:{FIXTURES / 'ui-vision'}")


@pytest.mark.parametrize(
    ("folder", "status", "expected"),
    [
        ("osworld-g", 1, "og-7: degenerate-box: unusable bbox ?5, 5?*"),
        ("showdown-clicks", 1, "sc-6: degenerate-box: *line 7*"),
        ("ui-vision", 0, "basic_00000: loader-note: bbox ?60.0, 40.0, 20.0, 10.0? has reversed corners*"),
        ("cuactspot", 0, "cuactspot (cuactspot, *): 7 samples on 7 images: 0 errors, 0 warnings"),
        ("screenspot-v2-variants", 0, "*11 samples on 2 images: 0 errors*"),
        ("mmbench-gui", 0, "*5 samples on 2 images: 0 errors*"),
    ],
)
def test_validate_checks_every_new_format(folder, status, expected):
    out = io.StringIO()
    assert validate_path(str(FIXTURES / folder), out=out) == status, out.getvalue()
    from fnmatch import fnmatch

    assert any(fnmatch(line, expected) for line in out.getvalue().splitlines()), out.getvalue()


ROW = {"image_path": "x.png", "instruction": "go"}


def test_malformed_rows_name_the_row_and_file(tmp_path):
    bad = tmp_path / "og"
    bad.mkdir()
    (bad / "OSWorld-G.json").write_text(
        json.dumps(
            [
                dict(ROW, id="a", box_type="polygon", box_coordinates=[1, 2]),
                dict(ROW, id="b", box_type="circle", box_coordinates=[]),
                dict(ROW, id="c", box_type="bbox", box_coordinates="x"),
            ]
        )
    )
    defects = {s.id: s.defect for s in load_dataset(str(bad)).samples}
    assert "unusable polygon" in defects["a"] and "unknown box_type 'circle'" in defects["b"]
    assert "unusable bbox" in defects["c"]
    (bad / "OSWorld-G.json").write_text(json.dumps([{"id": "a"}]))
    with pytest.raises(DatasetError, match=r"OSWorld-G.json: row 0 has no image_path"):
        load_dataset(str(bad))
    act = tmp_path / "act"
    act.mkdir()
    (act / "GUI-9.json").write_text(
        json.dumps({"image_id": "GUI-9", "task": "x", "polygons": [{"type": "Target", "points": [[0, 0], [1, 1]]}]})
    )
    (sample,) = load_dataset(f"cuactspot:{act}").samples
    assert "unusable polygon" in sample.defect and "GUI-9.json" in sample.defect


def test_reversed_corners_are_swapped_and_reported_in_every_corner_format(tmp_path):
    """Issue 19: reversed corners are normalised and reported (a loader note), so the sample is
    scored on its real box instead of becoming a target no click can hit."""
    show = tmp_path / "show"
    show.mkdir()
    (show / "data.csv").write_text("id,image,instruction,x1,y1,x2,y2,width,height\nr1,f.webp,go,40,30,10,5,64,48\n")
    loaded = load_dataset(f"showdown-clicks:{show}")
    (sample,) = loaded.samples
    assert sample.defect is None and sample.bbox.as_list() == [10.0, 5.0, 40.0, 30.0]
    assert any("r1: bbox [40.0, 30.0, 10.0, 5.0] has reversed corners" in p for p in loaded.problems)

    mm = tmp_path / "mm"
    mm.mkdir()
    rows = [
        {
            "index": 7,
            "image_path": "a.png",
            "instruction": "go",
            "bbox": [0.5, 0.5, 0.25, 0.125],
            "image_size": [200, 100],
            "platform": "os_linux",
            "grounding_type": "basic",
        }
    ]
    (mm / "L2_annotations.json").write_text(json.dumps(rows))
    loaded = load_dataset(f"mmbench-gui:{mm}")
    (sample,) = loaded.samples
    assert sample.bbox.as_list() == [50.0, 12.5, 100.0, 50.0]
    assert any(p.startswith("7: bbox") and "reversed corners" in p for p in loaded.problems)


# -- a user's own format ----------------------------------------------------------------------------

USER_FORMAT = """
from pathlib import Path

from pytest_grounding.datasets import Format
from pytest_grounding.datasets._common import Loaded
from pytest_grounding.core.types import Box, Sample


def sniff(path):
    return (Path(path) / "clicks.txt").is_file()


def load(path):
    path = Path(path)
    samples = []
    for line in (path / "clicks.txt").read_text().splitlines():
        sid, image, x1, y1, x2, y2, instruction = line.split(",", 6)
        samples.append(Sample(dataset="", id=sid, uid="", image=path / image, instruction=instruction,
                              bbox=Box(float(x1), float(y1), float(x2), float(y2))))
    return Loaded(name="mine", samples=samples, files=[path / "clicks.txt"])


def pytest_grounding_register_formats(registry):
    registry.register("myformat", {how})
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["Format('myformat', sniff, load)", "lambda: Format('myformat', sniff, load)"])
def test_a_users_format_registered_from_a_conftest(project, how):
    import shutil

    data = project.path / "mine"
    data.mkdir()
    shutil.copy(FIXTURES / "osworld-g" / "images" / "og1.png", data / "og1.png")
    (data / "clicks.txt").write_text("c1,og1.png,10,10,50,30,Open the red menu\nc2,og1.png,100,60,130,90,Press blue\n")
    project.makeconftest(TABLE_CONFTEST + USER_FORMAT.replace("{how}", how))
    (project.path / "answers.json").write_text(json.dumps({"Open the red menu": [20, 20]}))
    result = project.runpytest(f"--dataset=myformat:{data}", "--detector", "table")
    assert_counts(result, passed=1, missed=1)
    result.stdout.fnmatch_lines(["dataset mine: myformat, 2 samples*"])
    sniffed = project.runpytest(f"--dataset={data}", "--detector", "table")
    assert_counts(sniffed, passed=1, missed=1)


def test_variants_in_the_annotations_layout_are_not_taken_for_screenspot_pro(tmp_path):
    import shutil

    shutil.copytree(FIXTURES / "screenspot-v2-variants" / "imgs", tmp_path / "images")
    (tmp_path / "annotations").mkdir()
    shutil.copy(FIXTURES / "screenspot-v2-variants" / "desktop.json", tmp_path / "annotations" / "desktop.json")
    found = load_dataset(str(tmp_path))
    assert found.format == "screenspot-v2-variants" and len(found.samples) == 8
    assert all(s.image.is_file() for s in found.samples)
    assert load_dataset(str(FIXTURES / "screenspot-pro")).format == "screenspot-pro"


@pytest.mark.slow
def test_refusal_rows_from_the_ini_file(project):
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\ngrounding_refusal_rows = exclude\n")
    _, document = run(project, FIXTURES / "osworld-g", OSWORLD)
    block = document["summary"]["table"]
    assert (block["hits"], block["scored"]) == (2, 4)  # og-1 and og-4 of the four present targets
    assert document["run"]["settings"]["refusal_rows"] == "exclude"


def test_a_broken_classification_file_is_named(tmp_path):
    import shutil

    shutil.copy(FIXTURES / "osworld-g" / "OSWorld-G.json", tmp_path / "OSWorld-G.json")
    (tmp_path / "classification_result.json").write_text(json.dumps({"classified": ["og-1"]}))
    with pytest.raises(DatasetError, match=r"classification_result\.json: expected"):
        load_dataset(str(tmp_path))


# -- the OSWorld-G refined split as its own benchmark (issue 28): beside the original in one run, each
# its own headline line, named apart, scored as counted by hand.

# The refined fixture holds the original's rows with "Refined: " before each instruction.
REFINED = {f"Refined: {k}": v for k, v in OSWORLD.items()}


@pytest.mark.slow
@SERIAL
def test_osworld_g_refined_and_original_are_never_pooled(project, workers):
    original = FIXTURES / "osworld-g" / "OSWorld-G.json"
    refined = f"osworld-g:{FIXTURES / 'osworld-g' / 'OSWorld-G_refined.json'}"
    # the original answered as in test_benchmarks (3 hits of 6 scored); the refined with only its first two
    answers = {**OSWORLD, **{k: v for k, v in list(REFINED.items())[:2]}}
    result, document = run(project, original, answers, f"--dataset={refined}", *workers)
    assert result.ret in (0, 1), result.stdout.str()
    benches = {b["benchmark"]: b for b in document["summary"]["table"]["benchmarks"]}
    assert set(benches) == {"osworld-g", "osworld-g-refined"}
    assert benches["osworld-g"]["dataset"] == "osworld-g-original" and benches["osworld-g"]["value"] == pytest.approx(
        3 / 6
    )
    # refined: og-1 hit, og-2 miss (one pixel left), og-3..og-6 unanswered (wrong format: misses), og-7 an error
    assert benches["osworld-g-refined"]["dataset"] == "osworld-g-refined"
    assert benches["osworld-g-refined"]["value"] == pytest.approx(1 / 6)
    result.stdout.fnmatch_lines_random(
        [
            "*osworld-g-original (osworld-g) headline 50.0%: accuracy over all rows, refusal rows included*",
            "*osworld-g-refined (osworld-g-refined) headline 16.7%: accuracy over all rows of the REFINED split*",
        ]
    )
