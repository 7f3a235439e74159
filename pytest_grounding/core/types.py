"""The in-memory vocabulary shared by datasets, detectors, metrics and the plugin.

One convention everywhere: absolute pixels of the original image, boxes as x1, y1, x2, y2.
Loaders convert from their own format; detectors map back from whatever frame they work in.
Nothing here imports pytest or a heavy library.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pillow is a core dependency, but keep import time low for collection
    from PIL.Image import Image

Point = tuple[float, float]

ELEMENT_TYPES = ("icon", "text", "other")


# slots: a 100,000-sample dataset holds 100,000 Samples and Boxes for the whole session.
@dataclass(frozen=True, slots=True)
class Box:
    """An axis-aligned box in absolute pixels, x1 <= x2 and y1 <= y2 for a valid box."""

    x1: float
    y1: float
    x2: float
    y2: float

    @classmethod
    def from_xywh(cls, x: float, y: float, w: float, h: float) -> Box:
        return cls(x, y, x + w, y + h)

    @classmethod
    def from_normalized(cls, x1: float, y1: float, x2: float, y2: float, width: int, height: int) -> Box:
        return cls(x1 * width, y1 * height, x2 * width, y2 * height)

    @property
    def width(self) -> float:
        return self.x2 - self.x1

    @property
    def height(self) -> float:
        return self.y2 - self.y1

    @property
    def area(self) -> float:
        return max(0.0, self.width) * max(0.0, self.height)

    @property
    def center(self) -> Point:
        return ((self.x1 + self.x2) / 2.0, (self.y1 + self.y2) / 2.0)

    @property
    def side(self) -> float:
        """sqrt(w*h): the size the field buckets targets by."""
        return math.sqrt(self.area)

    @property
    def is_valid(self) -> bool:
        values = (self.x1, self.y1, self.x2, self.y2)
        return all(math.isfinite(v) for v in values) and self.x2 > self.x1 and self.y2 > self.y1

    def contains(self, point: Point) -> bool:
        """Edges included, as ScreenSpot, ScreenSpot-Pro and Pointerbench-Pro score."""
        x, y = point
        return self.x1 <= x <= self.x2 and self.y1 <= y <= self.y2

    def distance_to(self, point: Point) -> float:
        """Euclidean distance from a point to the box; 0 inside or on the edge."""
        x, y = point
        dx = max(self.x1 - x, 0.0, x - self.x2)
        dy = max(self.y1 - y, 0.0, y - self.y2)
        return math.hypot(dx, dy)

    def iou(self, other: Box) -> float:
        ix = min(self.x2, other.x2) - max(self.x1, other.x1)
        iy = min(self.y2, other.y2) - max(self.y1, other.y1)
        if ix <= 0 or iy <= 0:
            return 0.0
        inter = ix * iy
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0

    def inside(self, width: float, height: float) -> bool:
        return self.x1 >= 0 and self.y1 >= 0 and self.x2 <= width and self.y2 <= height

    def as_list(self) -> list[float]:
        return [float(self.x1), float(self.y1), float(self.x2), float(self.y2)]


@dataclass(frozen=True, slots=True)
class Sample:
    """One grounding target: a screenshot, an instruction and the target's box.

    `bbox` is always a box (the bounding box of a richer `target`; all zeros when the target is
    absent), so code that only knows boxes keeps working.

    `uid` is the ASCII slug used in test ids (unique within a run); `id` is the dataset's own id,
    the one a predictions file carries. `defect` is set when the loader could read the row but the
    sample cannot be scored (no usable box, say): the test item then reports it as an error.
    """

    dataset: str
    id: str
    uid: str
    image: Path
    instruction: str
    bbox: Box
    element_type: str = "other"
    app: str = "unknown"
    app_category: str = "unknown"
    platform: str = "unknown"
    image_size: tuple[int, int] | None = None
    point: Point | None = None
    defect: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    # None: `bbox` is the target. Otherwise a targets.AnyOf / Absent / Steps (several boxes,
    # polygons, an absent element, ordered points); `bbox` is then its bounding box.
    target: Any = None


@dataclass(frozen=True)
class Query:
    """What a detector is given: the image and the instruction, never the target.

    `sample` is given only to a detector with `needs_image = False`, one that answers from the
    sample's identity (a replayed predictions file matched by id, image path and instruction),
    never to one that looks at the pixels; its `image` is then opened for its size only (pixels
    never decoded)."""

    image: Image
    instruction: str
    sample: Sample | None = field(default=None, compare=False, repr=False)
    # --grounding-epochs N: which repetition (1..N) this request is, None on a run of one epoch. A
    # detector that takes a seed gives each epoch its own (the openai detector sends `seed`).
    epoch: int | None = field(default=None, compare=False)
    # --grounding-perturb format: the coordinate format this request asks for (detectors/vlm/formats.py),
    # None: the preset's own. A detector that reads it says so with `answer_formats = True`.
    answer_format: str | None = field(default=None, compare=False)

    @cached_property
    def image_key(self) -> str:
        """A digest of the pixels, so detectors can cache per-screen work across instructions."""
        return image_digest(self.image)


def image_digest(image: Image) -> str:
    """The key of a screen's pixels (mode, size and bytes): the same screen gives the same key."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{image.mode}:{image.size}".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class Prediction:
    """A detector's answer. A box alone is scored by its centre; neither point nor box means
    "wrong format": the detector answered but gave nothing usable (a miss, counted apart).

    `points` (optional) is an ordered answer of several points, a drag's start and end; a
    single-click detector never sets it. A refusal ("the element is not on this screen") is
    `Prediction.refusal(reason)`: `refused` is true, and it is right only on an absent target."""

    point: Point | None = None
    box: Box | None = None
    raw: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    points: tuple[Point, ...] | None = None

    @property
    def click(self) -> Point | None:
        if self.point is not None:
            return (float(self.point[0]), float(self.point[1]))
        if self.points:
            return (float(self.points[0][0]), float(self.points[0][1]))
        if self.box is not None:
            return self.box.center
        return None

    @property
    def clicks(self) -> tuple[Point, ...]:
        """Every point answered, in order: `points` when given, else the one click (or none)."""
        if self.points:
            return tuple((float(x), float(y)) for x, y in self.points)
        click = self.click
        return () if click is None else (click,)

    @property
    def refused(self) -> bool:
        """The detector said the element is not there (meta["refusal"], as the VLM parser sets it)."""
        return bool(self.meta.get("refusal")) if isinstance(self.meta, Mapping) else False

    @classmethod
    def no_answer(cls, raw: str | None = None, **meta: Any) -> Prediction:
        return cls(point=None, box=None, raw=raw, meta=meta)

    @classmethod
    def refusal(cls, reason: str | None = None, raw: str | None = None, **meta: Any) -> Prediction:
        """ "Not on this screen": a hit on an absent target, a miss on a present one."""
        if reason is not None:
            meta["reason"] = reason
        return cls.no_answer(raw, refusal=True, **meta)


