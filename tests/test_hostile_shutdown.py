"""Hostile inputs (issue 42 and 52; docs/security.md says what each class guarantees). The end of a run: an
output that cannot be written fails the run in one line; Ctrl-C while the outputs are written is held until
they are whole; SIGTERM stops a started server's whole process group.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import FIXTURES, REPO, SERIAL, XDIST, read_json
from hostile import no_crash, run_suite
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"


# -- outputs -------------------------------------------------------------------------------------------------

FULL = "/dev/full"


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")
@pytest.mark.parametrize("option", ["--grounding-json", "--grounding-html", "--grounding-predictions"])
@SERIAL
def test_an_output_that_cannot_be_written_fails_the_run_in_one_line(tmp_path, option, workers):
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-misses", "xfail",
        option, FULL, *workers,
    )  # fmt: skip
    text = no_crash(result)
    failed = [line for line in text.splitlines() if "output FAILED" in line]
    assert len(failed) == 1 and result.returncode != 0, text[-2000:]


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")
def test_summary_append_on_a_full_device_is_one_line(tmp_path, capsys):
    report = tmp_path / "r.json"
    run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report))
    assert main(["summary", str(report), "--append", FULL]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "not appended" in err


def test_ctrl_c_while_the_outputs_are_written_is_held_until_they_are_whole(tmp_path):
    from pytest_grounding.store.reports import interrupts_held, write_json

    taken = []
    with interrupts_held(taken):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        write_json(tmp_path / "r.json", {"whole": True})
    assert taken and read_json(tmp_path / "r.json") == {"whole": True}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


INTERRUPTING_WRITER = """
import os, signal
from pytest_grounding.render import outputs

_write_all = outputs.write_all


def write_all(document, settings, **how):  # Ctrl-C arrives as the final outputs start to be written
    os.kill(os.getpid(), signal.SIGINT)
    return _write_all(document, settings, **how)


outputs.write_all = write_all
"""


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@XDIST
def test_ctrl_c_during_the_final_write_loses_no_output(tmp_path, workers):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "conftest.py").write_text(INTERRUPTING_WRITER)
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    result = run_suite(
        folder, f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report),
        "--grounding-html", str(page), *workers,
    )  # fmt: skip
    text = no_crash(result)
    assert result.returncode == 2 and "were completed first" in text, text[-2000:]
    assert len(read_json(report)["samples"]) == 8 and page.read_text().rstrip().endswith("</html>")


# --- SIGTERM stops a started server's whole process group ------------------------------------------------------

SIGTERMED = """
import sys, time, types
from pathlib import Path
from pytest_grounding.detectors import vllm_server

folder = Path(sys.argv[1])
script = f"sleep 300 & echo $! > {folder / 'child.pid'}; wait"
plan = types.SimpleNamespace(argv=["sh", "-c", script], base_url="http://127.0.0.1:1/v1", served_name="m",
                             describe=lambda: {})
vllm_server.ensure_server("k", lambda: vllm_server.ServerProcess(plan, folder / "server.log"))
while not (folder / "child.pid").exists() or not (folder / "child.pid").read_text().strip():
    time.sleep(0.05)
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("signal_name", ["SIGTERM"])
def test_sigterm_stops_a_started_servers_whole_group(tmp_path, signal_name):
    import os
    import signal
    import time

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.Popen([sys.executable, "-c", SIGTERMED, str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True)
    assert run.stdout.readline().strip() == "ready"
    child = int((tmp_path / "child.pid").read_text())
    os.kill(child, 0)  # alive: a grandchild of the run, in the server's group
    run.send_signal(getattr(signal, signal_name))
    assert run.wait(30) == -signal.SIGTERM  # it still ends as SIGTERM ends a process
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the server's child outlived the run")


# --- Ctrl-C at the run's end: held from the figures on, never losing the JSON and HTML -------------------------

INTERRUPTED_AT = """
import os, signal
from pytest_grounding.analysis import {module} as patched

_original = patched.{function}


def {function}(*args, **kwargs):  # Ctrl-C arrives as the run's end starts this step
    os.kill(os.getpid(), signal.SIGINT)
    return _original(*args, **kwargs)


patched.{function} = {function}
"""


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@XDIST
@pytest.mark.parametrize(("module", "function"), [("document", "figures"), ("tracked", "tracked_runs")])
def test_ctrl_c_at_the_runs_end_loses_no_output(tmp_path, workers, module, function):
    import importlib.util

    if module == "tracked" and importlib.util.find_spec("mlflow") is None:
        pytest.skip("needs the mlflow extra")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "conftest.py").write_text(INTERRUPTED_AT.format(module=module, function=function))
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    more = ["--grounding-log", f"mlflow:{tmp_path / 'nowhere'}"] if module == "tracked" else []
    result = run_suite(folder, f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report),
                       "--grounding-html", str(page), *more, *workers)  # fmt: skip
    text = no_crash(result)
    assert result.returncode == 2 and "were completed first" in text, text[-2000:]
    assert len(read_json(report)["samples"]) == 8 and page.read_text().rstrip().endswith("</html>")
