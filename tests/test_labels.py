"""`label=` on a detector spec (issue 51): a display name only. The spec without it is what records,
baselines, resume files and the answer cache key on; every human-facing place shows the label."""

import json
from importlib.resources import files

import pytest

from helpers import FIXTURES, SERIAL, read_json
from pytest_grounding.cli.main import main
from pytest_grounding.core.identity import display_name, identity_of, split_label
from pytest_grounding.plugin.common.settings import split_labels

MINI = str(FIXTURES / "mini")
FLOOR = "center:label=floor"
PAINT = "colour+zoom:min_size=32,label=paint"  # the label on a strategy part: still the detector's


@pytest.mark.parametrize(
    "written, spec, label",
    [
        ("center", "center", None),
        ("center:label=floor", "center", "floor"),
        ("ocr:lang=en,label=fast+zoom", "ocr:lang=en+zoom", "fast"),
        ("ocr:label='fast, en'+zoom:min_size=32", "ocr+zoom:min_size=32", "fast, en"),
        ("colour+zoom:min_size=32,label=paint", "colour+zoom:min_size=32", "paint"),
    ],
)
def test_split_label_takes_the_label_off_any_part_of_the_chain(written, spec, label):
    assert split_label(written) == (spec, label)


@pytest.mark.parametrize(
    "written, said",
    [
        ("center:label=", "printable, non-empty"),
        ("center:label=a\tb", "printable, non-empty"),
        ("center:label=a+zoom:label=b", "two labels"),
    ],
)
def test_a_bad_label_is_refused(written, said):
    with pytest.raises(ValueError, match=said):
        split_label(written)


def test_split_labels_refuses_a_label_on_two_detectors_and_a_detector_twice():
    assert split_labels(("center:label=a", "colour"), "--detector") == (("center", "colour"), {"center": "a"})
    with pytest.raises(ValueError, match="--detector: label 'a' names two detectors"):
        split_labels(("center:label=a", "colour:label=a"), "--detector")
    with pytest.raises(ValueError, match="is detector 'center' again"):
        split_labels(("center:label=a", "center:label=b"), "--detector")


def test_identity_and_display_name():
    assert identity_of("center:label=floor", {}) == identity_of("center", {})
    assert display_name("center", {"label": "floor"}) == "floor"
    assert display_name("center", {"name": "center"}) == display_name("center", None) == "center"


def _run(project, tmp_path, name, *args):
    folder = tmp_path / "reports"
    folder.mkdir(exist_ok=True)
    report, page = folder / f"{name}.json", tmp_path / f"{name}.html"
    result = project.runpytest(
        f"--dataset={MINI}", "--grounding-json", str(report), "--grounding-html", str(page), *args
    )
    assert report.is_file(), result.stdout.str()[-3000:]
    return result, report, page


@SERIAL
def test_labels_name_the_detectors_everywhere(project, tmp_path, workers, capsys):
    result, report, page = _run(project, tmp_path, "run", "--detector", FLOOR, "--detector", PAINT, *workers)
    text = result.stdout.str()
    misses = text.split("grounding failed items")[1].split("grounding summary")[0]
    miss_rows = [line for line in misses.splitlines() if line.startswith("  ")]
    assert miss_rows and all(line.split()[0] in ("floor", "paint") for line in miss_rows), misses
    assert "center" not in misses and "min_size" not in misses  # the long spec stays out of the miss lines
    assert "detector floor = center" in text and "detector paint = colour+zoom:min_size=32" in text
    comparison = text.split("comparison of methods:")[1]
    assert [line.split()[0] for line in comparison.splitlines() if "%" in line and " vs " not in line][:2] == [
        "floor",
        "paint",
    ]
    document = read_json(report)
    # the records and the summary key on the spec without its label; the label is recorded beside it
    assert set(document["summary"]) == {"center", "colour+zoom:min_size=32"}
    assert {r["detector"] for r in document["samples"]} == {"center", "colour+zoom:min_size=32"}
    assert document["run"]["detectors"]["center"]["label"] == "floor"
    assert document["summary"]["colour+zoom:min_size=32"]["label"] == "paint"
    html = page.read_text()
    assert '<div class="card-name" title="center">floor</div>' in html
    assert "<b>paint</b>" in html  # the comparison table and the gallery
    jsonschema = pytest.importorskip("jsonschema")

    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)] == []
    capsys.readouterr()
    assert main(["summary", str(report)]) == 0
    markdown = capsys.readouterr().out
    assert "| floor |" in markdown and "| paint |" in markdown
    assert main(["compare", str(report)]) == 0
    compared = capsys.readouterr().out
    assert "paint vs floor" in compared
    assert main(["board", str(report.parent)]) == 0
    rows = capsys.readouterr().out
    print(rows)
    assert any(line.startswith("floor") for line in rows.splitlines()), rows
    assert any(line.startswith("paint · strategy") for line in rows.splitlines()), rows


