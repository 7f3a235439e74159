"""--grounding-html while the run goes (render/live.py): a run against a slow model has its page on
disk, marked running, with counts, rate and time left, before it ends (serially and under xdist,
where the controller writes it); `board DIR` shows it as running; the run's end replaces the page
with the report and removes the sidecar."""

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import FIXTURES, REPO, SUITE, XDIST
from pytest_grounding.cli.main import main
from pytest_grounding.render import live

SLOW_CONFTEST = """
import time
from pytest_grounding.core.types import Prediction


class Slow:
    name = "slow"

    def predict(self, query):
        time.sleep(0.3)
        return Prediction(point=(5.0, 5.0))


def pytest_grounding_register_detectors(registry):
    registry.register("slow", Slow)
"""


def test_the_state_counts_rate_and_time_left(tmp_path):
    page = live.LivePage(tmp_path / "p.html", started=time.time() - 10, every=3600)
    page.start(10)
    assert 'data-state="running"' in (tmp_path / "p.html").read_text()
    for outcome in ("hit", "miss", "error", "hit"):
        page.add({"outcome": outcome})
    state = page.state()
    assert state["done"] == 4 and state["counts"] == {"error": 1, "hit": 2, "miss": 1}
    assert state["accuracy"] == pytest.approx(2 / 3)
    assert state["samples_per_s"] == pytest.approx(0.4, rel=0.05)
    assert state["eta_s"] == pytest.approx(15, rel=0.05)
    assert page.writes == 1  # the interval holds the next write back
    page.every = 0
    page.add({"outcome": "miss"})
    assert page.writes == 2 and json.loads(live.sidecar(tmp_path / "p.html").read_text())["done"] == 5
    page.finish()  # no final page replaced it (its writer failed): the running page goes too
    assert not live.sidecar(tmp_path / "p.html").exists() and not (tmp_path / "p.html").exists()
    page = live.LivePage(tmp_path / "q.html", every=3600)
    page.start(1)
    (tmp_path / "q.html").write_text("<!DOCTYPE html><html><body><h1>the report</h1></body></html>")
    page.finish()
    assert (tmp_path / "q.html").is_file() and not live.sidecar(tmp_path / "q.html").exists()


