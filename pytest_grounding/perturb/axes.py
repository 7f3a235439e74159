"""The built-in perturbation axes: each a frozen dataclass with its parameters, a readable label
(the item id's suffix), `derive(sample, size)` (the variant sample: its target mapped into the
variant's pixels, pure) and `render(image, sample)` (the variant's pixels, PIL).

Mapping is exact in the variant's pixel grid: a resize from W to w maps x to x * w / W (PIL's
resize maps the continuous grid edge to edge), so a box edge lands where its pixels land. A target
that a zoom pushes off the screen (less than half its box left on it) has no variant: the summary
counts it as dropped. Targets other than one box (several boxes, polygons, steps) are not mapped
by the geometric axes (zoom, downscale): those samples have no such variant (counted too)."""

from __future__ import annotations

import hashlib
import io
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..core.targets import Absent
from ..core.types import Box, Sample
from .base import Perturbation, derived

if TYPE_CHECKING:
    from PIL.Image import Image

VISIBLE_SHARE = 0.5  # a zoomed target with less of its box on the screen is dropped
OCCLUDE_MARGIN = 8  # px kept free between an overlay and the target box
OCCLUDE_TRIES = 200


def _mapped(box: Box, fx: float, fy: float, ox: float = 0.0, oy: float = 0.0) -> Box:
    return Box(ox + box.x1 * fx, oy + box.y1 * fy, ox + box.x2 * fx, oy + box.y2 * fy)


def _geometric_target(sample: Sample) -> bool:
    """A target the geometric axes can map: one box, or an absent element (nothing to map)."""
    return sample.target is None or isinstance(sample.target, Absent)


def _resample() -> Any:
    from PIL import Image

    return Image.Resampling.BICUBIC


@dataclass(frozen=True)
class Downscale(Perturbation):
    """A hosted API's limit: the screen resized to a pixel budget or a long-edge cap (never up)."""

    axis: ClassVar[str] = "downscale"
    max_pixels: int | None = None
    long_edge: int | None = None

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        max_pixels, long_edge = options.pop("max_pixels", None), options.pop("long_edge", None)
        cls.no_more(options)
        if max_pixels is None and long_edge is None:
            max_pixels = 1280 * 720  # a 1280x720 budget: a hosted API's common limit
        if max_pixels is not None and long_edge is not None:
            raise ValueError("downscale takes max_pixels or long_edge, not both")
        return [
            cls(
                max_pixels=cls.positive(max_pixels, "max_pixels") if max_pixels is not None else None,
                long_edge=cls.positive(long_edge, "long_edge") if long_edge is not None else None,
            )
        ]

    @property
    def label(self) -> str:
        return f"downscale{self.long_edge}" if self.long_edge else f"downscale{self.max_pixels}px"

    def size(self, width: int, height: int) -> tuple[int, int]:
        if self.long_edge:
            factor = min(1.0, self.long_edge / max(width, height))
        else:
            factor = min(1.0, math.sqrt((self.max_pixels or 1) / (width * height)))
        return max(1, math.floor(width * factor)), max(1, math.floor(height * factor))

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        if not _geometric_target(sample):
            return None
        w, h = self.size(*size)
        fx, fy = w / size[0], h / size[1]
        point = None if sample.point is None else (sample.point[0] * fx, sample.point[1] * fy)
        bbox = sample.bbox if isinstance(sample.target, Absent) else _mapped(sample.bbox, fx, fy)
        return derived(sample, self, bbox=bbox, point=point, image_size=(w, h))

    def render(self, image: Image, sample: Sample) -> Image:
        size = self.size(*image.size)
        return image if size == image.size else image.resize(size, _resample())


