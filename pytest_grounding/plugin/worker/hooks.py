"""Hooks of an xdist worker: load the detectors before the first item (outside any item's
captured output), and hand the controller what only this process knows at its end. A detector
that cannot be built runs no item: the controller stops the run with its one message."""

from __future__ import annotations

from typing import Any

import pytest

from ..common.item_index import detector_specs_of
from ..common.pool import DetectorLoadError
from ..common.wire import WorkerOutput
from .worker_session import WorkerSession


class Worker:
    def __init__(self, config: Any, session: WorkerSession) -> None:
        self.config = config
        self.session = session
        self.load_failure: str | None = None

    @pytest.hookimpl(trylast=True)  # after xdist's, which sends the collection: the controller
    def pytest_collection_finish(self, session: Any) -> None:  # schedules while this one loads
        if not self.config.option.collectonly:
            try:
                self.session.detector_lines(detector_specs_of(session.items))
            except DetectorLoadError as exc:
                self.load_failure = session.shouldstop = f"grounding: {exc}"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: Any) -> bool | None:
        return True if self.load_failure else None  # no item runs

    def pytest_sessionfinish(self, session: Any) -> None:
        prefetch = self.config.pluginmanager.get_plugin("grounding-prefetch")  # its sessionfinish ran first
        WorkerOutput(
            detectors=self.session.pool.info,
            datasets=self.session.plan.catalog.summaries(),
            shard=self.session.shard_planned,
            load_failure=self.load_failure,
            served=self.session.served_stats(),
            unscored=list(getattr(prefetch, "leftovers", [])),
            budget=getattr(self.config.pluginmanager.get_plugin("grounding-budget"), "figures", lambda: None)(),
        ).send(self.config.workeroutput)
        self.session.pool.close()
