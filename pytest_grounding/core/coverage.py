"""Parser coverage (issue 56): for a detector that parses the screen and then matches (`ocr`,
`omniparser`, any detector that declares its candidates in its prediction's meta under
`CANDIDATES`), whether any parsed element covers the target: its box holds the target's centre, or
its IoU with the target's box is at least 0.5, or its own centre lies in the target's box (a
detector that answers with an element's centre would then hit: without this a large target holding
a small text would count hits the parser "did not cover", and the share would be no ceiling). A
miss is then `not_detected` (the parser never saw the target: no candidate covers it) or
`not_matched` (one did, and the matcher chose another or none). The share of covered targets is
the accuracy's ceiling for that parser. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CANDIDATES = "candidate_boxes"  # a prediction's meta key: the parsed elements' boxes [x1, y1, x2, y2]
MIN_IOU = 0.5
PARSER_MISSES = ("not_detected", "not_matched")


def _box(value: Any) -> tuple[float, float, float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value):
        return float(value[0]), float(value[1]), float(value[2]), float(value[3])
    return None


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def covers(candidate: Sequence[float], target: Sequence[float]) -> bool:
    cx, cy = (target[0] + target[2]) / 2, (target[1] + target[3]) / 2
    if candidate[0] <= cx <= candidate[2] and candidate[1] <= cy <= candidate[3]:
        return True
    ex, ey = (candidate[0] + candidate[2]) / 2, (candidate[1] + candidate[3]) / 2
    return (target[0] <= ex <= target[2] and target[1] <= ey <= target[3]) or iou(candidate, target) >= MIN_IOU


def covered(candidates: Any, target: Any) -> bool | None:
    """Whether any candidate box covers the target box (None: no target box or no candidate list)."""
    box = _box(target)
    if box is None or not isinstance(candidates, (list, tuple)):
        return None
    return any((c := _box(candidate)) is not None and covers(c, box) for candidate in candidates)


def candidate_boxes(boxes: Any) -> list[list[float]]:
    """Boxes as the meta key holds them (plain lists, rounded)."""
    return [[round(float(v), 1) for v in box] for box in boxes]
