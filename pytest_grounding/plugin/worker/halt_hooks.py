"""The controller's stop (common/halt.py: a frame check that failed while samples ran), where
predictions run (the only process, or each xdist worker): from the stop on, a grounding item is not
run (no report: the controller lists it among the run's not_run) and the loop ends after the item
running; the pipeline starts nothing more (worker/pipeline.py), and answers that came back for items
not run are kept as an interruption keeps them."""

from __future__ import annotations

from typing import Any

import pytest

from .pipeline import detector_spec
from .worker_session import WorkerSession


class HaltHooks:
    def __init__(self, worker: WorkerSession) -> None:
        self.worker = worker

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> bool | None:
        message = self.worker.halt.stopped()
        if message is None or detector_spec(item) is None:
            return None
        item.session.shouldstop = message  # the loop ends (an xdist worker tells its controller)
        return True  # not run


def register(config: Any, worker: WorkerSession) -> None:
    config.pluginmanager.register(HaltHooks(worker), "grounding-halt")
