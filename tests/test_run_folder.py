"""Every run keeps its report: with no output asked for, a run leaves its JSON report, HTML page and
predictions in grounding-runs/<time>-<dataset>-<detector>-<suffix>/ and prints where; explicit paths
win; a run that scores nothing leaves nothing; shards and concurrent runs never share a folder;
`board`, `compare` and `report` read that folder when given no path."""

import re
import time

import pytest

from helpers import FIXTURES, SERIAL, make_project, read_json, read_jsonl
from pytest_grounding.cli.main import main
from pytest_grounding.render import run_folder

MINI = str(FIXTURES / "mini")
FEW = ("--grounding-limit", "3")


@pytest.fixture
def project(pytester, monkeypatch):
    monkeypatch.delenv(run_folder.ENV_RUNS_DIR, raising=False)  # tests/conftest.py switches it off
    from conftest import PROJECT_CONFTEST

    return make_project(pytester, PROJECT_CONFTEST)


def folders(root):
    return sorted(p for p in (root / "grounding-runs").iterdir()) if (root / "grounding-runs").is_dir() else []


@SERIAL
def test_a_run_keeps_its_report_in_a_folder_it_names(project, workers):
    result = project.runpytest(*FEW, "--dataset", MINI, "--detector", "colour", *workers)
    [kept] = folders(project.path)
    assert re.fullmatch(r"\d{8}-\d{6}-mini-colour-[0-9a-f]{6}", kept.name), kept.name
    document = read_json(kept / "report.json")
    samples = len(document["samples"])
    assert samples > 0
    assert len(read_jsonl(kept / "predictions.jsonl")) == samples
    page = (kept / "report.html").read_text(encoding="utf-8")
    assert "<html" in page.lower()
    out = result.stdout.str()
    assert f"grounding HTML report: {kept / 'report.html'}" in out
    # the page's path is among the run's last lines
    tail = out.strip().splitlines()[-6:]
    assert any(str(kept / "report.html") in line for line in tail), tail


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_explicit_paths_win_and_the_rest_stays_in_the_run_folder(project, tmp_path):
    own = tmp_path / "own.json"
    project.runpytest(*FEW, "--dataset", MINI, "--detector", "colour", "--grounding-json", str(own))
    [kept] = folders(project.path)
    assert own.is_file()
    assert not (kept / "report.json").exists()
    assert (kept / "report.html").is_file() and (kept / "predictions.jsonl").is_file()


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize(
    "args",
    [["--grounding-runs-dir=off"], ["--grounding-runs-dir", ""], ["--co"], ["-k", "no_such_item"]],
    ids=["off", "empty", "collect-only", "nothing-selected"],
)
def test_off_collect_only_and_a_run_with_nothing_to_score_keep_nothing(project, args):
    project.runpytest(*FEW, "--dataset", MINI, "--detector", "colour", *args)
    assert folders(project.path) == []


def test_the_ini_names_the_folder_relative_to_itself(pytester, monkeypatch):
    monkeypatch.delenv(run_folder.ENV_RUNS_DIR, raising=False)
    from conftest import PROJECT_CONFTEST

    make_project(pytester, PROJECT_CONFTEST, ini="grounding_runs_dir = out/runs\n")
    sub = pytester.mkdir("elsewhere")
    monkeypatch.chdir(sub)
    pytester.runpytest(str(pytester.path / "test_suite.py"), *FEW, "--dataset", MINI, "--detector", "colour")
    [kept] = list((pytester.path / "out" / "runs").iterdir())
    assert (kept / "report.json").is_file()
    assert not (sub / "grounding-runs").exists()


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_shards_and_runs_of_the_same_second_never_share_a_folder(project):
    counts = []
    for k in (1, 2):
        result = project.runpytest("--dataset", MINI, "--detector", "center", "--grounding-shard", f"{k}/2")
        # the header says what this shard scores of the run's samples
        said = re.search(
            rf"grounding shard {k}/2: (\d+) of (\d+) samples \(--grounding-shard {k}/2\)", result.stdout.str()
        )
        assert said, result.stdout.str()[:2000]
        counts.append((int(said.group(1)), int(said.group(2))))
    assert counts[0][1] == counts[1][1] == counts[0][0] + counts[1][0] and 0 < counts[0][0] < counts[0][1]
    kept = folders(project.path)
    assert len(kept) == 2
    assert ["-shard1of2-" in p.name for p in kept].count(True) == 1
    assert ["-shard2of2-" in p.name for p in kept].count(True) == 1
    names = [folder_name for folder_name in (run_folder.folder_name(0.0, ["a"], ["b"]) for _ in range(50))]
    assert len(set(names)) == 50


