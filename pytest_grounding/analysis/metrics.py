"""Pure scoring and aggregation: a sample and a prediction in, plain-dict records out, and the
summary of many records. No pytest, no I/O; records hold only built-in types so they can cross
xdist's wire and land in JSON unchanged."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.record import SIZE_BUCKETS, Outcome, Task
from . import intervals, robustness

SLICES = ("dataset", "element_type", "app", "app_category", "platform", "size")


@dataclass(frozen=True)
class BlockRecords:
    """What a detector-level figure is computed from: one summary block's records.

    `records`: the block's records (variants left out when their originals ran); `group`: those
    the accuracy counts (absent-target rows left out under refusal_rows=exclude);
    `with_variants`: every record of the block, --grounding-perturb's variants included."""

    key: str  # the summary's key: the detector spec, plus " (locate)" on that task
    task: str
    records: Sequence[Mapping[str, Any]]
    group: Sequence[Mapping[str, Any]]
    with_variants: Sequence[Mapping[str, Any]]
    refusal_rows: str = "include"


class BlockFigures(Protocol):
    """A detector-level report section as the summary sees it (sections.Section is one): its key in the
    block and its figures from the block's records (None: absent, no key written)."""

    @property
    def name(self) -> str: ...

    def figures(self, found: BlockRecords) -> Any | None: ...


def mean_attempts(records: Sequence[Mapping[str, Any]]) -> float | None:
    """Mean model calls per scored sample (errors left out: their calls were not all made)."""
    calls = [r.get("attempts") or 1 for r in records if r["outcome"] != Outcome.ERROR]
    return sum(calls) / len(calls) if calls else None


def summary_key(record: Mapping[str, Any]) -> str:
    """Grounding blocks are named by the detector; locate blocks by the detector and the task."""
    task = record.get("task", Task.GROUNDING)
    return record["detector"] if task == Task.GROUNDING else f"{record['detector']} ({task})"


