"""The side of a run that predicts (each xdist worker, or the only process): its detectors, the
screens it decodes, what the baseline expects of each sample, the samples not to run again, the
prefetch pipeline, and the one evaluator the fixture and the pipeline share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...analysis import baseline as baseline_mod
from ...core.record import Record
from ...evaluate.evaluator import Evaluator
from ..common.halt import Halt
from ..common.plan import RunPlan
from ..common.pool import DetectorPool
from .screens import ScreenReader


@dataclass
class WorkerSession:
    plan: RunPlan
    pool: DetectorPool
    screens: ScreenReader = field(default_factory=ScreenReader)
    expected: dict[baseline_mod.Key, str] = field(default_factory=dict)  # the baseline's outcomes
    judged: bool = False  # a baseline is compared with: each record gets its verdict
    done_keys: frozenset = frozenset()  # (task, detector, dataset, uid) resumed: not run again
    shard_planned: dict[str, dict[str, Any]] = field(default_factory=dict)  # --grounding-shard, per dataset
    startup_seconds: float = 0.0  # the controller's frame checks' time before the run: the seconds budget's
    startup_requests: int = 0  # HTTP requests the controller's checks sent before the run: the budget's
    pipeline: Any = None  # prefetch.Pipeline: predictions started ahead of their items (once the loop starts)
    halt: Halt = field(default_factory=Halt)  # the controller's stop (a frame check that failed while samples ran)

    @classmethod
    def open(cls, plan: RunPlan) -> WorkerSession:
        from ...store.answers import open_store

        return cls(
            plan=plan, pool=DetectorPool(plan.specs, open_store(plan.settings.outputs.answer_cache), plan.index.labels)
        )

    def expect(self, expected: Mapping[baseline_mod.Key, str]) -> None:
        """The checked baseline's outcomes: every record made from now on carries its verdict."""
        self.expected = dict(expected)
        self.judged = True

    @property
    def evaluator(self) -> Evaluator:
        settings = self.plan.settings
        return Evaluator(
            task=settings.selection.task,
            timeout=settings.scoring.timeout,
            threshold=settings.scoring.iou_threshold,
            profile=settings.scoring.profile,
            fingerprint_of=self.plan.catalog.fingerprint_of,
            elements_of=self.plan.catalog.elements_of,
            read=self.screens.read,
            verdict_of=self._verdict if self.judged else None,
        )

    def _verdict(self, record: Record) -> str:
        return baseline_mod.sample_verdict(record["outcome"], self.expected.get(baseline_mod.sample_key(record)))

    def detector_lines(self, specs: Sequence[str]) -> list[str]:
        """Load each detector (once per process) and say what it runs on. A DetectorLoadError
        propagates: the caller stops the run with it (one message, not an error per item)."""
        from ...render.common.headline import runtime_line

        lines = []
        for spec in specs:
            self.pool.get(spec)
            lines.append(f"grounding: detector {self.plan.name_of(spec)}: {runtime_line(self.pool.info[spec])}")
        return lines

    def served_stats(self) -> dict[str, Any]:
        return self.pool.served_stats()
