"""The prefetch pipeline's hooks, registered where predictions run (the only process, or each
xdist worker): the pipeline made once collection and deselection are final, each item's slot
moved along or dropped, and what an interruption left kept (pipeline.py has the planning). On an
xdist controller, the scheduler that keeps each worker's queue a window deep is the controller's
(controller/scheduling.py); the plugin registers the one or the other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ...core.record import Record
from ..common.wire import IN_FLIGHT
from ..compat.xdist_compat import find_interactor, worker_peek
from .pipeline import Pipeline, serial_peek
from .worker_session import WorkerSession


class PrefetchHooks:
    """Registered in the process that predicts: the only one, or each xdist worker."""

    def __init__(self, config: Any, worker: WorkerSession, keep: Callable[[list[Record]], None] | None) -> None:
        self.config = config
        self.worker = worker
        self.keep = keep  # the only process: its controller session keeps what an interruption left
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
            if self.leftovers and self.keep is not None:
                self.keep(self.leftovers)

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


def register(config: Any, worker: WorkerSession, keep: Callable[[list[Record]], None] | None) -> None:
    """Prefetching where predictions run (the only process, or each xdist worker); `keep` takes what
    an interruption left, in the only process."""
    config.pluginmanager.register(PrefetchHooks(config, worker, keep), "grounding-prefetch")
