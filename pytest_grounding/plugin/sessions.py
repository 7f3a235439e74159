"""Where each process keeps its part of the run, in `config.stash` (module-level state would leak
between in-process pytester runs): the plan in every process; the worker session where samples
are predicted (each xdist worker, or the only process); the controller's start-up checks and its
session where results are gathered (the xdist controller, or the only process). Every stash key
of the plugin is declared here."""

from __future__ import annotations

from typing import Any

import pytest

from .common.notes import Notes
from .common.plan import RunPlan
from .controller.controller_session import ControllerSession
from .controller.startup import Startup
from .worker.worker_session import WorkerSession

PLAN_KEY = pytest.StashKey[RunPlan]()
WORKER_KEY = pytest.StashKey[WorkerSession]()
STARTUP_KEY = pytest.StashKey[Startup]()
CONTROLLER_KEY = pytest.StashKey[ControllerSession]()


def is_worker(config: Any) -> bool:
    return hasattr(config, "workerinput")


def distributed(config: Any) -> bool:
    """This process is an xdist controller (its workers predict)."""
    return bool(config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None))


def open_sessions(config: Any) -> RunPlan:
    """The plan, and the sessions this process runs (a SettingError propagates)."""
    notes = Notes()
    plan = config.stash[PLAN_KEY] = RunPlan.build(config, notes)
    if is_worker(config) or not distributed(config):
        config.stash[WORKER_KEY] = WorkerSession.open(plan)
    if not is_worker(config):
        startup = config.stash[STARTUP_KEY] = Startup(plan, notes)
        config.stash[CONTROLLER_KEY] = ControllerSession.open(plan, startup)
        if WORKER_KEY in config.stash:  # the only process: a frame check's stop reaches its items here
            config.stash[WORKER_KEY].halt = startup.halt
    return plan


def plan_of(config: Any) -> RunPlan:
    return config.stash[PLAN_KEY]


def worker_of(config: Any) -> WorkerSession:
    """The worker session (only where samples are predicted)."""
    return config.stash[WORKER_KEY]


def controller_of(config: Any) -> ControllerSession:
    """The controller session (only where results are gathered)."""
    return config.stash[CONTROLLER_KEY]


def startup_of(config: Any) -> Startup:
    """The controller's start-up checks and what they found (only where results are gathered)."""
    return config.stash[STARTUP_KEY]


def local_startup(config: Any) -> Startup | None:
    return config.stash.get(STARTUP_KEY, None)


def local_worker(config: Any) -> WorkerSession | None:
    return config.stash.get(WORKER_KEY, None)


def local_controller(config: Any) -> ControllerSession | None:
    return config.stash.get(CONTROLLER_KEY, None)
