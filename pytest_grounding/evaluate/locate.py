"""The element-at-click task: screenshot + a recorded click point -> the box of the element under
it (how an automation tool finds a recorded element again). Pure building blocks, no pytest:

- `LocateQuery`: what a detector's `locate(query) -> Prediction` is given: the image and the click
  point, never the target box.
- `locate_with_retries`: the retry driver. It tries the transforms of `TRANSFORMS` in their fixed
  order until one gives a box that contains the click point; boxes are mapped back to the
  original frame; every attempt is recorded.

Scoring is `scoring.score_located` (one sample -> a record) and `metrics.locate_figures` (records ->
detection and false-positive rates), the one path the plugin and the benchmarks share.

The crop transform centres on the click point: that point is this task's input, not the ground
truth (the target box is never seen here).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..core.types import Box, Point, Prediction, image_digest

if TYPE_CHECKING:
    from PIL.Image import Image

# A floor's answer: a square of this side around the point (about a toolbar icon or a short label).
FLOOR_BOX_SIDE = 32.0


@dataclass(frozen=True)
class LocateQuery:
    image: Image
    point: Point

    @cached_property
    def image_key(self) -> str:
        return image_digest(self.image)


def box_around(point: Point, side: float, width: float, height: float) -> Box:
    """A `side` x `side` box centred on the point, clipped to the image."""
    x, y = point
    half = side / 2.0
    return Box(max(0.0, x - half), max(0.0, y - half), min(float(width), x + half), min(float(height), y + half))


# --- transforms --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transformed:
    """An image derived from the original, the click point in it, and how to map its boxes back."""

    image: Image
    point: Point
    offset: tuple[float, float] = (0.0, 0.0)  # original = offset + transformed / scale
    scale: float = 1.0

    def to_original(self, box: Box) -> Box:
        ox, oy = self.offset
        s = self.scale
        return Box(ox + box.x1 / s, oy + box.y1 / s, ox + box.x2 / s, oy + box.y2 / s)


def _identity(image: Image, point: Point) -> Transformed:
    return Transformed(image, point)


# The crop: CROP_SHARE of each side of the screen (at least CROP_MIN px) around the point, scaled up
# by CROP_ZOOM, so small controls reach the size the detectors see best.
CROP_SHARE, CROP_MIN, CROP_ZOOM = 1 / 3, 256, 2.0


def crop_window(width: int, height: int, point: Point) -> tuple[int, int, int, int]:
    """The crop window (x1, y1, x2, y2), centred on the point and shifted to stay in the image."""
    cw = min(width, max(CROP_MIN, int(round(width * CROP_SHARE))))
    ch = min(height, max(CROP_MIN, int(round(height * CROP_SHARE))))
    x1 = int(round(min(max(point[0] - cw / 2.0, 0), width - cw)))
    y1 = int(round(min(max(point[1] - ch / 2.0, 0), height - ch)))
    return x1, y1, x1 + cw, y1 + ch


def _crop_zoom(image: Image, point: Point) -> Transformed:
    from PIL import Image as PILImage

    x1, y1, x2, y2 = crop_window(image.width, image.height, point)
    crop = image.crop((x1, y1, x2, y2))
    zoomed = crop.resize(
        (int(round(crop.width * CROP_ZOOM)), int(round(crop.height * CROP_ZOOM))), PILImage.Resampling.LANCZOS
    )
    return Transformed(zoomed, ((point[0] - x1) * CROP_ZOOM, (point[1] - y1) * CROP_ZOOM), (x1, y1), CROP_ZOOM)


def _contrast(image: Image, point: Point) -> Transformed:
    from PIL import ImageOps

    return Transformed(ImageOps.autocontrast(image.convert("RGB"), cutoff=1), point)


def _grayscale(image: Image, point: Point) -> Transformed:
    return Transformed(image.convert("L").convert("RGB"), point)


def is_dark(image: Image) -> bool:
    """Mean luminance under half: a dark theme."""
    from PIL import ImageStat

    return ImageStat.Stat(image.convert("L")).mean[0] < 128


def _invert(image: Image, point: Point) -> Transformed | None:
    from PIL import ImageOps

    if not is_dark(image):
        return None  # only dark themes are inverted: light text on dark is what detectors miss
    return Transformed(ImageOps.invert(image.convert("RGB")), point)


# The fixed order: cheapest and most faithful first. A transform answering None does not apply to
# this image (inversion on a light theme) and costs no attempt.
TRANSFORMS: tuple[tuple[str, Callable[[Image, Point], Transformed | None]], ...] = (
    ("original", _identity),
    ("crop_zoom", _crop_zoom),
    ("contrast", _contrast),
    ("grayscale", _grayscale),
    ("invert", _invert),
)
TRANSFORM_NAMES = tuple(name for name, _ in TRANSFORMS)


@dataclass(frozen=True)
class Attempt:
    transform: str
    box: Box | None  # in the original frame
    contains_point: bool
    seconds: float
    error: str | None = None


@dataclass(frozen=True)
class LocateOutcome:
    """The answer after retries: the first box containing the point (or, when none did, the first
    box any attempt gave, `transform` None), and every attempt made."""

    box: Box | None
    transform: str | None
    attempts: tuple[Attempt, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.box is not None


def locate_with_retries(
    locate: Callable[[LocateQuery], Prediction], query: LocateQuery, transforms: Sequence[str] = TRANSFORM_NAMES
) -> LocateOutcome:
    """Call `locate` on each transform of the query in `TRANSFORMS` order (those named in
    `transforms`) until one returns a box that contains the click point (edges included).
    A detector's exception on one transform is recorded and the next is tried."""
    wanted = set(transforms)
    unknown = wanted - set(TRANSFORM_NAMES)
    if unknown:
        raise ValueError(f"unknown transform(s) {sorted(unknown)}; known: {', '.join(TRANSFORM_NAMES)}")
    attempts: list[Attempt] = []
    first_box: Box | None = None
    first_meta: Mapping[str, Any] = {}
    for name, transform in TRANSFORMS:
        if name not in wanted:
            continue
        view = transform(query.image, query.point)
        if view is None:
            continue
        started = time.perf_counter()
        try:
            prediction = locate(LocateQuery(view.image, view.point))
        except Exception as exc:  # one failing view must not end the retries
            attempts.append(Attempt(name, None, False, time.perf_counter() - started, f"{type(exc).__name__}: {exc}"))
            continue
        seconds = time.perf_counter() - started
        box = view.to_original(prediction.box) if prediction.box is not None else None
        hit = box is not None and box.contains(query.point)
        attempts.append(Attempt(name, box, hit, seconds))
        if hit:
            return LocateOutcome(box, name, tuple(attempts), dict(prediction.meta))
        if box is not None and first_box is None:
            first_box, first_meta = box, dict(prediction.meta)
    return LocateOutcome(first_box, None, tuple(attempts), first_meta)
