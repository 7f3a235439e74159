"""Pure scoring and aggregation: a sample and a prediction in, plain-dict records out, and the
summary of many records. No pytest, no I/O; records hold only built-in types so they can cross
xdist's wire and land in JSON unchanged."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .headlines import benchmark_figures
from .redact import redact
from .targets import Absent, is_refusal_point, target_of
from .types import Box, Prediction, Sample

HIT, MISS, WRONG_FORMAT, ERROR = "hit", "miss", "wrong_format", "error"
GROUNDING, LOCATE = "grounding", "locate"  # the two tasks; a locate record's miss is a false positive,
# its wrong format is "no box found", and its accuracy is the hit rate at the IoU threshold
SCORED = (HIT, MISS, WRONG_FORMAT)  # wrong format stays in the accuracy denominator, as a miss
SLICES = ("dataset", "element_type", "app", "app_category", "platform", "size")
SIZE_BUCKETS = ("<32", "32-100", ">100")
RAW_LIMIT = 500


def size_bucket(side: float) -> str:
    if side < 32:
        return "<32"
    return "32-100" if side <= 100 else ">100"


def base_record(sample: Sample, detector: str, image_size: tuple[int, int] | None = None) -> dict[str, Any]:
    size = image_size or sample.image_size
    box = sample.bbox
    return {
        "task": GROUNDING,
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


def score(
    sample: Sample, prediction: Prediction, *, detector: str, latency_ms: float, image_size: tuple[int, int]
) -> dict[str, Any]:
    """Hit, miss or wrong format against the sample's target (targets.py): a refusal is a hit on an
    absent target and a miss on a present one; a click on an absent target is a miss."""
    record = base_record(sample, detector, image_size)
    target = target_of(sample)
    click = prediction.click
    record.update(
        latency_ms=round(latency_ms, 3),
        raw=_clip(prediction.raw),
        meta=plain(prediction.meta),
        attempts=model_calls(prediction.meta),
    )
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
        record["outcome"] = HIT if isinstance(target, Absent) else MISS
        return record
    clicks = prediction.clicks
    if click is None or not clicks or not all(math.isfinite(v) for p in clicks for v in p):
        record["outcome"] = WRONG_FORMAT
        return record
    record["point"] = [round(click[0], 3), round(click[1], 3)]
    if len(clicks) > 1:
        record["points"] = [[round(x, 3), round(y, 3)] for x, y in clicks]
    if not isinstance(target, Absent):
        record["distance"] = round(sample.bbox.distance_to(click), 3)
    record["outcome"] = HIT if target.judge(clicks, False) else MISS
    return record


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
    record["task"] = LOCATE
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
        record["outcome"] = WRONG_FORMAT
        return record
    iou = box.iou(sample.bbox)
    record.update(box=box.as_list(), iou=round(iou, 6), distance=round(sample.bbox.distance_to(box.center), 3))
    record["outcome"] = HIT if iou >= threshold else MISS
    return record


def model_calls(meta: Mapping[str, Any]) -> int:
    """Model calls behind one answer: a cropping strategy counts them in meta["attempts"]; a plain
    detector makes one."""
    value = meta.get("attempts") if isinstance(meta, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def mean_attempts(records: Sequence[Mapping[str, Any]]) -> float | None:
    """Mean model calls per scored sample (errors left out: their calls were not all made)."""
    calls = [r.get("attempts") or 1 for r in records if r["outcome"] != ERROR]
    return sum(calls) / len(calls) if calls else None


def summary_key(record: Mapping[str, Any]) -> str:
    """Grounding blocks are named by the detector; locate blocks by the detector and the task."""
    task = record.get("task", GROUNDING)
    return record["detector"] if task == GROUNDING else f"{record['detector']} ({task})"


def locate_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What only the element-at-click task has: detection and false-positive rates, attempts,
    and which transform gave the answer."""
    scored = [r for r in records if r["outcome"] != ERROR]
    breakdown: dict[str, dict[str, int]] = {}
    for record in scored:
        slot = breakdown.setdefault(record.get("transform") or "none", {"samples": 0, "hits": 0})
        slot["samples"] += 1
        slot["hits"] += record["outcome"] == HIT
    n = len(scored)
    return {
        "threshold": scored[0].get("threshold") if scored else None,
        "detection_rate": sum(r["outcome"] in (HIT, MISS) for r in scored) / n if n else None,
        "false_positive_rate": sum(r["outcome"] == MISS for r in scored) / n if n else None,
        "mean_attempts": sum(r.get("attempts") or 0 for r in scored) / n if n else None,
        "by_transform": {name: breakdown[name] for name in sorted(breakdown)},
    }


def error_record(sample: Sample, *, detector: str, message: str, latency_ms: float | None = None) -> dict[str, Any]:
    record = base_record(sample, detector)
    record.update(outcome=ERROR, error=redact(message), latency_ms=None if latency_ms is None else round(latency_ms, 3))
    return record


