"""Lines of a predictions file being resumed (--grounding-resume), re-scored against the dataset:
the stored outcome, distance and IoU are never trusted, only the answer (point, points, box,
refusal) and its latency. A line that does not fit the dataset (no such sample, an answer or
latency that is not numbers, an outcome the plugin never writes) is not kept: its sample runs
again and a note says why. Pure: no pytest, no I/O."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.misses import kept_kind
from ..core.profiles import Profile
from ..core.record import TASKS, Outcome, Record, Task, to_json, with_fields
from ..core.types import Box, Prediction, Sample
from . import scoring
from .sample_of_record import sample_of

OUTCOMES = (Outcome.HIT, Outcome.MISS, Outcome.WRONG_FORMAT, Outcome.ERROR)


@dataclass(frozen=True)
class Rescored:
    record: Record | None  # None: the line is not kept (its sample runs again)
    note: str | None = None


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _pair(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list) and len(value) == 2 and all(_real(v) for v in value):
        return (float(value[0]), float(value[1]))
    raise ValueError(f"{value!r:.60} is not a point (x, y)")


def prediction_of(line: Mapping[str, Any]) -> Prediction:
    """The answer a line records, as a Prediction (ValueError when it is not numbers)."""
    meta = dict(line.get("meta") or {}) if isinstance(line.get("meta"), Mapping) else {}
    meta.pop("refusal", None)  # the line's own boolean decides, not a text in its meta
    if line.get("refusal") is True:  # only the boolean: the text "false" is no refusal
        meta["refusal"] = True
    box = line.get("box")
    if box is not None:
        if not (isinstance(box, list) and len(box) == 4 and all(_real(v) for v in box)):
            raise ValueError(f"box {box!r:.60} is not four numbers")
        box = Box(*(float(v) for v in box))
    points = line.get("points")
    point = line.get("point")
    return Prediction(
        point=None if point is None else _pair(point),
        points=None if points is None else tuple(p for p in (_pair(v) for v in (points or [])) if p),
        box=box,
        raw=line.get("raw") if isinstance(line.get("raw"), str) else None,
        meta=meta,
    )


def rescore(
    line: Mapping[str, Any], samples: Mapping[tuple[str, str], Sample], where: str, profile: Profile | None = None
) -> Rescored:
    """The record this run would have written for the line's answer (by its scoring profile), or
    why the line is not kept."""
    outcome = line.get("outcome")
    if outcome not in OUTCOMES:
        return Rescored(None, f"{where}: outcome {str(outcome)[:40]!r} is none the plugin writes: run again")
    if outcome == Outcome.ERROR:
        return Rescored(None)  # the sample was not scored: it runs again (an error has no answer to score)
    latency = line.get("latency_ms")
    if latency is not None and not (_real(latency) and latency >= 0):
        return Rescored(None, f"{where}: latency_ms {str(latency)[:40]!r} is not a number: run again")
    sample = samples.get((str(line.get("dataset")), str(line.get("uid"))))
    if sample is None or str(line.get("id")) != str(sample.id):
        return Rescored(None, f"{where}: no sample {line.get('uid')!r} with id {line.get('id')!r} in the dataset")
    if line.get("task", Task.GROUNDING) != Task.GROUNDING:
        return Rescored(to_json(line))  # the element-at-click task's lines are kept as written
    try:
        prediction = prediction_of(line)
    except ValueError as exc:
        return Rescored(None, f"{where}: {exc}: run again")
    size = line.get("image_size")
    image_size = (
        (int(size[0]), int(size[1]))
        if isinstance(size, list) and len(size) == 2 and all(_real(v) and v > 0 for v in size)
        else sample.image_size
    )
    if image_size is None:
        return Rescored(None, f"{where}: no image size to score it in: run again")
    record = scoring.score(
        sample,
        prediction,
        detector=str(line["detector"]),
        latency_ms=float(latency or 0.0),
        image_size=image_size,
        profile=profile,
    )
    # fingerprint, baseline, ...; the old answer's miss kind only while the click and outcome stand
    kept = {key: value for key, value in line.items() if key not in record and key not in ("miss_kind", "distance_px")}
    record = kept_kind(with_fields(record, **kept, **({"latency_ms": None} if latency is None else {})), line)
    note = None
    if record["outcome"] != outcome:
        note = f"{where}: stored outcome {outcome!r}, its answer scores {record['outcome']!r} (counted so)"
    return Rescored(record, note)


def rescore_record(
    record: Mapping[str, Any], where: str, sample: Sample | None = None, profile: Profile | None = None
) -> Rescored:
    """A record read back from a report (`merge`) re-scored from its answer by `profile`, as a
    resumed line is: against `sample` (its dataset read again) when given, else against the sample
    the record itself describes (sample_of_record.py). An error stays an error (nothing to score;
    --max-errors counts it), the element-at-click task's records are kept as written."""
    outcome = record.get("outcome")
    if outcome == Outcome.ERROR and record.get("task", Task.GROUNDING) in TASKS:
        return Rescored(to_json(record))
    if sample is None:
        try:
            sample = sample_of(record)
        except (ValueError, TypeError, KeyError) as exc:  # a record read back is untrusted: its fields may be anything
            return Rescored(None, f"{where}: not a sample this plugin writes ({type(exc).__name__}: {str(exc)[:80]})")
    result = rescore(record, {(sample.dataset, sample.uid): sample}, where, profile)
    if result.record is None or not isinstance(record.get("meta"), Mapping):
        return result
    return Rescored(with_fields(result.record, meta=record["meta"]), result.note)  # meta as the run wrote it
