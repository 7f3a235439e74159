"""The prefetch pipeline's hooks, registered where predictions run (the only process, or each
xdist worker): the pipeline made once collection and deselection are final, each item's slot
moved along or dropped, and what an interruption left kept (pipeline.py has the planning); on an
xdist controller, the scheduler that keeps each worker's queue a window deep (scheduling.py)."""

from __future__ import annotations

from typing import Any

import pytest

from ...core.record import Record
from ..compat.xdist_compat import find_interactor, worker_peek
from ..controller.controller_session import ControllerSession
from .pipeline import IN_FLIGHT, Pipeline, serial_peek
from .worker_session import WorkerSession


class PrefetchHooks:
    """Registered in the process that predicts: the only one, or each xdist worker."""

    def __init__(self, config: Any, worker: WorkerSession, controller: ControllerSession | None) -> None:
        self.config = config
        self.worker = worker
        self.controller = controller  # the only process: it keeps what an interruption left
        self.leftovers: list[Record] = []

    @pytest.hookimpl(hookwrapper=True, trylast=True)  # innermost: done before the run's records close
    def pytest_runtestloop(self, session):
        pipeline = None
        if not self.config.option.collectonly and session.items:
            if hasattr(self.config, "workerinput"):
                interactor = find_interactor(self.config)
                if interactor is not None:
                    pipeline = Pipeline(self.worker, session.items, worker_peek(interactor))
            else:
                pipeline = Pipeline(self.worker, session.items, serial_peek(len(session.items)))
        if pipeline is not None:
            self.worker.pipeline = pipeline
        outcome = yield
        if pipeline is None:
            return
        finished = pipeline.stop()
        # Only an interrupted loop leaves items unrun (xdist's worksteal may move prefetched items to
        # another worker: those run there, and their answers here are not kept).
        if outcome.excinfo is not None or session.shouldstop or session.shouldfail:
            self.leftovers = finished  # made whole by the evaluator (fingerprint, baseline verdict)
            if self.leftovers and self.controller is not None:
                self.controller.keep_unscored(self.leftovers)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        pipeline = self.worker.pipeline
        if pipeline is not None:
            pipeline.advance(item)
        try:
            yield
        finally:
            if pipeline is not None:
                pipeline.drop(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        pipeline = self.worker.pipeline
        if pipeline is not None and pipeline.prefetching and call.when == "call":  # call report only (junitxml)
            outcome.get_result().user_properties.append((IN_FLIGHT, pipeline.in_flight()))


def in_flight_of(report: Any) -> tuple[str, int] | None:
    """(process, predictions in flight there) from a call report of a prefetching process."""
    for entry in getattr(report, "user_properties", ()):
        if entry[0] == IN_FLIGHT:
            node = getattr(getattr(report, "node", None), "gateway", None)
            return (str(getattr(node, "id", "main")), int(entry[1]))
    return None


def register(config: Any, worker: WorkerSession | None, controller: ControllerSession | None) -> None:
    """Prefetching where predictions run; on an xdist controller, the scheduler that keeps each
    worker's queue deep enough for its window."""
    if worker is not None:
        config.pluginmanager.register(PrefetchHooks(config, worker, controller), "grounding-prefetch")
    elif controller is not None:
        from ..controller.scheduling import SchedulerHooks

        config.pluginmanager.register(SchedulerHooks(config, controller.plan), "grounding-prefetch-scheduler")