@dataclass(frozen=True)
class Zoom(Perturbation):
    """Browser zoom: the content scaled around the screen's centre, the screen's size kept (a
    zoom-out's border filled with the screen's corner colour, a zoom-in's overflow cut off)."""

    axis: ClassVar[str] = "zoom"
    scale: float = 0.7

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        scale = options.pop("scale", None)
        cls.no_more(options)
        scales = [0.7, 1.25] if scale is None else [float(scale)]
        for value in scales:
            if not (math.isfinite(value) and 0.1 <= value <= 4 and value != 1):
                raise ValueError(f"zoom scale {value:g} is not between 0.1 and 4 (and not 1)")
        return [cls(scale=value) for value in scales]

    @property
    def label(self) -> str:
        return f"zoom{round(self.scale * 100)}"

    def frame(self, width: int, height: int) -> tuple[int, int, int, int]:
        """The scaled content's size and its top-left corner on the screen (whole pixels)."""
        sw, sh = max(1, round(width * self.scale)), max(1, round(height * self.scale))
        return sw, sh, (width - sw) // 2, (height - sh) // 2

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        if not _geometric_target(sample):
            return None
        width, height = size
        sw, sh, ox, oy = self.frame(width, height)
        fx, fy = sw / width, sh / height
        point = None
        if sample.point is not None:
            x, y = ox + sample.point[0] * fx, oy + sample.point[1] * fy
            point = (x, y) if 0 <= x <= width and 0 <= y <= height else None
        if isinstance(sample.target, Absent):
            return derived(sample, self, bbox=sample.bbox, point=point, image_size=size)
        whole = _mapped(sample.bbox, fx, fy, ox, oy)
        seen = Box(max(0.0, whole.x1), max(0.0, whole.y1), min(float(width), whole.x2), min(float(height), whole.y2))
        if not seen.is_valid or seen.area < VISIBLE_SHARE * whole.area:
            return None  # pushed off the screen: dropped
        if point is not None and not seen.contains(point):
            point = seen.center
        return derived(sample, self, bbox=seen, point=point, image_size=size)

    def render(self, image: Image, sample: Sample) -> Image:
        from PIL import Image as PILImage

        width, height = image.size
        sw, sh, ox, oy = self.frame(width, height)
        corners = [image.getpixel(p) for p in ((0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1))]
        fill = max(corners, key=corners.count)
        canvas = PILImage.new("RGB", (width, height), fill)
        canvas.paste(image.resize((sw, sh), _resample()), (ox, oy))
        return canvas


@dataclass(frozen=True)
class Invert(Perturbation):
    """The theme swapped: every colour inverted (dark for light, light for dark)."""

    axis: ClassVar[str] = "invert"

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        cls.no_more(options)
        return [cls()]

    @property
    def label(self) -> str:
        return "invert"

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        return derived(sample, self, image_size=size)

    def render(self, image: Image, sample: Sample) -> Image:
        from PIL import ImageOps

        return ImageOps.invert(image.convert("RGB"))


@dataclass(frozen=True)
class Jpeg(Perturbation):
    """The screen passed through JPEG at a quality (kept as PNG after: the detector gets the
    compressed pixels, not a file it would decode differently)."""

    axis: ClassVar[str] = "jpeg"
    quality: int = 30

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        quality = options.pop("quality", None)
        cls.no_more(options)
        values = [30, 70] if quality is None else [cls.positive(quality, "quality")]
        if any(value > 100 for value in values):
            raise ValueError("jpeg quality is 1 to 100")
        return [cls(quality=value) for value in values]

    @property
    def label(self) -> str:
        return f"jpeg{self.quality}"

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        return derived(sample, self, image_size=size)

    def render(self, image: Image, sample: Sample) -> Image:
        from PIL import Image as PILImage

        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, "JPEG", quality=self.quality)
        buffer.seek(0)
        with PILImage.open(buffer) as decoded:
            return decoded.convert("RGB")