EPOCH_SUFFIX = "-e"


def answer_format_of(sample: Sample) -> str | None:
    """The coordinate format a `format` variant asks for (--grounding-perturb format), else None."""
    variant = sample.extra.get("variant") if isinstance(sample.extra, Mapping) else None
    value = variant.get("answer_format") if isinstance(variant, Mapping) else None
    return value if isinstance(value, str) else None


def epoch_of(sample: Sample) -> int | None:
    """The epoch (1..N) of a sample repeated by --grounding-epochs N; None on a run of one epoch."""
    value = sample.extra.get("epoch") if isinstance(sample.extra, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def with_epochs(samples: Iterable[Sample], epochs: int) -> list[Sample]:
    """--grounding-epochs N: each sample N times, adjacent (one screen, one shard share), as
    `uid-e1` .. `uid-eN` with `extra["epoch"]` = k. N = 1: the samples as they are."""
    if epochs <= 1:
        return list(samples)
    return [as_epoch(sample, k) for sample in samples for k in range(1, epochs + 1)]


def as_epoch(sample: Sample, epoch: int) -> Sample:
    """Epoch `epoch` of a sample: uid `uid-e<epoch>`, `extra["epoch"]` set."""
    import dataclasses

    extra = {**dict(sample.extra or {}), "epoch": epoch}
    return dataclasses.replace(sample, uid=f"{sample.uid}{EPOCH_SUFFIX}{epoch}", extra=extra)


def sample_uid(uid: str, epoch: Any) -> str:
    """The uid of the sample behind an epoch's uid (`uid-e2` of epoch 2 -> `uid`)."""
    suffix = f"{EPOCH_SUFFIX}{epoch}"
    if isinstance(epoch, int) and not isinstance(epoch, bool) and uid.endswith(suffix):
        return uid[: -len(suffix)]
    return uid
