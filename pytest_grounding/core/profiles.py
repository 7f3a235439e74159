"""Scoring profiles: the rule that turns an answer into hit or miss against a target, as each
author's scorer applies it. Pure: no pytest, no I/O.

- `pixel` (the default): the click in pixels of the original image, inside a box with its edges
  included (ScreenSpot, ScreenSpot-Pro, Pointerbench-Pro); polygons by their own rule; a refusal
  is right only on an absent target; an answer with no point is a wrong format.
- `gui-owl-1.5`: GUI-Owl-1.5's scorer (X-PLUG/MobileAgent@9073a3d,
  `Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py`). The point and the target
  live in 0-1000 of the image: the box is scaled and rounded outward (`floor(x1*s)`, `floor(y1*s)`,
  `ceil(x2*s)`, `ceil(y2*s)`), the point is the integer 0-1000 point (pixels mapped to 0-1000
  and rounded to the nearest integer: the model's own integers under a 0-1000 preset), tested
  with edges included. An answer with no point counts as the point (0, 0), and a refusal is right
  when the point is (0, 0): so a refusal or a parse failure is right on an absent target, and
  a hit on a present target whose outward box holds (0, 0).
- `half-open`: OmniParser's ScreenSpot-Pro log (microsoft/OmniParser `eval/logs_sspro_omniv2.json`):
  the click truncated to integer pixels, inside `[x1, x2) x [y1, y2)`: the right and bottom edges
  are outside.

Polygons keep their own boundary rule under every profile (no author's profile says otherwise);
`gui-owl-1.5` scales their vertices to 0-1000 without rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .targets import Absent, Contains, Polygon, Shape, Target, shape_contains
from .types import Box, Point

PIXEL, GUI_OWL, HALF_OPEN = "pixel", "gui-owl-1.5", "half-open"
DEFAULT_PROFILE = PIXEL
OWL_SCALE = 1000.0  # GUI-Owl-1.5's frame for Qwen3-VL: 1000 x 1000
Size = tuple[int, int]


@dataclass(frozen=True)
class Profile:
    """A scoring rule: its name, the rule in words and where it was read."""

    name: str
    rule: str
    source: str
    # points (None: the answer has no point), refused, target, image size -> hit
    judge_fn: Callable[[Target, Sequence[Point] | None, bool, Size], bool]

    def judge(self, target: Target, points: Sequence[Point] | None, refused: bool, image_size: Size) -> bool:
        """Whether the answer is right: `points` None for an answer with no point (a refusal or a
        wrong format), else the clicks in pixels of the original image."""
        return self.judge_fn(target, points, refused, image_size)

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_PROFILE

    def describe(self) -> dict[str, str]:
        """The report's `scoring_profile`."""
        return {"name": self.name, "rule": self.rule, "source": self.source}


def _pixel(target: Target, points: Sequence[Point] | None, refused: bool, size: Size) -> bool:
    if points is None and not refused:
        return False  # no point: a wrong format
    return target.judge(points or (), refused)


def half_open_contains(shape: Shape, point: Point) -> bool:
    """`x1 <= x < x2` and `y1 <= y < y2` for a box; a polygon by its own rule."""
    if isinstance(shape, Box):
        x, y = point
        return shape.x1 <= x < shape.x2 and shape.y1 <= y < shape.y2
    return shape.contains(point)


def _half_open(target: Target, points: Sequence[Point] | None, refused: bool, size: Size) -> bool:
    if points is None and not refused:
        return False
    truncated = [(float(math.trunc(x)), float(math.trunc(y))) for x, y in points or ()]
    return target.judge(truncated, refused, half_open_contains)


def owl_point(point: Point, size: Size) -> Point:
    """A pixel point as GUI-Owl-1.5's integer 0-1000 point."""
    return (float(round(point[0] * OWL_SCALE / size[0])), float(round(point[1] * OWL_SCALE / size[1])))


def owl_box(box: Box, size: Size) -> Box:
    """A pixel box in 0-1000, rounded outward (floor the top left, ceil the bottom right). Multiplied
    before dividing, so an edge that lands on an integer is that integer (30 px of 120 is 250, where
    30 * (1000 / 120) is 250.00000000000003 and would round outward to 251)."""
    width, height = size
    return Box(
        float(math.floor(box.x1 * OWL_SCALE / width)),
        float(math.floor(box.y1 * OWL_SCALE / height)),
        float(math.ceil(box.x2 * OWL_SCALE / width)),
        float(math.ceil(box.y2 * OWL_SCALE / height)),
    )


def _owl_contains(size: Size) -> Contains:
    width, height = size

    def contains(shape: Shape, point: Point) -> bool:
        if isinstance(shape, Box):
            return owl_box(shape, size).contains(point)
        scaled = Polygon(tuple((x * OWL_SCALE / width, y * OWL_SCALE / height) for x, y in shape.points), shape.rule)
        return shape_contains(scaled, point)

    return contains


def _gui_owl(target: Target, points: Sequence[Point] | None, refused: bool, size: Size) -> bool:
    # No point (a refusal, a parse failure) is the point (0, 0); a refusal is right at (0, 0).
    mapped = [owl_point(p, size) for p in points] if points else [(0.0, 0.0)]
    if isinstance(target, Absent):
        return mapped[0] == (0.0, 0.0)
    return target.judge(mapped, False, _owl_contains(size))


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            PIXEL,
            "the click in pixels inside the target, edges included; a refusal right only on an absent target",
            "ScreenSpot / ScreenSpot-Pro `eval_screenspot_pro.py` (x1 <= x <= x2), Pointerbench-Pro",
            _pixel,
        ),
        Profile(
            GUI_OWL,
            "0-1000 integer point inside the box scaled to 0-1000 and rounded outward, edges included; "
            "no point counts as (0, 0); a refusal is right at (0, 0)",
            "X-PLUG/MobileAgent@9073a3d Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py",
            _gui_owl,
        ),
        Profile(
            HALF_OPEN,
            "the click truncated to integer pixels inside [x1, x2) x [y1, y2): right and bottom edges outside",
            "microsoft/OmniParser eval/logs_sspro_omniv2.json (its 625/1581 reproduces only so)",
            _half_open,
        ),
    )
}


def get_profile(name: str | None) -> Profile:
    """The named profile (None: the default); ValueError naming the known ones."""
    if name is None:
        return PROFILES[DEFAULT_PROFILE]
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown scoring profile {name!r}; known: {', '.join(PROFILES)}") from None


def profile_of(document: object) -> str:
    """The profile a report was scored by (a report without one: the default)."""
    entry = document.get("scoring_profile") if isinstance(document, Mapping) else None
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return name if isinstance(name, str) else DEFAULT_PROFILE
