"""Image preprocessing: the frame a model sees and the image made for it. Four kinds, registered by
name (`PREPROCESSORS`) so presets and TOML files name them:

- `smart_resize`: Qwen2-VL's resize (each side a multiple of `factor`, the area within
  [min_pixels, max_pixels]); the models of the Qwen-VL families answer in its pixels;
- `resize`: a fixed width x height, aspect ratio not kept (SeeClick's Qwen-VL 448 x 448);
- `fit`: shrink (never enlarge) to a longest edge and an area, aspect kept (what an API would do
  to the image anyway: Claude answers in pixels of that image);
- `canvas`: shrink to fit a canvas, pasted top-left on white (Phi-Ground); the answer is in the
  canvas' frame, mapped back through the content's scale;
- `none`: the original image.

The coordinate transforms (`parse.py`) map answers from the model's frame back through `Frame`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core.frames import qwen_resize

if TYPE_CHECKING:
    from PIL.Image import Image

Size = tuple[int, int]  # width, height


@dataclass(frozen=True)
class Frame:
    """The original image's size, the size of the image the model is given, and the size of the
    original's content inside it (top-left; the whole image unless a canvas pads it)."""

    original: Size
    model: Size
    content: Size | None = None

    @property
    def scale(self) -> tuple[float, float]:
        """Original pixels per model pixel, x and y."""
        content = self.content or self.model
        return self.original[0] / content[0], self.original[1] / content[1]

    def to_original(self, x: float, y: float) -> tuple[float, float]:
        sx, sy = self.scale
        return x * sx, y * sy


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """(height, width) after Qwen2-VL's resize: rounded to multiples of `factor`, then scaled down
    (floor) or up (ceil) by the same ratio on both sides when the area leaves [min, max]."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio of {width}x{height} is over 200, which smart_resize refuses")
    return qwen_resize(height, width, factor, min_pixels, max_pixels)


def _resized(image: Image, frame: Frame) -> Image:
    from PIL import Image as PILImage

    if frame.model == frame.original:
        return image
    return image.resize(frame.model, PILImage.Resampling.BICUBIC)  # bicubic, as Qwen's image processor


def _at_least(part: Any, **least: int) -> None:
    """Sizes no model takes (factor 0, negative pixels) are refused when the preset is made, not by
    failing every sample."""
    for name, low in least.items():
        value = getattr(part, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{part.kind}: {name}={value!r} must be an integer of at least {low}")


@dataclass(frozen=True)
class SmartResize:
    """Qwen2-VL's resize: each side a multiple of `factor`, the area within [min_pixels, max_pixels],
    aspect ratio kept as closely as that allows."""

    factor: int = 28
    min_pixels: int = 100 * 28 * 28
    max_pixels: int = 16384 * 28 * 28
    kind = "smart_resize"

    def __post_init__(self) -> None:
        _at_least(self, factor=1, min_pixels=1, max_pixels=max(1, self.min_pixels))

    def frame(self, size: Size) -> Frame:
        width, height = size
        new_height, new_width = smart_resize(height, width, self.factor, self.min_pixels, self.max_pixels)
        return Frame(original=(width, height), model=(new_width, new_height))

    def apply(self, image: Image) -> tuple[Image, Frame]:
        frame = self.frame(image.size)
        return _resized(image, frame), frame

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "factor": self.factor, "min_pixels": self.min_pixels, "max_pixels": self.max_pixels}


@dataclass(frozen=True)
class FixedResize:
    """A fixed size, aspect ratio not kept."""

    width: int
    height: int
    kind = "resize"

    def __post_init__(self) -> None:
        _at_least(self, width=1, height=1)

    def frame(self, size: Size) -> Frame:
        return Frame(original=size, model=(self.width, self.height))

    def apply(self, image: Image) -> tuple[Image, Frame]:
        frame = self.frame(image.size)
        return _resized(image, frame), frame

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "width": self.width, "height": self.height}


@dataclass(frozen=True)
class Fit:
    """Shrink (never enlarge) so the longest edge is at most `max_edge` and the area at most
    `max_pixels`; aspect ratio kept, sides rounded down."""

    max_edge: int = 1568
    max_pixels: int = 1_150_000
    kind = "fit"

    def __post_init__(self) -> None:
        _at_least(self, max_edge=1, max_pixels=1)

    def frame(self, size: Size) -> Frame:
        width, height = size
        ratio = min(1.0, self.max_edge / max(width, height), math.sqrt(self.max_pixels / (width * height)))
        model = (max(1, int(width * ratio)), max(1, int(height * ratio))) if ratio < 1 else (width, height)
        return Frame(original=size, model=model)

    def apply(self, image: Image) -> tuple[Image, Frame]:
        frame = self.frame(image.size)
        return _resized(image, frame), frame

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "max_edge": self.max_edge, "max_pixels": self.max_pixels}


@dataclass(frozen=True)
class Canvas:
    """Shrink (aspect kept, LANCZOS) to fit width x height, paste top-left on a white canvas."""

    width: int
    height: int
    kind = "canvas"

    def __post_init__(self) -> None:
        _at_least(self, width=1, height=1)

    def frame(self, size: Size) -> Frame:
        ratio = min(self.width / size[0], self.height / size[1])
        content = (max(1, int(size[0] * ratio)), max(1, int(size[1] * ratio)))
        return Frame(original=size, model=(self.width, self.height), content=content)

    def apply(self, image: Image) -> tuple[Image, Frame]:
        from PIL import Image as PILImage

        frame = self.frame(image.size)
        assert frame.content is not None
        canvas = PILImage.new("RGB", frame.model, "white")
        canvas.paste(image.convert("RGB").resize(frame.content, PILImage.Resampling.LANCZOS), (0, 0))
        return canvas, frame

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "width": self.width, "height": self.height}


@dataclass(frozen=True)
class Original:
    """The image as it is."""

    kind = "none"

    def frame(self, size: Size) -> Frame:
        return Frame(original=size, model=size)

    def apply(self, image: Image) -> tuple[Image, Frame]:
        return image, self.frame(image.size)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind}


@dataclass(frozen=True)
class Capped:
    """Any preprocessing behind a provider's frame (issue 28): the screen is first shrunk (aspect
    kept, never enlarged) so its longest side is at most `max_side` and its area at most
    `max_pixels` (0 = no limit), then given to `inner`. The frame maps answers straight back to the
    original screen, so an API that rejects or silently shrinks large images never sees one."""

    inner: SmartResize | FixedResize | Fit | Canvas | Original
    max_side: int = 0
    max_pixels: int = 0

    @property
    def kind(self) -> str:
        return self.inner.kind

    def capped_size(self, size: Size) -> Size:
        width, height = size
        ratio = 1.0
        if self.max_side:
            ratio = min(ratio, self.max_side / max(width, height))
        if self.max_pixels:
            ratio = min(ratio, math.sqrt(self.max_pixels / (width * height)))
        return (max(1, int(width * ratio)), max(1, int(height * ratio))) if ratio < 1 else size

    def within(self, size: Size) -> bool:
        return (not self.max_side or max(size) <= self.max_side) and (
            not self.max_pixels or size[0] * size[1] <= self.max_pixels
        )

    def _capped_and_inner(self, size: Size) -> tuple[Size, Frame]:
        """The capped size and the inner frame of it; shrunk further while the inner step's
        rounding (smart_resize rounds sides to its factor, up or down) leaves the cap."""
        capped = self.capped_size(size)
        inner = self.inner.frame(capped)
        for _ in range(64):
            if self.within(inner.model) or min(capped) <= 1:
                break
            capped = (max(1, capped[0] - max(1, capped[0] // 100)), max(1, capped[1] - max(1, capped[1] // 100)))
            inner = self.inner.frame(capped)
        return capped, inner

    def frame(self, size: Size) -> Frame:
        _, inner = self._capped_and_inner(size)
        # the inner frame maps to the capped image; that is a plain resize of the original
        return Frame(original=size, model=inner.model, content=inner.content)

    def apply(self, image: Image) -> tuple[Image, Frame]:
        from PIL import Image as PILImage

        original = image.size
        capped, _ = self._capped_and_inner(original)
        if capped != original:
            image = image.resize(capped, PILImage.Resampling.LANCZOS)
        shown, _ = self.inner.apply(image)
        return shown, self.frame(original)

    def describe(self) -> dict[str, Any]:
        cap = {k: v for k, v in (("max_side", self.max_side), ("cap_max_pixels", self.max_pixels)) if v}
        return {**self.inner.describe(), **cap}


Preprocess = SmartResize | FixedResize | Fit | Canvas | Original | Capped

PREPROCESSORS: dict[str, Callable[..., Preprocess]] = {
    "smart_resize": SmartResize,
    "resize": FixedResize,
    "fit": Fit,
    "canvas": Canvas,
    "none": Original,
}


def make_preprocess(kind: str, **params: Any) -> Preprocess:
    """A preprocessing step from its registered name and integer parameters (TOML, options)."""
    if kind not in PREPROCESSORS:
        raise ValueError(f"unknown preprocessing {kind!r}; known: {', '.join(PREPROCESSORS)}")
    try:
        return PREPROCESSORS[kind](**{k: int(v) for k, v in params.items()})
    except TypeError as exc:
        raise ValueError(f"preprocessing {kind}: {exc}") from None