def locate_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What only the element-at-click task has: detection and false-positive rates, attempts,
    and which transform gave the answer."""
    scored = [r for r in records if r["outcome"] != Outcome.ERROR]
    breakdown: dict[str, dict[str, int]] = {}
    for record in scored:
        slot = breakdown.setdefault(record.get("transform") or "none", {"samples": 0, "hits": 0})
        slot["samples"] += 1
        slot["hits"] += record["outcome"] == Outcome.HIT
    n = len(scored)
    return {
        "threshold": scored[0].get("threshold") if scored else None,
        "detection_rate": sum(r["outcome"] in (Outcome.HIT, Outcome.MISS) for r in scored) / n if n else None,
        "false_positive_rate": sum(r["outcome"] == Outcome.MISS for r in scored) / n if n else None,
        "mean_attempts": sum(r.get("attempts") or 0 for r in scored) / n if n else None,
        "by_transform": {name: breakdown[name] for name in sorted(breakdown)},
    }


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
    counts = {kind: 0 for kind in (Outcome.HIT, Outcome.MISS, Outcome.WRONG_FORMAT, Outcome.ERROR)}
    for record in records:
        counts[record["outcome"]] += 1
    scored = counts[Outcome.HIT] + counts[Outcome.MISS] + counts[Outcome.WRONG_FORMAT]
    ious = [r["iou"] for r in records if r.get("iou") is not None]
    return {
        "samples": len(records),
        "scored": scored,
        "hits": counts[Outcome.HIT],
        "misses": counts[Outcome.MISS],
        Outcome.WRONG_FORMAT.value: counts[Outcome.WRONG_FORMAT],
        "errors": counts[Outcome.ERROR],
        "accuracy": counts[Outcome.HIT] / scored if scored else None,
        "mean_iou": sum(ious) / len(ious) if ious else None,
        "with_box": len(ious),
        "truncated": sum(1 for r in records if r.get("truncated")),  # answers the engine cut (served)
    }


def latency(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    values = [r["latency_ms"] for r in records if r.get("latency_ms") is not None and r["outcome"] != Outcome.ERROR]
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


def with_intervals(rows: list[dict[str, Any]], found: Mapping[str, intervals.Interval]) -> list[dict[str, Any]]:
    """Each slice row with its 95% interval (`ci95`), clustered by screen, beside its accuracy."""
    return [{**row, "ci95": intervals.ci95(found.get(row["value"]))} for row in rows]


def macro(rows: Sequence[Mapping[str, Any]]) -> float | None:
    accuracies = [row["accuracy"] for row in rows if row["accuracy"] is not None]
    return sum(accuracies) / len(accuracies) if accuracies else None


REFUSAL_ROWS = ("include", "exclude")


def refusal_figures(records: Sequence[Mapping[str, Any]], policy: str) -> dict[str, Any] | None:
    """Absent targets and refusals in their own line: refused on an absent target (a hit), a
    click (or no usable answer) on an absent target, a refusal on a present one (both misses).
    None when the run had neither an absent target nor a refusal."""
    scored = [r for r in records if r["outcome"] != Outcome.ERROR]
    negatives = [r for r in scored if r.get("negative")]
    false_refusals = sum(1 for r in scored if r.get("refusal") and not r.get("negative"))
    if not negatives and not false_refusals:
        return None
    refused = sum(1 for r in negatives if r["outcome"] == Outcome.HIT)
    return {
        "policy": policy,
        "absent_targets": len(negatives),
        "refused": refused,
        "clicked": len(negatives) - refused,
        "refusal_accuracy": refused / len(negatives) if negatives else None,
        "false_refusals": false_refusals,
        "present_targets": len(scored) - len(negatives),
    }


def summarize(
    records: Iterable[Mapping[str, Any]], *, refusal_rows: str = "include", figures: Sequence[BlockFigures] = ()
) -> dict[str, dict[str, Any]]:
    """Per detector: totals, micro accuracy, macro over apps, every breakdown, latency; a 95%
    interval (`ci95`, analysis/intervals.py) beside every accuracy; then each of `figures`' (the run's
    detector-level report sections, passed in: analysis knows no section registry). Records
    are sorted first, so the result does not depend on the order workers finished in.
    `refusal_rows` "exclude" leaves absent-target rows out of accuracy and the breakdowns (they
    stay in the refusal figures and the benchmark headlines, which follow their authors)."""
    if refusal_rows not in REFUSAL_ROWS:
        raise ValueError(f"refusal_rows {refusal_rows!r} is not one of {', '.join(REFUSAL_ROWS)}")
    per_detector: dict[str, list[Mapping[str, Any]]] = {}
    for record in sorted(records, key=record_order):
        per_detector.setdefault(summary_key(record), []).append(record)
    summary = {}
    for key, with_variants in per_detector.items():
        # --grounding-perturb: variants have their own block (all of them when only variants ran: -k zoom70)
        everything = [r for r in with_variants if not robustness.is_variant(r)] or with_variants
        group = [r for r in everything if not r.get("negative")] if refusal_rows == "exclude" else everything
        outcomes = intervals.Outcomes.of(group)
        groups = {k: intervals.one_each(outcomes, (str(r[k]) for r in outcomes.records)) for k in SLICES}
        breakdowns = {k: with_intervals(by_slice(group, k), intervals.by_group(outcomes, groups[k])) for k in SLICES}
        task = everything[0].get("task", Task.GROUNDING)
        summary[key] = {
            "task": task,
            "detector": everything[0]["detector"],
            **tally(group),
            "ci95": intervals.ci95(intervals.proportion(outcomes)),
            "macro_app_accuracy": macro(breakdowns["app"]),
            "macro_app_ci95": intervals.ci95(intervals.mean_of_groups(outcomes, groups["app"])),
            "macro_dataset_accuracy": macro(breakdowns["dataset"]),
            "macro_dataset_ci95": intervals.ci95(intervals.mean_of_groups(outcomes, groups["dataset"])),
            "latency_ms": latency(everything),
            "mean_attempts": mean_attempts(everything),
            "by": breakdowns,
        }
        # each feature's figures: one registered section each (pytest_grounding/sections)
        found = BlockRecords(key, task, everything, group, with_variants, refusal_rows)
        for section in figures:
            made = section.figures(found)
            if made is not None:
                summary[key][section.name] = made
    return summary


def record_order(record: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """One order for records everywhere (summary, JSON), whatever order workers finished in."""
    return (record.get("task", Task.GROUNDING), record["detector"], record["dataset"], record["uid"])
