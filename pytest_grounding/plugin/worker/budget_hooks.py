"""--grounding-budget's hooks, registered where predictions run (the only process, or each xdist
worker, which spends its share: core/budget.py). The meter is installed while the loop runs; an
item whose prediction was not started ahead and that the meter refuses is not run at all (no
report: the controller lists it among the run's not_run, and --grounding-resume runs it later);
each finished sample's tokens and cost are spent as its report comes."""

from __future__ import annotations

from typing import Any

import pytest

from ...core import budget
from ...core.usage import usage_of
from ..common.wire import record_of
from .pipeline import detector_spec
from .worker_session import WorkerSession


class BudgetHooks:
    def __init__(self, config: Any, worker: WorkerSession, whole: budget.Budget) -> None:
        self.config = config
        self.worker = worker
        self.budget = whole
        self.meter: budget.Meter | None = None

    def share(self) -> budget.Budget:
        """What the samples may spend: the requests the checks before the run sent (probes, the
        frame check) and the frame check's seconds taken off; under -n N, this worker's part of the
        rest (1/N each; the seconds are everyone's)."""
        left = self.budget.after_requests(self.worker.startup_requests).after_seconds(self.worker.startup_seconds)
        told = getattr(self.config, "workerinput", None)
        if told is None:
            return left
        index = int(str(told.get("workerid", "gw0")).lstrip("gw") or 0)
        return left.share(index, int(told.get("workercount", 1)))

    @pytest.hookimpl(tryfirst=True)  # before the detectors load (worker/hooks.py, trylast): their probes count
    def pytest_collection_finish(self, session):
        if not self.config.option.collectonly and self.meter is None:
            self.meter = budget.Meter(self.share())
            budget.install(self.meter)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: the meter covers the pipeline's whole life
    def pytest_runtestloop(self, session):
        if not self.config.option.collectonly and self.meter is None:
            self.meter = budget.Meter(self.share())
        if self.meter is not None:
            budget.install(self.meter)
        try:
            yield
        finally:
            budget.install(None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        meter = self.meter
        if meter is None or detector_spec(item) is None:
            return None
        pipeline = self.worker.pipeline
        if (pipeline is not None and pipeline.started(item)) or meter.admit():
            return None  # runs as usual
        return True  # refused: no report, so the item is not run (never an error or a miss)

    def pytest_runtest_logreport(self, report) -> None:
        meter = self.meter
        record = record_of(report)
        if meter is None or record is None or report.when != "call":
            return
        usage = usage_of(record)
        price = self.worker.plan.settings.scoring.price
        cost = price.cost(usage["prompt_tokens"], usage["completion_tokens"]) if usage and price else None
        meter.spend(usage, cost)

    def figures(self) -> dict[str, Any] | None:
        """What this process spent and which budget ended it (None: no budget here)."""
        if self.meter is None:
            return None
        return {"ended": self.meter.ended, "spent": self.meter.figures()}


def register(config: Any, worker: WorkerSession | None) -> BudgetHooks | None:
    whole = worker.plan.settings.selection.budget if worker is not None else None
    if worker is None or whole is None:
        return None
    hooks = BudgetHooks(config, worker, whole)
    config.pluginmanager.register(hooks, "grounding-budget")
    return hooks
