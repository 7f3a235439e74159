"""What a click must hit, beyond one box: several boxes, polygons, an absent element, and ordered
multi-point targets with forbidden regions. Pure code: no pytest, no I/O.

Every target judges a tuple of points (a click is one point, a drag two) and whether the detector
refused ("the element is not on this screen"):

- `AnyOf(shapes)`: the first point inside any one shape (a box or a polygon). A single box is
  `AnyOf((box,))`, the classic ScreenSpot target.
- `Absent()`: the element is not on the screen; only a refusal is right (ScreenSpot-v2-variants'
  negative rows, OSWorld-G's refusal rows).
- `Steps(steps, banned, ordered)`: CUActSpot's rule. Any point inside a banned region fails; in
  order, point i must land in a shape of step i (extra points beyond the last step are ignored);
  unordered, every step's shapes must contain at least one point, in any order.

Polygons have two rules, as their authors wrote them: OSWorld-G's even-odd ray casting with no
boundary rule (`RAY`), and CUActSpot's ray casting with the boundary counted inside (`INCLUSIVE`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .types import Box, Point

RAY, INCLUSIVE = "ray", "inclusive"
POLYGON_RULES = (RAY, INCLUSIVE)
EDGE_TOLERANCE = 1e-9  # CUActSpot's on-segment tolerance


@dataclass(frozen=True, slots=True)
class Polygon:
    """A polygon in absolute pixels; `rule` says whether its boundary counts (see the module doc)."""

    points: tuple[Point, ...]
    rule: str = RAY

    def __post_init__(self) -> None:
        if self.rule not in POLYGON_RULES:
            raise ValueError(f"unknown polygon rule {self.rule!r}; known: {', '.join(POLYGON_RULES)}")

    @property
    def bounds(self) -> Box:
        xs = [p[0] for p in self.points]
        ys = [p[1] for p in self.points]
        return Box(min(xs), min(ys), max(xs), max(ys))

    @property
    def is_valid(self) -> bool:
        return len(self.points) >= 3 and all(math.isfinite(v) for p in self.points for v in p) and self.area > 0

    @property
    def area(self) -> float:
        """Shoelace formula, absolute."""
        n = len(self.points)
        twice = sum(
            self.points[i][0] * self.points[(i + 1) % n][1] - self.points[(i + 1) % n][0] * self.points[i][1]
            for i in range(n)
        )
        return abs(twice) / 2.0

    def contains(self, point: Point) -> bool:
        if self.rule == INCLUSIVE and on_boundary(self.points, point):
            return True
        return ray_cast(self.points, point)

    def as_list(self) -> list[list[float]]:
        return [[float(x), float(y)] for x, y in self.points]


Shape = Box | Polygon


def ray_cast(vertices: Sequence[Point], point: Point) -> bool:
    """Even-odd rule, a ray to the right; OSWorld-G's test `(yi > y) != (yj > y) and x < xcross`.
    A point on an edge is inside or outside depending on the edge's direction (no boundary rule)."""
    x, y = point
    inside = False
    n = len(vertices)
    j = n - 1
    for i in range(n):
        xi, yi = vertices[i]
        xj, yj = vertices[j]
        if (yi > y) != (yj > y):
            cross = (xj - xi) * (y - yi) / (yj - yi) + xi
            if x < cross:
                inside = not inside
        j = i
    return inside


def on_boundary(vertices: Sequence[Point], point: Point, tolerance: float = EDGE_TOLERANCE) -> bool:
    """The point lies on an edge (collinear within `tolerance`, between the end points)."""
    x, y = point
    n = len(vertices)
    for i in range(n):
        (x1, y1), (x2, y2) = vertices[i], vertices[(i + 1) % n]
        cross = (x - x1) * (y2 - y1) - (y - y1) * (x2 - x1)
        if abs(cross) > tolerance:
            continue
        if min(x1, x2) - tolerance <= x <= max(x1, x2) + tolerance and (
            min(y1, y2) - tolerance <= y <= max(y1, y2) + tolerance
        ):
            return True
    return False


