"""What every perturbation is: a frozen dataclass of its parameters with a label, a spec, the
variant sample it derives from a sample (pure) and the pixels it renders (PIL). An axis's factory,
`variants(**options)`, gives one perturbation per variant (zoom with no scale: 70% and 125%)."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..core.cache import cache_root
from ..core.types import Box, Point, Sample
from ..core.variants import suffixed

if TYPE_CHECKING:
    from PIL.Image import Image

IMAGES_FOLDER = "perturb"  # under the cache root: the variants' screens, keyed by screen and spec


@dataclass(frozen=True)
class Perturbation:
    """A base for the axes; a plugin's axis subclasses it (or offers the same members)."""

    axis: ClassVar[str] = ""

    @classmethod
    def variants(cls, **options: Any) -> list[Perturbation]:
        raise NotImplementedError

    @property
    def label(self) -> str:
        """The items' id suffix (`zoom70`): letters, digits, `_` and `-` only."""
        raise NotImplementedError

    @property
    def options(self) -> dict[str, Any]:
        """The parameters that make this variant what it is (its spec's key=value pairs)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.compare}

    @property
    def spec(self) -> str:
        """`zoom:scale=0.7`: the variant spelled in full, so a record can name what it ran under."""
        pairs = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()) if v is not None)
        return f"{self.axis}:{pairs}" if pairs else self.axis

    def derive(self, sample: Sample, size: tuple[int, int]) -> Sample | None:
        """The variant sample (None: this sample has none: a target off the screen, no rewording)."""
        raise NotImplementedError

    def render(self, image: Image, sample: Sample) -> Image:
        """The variant's pixels from the original screen's (RGB); never draws on `image`."""
        raise NotImplementedError

    @staticmethod
    def no_more(options: dict[str, Any]) -> None:
        if options:
            raise ValueError(f"unknown option {', '.join(sorted(options))}")

    @staticmethod
    def positive(value: Any, name: str) -> int:
        if len(str(value)) > 12:  # a 400-digit parameter: refused before any arithmetic (no screen needs 10^12)
            raise ValueError(f"{name} {str(value)[:20]}... is beyond any screen (at most {MAX_PARAMETER:,})")
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} {value!r} is not a whole number") from None
        if number <= 0 or str(value).strip() not in (str(number), f"{number}.0"):
            raise ValueError(f"{name} {value!r} is not a positive whole number")
        if number > MAX_PARAMETER:
            raise ValueError(f"{name} {number:,} is beyond any screen (at most {MAX_PARAMETER:,})")
        return number


_KEEP: Any = object()
MAX_PARAMETER = 10**9  # pixels, a long edge or a quality: far above any screen, far below an overflow


def derived(
    sample: Sample,
    perturbation: Perturbation,
    *,
    bbox: Box | None = None,
    point: Point | Any | None = _KEEP,
    image_size: tuple[int, int],
    instruction: str | None = None,
    image: Path | None = None,
    params: dict[str, Any] | None = None,
) -> Sample:
    """The variant of `sample`: uid and id suffixed with the label, the variant's screen (a file in
    the cache folder, made when an item first reads it), the mapped box and the description that
    core.variants reads (`extra["variant"]`, with the perturbation itself, for rendering)."""
    params = dict(params or {})
    description = {
        "label": perturbation.label,
        "axis": perturbation.axis,
        "spec": perturbation.spec,
        "original_uid": sample.uid,
        "source": str(sample.image),
        **params,
        "perturbation": perturbation,
    }
    return dataclasses.replace(
        sample,
        uid=suffixed(sample.uid, perturbation.label),
        id=suffixed(sample.id, perturbation.label),
        image=image if image is not None else screen_path(sample.image, perturbation, params),
        instruction=instruction if instruction is not None else sample.instruction,
        bbox=bbox if bbox is not None else sample.bbox,
        point=sample.point if point is _KEEP else point,
        image_size=image_size,
        extra={**dict(sample.extra or {}), "variant": description},
    )


def screen_path(source: Path, perturbation: Perturbation, params: dict[str, Any]) -> Path:
    """Where the variant's screen lives: keyed by the screen file (its path, size and modification
    time: no read of its bytes at collection) and the variant's spec and own parameters. One file
    per screen and variant (per sample only where the variant depends on it: an overlay's place)."""
    try:
        stat = source.stat()
        identity = f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    except OSError:
        identity = str(source)  # reading it later says what is wrong with it
    key = hashlib.sha256(f"{identity}|{perturbation.spec}|{sorted(params.items())}".encode()).hexdigest()[:24]
    return cache_root() / IMAGES_FOLDER / f"{key}.png"
