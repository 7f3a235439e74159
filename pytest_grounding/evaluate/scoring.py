"""One sample and one answer to one record: hit, miss or wrong format against the sample's target,
or the error that says why the sample could not be scored. Pure: no pytest, no I/O. Every record
is made here, whole, as plain built-in types (core.record)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec

from ..core import variants
from ..core.coverage import CANDIDATES, covered
from ..core.misses import miss_fields
from ..core.profiles import Profile, get_profile
from ..core.record import CACHE_META, RAW_LIMIT, CacheUse, Outcome, Record, Task, plain, size_bucket, to_json
from ..core.redact import redact
from ..core.targets import Absent, is_refusal_point, target_of
from ..core.types import Prediction, Sample, epoch_of
from . import agent_trace

__all__ = ["RAW_LIMIT", "base_record", "error_record", "model_calls", "score", "score_located"]
P = ParamSpec("P")


def base_record(sample: Sample, detector: str, image_size: tuple[int, int] | None = None) -> dict[str, Any]:
    """The sample's fields of a record, before its verdict."""
    size = image_size or sample.image_size
    box = sample.bbox
    return {
        "task": Task.GROUNDING,
        "detector": detector,
        "dataset": sample.dataset,
        "id": sample.id,
        "uid": sample.uid,
        "image": str(sample.image),
        "instruction": sample.instruction,
        "element_type": sample.element_type,
        "app": sample.app,
        "app_category": sample.app_category,
        "platform": sample.platform,
        "target": box.as_list(),
        "negative": isinstance(sample.target, Absent),
        "refusal": False,
        "size_px": round(box.side, 2),
        "size": size_bucket(box.side),
        "area_share": round(box.area / (size[0] * size[1]), 6) if size else None,
        "image_size": list(size) if size else None,
        **_target_fields(sample),
        "outcome": None,
        "point": None,
        "box": None,
        "iou": None,
        "distance": None,
        "latency_ms": None,
        "raw": None,
        "error": None,
        "meta": {},
        **({"epoch": epoch} if (epoch := epoch_of(sample)) is not None else {}),
        **variants.record_fields(sample),  # --grounding-perturb: variant, axis, perturbation, original_uid
    }


def _target_fields(sample: Sample) -> dict[str, Any]:
    """A richer target's shape, and the benchmark's own slices (headlines.py reads them)."""
    out: dict[str, Any] = {}
    if sample.target is not None and not isinstance(sample.target, Absent):
        out["target_shape"] = plain(sample.target.describe())
    benchmark = sample.extra.get("benchmark") if isinstance(sample.extra, Mapping) else None
    if isinstance(benchmark, Mapping):
        out["benchmark"] = plain(benchmark)
    return out


def made_whole(build: Callable[P, dict[str, Any]]) -> Callable[P, Record]:
    """A record builder whose result leaves as a Record of plain types (enum members as values)."""

    @functools.wraps(build)
    def whole(*args: P.args, **kwargs: P.kwargs) -> Record:
        return to_json(build(*args, **kwargs))

    return whole


@made_whole
def score(
    sample: Sample,
    prediction: Prediction,
    *,
    detector: str,
    latency_ms: float,
    image_size: tuple[int, int],
    profile: Profile | None = None,
) -> dict[str, Any]:
    """The record of `_verdict`, its miss classified (core/misses.py: near, off_image, empty,
    no_answer; the evaluator adds wrong_element from the screen's other elements)."""
    candidates = prediction.meta.get(CANDIDATES) if isinstance(prediction.meta, Mapping) else None
    if candidates is not None:  # a parse-then-match detector's parsed elements: coverage, not the record's bulk
        prediction = dataclasses.replace(prediction, meta={k: v for k, v in prediction.meta.items() if k != CANDIDATES})
    record = _verdict(
        sample, prediction, detector=detector, latency_ms=latency_ms, image_size=image_size, profile=profile
    )
    record.update(miss_fields(record))
    if candidates is not None and not record.get("negative"):
        found = covered(candidates, sample.bbox.as_list())  # a richer target: its bounding box
        if found is not None:
            record["parser_candidates"] = len(candidates) if isinstance(candidates, (list, tuple)) else 0
            record["parser_covered"] = found
            if record.get("outcome") in ("miss", "wrong_format"):
                record["parser_miss"] = "not_matched" if found else "not_detected"
    return record


