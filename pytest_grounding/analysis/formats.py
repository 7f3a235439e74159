"""Which coordinate format a model answers best (issue 56, `--grounding-perturb format`), from a
detector's records alone: per format asked its accuracy with its interval, the paired change
against the preset's own prompt and format (the originals) with the flips each way, the spread
across the formats asked (their standard deviation, in points: one robustness figure, as
GUI-Agent-Harness reports it) and the best format. The per-variant figures are the robustness
block's (analysis/robustness.py): the same pairing, intervals and McNemar's test. Pure."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.record import SCORED
from . import intervals, robustness

AXIS = "format"
OWN = "preset"  # the originals: the preset's own prompt and format


def figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The format block of one detector's records, variants included (None: no format variant)."""
    format_records = [r for r in records if not robustness.is_variant(r) or r.get("axis") == AXIS]
    found = robustness.figures(format_records)
    rows = [row for row in (found or {}).get("variants") or () if row.get("axis") == AXIS]
    if not rows:
        return None
    originals = [r for r in records if not robustness.is_variant(r) and r.get("outcome") in SCORED]
    own_accuracy = intervals.proportion(intervals.Outcomes.of(originals)) if originals else None
    asked = Counter(
        str((r.get("meta") or {}).get("asked_format")) for r in originals if isinstance(r.get("meta"), Mapping)
    )
    asked.pop("None", None)
    formats = [
        {
            "format": str(row["label"]).removeprefix("fmt-"),
            "label": row["label"],
            "scored": row["scored"],
            "accuracy": row["accuracy"],
            "ci95": row["ci95"],
            "pairs": row["pairs"],
            "delta": row["delta"],
            "delta_ci95": row["delta_ci95"],
            "mcnemar_p": row["mcnemar_p"],
            "hit_to_miss": len(row["hit_to_miss"]),
            "miss_to_hit": len(row["miss_to_hit"]),
        }
        for row in rows
    ]
    accuracies = [f["accuracy"] for f in formats if f["accuracy"] is not None]
    ranked = [(f["accuracy"], f["format"]) for f in formats if f["accuracy"] is not None]
    if own_accuracy is not None:
        ranked.append((own_accuracy.estimate, OWN))
    best = _best(ranked)
    return {
        "own_format": asked.most_common(1)[0][0] if asked else None,
        "own_accuracy": None if own_accuracy is None else own_accuracy.estimate,
        "own_ci95": intervals.ci95(own_accuracy),
        "formats": formats,
        "spread_points": round(100 * statistics.pstdev(accuracies), 2) if len(accuracies) > 1 else None,
        "range_points": round(100 * (max(accuracies) - min(accuracies)), 2) if len(accuracies) > 1 else None,
        "best": best,
    }


def _best(ranked: Sequence[tuple[float, str]]) -> str | None:
    """The format with the highest accuracy; None on a tie at the top (no format is best)."""
    if not ranked:
        return None
    top = max(accuracy for accuracy, _ in ranked)
    leaders = [name for accuracy, name in ranked if accuracy == top]
    return leaders[0] if len(leaders) == 1 else None


def best_text(found: Mapping[str, Any]) -> str:
    """`best format rel1 (80.0%, +60.0 points against the preset's own pixels)`, or the tie."""
    from ..core.numbers import pct, points

    best = found.get("best")
    if best is None:
        return "no single best format (a tie at the top)"
    if best == OWN:
        own = found.get("own_format") or "its own"
        return f"best format: the preset's own ({own}, {pct(found.get('own_accuracy'))})"
    row = next(f for f in found["formats"] if f["format"] == best)
    change = f", {points(float(row['delta']))} points against the preset's own" if row["delta"] is not None else ""
    own = f" {found['own_format']}" if found.get("own_format") else ""
    return f"best format: {best} ({pct(row['accuracy'])}{change}{own})"
