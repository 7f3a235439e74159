"""The sample a record was made from, rebuilt from the record itself (its target, shape, image
size and slices): what `rescore` and `merge` score a record read back against. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.targets import INCLUSIVE, RAY, Absent, AnyOf, Polygon, Shape, Steps, Target
from ..core.types import Box, Sample


class RescoreError(ValueError):
    """A record that cannot be scored again (named, with why)."""


def _box(values: Any) -> Box:
    if not (isinstance(values, list) and len(values) == 4):
        raise RescoreError(f"box {values!r:.60} is not four numbers")
    return Box(*(float(v) for v in values))


def _shape(entry: Mapping[str, Any]) -> Shape:
    if "box" in entry:
        return _box(entry["box"])
    rule = entry.get("rule", RAY)
    if rule not in (RAY, INCLUSIVE):
        raise RescoreError(f"polygon rule {rule!r:.30} is none this version knows")
    return Polygon(tuple((float(x), float(y)) for x, y in entry["polygon"]), rule)


def target_of_record(record: Mapping[str, Any]) -> Target | None:
    """The target a record was scored against (its `target_shape`), None for a one-box target."""
    shape = record.get("target_shape")
    if record.get("negative"):
        return Absent()
    if not isinstance(shape, Mapping):
        return None
    kind = shape.get("kind")
    if kind == "any_of":
        return AnyOf(tuple(_shape(s) for s in shape["shapes"]))
    if kind == "steps":
        return Steps(
            tuple(tuple(_shape(s) for s in step) for step in shape["steps"]),
            tuple(_shape(s) for s in shape.get("banned", ())),
            bool(shape.get("ordered", True)),
        )
    if kind == "absent":
        return Absent()
    raise RescoreError(f"target kind {kind!r:.30} is none this version knows")


def _positive_size(size: Any) -> bool:
    return (
        isinstance(size, list)
        and len(size) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10**6 for v in size)
    )


def sample_of(record: Mapping[str, Any]) -> Sample:
    """The sample a record was made from, as far as scoring needs it."""
    size = record.get("image_size")
    if size is not None and not _positive_size(size):
        raise ValueError(f"image_size {str(size)[:60]} is not a size (two whole numbers of pixels, each at least 1)")
    benchmark = record.get("benchmark")
    return Sample(
        dataset=str(record["dataset"]),
        id=str(record["id"]),
        uid=str(record["uid"]),
        image=Path(str(record["image"])),
        instruction=str(record["instruction"]),
        bbox=_box(record["target"]),
        element_type=str(record.get("element_type", "other")),
        app=str(record.get("app", "unknown")),
        app_category=str(record.get("app_category", "unknown")),
        platform=str(record.get("platform", "unknown")),
        image_size=(int(size[0]), int(size[1])) if isinstance(size, list) and len(size) == 2 else None,
        extra={"benchmark": benchmark} if isinstance(benchmark, Mapping) else {},
        target=target_of_record(record),
    )
