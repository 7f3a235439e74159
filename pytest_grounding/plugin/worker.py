"""Hooks of an xdist worker: load the detectors before the first item (outside any item's
captured output), and hand the controller what only this process knows at its end."""

from __future__ import annotations

from .items import detector_specs_of
from .state import get_run
from .wire import WorkerOutput


class Worker:
    """Hooks of an xdist worker: load the detectors before the first item (outside any item's
    captured output), hand their descriptions and the datasets' to the controller."""

    def __init__(self, config) -> None:
        self.config = config

    def pytest_collection_finish(self, session) -> None:
        if not self.config.option.collectonly:
            get_run(self.config).detector_lines(detector_specs_of(session.items))

    def pytest_sessionfinish(self, session) -> None:
        run = get_run(self.config)
        WorkerOutput(
            detectors=run.pool.info,
            datasets={d.name: d.summary() for d in run.datasets.values()},
            shard=run.shard_planned,
        ).send(self.config.workeroutput)
        run.pool.close()