def test_a_page_that_cannot_be_written_never_stops_the_run(tmp_path):
    (tmp_path / "a-file").write_text("")
    page = live.LivePage(tmp_path / "a-file" / "p.html", every=0)
    page.start(3)
    page.add({"outcome": "hit"})
    assert page.failed is not None and page.writes == 0


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@XDIST
def test_a_slow_run_has_its_page_on_disk_marked_running_before_it_ends(workers, tmp_path, capsys):
    home = tmp_path / "project"
    home.mkdir()
    (home / "conftest.py").write_text(SLOW_CONFTEST)
    (home / "test_suite.py").write_text(SUITE.read_text())
    (home / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    page, report = runs / "slow.html", runs / "slow.json"
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-m", "pytest", f"--dataset={FIXTURES / 'mini'}", "--detector", "slow"]
    command += ["--grounding-html", str(page), "--grounding-json", str(report), *workers]
    process = subprocess.Popen(command, cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        seen = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if page.is_file() and live.sidecar(page).is_file():
                text = page.read_text()
                counted = json.loads(live.sidecar(page).read_text())["total"]  # 0 until the items are counted
                if 'data-state="running"' in text and counted:
                    seen = text
                    break
            time.sleep(0.1)
        assert seen is not None, "no running page before the run ended"
        assert process.poll() is None, "the run ended before its running page was seen"
        state = json.loads(live.sidecar(page).read_text())
        assert state["state"] == "running" and state["total"] == 8 and state["done"] < 8
        assert " of <b>8</b> samples" in seen and "time left" in seen
        assert main(["board", str(runs)]) == 0
        out = capsys.readouterr().out
        assert "running (1):" in out and "slow.html: running since" in out and "of 8 samples" in out
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode in (0, 1), output.decode()[-3000:]
    final = page.read_text()
    assert 'data-state="running"' not in final and "<h1>" in final
    assert not live.sidecar(page).exists()
    assert main(["board", str(runs)]) == 0
    assert "running (" not in capsys.readouterr().out


SLOW_LOAD_CONFTEST = '''
import contextlib
import io
import json
from pathlib import Path

from pytest_grounding.cli.main import main
from pytest_grounding.core.types import Prediction


class SlowLoad:
    """Its preflight stands for a model's slow start (weights, a server): what is on disk by then."""

    name = "slowload"

    @classmethod
    def preflight(cls):
        board = io.StringIO()
        with contextlib.redirect_stdout(board):
            code = main(["board"])
        seen = {
            "pages": sorted(str(p) for p in Path.cwd().rglob("*.html")),
            "running": sorted(str(p) for p in Path.cwd().rglob("*.running.json")),
            "board": [code, board.getvalue()],
        }
        Path("seen.json").write_text(json.dumps(seen))

    def predict(self, query):
        return Prediction(point=(5.0, 5.0))


def pytest_grounding_register_detectors(registry):
    registry.register("slowload", SlowLoad)
'''


@pytest.fixture
def slow_load(pytester, monkeypatch):
    from helpers import make_project
    from pytest_grounding.render import run_folder

    monkeypatch.delenv(run_folder.ENV_RUNS_DIR, raising=False)  # tests/conftest.py switches it off
    return make_project(pytester, SLOW_LOAD_CONFTEST)


def test_the_page_is_on_disk_before_the_detectors_load(slow_load):
    """--grounding-html: the running page and its sidecar exist when a model's preflight starts."""
    page = slow_load.path / "out" / "slow.html"
    page.parent.mkdir()
    result = slow_load.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector", "slowload", "--grounding-html", page)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    seen = json.loads((slow_load.path / "seen.json").read_text())
    assert str(page) in seen["pages"] and str(live.sidecar(page)) in seen["running"], seen
    assert not live.sidecar(page).exists() and 'data-state="running"' not in page.read_text()


def test_a_default_run_is_running_on_the_board_before_the_detectors_load(slow_load):
    """No --grounding-html: the run's folder holds the running page and its sidecar from the start,
    and `board` with no argument lists the run as running; the end leaves the report, no marker."""
    result = slow_load.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector", "slowload")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    seen = json.loads((slow_load.path / "seen.json").read_text())
    assert [p.rsplit("/", 1)[1] for p in seen["running"]] == ["report.html.running.json"], seen
    assert [p.rsplit("/", 1)[1] for p in seen["pages"]] == ["report.html"], seen
    code, board = seen["board"]
    assert code == 0 and "running (1):" in board and "report.html: running since" in board, board
    [folder] = (slow_load.path / "grounding-runs").iterdir()
    assert (folder / "report.json").is_file() and not live.sidecar(folder / "report.html").exists()
    assert 'data-state="running"' not in (folder / "report.html").read_text()


def test_a_run_stopped_before_its_first_sample_leaves_no_running_page(slow_load):
    """A usage error after the page was begun (here: no sample selected) leaves neither the page nor
    the run's folder made for it."""
    result = slow_load.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector", "slowload", "-k", "no_such_item")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()[-3000:]
    assert json.loads((slow_load.path / "seen.json").read_text())["running"]  # it was begun
    assert not (slow_load.path / "grounding-runs").exists()


def test_an_earlier_page_at_the_path_is_back_when_the_run_writes_none(slow_load):
    """The running page moves a finished page already at --grounding-html aside, never over it: a run
    that stops before its own page puts the earlier one back; a run that ends replaces it."""
    page = slow_load.path / "report.html"
    page.write_text("<html>the earlier run's report</html>")
    args = [f"--dataset={FIXTURES / 'mini'}", "--grounding-html", page]
    # A bad detector spec is refused before the page begins now; an empty selection stops after it.
    result = slow_load.runpytest(*args, "--detector", "slowload", "-k", "no_such_item")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()[-3000:]
    seen = json.loads((slow_load.path / "seen.json").read_text())
    assert str(page) in seen["pages"]  # the running page was there meanwhile
    assert page.read_text() == "<html>the earlier run's report</html>"
    assert [p.name for p in slow_load.path.iterdir() if "before-run" in p.name] == []
    result = slow_load.runpytest(*args, "--detector", "slowload")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    assert "the earlier run" not in page.read_text() and 'data-state="running"' not in page.read_text()
    assert [p.name for p in slow_load.path.iterdir() if "before-run" in p.name] == []
