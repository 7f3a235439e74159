"""Sanity floors: what any real detector must beat.

Both also answer the element-at-click task (`locate`) with a floor: a FLOOR_BOX_SIDE (32 px) square
centred on the click point, clipped to the image, whatever the screen shows."""

from __future__ import annotations

import random
import zlib
from typing import Any

from ..core.types import Prediction, Query
from ..evaluate.locate import FLOOR_BOX_SIDE, LocateQuery, box_around


def _floor_locate(query: LocateQuery, side: float) -> Prediction:
    width, height = query.image.size
    box = box_around(query.point, side, width, height)
    return Prediction(box=box, raw="fixed box around the point", meta={"box_side": side})


class CenterDetector:
    """Clicks the centre of the screen."""

    name = "center"
    deterministic = True  # --grounding-epochs runs it once

    def predict(self, query: Query) -> Prediction:
        width, height = query.image.size
        return Prediction(point=(width / 2.0, height / 2.0))

    def locate(self, query: LocateQuery) -> Prediction:
        return _floor_locate(query, FLOOR_BOX_SIDE)

    def describe(self) -> dict[str, Any]:
        return {"kind": "floor"}


class RandomDetector:
    """Clicks a uniformly random pixel. Seeded per query (seed, pixels, instruction), so the same
    sample gets the same click whatever the order or the xdist worker it runs on."""

    name = "random"
    deterministic = True  # seeded per query: every epoch would click the same pixel

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)

    def predict(self, query: Query) -> Prediction:
        width, height = query.image.size
        key = f"{self.seed}:{query.image_key}:{query.instruction}".encode()
        rng = random.Random(zlib.crc32(key))
        return Prediction(point=(rng.uniform(0, width), rng.uniform(0, height)))

    def locate(self, query: LocateQuery) -> Prediction:
        return _floor_locate(query, FLOOR_BOX_SIDE)

    def describe(self) -> dict[str, Any]:
        return {"kind": "floor", "seed": self.seed}