def plain(value: Any) -> Any:
    """Built-in types only (a numpy float in user_properties crashes an xdist worker)."""
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str):  # a subclass (torch's TorchVersion) cannot cross xdist's wire
        return redact(str(value))  # a meta text may quote a server's answer
    if isinstance(value, Box):
        return value.as_list()
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return plain(value.tolist())
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return str(value)


def _clip(raw: str | None) -> str | None:
    if raw is None:
        return None
    raw = redact(str(raw))  # before the cut: a cut key would not match
    return raw if len(raw) <= RAW_LIMIT else raw[:RAW_LIMIT] + "..."


# -- aggregation ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def tally(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts = {kind: 0 for kind in (HIT, MISS, WRONG_FORMAT, ERROR)}
    for record in records:
        counts[record["outcome"]] += 1
    scored = counts[HIT] + counts[MISS] + counts[WRONG_FORMAT]
    ious = [r["iou"] for r in records if r.get("iou") is not None]
    return {
        "samples": len(records),
        "scored": scored,
        "hits": counts[HIT],
        "misses": counts[MISS],
        "wrong_format": counts[WRONG_FORMAT],
        "errors": counts[ERROR],
        "accuracy": counts[HIT] / scored if scored else None,
        "mean_iou": sum(ious) / len(ious) if ious else None,
        "with_box": len(ious),
    }


def latency(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    values = [r["latency_ms"] for r in records if r.get("latency_ms") is not None and r["outcome"] != ERROR]
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "mean": sum(values) / len(values) if values else None,
        "total_s": sum(values) / 1000.0 if values else 0.0,
    }


def by_slice(records: Sequence[Mapping[str, Any]], key: str) -> list[dict[str, Any]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(str(record[key]), []).append(record)
    order = SIZE_BUCKETS if key == "size" else sorted(groups)
    return [{"value": value, **tally(groups[value])} for value in order if value in groups]


def macro(rows: Sequence[Mapping[str, Any]]) -> float | None:
    accuracies = [row["accuracy"] for row in rows if row["accuracy"] is not None]
    return sum(accuracies) / len(accuracies) if accuracies else None


REFUSAL_ROWS = ("include", "exclude")


def refusal_figures(records: Sequence[Mapping[str, Any]], policy: str) -> dict[str, Any] | None:
    """Absent targets and refusals in their own line: refused on an absent target (a hit), a
    click (or no usable answer) on an absent target, a refusal on a present one (both misses).
    None when the run had neither an absent target nor a refusal."""
    scored = [r for r in records if r["outcome"] != ERROR]
    negatives = [r for r in scored if r.get("negative")]
    false_refusals = sum(1 for r in scored if r.get("refusal") and not r.get("negative"))
    if not negatives and not false_refusals:
        return None
    refused = sum(1 for r in negatives if r["outcome"] == HIT)
    return {
        "policy": policy,
        "absent_targets": len(negatives),
        "refused": refused,
        "clicked": len(negatives) - refused,
        "refusal_accuracy": refused / len(negatives) if negatives else None,
        "false_refusals": false_refusals,
        "present_targets": len(scored) - len(negatives),
    }


def summarize(records: Iterable[Mapping[str, Any]], *, refusal_rows: str = "include") -> dict[str, dict[str, Any]]:
    """Per detector: totals, micro accuracy, macro over apps, every breakdown, latency. Records
    are sorted first, so the result does not depend on the order workers finished in.
    `refusal_rows` "exclude" leaves absent-target rows out of accuracy and the breakdowns (they
    stay in the refusal figures and the benchmark headlines, which follow their authors)."""
    if refusal_rows not in REFUSAL_ROWS:
        raise ValueError(f"refusal_rows {refusal_rows!r} is not one of {', '.join(REFUSAL_ROWS)}")
    per_detector: dict[str, list[Mapping[str, Any]]] = {}
    for record in sorted(records, key=record_order):
        per_detector.setdefault(summary_key(record), []).append(record)
    summary = {}
    for key, everything in per_detector.items():
        group = [r for r in everything if not r.get("negative")] if refusal_rows == "exclude" else everything
        breakdowns = {slice_key: by_slice(group, slice_key) for slice_key in SLICES}
        task = everything[0].get("task", GROUNDING)
        summary[key] = {
            "task": task,
            "detector": everything[0]["detector"],
            **tally(group),
            "macro_app_accuracy": macro(breakdowns["app"]),
            "macro_dataset_accuracy": macro(breakdowns["dataset"]),
            "latency_ms": latency(everything),
            "mean_attempts": mean_attempts(everything),
            "by": breakdowns,
        }
        refusals = refusal_figures(everything, refusal_rows)
        if refusals is not None:
            summary[key]["refusals"] = refusals
        benchmarks = benchmark_figures(everything, refusal_rows)
        if benchmarks:
            summary[key]["benchmarks"] = benchmarks
        if task == LOCATE:
            summary[key]["locate"] = locate_figures(everything)
    return summary


def record_order(record: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """One order for records everywhere (summary, JSON), whatever order workers finished in."""
    return (record.get("task", GROUNDING), record["detector"], record["dataset"], record["uid"])