def shape_contains(shape: Shape, point: Point) -> bool:
    return shape.contains(point)


# Whether a shape holds a point: `shape_contains` by default; a scoring profile
# (core/profiles.py) passes its own rule (a half-open box, a box rounded outward).
Contains = Callable[[Shape, Point], bool]


def shape_list(shape: Shape) -> dict[str, object]:
    """A shape as plain data (records and reports)."""
    if isinstance(shape, Box):
        return {"box": shape.as_list()}
    return {"polygon": shape.as_list(), "rule": shape.rule}


def bounds_of(shapes: Sequence[Shape]) -> Box | None:
    boxes = [s if isinstance(s, Box) else s.bounds for s in shapes]
    if not boxes:
        return None
    return Box(min(b.x1 for b in boxes), min(b.y1 for b in boxes), max(b.x2 for b in boxes), max(b.y2 for b in boxes))


@dataclass(frozen=True, slots=True)
class AnyOf:
    """The first point inside any one of the shapes."""

    shapes: tuple[Shape, ...]
    kind = "any_of"

    def judge(self, points: Sequence[Point], refused: bool, contains: Contains = shape_contains) -> bool:
        if refused or not points:
            return False
        return any(contains(shape, points[0]) for shape in self.shapes)

    @property
    def bounds(self) -> Box | None:
        return bounds_of(self.shapes)

    @property
    def single_box(self) -> Box | None:
        """The box IoU is measured against, when the target is exactly one box."""
        if len(self.shapes) == 1 and isinstance(self.shapes[0], Box):
            return self.shapes[0]
        return None

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "shapes": [shape_list(s) for s in self.shapes]}


@dataclass(frozen=True, slots=True)
class Absent:
    """The element is not on the screen: right only when the detector refuses."""

    kind = "absent"
    bounds = None
    single_box = None

    def judge(self, points: Sequence[Point], refused: bool, contains: Contains = shape_contains) -> bool:
        return refused

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind}


@dataclass(frozen=True, slots=True)
class Steps:
    """Ordered (or unordered) multi-point target with forbidden regions (CUActSpot)."""

    steps: tuple[tuple[Shape, ...], ...]
    banned: tuple[Shape, ...] = ()
    ordered: bool = True
    kind = "steps"

    def judge(self, points: Sequence[Point], refused: bool, contains: Contains = shape_contains) -> bool:
        if refused:
            return False
        if any(contains(shape, p) for p in points for shape in self.banned):
            return False
        if not self.steps:
            return True
        if self.ordered:
            if len(points) < len(self.steps):
                return False
            return all(any(contains(s, points[i]) for s in step) for i, step in enumerate(self.steps))
        return all(any(contains(s, p) for p in points for s in step) for step in self.steps)

    @property
    def points_needed(self) -> int:
        return len(self.steps) if self.ordered else max(1, len(self.steps))

    @property
    def bounds(self) -> Box | None:
        return bounds_of([s for step in self.steps for s in step])

    single_box = None

    def describe(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "ordered": self.ordered,
            "steps": [[shape_list(s) for s in step] for step in self.steps],
            "banned": [shape_list(s) for s in self.banned],
        }


Target = AnyOf | Absent | Steps


def normalised(box: Box) -> tuple[Box, bool]:
    """Reversed corners swapped (UI-Vision's evaluator does the same); True when they were."""
    fixed = Box(min(box.x1, box.x2), min(box.y1, box.y2), max(box.x1, box.x2), max(box.y1, box.y2))
    return fixed, fixed != box


def target_of(sample: object) -> Target:
    """The sample's target: its own, or its one box."""
    target = getattr(sample, "target", None)
    return target if target is not None else AnyOf((sample.bbox,))  # type: ignore[attr-defined]


def is_refusal_point(point: Point | None) -> bool:
    """The field's refusal sentinel: a click with both coordinates negative ([-1, -1]; OSWorld-G
    scores refusal as centre x < 0 and y < 0, UI-Venus answers [-1, -1])."""
    return point is not None and point[0] < 0 and point[1] < 0