def _verdict(
    sample: Sample,
    prediction: Prediction,
    *,
    detector: str,
    latency_ms: float,
    image_size: tuple[int, int],
    profile: Profile | None = None,
) -> dict[str, Any]:
    """Hit, miss or wrong format against the sample's target (targets.py) by the scoring profile
    (profiles.py; the default: a refusal is a hit on an absent target and a miss on a present one,
    a click on an absent target is a miss, no point a wrong format)."""
    rule = profile or get_profile(None)
    record = base_record(sample, detector, image_size)
    target = target_of(sample)
    click = prediction.click
    record.update(
        latency_ms=round(latency_ms, 3),
        raw=_clip(prediction.raw),
        meta=plain(prediction.meta),
        attempts=model_calls(prediction.meta),
    )
    record.update(agent_trace.lifted(record["meta"]))  # issue 39: an episode's turns and end, out of meta
    if prediction.meta.get("truncated"):  # the engine cut the answer (finish_reason "length"): scored as it came
        record["truncated"] = True
    if prediction.meta.get(CACHE_META) == CacheUse.HIT:  # --grounding-cache: the answer came from the store
        record["cached"] = True
    box = prediction.box
    reference = target.single_box  # IoU is defined where the target is one box
    if box is not None and all(math.isfinite(v) for v in box.as_list()):
        record["box"] = box.as_list()
        if reference is not None:
            iou = box.iou(reference)
            record["iou"] = round(iou, 6) if math.isfinite(iou) else None
    refused = prediction.refused or (prediction.points is None and is_refusal_point(click))
    if refused:
        record["refusal"] = True
        record["outcome"] = Outcome.HIT if rule.judge(target, None, True, image_size) else Outcome.MISS
        return record
    clicks = prediction.clicks
    if click is None or not clicks or not all(math.isfinite(v) for p in clicks for v in p):
        # no point: a wrong format, unless the profile scores it as a point (GUI-Owl-1.5's (0, 0))
        record["outcome"] = Outcome.HIT if rule.judge(target, None, False, image_size) else Outcome.WRONG_FORMAT
        return record
    record["point"] = [round(click[0], 3), round(click[1], 3)]
    if len(clicks) > 1:
        record["points"] = [[round(x, 3), round(y, 3)] for x, y in clicks]
    if not isinstance(target, Absent):
        record["distance"] = round(sample.bbox.distance_to(click), 3)
    record["outcome"] = Outcome.HIT if rule.judge(target, clicks, False, image_size) else Outcome.MISS
    return record


@made_whole
def score_located(
    sample: Sample,
    outcome: Any,
    *,
    detector: str,
    latency_ms: float,
    image_size: tuple[int, int],
    click: tuple[float, float],
    threshold: float,
) -> dict[str, Any]:
    """A locate record from `locate.locate_with_retries`' outcome: hit when the box returned has
    IoU >= threshold with the target, miss (a false positive) below it, wrong format when no
    attempt returned a box."""
    record = base_record(sample, detector, image_size)
    record["task"] = Task.LOCATE
    attempts = [
        {
            "transform": a.transform,
            "box": a.box.as_list() if a.box is not None else None,
            "contains_point": a.contains_point,
            "ms": round(a.seconds * 1000.0, 3),
            "error": a.error,
        }
        for a in outcome.attempts
    ]
    record.update(
        latency_ms=round(latency_ms, 3),
        point=[round(click[0], 3), round(click[1], 3)],
        attempts=len(attempts),
        transform=outcome.transform,
        threshold=threshold,
        meta=plain({**dict(outcome.meta), "tried": attempts}),
    )
    box = outcome.box
    if box is None or not all(math.isfinite(v) for v in box.as_list()):
        record["outcome"] = Outcome.WRONG_FORMAT
        return record
    iou = box.iou(sample.bbox)
    record.update(box=box.as_list(), iou=round(iou, 6), distance=round(sample.bbox.distance_to(box.center), 3))
    record["outcome"] = Outcome.HIT if iou >= threshold else Outcome.MISS
    return record


def model_calls(meta: Mapping[str, Any]) -> int:
    """Model calls behind one answer: a cropping strategy counts them in meta["attempts"]; a plain
    detector makes one."""
    value = meta.get("attempts") if isinstance(meta, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def error_record(
    sample: Sample,
    *,
    detector: str,
    message: str,
    latency_ms: float | None = None,
    task: str = Task.GROUNDING,
    fingerprint: str | None = None,
) -> Record:
    """A sample that could not be scored, and why (naming the sample and its file)."""
    record = base_record(sample, detector)
    record.update(
        task=task,
        outcome=Outcome.ERROR,
        error=redact(message),
        latency_ms=None if latency_ms is None else round(latency_ms, 3),
    )
    if fingerprint is not None:
        record["fingerprint"] = fingerprint
    return to_json(record)


def _clip(raw: str | None) -> str | None:
    if raw is None:
        return None
    raw = redact(str(raw))  # before the cut: a cut key would not match
    return raw if len(raw) <= RAW_LIMIT else raw[:RAW_LIMIT] + "..."