def test_an_unwritable_runs_folder_is_a_usage_error_before_any_sample(project):
    (project.path / "afile").write_text("")
    result = project.runpytest(*FEW, "--dataset", MINI, "--detector", "colour", "--grounding-runs-dir", "afile/runs")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--grounding-runs-dir" in result.stderr.str() + result.stdout.str()


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_board_compare_and_report_read_the_runs_folder_when_given_no_path(project, monkeypatch, capsys):
    project.runpytest(*FEW, "--dataset", MINI, "--detector", "center")
    time.sleep(1.1)  # the folder names sort by the second
    project.runpytest(*FEW, "--dataset", MINI, "--detector", "colour")
    monkeypatch.chdir(project.path)
    capsys.readouterr()
    assert main(["board"]) == 0
    board = capsys.readouterr().out
    assert "colour" in board and "center" in board
    assert main(["compare"]) == 0
    compared = capsys.readouterr()
    older, newer = folders(project.path)
    assert compared.err.index(older.name) < compared.err.index(newer.name)  # the older run is the baseline
    assert "colour vs center" in compared.out
    page = project.path / "again.html"
    assert main(["report", "--html", str(page)]) == 0
    assert newer.name in capsys.readouterr().err and page.is_file()
    (newer / "report.html").unlink()
    assert main(["report"]) == 0  # nothing asked for: the newest run's own page, written again
    assert str(newer / "report.html") in capsys.readouterr().out and (newer / "report.html").is_file()


def test_with_no_run_kept_the_commands_say_where_they_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(run_folder.ENV_RUNS_DIR, raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["compare"]) == 2
    assert "grounding-runs" in capsys.readouterr().err
    assert main(["board"]) == 2
    assert "grounding-runs" in capsys.readouterr().err


def test_folder_names_are_safe_slugs():
    assert run_folder.detector_slug("openai:base_url=http://h:8000/v1,concurrency=2") == "openai"
    assert run_folder.detector_slug("openai:base_url=http://h:8000/v1,label=tars-7b") == "tars-7b"
    assert run_folder.detector_slug("ocr:semantic=false+zoom:steps=2") == "ocr+zoom"
    assert run_folder.dataset_slug("screenspot-pro:/data/ScreenSpot-Pro/") == "ScreenSpot-Pro"
    assert run_folder.dataset_slug("hf:org/name:test") == "name"
    assert run_folder.dataset_slug("../../etc") == "etc"
    name = run_folder.folder_name(0.0, ["a/../../b"], ["x y/z"], (1, 2), "abc")
    assert "/" not in name and " " not in name and name.endswith("-shard1of2-abc")


@pytest.mark.slow
def test_an_interrupted_run_keeps_its_partial_report(project):
    # In a subprocess: pytester re-raises an in-process KeyboardInterrupt into this session.
    result = project.runpytest_subprocess("--dataset", MINI, "--detector", "interrupting")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    [kept] = folders(project.path)
    assert [line["id"] for line in read_jsonl(kept / "predictions.jsonl")] == ["m01", "m02"]
    document = read_json(kept / "report.json")
    assert document["partial"] is True and len(document["samples"]) == 2
    assert (kept / "report.html").is_file()
