"""Image preprocessing: the frame a model sees (smart_resize) and the image resized to it.

The frame is computed with the `ui-tars` package's own smart_resize; the coordinate transforms
(`parse.py`) map answers from the model's frame back to the original pixels through it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image

Size = tuple[int, int]  # width, height


@dataclass(frozen=True)
class Frame:
    """The original image's size and the size of the image the model is given."""

    original: Size
    model: Size

    @property
    def scale(self) -> tuple[float, float]:
        """Original pixels per model pixel, x and y."""
        return self.original[0] / self.model[0], self.original[1] / self.model[1]


@dataclass(frozen=True)
class SmartResize:
    """Qwen2-VL's resize: each side a multiple of `factor`, the area within [min_pixels, max_pixels],
    aspect ratio kept as closely as that allows."""

    factor: int = 28
    min_pixels: int = 100 * 28 * 28
    max_pixels: int = 16384 * 28 * 28

    def frame(self, size: Size) -> Frame:
        from ui_tars.action_parser import smart_resize

        width, height = size
        new_height, new_width = smart_resize(
            height, width, factor=self.factor, min_pixels=self.min_pixels, max_pixels=self.max_pixels
        )
        return Frame(original=(width, height), model=(new_width, new_height))

    def apply(self, image: Image) -> tuple[Image, Frame]:
        """The image at the model's size (bicubic, as Qwen2-VL's image processor resizes)."""
        from PIL import Image as PILImage

        frame = self.frame(image.size)
        if frame.model == frame.original:
            return image, frame
        return image.resize(frame.model, PILImage.Resampling.BICUBIC), frame

    def describe(self) -> dict:
        return {
            "kind": "smart_resize",
            "factor": self.factor,
            "min_pixels": self.min_pixels,
            "max_pixels": self.max_pixels,
        }
