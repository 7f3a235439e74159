"""`python -m pytest_grounding board DIR`: a folder of real reports (two detectors, two benchmarks, a
later run, shards and their merge, a damaged file, a JSON file that is no report) as one table.
Every cell is checked against its report's samples counted here, its interval recomputed from them
with analysis/intervals.py; the HTML board is opened in a real browser where there is one."""

import json
import re
import subprocess
import sys

import pytest

from helpers import FIXTURES, SUITE
from pytest_grounding.analysis import board as board_mod
from pytest_grounding.analysis import intervals
from pytest_grounding.cli.board import collect
from pytest_grounding.cli.main import main

MINI, PRO = str(FIXTURES / "mini"), str(FIXTURES / "screenspot-pro")


def build_folder(runpytest, root, workers):
    """The reports a team would have: two runs a day apart in spirit, a split run and its merge."""
    both = ["--dataset", MINI, "--dataset", PRO, "--detector", "colour", "--detector", "center", *workers]
    (root / "a").mkdir(parents=True)
    runpytest(
        *both, "--grounding-json", str(root / "a" / "first.json"), "--grounding-html", str(root / "a" / "first.html")
    )
    (root / "b").mkdir()
    later = ["--dataset", MINI, "--detector", "colour", "--grounding-limit", "4", *workers]
    runpytest(*later, "--grounding-json", str(root / "b" / "later.json"))
    (root / "shards").mkdir()
    shards = []
    for k in (1, 2):
        path = root / "shards" / f"shard-{k}.json"
        runpytest(
            "--dataset", PRO, "--detector", "random", "--grounding-shard", f"{k}/2", "--grounding-json", str(path)
        )
        shards.append(str(path))
    assert main(["merge", *shards, "--json", str(root / "merged.json")]) in (0, 1)
    (root / "broken.json").write_text('{"tool": "pytest-grounding", "summary": ')
    (root / "other.json").write_text(json.dumps({"name": "not a report"}))


