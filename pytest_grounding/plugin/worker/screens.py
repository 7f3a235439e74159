"""Screens decoded once per process for the samples that share them (the synthetic set: 300
samples on 64 screens; ScreenSpot-Pro: several instructions per screenshot). The items of one
screen run one after another, and the prefetch pipeline reads a few screens ahead, so a small
number of decoded screens is kept. Each image's digest is its file's (`remember_digest`), which
the served detectors' encoding cache uses instead of hashing the pixels.

Samples of one screen share one decoded image: a detector must not draw on `query.image` (the
built-in ones crop or copy first)."""

from __future__ import annotations

import contextlib
from typing import Any

from ...core.types import Sample
from ...detectors.encoding import EncodingCache, file_digest, remember_digest
from ...evaluate.runner import read_image
from ...perturb.images import materialize

SCREENS_KEPT = 8  # decoded screens kept (a 4K RGB screen is ~25 MB)


class ScreenReader:
    """`read(sample)` as `runner.read_image` (the RGB image or what is wrong with the file), decoded
    once while the file is unchanged (path, modification time, size)."""

    def __init__(self, kept: int = SCREENS_KEPT) -> None:
        self.cache = EncodingCache(kept)

    def read(self, sample: Sample) -> tuple[Any, str | None]:
        materialize(sample)  # --grounding-perturb: a variant's screen made on its first read
        try:
            stat = sample.image.stat()
            key: Any = (str(sample.image), stat.st_mtime_ns, stat.st_size)
        except OSError:
            return read_image(sample)  # the runner says what is wrong with it
        return self.cache.get(key, lambda: _read_with_digest(sample))


def _read_with_digest(sample: Sample) -> tuple[Any, str | None]:
    """read_image, and the file's digest remembered for the image (a served detector's encoding
    cache key, cheaper than hashing the decoded pixels)."""
    image, problem = read_image(sample)
    if image is not None:
        with contextlib.suppress(OSError):  # else the pixels are hashed
            remember_digest(image, file_digest(sample.image.read_bytes(), image))
    return image, problem