@dataclass(frozen=True)
class Occlude(Perturbation):
    """A window-like overlay (title bar, border, lines of text) `size` x the screen's sides, placed
    at a position drawn from the sample's uid, never over the target box (a margin kept); no place
    on the screen free of the target: no variant (counted)."""

    axis: ClassVar[str] = "occlude"
    size: float = 0.3

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        size = float(options.pop("size", 0.3))
        cls.no_more(options)
        if not (math.isfinite(size) and 0.02 <= size <= 0.9):
            raise ValueError(f"occlude size {size:g} is not between 0.02 and 0.9 (a share of each side)")
        return [cls(size=size)]

    @property
    def label(self) -> str:
        return "occlude" if self.size == 0.3 else f"occlude{round(self.size * 100)}"

    def place(self, sample: Sample, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
        """The overlay's box [x1, y1, x2, y2] (whole pixels), clear of the target box by the margin."""
        width, height = size
        w, h = max(1, round(width * self.size)), max(1, round(height * self.size))
        if w >= width or h >= height:
            return None
        seed = int.from_bytes(hashlib.sha256(f"{sample.uid}|{self.spec}".encode()).digest()[:8], "big")
        rng = random.Random(seed)
        target = sample.bbox
        guarded = isinstance(sample.target, Absent) or not target.is_valid

        def clear(x: int, y: int) -> bool:
            if guarded:
                return True
            m = OCCLUDE_MARGIN
            return x + w + m <= target.x1 or x - m >= target.x2 or y + h + m <= target.y1 or y - m >= target.y2

        tries = [(rng.randrange(width - w + 1), rng.randrange(height - h + 1)) for _ in range(OCCLUDE_TRIES)]
        tries += [(x, y) for x in (0, width - w) for y in (0, height - h)]  # the corners, as a last resort
        for x, y in tries:
            if clear(x, y):
                return (x, y, x + w, y + h)
        return None

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        rect = self.place(sample, size)
        if rect is None:
            return None
        return derived(sample, self, image_size=size, params={"overlay": list(rect)})

    def render(self, image: Image, sample: Sample) -> Image:
        from PIL import ImageDraw

        from ..core.variants import variant_of

        found = variant_of(sample) or {}
        x1, y1, x2, y2 = (int(v) for v in found["overlay"])
        out = image.convert("RGB").copy()
        draw = ImageDraw.Draw(out)
        bar = max(12, (y2 - y1) // 10)
        draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=(246, 246, 248), outline=(120, 120, 130), width=2)
        draw.rectangle((x1, y1, x2 - 1, min(y2 - 1, y1 + bar)), fill=(58, 62, 74))
        for k in range(3):  # the window's buttons
            cx = x2 - (k + 1) * bar
            if cx - bar // 3 > x1:
                draw.ellipse((cx - bar // 3, y1 + bar // 3, cx + bar // 3, y1 + bar - bar // 3), fill=(220, 90, 80))
        line = max(6, bar // 2)
        for row, y in enumerate(range(y1 + bar + line, y2 - line, line * 2)):  # lines of "text"
            length = (x2 - x1 - 2 * line) * (0.5 + 0.4 * ((row * 7) % 5) / 4)
            draw.rectangle((x1 + line, y, x1 + line + int(length), y + line // 2), fill=(150, 152, 160))
        return out


@dataclass(frozen=True)
class Paraphrase(Perturbation):
    """The instruction replaced from a JSONL table the user supplies: one object a line with `id`
    (the dataset's own sample id) and `instruction` (optionally `dataset`: that dataset's samples
    only). A sample without a rewording has no variant (counted). `name` labels the variant."""

    axis: ClassVar[str] = "paraphrase"
    file: str = ""
    name: str = "paraphrase"
    table: dict[tuple[str | None, str], str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        path, name = options.pop("file", None), str(options.pop("name", "paraphrase"))
        cls.no_more(options)
        if not path:
            raise ValueError("paraphrase needs file=PATH (a JSONL of id -> instruction)")
        if not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"paraphrase name {name!r} is not a plain word (it becomes the items' id suffix)")
        resolved = Path(str(path)).expanduser().resolve()
        return [cls(file=str(resolved), name=name, table=read_rewordings(resolved))]

    @property
    def label(self) -> str:
        return self.name

    @property
    def options(self) -> dict[str, Any]:
        return {"file": self.file, **({"name": self.name} if self.name != "paraphrase" else {})}

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        reworded = self.table.get((sample.dataset, sample.id)) or self.table.get((None, sample.id))
        if not reworded:
            return None
        return derived(sample, self, instruction=reworded, image=sample.image, image_size=size)

    def render(self, image: Image, sample: Sample) -> Image:
        return image


def read_rewordings(path: Path) -> dict[tuple[str | None, str], str]:
    """The paraphrase table: (dataset or None, id) -> instruction; a bad line is a usage error naming it."""
    from ..core import safefile, safejson

    try:
        text = safefile.read_text(path, limit=safejson.MAX_DOCUMENT_CHARS)  # a regular file, bounded
    except (OSError, ValueError) as exc:
        raise ValueError(f"paraphrase file {path}: {exc}") from None
    table: dict[tuple[str | None, str], str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = safejson.loads(line)
        except ValueError as exc:
            raise ValueError(f"paraphrase file {path}:{number}: {exc}") from None
        if not isinstance(row, dict) or not isinstance(row.get("instruction"), str) or row.get("id") is None:
            raise ValueError(f"paraphrase file {path}:{number}: not an object with id and instruction")
        dataset = row.get("dataset")
        table[(str(dataset) if dataset is not None else None, str(row["id"]))] = row["instruction"]
    return table


@dataclass(frozen=True)
class Format(Perturbation):
    """The same sample asked in another coordinate format (issue 56; detectors/vlm/formats.py):
    the screen and the instruction unchanged, the prompt asking for absolute pixels of the image
    sent (`pixels`), [0,1] (`rel1`), 0-1000 `(x, y)` (`rel1000`) or 0-1000 `{"point_2d": [x, y]}`
    (`point_2d`), each answer parsed in the format it was asked for. `format` alone: all four;
    `format:pixels,rel1`: those. The original item is the preset's own prompt and format."""

    axis: ClassVar[str] = "format"
    answer_format: str = "pixels"

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        from ..detectors.vlm.formats import FORMATS, check

        names = str(options.pop("formats", "") or options.pop("answer_format", "") or "")
        cls.no_more(options)
        chosen = [n.strip() for n in names.replace("|", "+").split("+") if n.strip()] or list(FORMATS)
        for name in chosen:
            check(name)
        return [cls(answer_format=name) for name in dict.fromkeys(chosen)]

    @property
    def label(self) -> str:
        return f"fmt-{self.answer_format}"

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        return derived(sample, self, image=sample.image, image_size=size, params={"answer_format": self.answer_format})

    def render(self, image: Image, sample: Sample) -> Image:
        return image