def recount(report, detector, dataset):
    """(accuracy, ci95, scored) of one detector on one dataset, counted from the report's samples."""
    records = [
        r for r in json.loads(report.read_text())["samples"] if r["detector"] == detector and r["dataset"] == dataset
    ]
    scored = [r for r in records if r["outcome"] != "error"]
    hits = sum(1 for r in scored if r["outcome"] == "hit")
    found = intervals.proportion(intervals.Outcomes.of(records))
    return hits / len(scored), tuple(found.as_list()), len(scored)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Built once for the module's tests that only read it: the suite run in a subprocess, as a
    user's project runs it (the test detectors in its conftest)."""
    from conftest import PROJECT_CONFTEST

    home = tmp_path_factory.mktemp("project")
    (home / "conftest.py").write_text(PROJECT_CONFTEST)
    (home / "test_suite.py").write_text(SUITE.read_text())
    (home / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")

    def runpytest(*args):
        subprocess.run([sys.executable, "-m", "pytest", *args], cwd=home, capture_output=True, timeout=300)

    root = home / "reports"
    build_folder(runpytest, root, [])
    return root


@pytest.mark.slow
def test_every_cell_is_its_reports_figure_recounted(folder):
    check_cells(folder)


@pytest.mark.slow
def test_every_cell_is_its_reports_figure_recounted_xdist(project, tmp_path):
    root = tmp_path / "reports"
    build_folder(project.runpytest, root, ["-n", "2"])
    check_cells(root)


def check_cells(root):
    found, skipped, reports = collect(root)
    board = board_mod.build(found, skipped, reports=reports)
    assert reports == 3  # first, later, merged; the shards are skipped (their merge stands for them)
    assert {r.detector for r in board.rows} == {"colour", "center", "random"}
    assert {c.name for c in board.columns} == {"mini", "screenspot-pro"}
    checked = 0
    for (row, column), cell in board.cells.items():
        for run in cell.runs:
            accuracy, ci95, scored = recount(root / run.source, row.detector, column.name)
            assert run.accuracy == pytest.approx(accuracy)
            assert run.ci95 == pytest.approx(ci95)
            assert run.samples == scored
            checked += 1
    assert checked == 6  # colour and center on both sets (first), colour on mini (later), random (merged)
    reasons = {s.path: s.reason for s in board.skipped}
    assert set(reasons) == {"broken.json", "other.json", "shards/shard-1.json", "shards/shard-2.json"}
    assert "is not JSON" in reasons["broken.json"]
    assert "not a pytest-grounding JSON report" in reasons["other.json"]
    assert "one shard (1/2)" in reasons["shards/shard-1.json"]
    merged = next(c for (r, _), c in board.cells.items() if r.detector == "random")
    assert merged.latest.merged == 2


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_history_pairs_the_later_run_with_the_first(folder):
    found, skipped, reports = collect(folder)
    board = board_mod.build(found, skipped, reports=reports)
    colour_mini = next(c for (r, col), c in board.cells.items() if r.detector == "colour" and col.name == "mini")
    assert [run.source for run in colour_mini.runs] == ["a/first.json", "b/later.json"]
    assert colour_mini.changes[0] is None
    change = colour_mini.changes[1]
    first = {r["uid"]: r for r in json.loads((folder / "a/first.json").read_text())["samples"]}
    later = json.loads((folder / "b/later.json").read_text())["samples"]
    pairs = [(first[r["uid"]], r) for r in later if r["outcome"] != "error" and first[r["uid"]]["outcome"] != "error"]
    assert change.paired == len(pairs) == 4 - sum(1 for r in later if r["outcome"] == "error")
    before = sum(a["outcome"] == "hit" for a, _ in pairs) / len(pairs)
    after = sum(b["outcome"] == "hit" for _, b in pairs) / len(pairs)
    assert change.difference.delta == pytest.approx(after - before)
    assert change.delta == pytest.approx(colour_mini.runs[1].accuracy - colour_mini.runs[0].accuracy)


def test_the_command_prints_the_latest_figures_filters_and_sorts(folder, capsys):
    assert main(["board", str(folder)]) == 0
    out = capsys.readouterr().out
    # the cell shows the run over the most samples (a/first.json, 8); the later 4-sample run beside it, marked
    accuracy, ci95, scored = recount(folder / "a" / "first.json", "colour", "mini")
    expected = f"{accuracy * 100:.1f}% [{ci95[0] * 100:.1f}-{ci95[1] * 100:.1f}] n={scored}"
    later, _, later_scored = recount(folder / "b" / "later.json", "colour", "mini")
    colour_line = next(line for line in out.splitlines() if line.startswith("colour"))
    assert f"{expected} (‡ later {later * 100:.1f}% n={later_scored})" in colour_line
    assert "‡ a later run over fewer samples" in out
    assert "broken.json: " in out and "not on the board (4)" in out

    assert main(["board", str(folder), "--detector", "col*", "--benchmark", "mini"]) == 0
    out = capsys.readouterr().out
    assert "1 configurations, 1 benchmarks" in out and "center" not in out.split("not on the board")[0]

    assert main(["board", str(folder), "-k", "center and not colour"]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:] if line and not line[0].isspace()]
    assert rows[0] == "center"

    assert main(["board", str(folder), "--sort", "accuracy", "--history"]) == 0
    out = capsys.readouterr().out
    assert "history (oldest first" in out and "paired on" in out
    found, skipped, reports = collect(folder)
    board = board_mod.build(found, skipped, reports=reports, sort="accuracy")
    means = []
    for row in board.rows:
        values = [c.latest.accuracy for (r, _), c in board.cells.items() if r == row]
        means.append(sum(values) / len(values))
    assert means == sorted(means, reverse=True)

    assert main(["board", str(folder), "--sort", "date"]) == 0
    capsys.readouterr()
    board = board_mod.build(found, skipped, reports=reports, sort="date")
    newest = [max(c.latest.when for (r, _), c in board.cells.items() if r == row) for row in board.rows]
    assert newest == sorted(newest, reverse=True)

    assert main(["board", str(folder), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Board: 3 reports") and "| configuration |" in out


def test_bad_requests_are_usage_errors(folder, tmp_path, capsys):
    assert main(["board", str(tmp_path / "nowhere")]) == 2
    assert main(["board", str(folder), "-k", "colour and"]) == 2
    assert main(["board", str(folder), "--sort", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "not a folder" in err and "-k 'colour and'" in err and "--sort 'nosuch'" in err


def test_keyword_expressions():
    from pytest_grounding.plugin.compat.pytest_compat import keyword_matcher

    assert keyword_matcher("ocr")("OCR · scoring pixel mini")
    assert keyword_matcher("not center and (mini or pro)")("ocr mini")
    assert not keyword_matcher("not center and (mini or pro)")("center mini")
    for bad in ("", "a and", "(a", "a b", "or a"):
        with pytest.raises(ValueError):
            keyword_matcher(bad)


def test_a_configuration_names_preset_engine_and_strategies():
    info = {
        "strategy": "zoom",
        "options": {"ratio": 0.5},
        "inner": {
            "strategy": "screenseeker",
            "options": {},
            "inner": {"preset": {"name": "uitars-1.5"}, "engine": {"name": "vllm", "version": "0.32.0"}},
        },
    }
    config = board_mod.config_of("openai", info, "pixel")
    strategy = "zoom(ratio=0.5) > screenseeker"
    assert (config.preset, config.engine, config.strategy) == ("uitars-1.5", "vllm 0.32.0", strategy)
    assert config.label == f"openai · preset uitars-1.5 · engine vllm 0.32.0 · strategy {strategy} · scoring pixel"


@pytest.mark.slow
def test_the_html_board_in_a_real_browser(folder, tmp_path, capsys):
    from test_html import load

    page = tmp_path / "out" / "board.html"
    assert main(["board", str(folder), "--html", str(page)]) == 0
    assert "wrote" in capsys.readouterr().out
    dom, console = load(page)
    assert console == [], console
    found, skipped, reports = collect(folder)
    board = board_mod.build(found, skipped, reports=reports)
    assert dom.count('<svg class="trend"') == len(board.cells)
    assert dom.count('<circle class="run"') == sum(len(c.runs) for c in board.cells.values())
    # the first run's cells link to its page, relative to the board page
    links = re.findall(r'<span class="fig"><a href="([^"]+)">', dom)
    assert len(links) == 4  # every cell's figure is a/first.json's (the most samples), which has its page
    assert {(page.parent / link).resolve() for link in links} == {(folder / "a" / "first.html").resolve()}
    assert dom.count("<details>") == len(board.cells)
    assert 'id="skipped"' in dom and "broken.json" in dom


def test_text_from_a_report_is_inert_in_every_output(folder, tmp_path, capsys):
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    document = json.loads((folder / "a" / "first.json").read_text())
    document["run"]["detectors"]["colour"]["preset"] = {"name": "<img src=x onerror=alert(1)>\x1b[2J|`*"}
    (hostile / "r.json").write_text(json.dumps(document))
    assert main(["board", str(hostile)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "preset <img src=x onerror=alert(1)>" in out
    assert main(["board", str(hostile), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "<img" not in out and "&lt;img" in out and "\\|" in out
    page = tmp_path / "board.html"
    assert main(["board", str(hostile), "--html", str(page)]) == 0
    html = page.read_text()
    assert "<img" not in html and "&lt;img src=x" in html and "\x1b" not in html


def test_a_public_benchmarks_cell_is_its_own_headline(project, tmp_path, capsys):
    root = tmp_path / "r"
    root.mkdir()
    project.runpytest(
        "--dataset", str(FIXTURES / "ui-vision"), "--detector", "center", "--grounding-json", str(root / "uv.json")
    )
    found, skipped, reports = collect(root)
    board = board_mod.build(found, skipped, reports=reports)
    (cell,) = board.cells.values()
    records = json.loads((root / "uv.json").read_text())["samples"]
    splits = {}
    for r in records:  # UI-Vision's Final Avg: the unweighted mean of its splits' accuracies
        splits.setdefault(r["benchmark"]["split"], []).append(r["outcome"] == "hit")
    final_avg = sum(sum(v) / len(v) for v in splits.values()) / len(splits)
    pooled = sum(r["outcome"] == "hit" for r in records) / len(records)
    assert final_avg != pooled  # so that the wrong figure would show
    assert cell.latest.accuracy == pytest.approx(final_avg)
    found_ci = intervals.mean_over(intervals.Outcomes.of(records), ([r["benchmark"]["split"]] for r in records))
    assert cell.latest.ci95 == pytest.approx(tuple(found_ci.as_list()))
    assert main(["board", str(root)]) == 0
    assert "ui-vision: Final Avg" in capsys.readouterr().out


def test_a_report_with_errata_is_a_configuration_of_its_own():
    from pytest_grounding.analysis.board import runs_of

    document = {
        "run": {"detectors": {"center": {}}, "datasets": [{"name": "mini", "fingerprint": "f"}]},
        "summary": {"center": {"detector": "center", "by": {"dataset": [{"value": "mini", "accuracy": 0.5}]}}},
    }
    (plain,) = runs_of("a.json", document)
    (corrected,) = runs_of("b.json", {**document, "errata": {"digest": "ab" * 32}})
    assert plain[0] != corrected[0] and corrected[0].label.endswith("+ errata abababababab")


def test_each_cell_says_why_its_run_misses_recounted_from_the_records():
    from pytest_grounding.analysis.board import Run, misses_of
    from pytest_grounding.render.common.board import miss_text

    def record(uid, outcome, distance):
        found = {"uid": uid, "dataset": "d", "image": f"s{uid}.png", "outcome": outcome, "detector": "m"}
        return {**found, "distance_px": distance} if distance is not None else found

    distances = [None, 3.0, 7.5, 15.0, 40.0, 120.0]  # one hit, five misses at these distances
    records = [record("0", "hit", 0.0)] + [record(str(i), "miss", d) for i, d in enumerate(distances[1:], 1)]
    records.append(record("9", "wrong_format", None))  # no click: never within any tolerance
    run = Run("r.json", None, 1 / 7, None, 7, "accuracy", records=tuple(records))
    found = misses_of(run)
    recount = {
        px: sum(1 for r in records if r["outcome"] == "hit" or (r.get("distance_px") or 1e9) <= px) / 7
        for px in (0, 5, 10, 20, 50, 100)
    }  # fmt: skip: the report's points, 0-100 px
    assert {int(px): share for px, share in found["within_px"].items()} == pytest.approx(recount)
    assert miss_text(found).startswith("0 px 14.3% · 5 px 28.6% · 10 px 42.9% · 20 px 57.1% · 50 px 71.4%")
    assert misses_of(Run("l.json", None, None, None, 0, "accuracy", records=({"task": "locate"},))) is None
    # the diagnosis names no frame, the frame check before the run did (--grounding-frame-check=warn): the board says so
    checked = Run(
        "r.json", None, 1 / 7, None, 7, "accuracy", records=tuple(records), checked_frame=("--frame", "rel1000")
    )
    assert miss_text(misses_of(checked)).endswith("; frame found: rel1000 (frame check) (rescore --frame rel1000)")
    document = {"frame_check": {"openai:x": {"suggestion": ["--frame", "rel1"]}}}
    assert board_mod.checked_frame(document, "openai:x") == ("--frame", "rel1") and not board_mod.checked_frame({}, "y")


def test_the_board_shows_why_its_runs_miss(folder, capsys):
    assert main(["board", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "why they miss" in out and " px " in out


def test_a_later_first_look_does_not_hide_the_whole_run(folder):
    """Issue 61: the cell's figure is the latest run over the most samples; a later run over fewer
    stands beside it, marked; the matrix's columns follow the tiers' order."""
    found, skipped, reports = collect(folder)
    board = board_mod.build(found, skipped, reports=reports)
    cell = next(c for (r, col), c in board.cells.items() if r.detector == "colour" and col.name == "mini")
    assert cell.latest.source == "a/first.json" and cell.smaller_later.source == "b/later.json"
    assert cell.runs[-1].source == "b/later.json"  # the history stays in time order
    alone = next(c for (r, col), c in board.cells.items() if r.detector == "center" and col.name == "mini")
    assert alone.smaller_later is None
    for column, table in board.matrices.items():
        ranking = [r.name for r in board.tiers[column].ranked]
        assert list(table.columns) == [name for name in ranking if name in table.columns]


def test_board_html_also_prints_the_table(folder, tmp_path, capsys):
    assert main(["board", str(folder), "--html", str(tmp_path / "board.html")]) == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "configuration" in out and any(line.startswith("colour") for line in out.splitlines())
    heads = re.findall(r"<th class='model' title='([^']*)'>([^<]*)</th>", (tmp_path / "board.html").read_text())
    assert heads and all(title == shown for title, shown in heads) and any("colour" in t for t, _ in heads)


def test_a_report_written_elsewhere_is_found_by_the_default_board(project, tmp_path, capsys, monkeypatch):
    runs, elsewhere = tmp_path / "runs", tmp_path / "out" / "r.json"
    elsewhere.parent.mkdir()
    project.runpytest(
        "--dataset",
        MINI,
        "--detector",
        "colour",
        "--grounding-limit",
        "3",
        "--grounding-json",
        str(elsewhere),
        "--grounding-runs-dir",
        str(runs),
    )
    (pointer,) = runs.glob("*/report.path")
    assert pointer.read_text().strip() == str(elsewhere.resolve())
    monkeypatch.setenv("GROUNDING_RUNS_DIR", str(runs))
    monkeypatch.chdir(tmp_path)
    assert main(["board"]) == 0
    out = capsys.readouterr().out
    assert "board: 1 reports, 1 configurations" in out and any(line.startswith("colour") for line in out.splitlines())
    elsewhere.unlink()
    assert main(["board"]) == 0
    assert "which is no file now (moved or deleted?)" in capsys.readouterr().out
