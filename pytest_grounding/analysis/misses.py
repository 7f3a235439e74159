"""Why a detector misses, from its records alone (issue 46), so a run, `rescore`, `replay` and
`merge` give the same figures: accuracy against tolerance (in pixels and as a share of the
screen's diagonal), the distance of the misses to their boxes, where on the screen they fall (a
grid), how they are classified (core/misses.py), and the coordinate-frame diagnosis (core/frames.py).
Pure: records in, plain dicts out."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core import frames
from ..core.misses import MISS_KINDS
from ..core.record import SCORED, Outcome
from . import intervals

TOLERANCES_PX = (0, 5, 10, 20, 50, 100)
TOLERANCE_SHARES = (0.005, 0.01, 0.02, 0.05)  # of the screen's diagonal
DISTANCE_BINS = (0, 5, 10, 20, 50, 100, 200, 500)  # px; the last bin is open
GRID = 10
QUANTILES = (("p25", 25), ("median", 50), ("p75", 75), ("p90", 90))  # the heat map's cells per side


def distance_of(record: Mapping[str, Any]) -> float | None:
    value = record.get("distance_px", record.get("distance"))
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def within(record: Mapping[str, Any], tolerance_px: float) -> bool:
    """A hit, or a click within `tolerance_px` of its box (edges included)."""
    if record.get("outcome") == Outcome.HIT:
        return True
    found = distance_of(record)
    return found is not None and found <= tolerance_px


def _diagonal(record: Mapping[str, Any]) -> float | None:
    size = record.get("image_size")
    if isinstance(size, list) and len(size) == 2 and all(isinstance(v, (int, float)) for v in size):
        return math.hypot(float(size[0]), float(size[1]))
    return None


def tolerance_curve(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Accuracy at each tolerance over the scored records (hits, misses, wrong formats), each with
    its 95% interval clustered by screen as every accuracy of the report: at 0 px it is the accuracy
    itself."""
    outcomes = intervals.Outcomes.of(r for r in records if r.get("outcome") in SCORED)

    def point(hit: Iterable[bool]) -> dict[str, Any]:
        found = intervals.proportion(outcomes.judged(hit)) if len(outcomes) else None
        return {"accuracy": found.estimate if found else None, "ci95": intervals.ci95(found)}

    def within_share(record: Mapping[str, Any], share: float) -> bool:
        diagonal = _diagonal(record)
        return within(record, share * diagonal) if diagonal is not None else record.get("outcome") == Outcome.HIT

    scored = outcomes.records
    curve = [{"px": t, **point(within(r, t) for r in scored)} for t in TOLERANCES_PX]
    by_share = [{"share": s, **point(within_share(r, s) for r in scored)} for s in TOLERANCE_SHARES]
    return {"scored": len(scored), "px": curve, "share_of_diagonal": by_share}


def miss_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The misses by kind, their distances (quantiles, a histogram) and a heat map of where the
    clicks of misses fall (rows top to bottom, cells of a GRID x GRID split of each screen)."""
    from .metrics import percentile  # metrics calls this module: imported here, not at the top

    misses = [r for r in records if r.get("outcome") in (Outcome.MISS, Outcome.WRONG_FORMAT)]
    kinds = dict.fromkeys(MISS_KINDS, 0)
    for record in misses:
        kind = record.get("miss_kind")
        if kind in kinds:
            kinds[str(kind)] += 1
    distances = sorted(d for r in misses if (d := distance_of(r)) is not None)
    bins = []
    for low, high in zip(DISTANCE_BINS, (*DISTANCE_BINS[1:], None), strict=True):
        count = sum(1 for d in distances if d >= low and (high is None or d < high))
        bins.append({"from_px": low, "to_px": high, "misses": count})
    heat = [[0] * GRID for _ in range(GRID)]
    for record in misses:
        point, size = record.get("point"), record.get("image_size")
        if not (isinstance(point, list) and len(point) == 2 and isinstance(size, list) and len(size) == 2):
            continue
        x, y = point[0] / size[0], point[1] / size[1]
        if 0 <= x <= 1 and 0 <= y <= 1:
            heat[min(GRID - 1, int(y * GRID))][min(GRID - 1, int(x * GRID))] += 1
    return {
        "misses": len(misses),
        "kinds": kinds,
        "distance_px": {
            "with_click": len(distances),
            **{name: _rounded(percentile(distances, q)) for name, q in QUANTILES},
            "bins": bins,
        },
        "heatmap": {"grid": GRID, "cells": heat},
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def diagnosis(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The coordinate-frame fit of clicks against targets (core/frames.py's DIAGNOSIS_RULE)."""
    answers = [a for r in records if (a := frames.answer_of(r)) is not None]
    return {"frame": frames.fit(answers, frames.DIAGNOSIS_RULE).as_dict()}