PINNED_SUITE = """
import pytest


@pytest.mark.grounding(dataset={mini!r}, detector=["center:label=floor", "colour+zoom:min_size=32,label=paint"])
def test_pinned(grounding_sample, grounding_detector, grounding_check):
    grounding_check(grounding_sample, grounding_detector)
"""


@SERIAL
def test_a_suites_marker_takes_labels_too(project, tmp_path, workers):
    project.makepyfile(test_pinned=PINNED_SUITE.format(mini=MINI))
    report = tmp_path / "pinned.json"
    result = project.runpytest("test_pinned.py", "--grounding-json", str(report), "--grounding-runs-dir=off", *workers)
    text = result.stdout.str()
    assert "detector floor = center" in text and "detector paint = colour+zoom:min_size=32" in text, text[-3000:]
    document = read_json(report)
    assert {r["detector"] for r in document["samples"]} == {"center", "colour+zoom:min_size=32"}
    assert document["summary"]["center"]["label"] == "floor"
    assert document["run"]["detectors"]["colour+zoom:min_size=32"]["label"] == "paint"


def test_a_marker_label_that_clashes_is_one_collection_error(project):
    project.makepyfile(test_pinned=PINNED_SUITE.format(mini=MINI))
    result = project.runpytest("test_pinned.py", "--detector", "colour:label=floor")
    text = result.stdout.str()
    assert result.ret != 0 and "label 'floor' names two detectors" in text, text[-3000:]
    assert "Traceback" not in text and "SettingError" not in text


def test_duplicate_labels_are_one_usage_error(project, tmp_path):
    result = project.runpytest(f"--dataset={MINI}", "--detector", "center:label=x", "--detector", "colour:label=x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*label 'x' names two detectors*"])


def test_a_baseline_written_without_a_label_matches_a_run_with_one(project, tmp_path):
    path = tmp_path / "baseline.json"
    first = project.runpytest(f"--dataset={MINI}", "--detector", "colour", f"--grounding-baseline={path}")
    assert path.is_file(), first.stdout.str()[-2000:]
    again = project.runpytest(f"--dataset={MINI}", "--detector", "colour:label=paint", f"--grounding-baseline={path}")
    assert again.ret != pytest.ExitCode.USAGE_ERROR, again.stderr.str()[-2000:]
    text = again.stdout.str()
    assert "0 regressions" in text and "not in the baseline" not in text, text[-3000:]


def test_one_label_on_two_configurations_keeps_two_board_rows_apart():
    from pytest_grounding.analysis.board import Config, distinct_labels

    rows = distinct_labels([Config("ocr", name="fast"), Config("center", name="fast"), Config("random", name="floor")])
    assert [row.label.split(" · ")[0] for row in rows] == ["fast [ocr]", "fast [center]", "floor"]
    assert len({row.label for row in rows}) == 3  # the tiers and the matrix key on the shown name


@pytest.mark.parametrize("order", [1, -1])
def test_a_board_row_shows_the_name_its_latest_run_gave(order):
    """A row's identity holds no label=: runs named otherwise share it, and the row shows the latest
    run's name (the files' order does not decide)."""
    from pytest_grounding.analysis.board import Benchmark, Config, Run, build

    column = Benchmark("mini")
    runs = [
        (Config("center"), column, Run("old.json", "2026-01-01T00:00:00", 0.5, None, 8, "accuracy")),
        (Config("center", name="floor"), column, Run("new.json", "2026-02-01T00:00:00", 0.5, None, 8, "accuracy")),
        (Config("colour", name="paint"), column, Run("a.json", "2026-01-01T00:00:00", 0.2, None, 8, "accuracy")),
        (Config("colour"), column, Run("b.json", "2026-03-01T00:00:00", 0.2, None, 8, "accuracy")),
    ]
    board = build(runs[::order])
    assert sorted(row.label.split(" · ")[0] for row in board.rows) == ["colour", "floor"]
    assert all(board.cell(row, column) is not None and len(board.cell(row, column).runs) == 2 for row in board.rows)
