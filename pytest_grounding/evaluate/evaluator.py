"""The one evaluator of a process: a sample through a detector for the run's task, and its record
made whole in one place (the dataset's fingerprint, the baseline's verdict). The fixture and the
prefetch pipeline both call it, so the two paths cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.misses import miss_fields
from ..core.profiles import Profile
from ..core.record import Record, Task, to_json
from ..core.types import Sample
from .runner import Evaluation, evaluate, evaluate_locate, read_image
from .scoring import error_record


@dataclass(frozen=True)
class Evaluator:
    task: str
    timeout: float | None
    threshold: float  # the locate task's IoU threshold
    profile: Profile
    fingerprint_of: Callable[[str], str | None]  # dataset name -> its fingerprint
    read: Callable[[Sample], Any] = read_image  # screens decoded once for their samples
    verdict_of: Callable[[Record], str | None] | None = None  # the baseline's verdict on a record
    # the other annotated elements of a record's screen: a miss inside one is a wrong_element
    elements_of: Callable[[Record], Sequence[Sequence[float]]] | None = None

    def run(
        self, sample: Sample, detector: Any, name: str, around: Callable[[Callable[[], Any]], Any] | None = None
    ) -> Evaluation:
        """Predict (or locate), score, and make the record whole. Never raises short of Ctrl-C."""
        if self.task == Task.LOCATE:
            found = evaluate_locate(
                sample,
                detector,
                detector_name=name,
                timeout=self.timeout,
                threshold=self.threshold,
                around=around,
                read=self.read,
            )
        else:
            found = evaluate(
                sample,
                detector,
                detector_name=name,
                timeout=self.timeout,
                around=around,
                read=self.read,
                profile=self.profile,
            )
        return Evaluation(self.whole(found.record), found.traceback)

    def error(self, sample: Sample, detector: str, message: str) -> Record:
        """An error record made outside an evaluation (a last guard around one)."""
        return self.whole(error_record(sample, detector=detector, message=message, task=self.task))

    def whole(self, record: Record) -> Record:
        """The record with its dataset's fingerprint and then (the fingerprint is part of a sample's
        key in the baseline) the baseline's verdict: one copy, made here."""
        made: dict[str, Any] = {**record, "fingerprint": self.fingerprint_of(record["dataset"])}
        if self.elements_of is not None and record.get("miss_kind") == "empty":
            made.update(miss_fields(record, self.elements_of(record)))
        if self.verdict_of is not None:
            made["baseline"] = self.verdict_of(to_json(made))
        return to_json(made)
