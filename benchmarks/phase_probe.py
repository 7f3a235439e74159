"""A pytest plugin for the benchmarks (`-p phase_probe`, this folder on PYTHONPATH): each process of
a run (the only one, or xdist's controller and workers) appends when it reached each phase to
$GROUNDING_PHASE_PROBE/phases.log and, from its session's end on, writes every thread's stack to a
file there once a second while it is still alive. A process normally exits within ~0.2 s of its
session's end, so a stack file that is not empty shows where a slow end waited. Without that
variable it does nothing."""

from __future__ import annotations

import atexit
import faulthandler
import os
import time
from pathlib import Path
from typing import Any

import pytest

FOLDER = Path(os.environ["GROUNDING_PHASE_PROBE"]) if os.environ.get("GROUNDING_PHASE_PROBE") else None
_state: dict[str, Any] = {"who": "?", "items": 0, "last_item": None}


def _log(phase: str, at: float | None = None) -> None:
    if FOLDER is None:
        return
    with open(FOLDER / "phases.log", "a", encoding="utf-8") as handle:
        handle.write(f"{at or time.time():.3f} {_state['who']} {phase}\n")


def pytest_configure(config: Any) -> None:
    _state["who"] = getattr(config, "workerinput", {}).get("workerid", "main")
    _log("configure")


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: Any) -> None:
    _log("sessionstart done (the checks before the run)")


def pytest_collection_finish(session: Any) -> None:
    _log(f"collected {len(session.items)} items")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: Any) -> None:
    _log("run loop starts")


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if not _state["items"] and not _state.get("started"):
        _state["started"] = True
        _log("first item starts")


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _state["items"] += 1
    _state["last_item"] = time.time()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: Any) -> None:
    if _state["last_item"]:
        _log(f"last of its {_state['items']} items ended", at=_state["last_item"])
    _log("sessionfinish")
    if FOLDER is None:
        return
    stacks = open(FOLDER / f"stacks-{_state['who']}-{os.getpid()}.txt", "w", encoding="utf-8")  # noqa: SIM115
    _state["stacks"] = stacks  # kept open until the process ends
    faulthandler.dump_traceback_later(1.0, repeat=True, file=stacks)


def pytest_unconfigure(config: Any) -> None:
    _log("unconfigure")


atexit.register(lambda: _log("exit"))
