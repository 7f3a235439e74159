"""`zoomin`: test-time zoom-in as papers report it, a configuration of its own (issue 28). Ground on
the screen, crop a window `ratio` times the screen's sides centred on the answer (slid inside the
screen, never shrunk), optionally resize the crop (ClawGUI sends Gemini's at 1920x1080), ground
again, map back. One second stage, as the papers' two-stage numbers are; `zoom` is the iterative
form. Like every strategy it sees the image and the instruction only, never the target.

The crop's size is the authors' where they publish one for the inner detector's preset
(`AUTHORS_ZOOM`); otherwise `ratio` must be given or the generic 0.5 (ClawGUI's Seed setting) is
used and the headline says so."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.types import Box, Prediction, Query
from .wrappers import Answer, Strategy, Trail, _click


@dataclass(frozen=True)
class ZoomConfig:
    ratio: float
    resize: tuple[int, int] | None
    source: str


CLAW = "ZJU-REAL/ClawGUI@d990d3e clawgui-eval/inference/"
# preset -> the crop its authors' (or the reporting harness's) two-stage numbers used
AUTHORS_ZOOM: dict[str, ZoomConfig] = {
    "gemini-point": ZoomConfig(0.25, (1920, 1080), CLAW + "gemini_inferencer.py (ZOOM_CROP_RATIO 0.25, 1920x1080)"),
}
GENERIC = ZoomConfig(0.5, None, CLAW + "seed_inferencer.py (crop_ratio 0.5): no published crop for this preset")


def parse_size(text: str) -> tuple[int, int] | None:
    text = str(text).strip().lower()
    if text in ("", "none", "0"):
        return None
    match = re.fullmatch(r"(\d+)x(\d+)", text)
    if not match or min(int(match.group(1)), int(match.group(2))) < 16:
        raise ValueError(f"resize={text!r}: WIDTHxHEIGHT, at least 16 px a side, or none")
    return int(match.group(1)), int(match.group(2))


class ZoomIn(Strategy):
    name = "zoomin"

    def __init__(self, detector: Any, /, *, ratio: float = 0.0, resize: str = "") -> None:
        super().__init__(detector)
        self.validate_options(ratio=ratio, resize=resize)
        preset = getattr(getattr(detector, "preset", None), "name", None)
        known = AUTHORS_ZOOM.get(str(preset)) if preset else None
        base = known or GENERIC
        self.ratio = float(ratio) or base.ratio
        self.resize = parse_size(resize) if str(resize).strip() else (base.resize if not float(ratio) else None)
        if float(ratio) or str(resize).strip():
            self.source = "options" + (f" (the authors' for {preset}: {known.source})" if known else "")
        else:
            self.source = base.source

    @staticmethod
    def validate_options(ratio: float = 0.0, resize: str = "") -> None:
        if not 0 <= float(ratio) < 1:
            raise ValueError(f"ratio={ratio}: the crop's sides as a share of the screen's, 0 < ratio < 1")
        parse_size(resize)

    def options(self) -> dict[str, Any]:
        size = "none" if self.resize is None else f"{self.resize[0]}x{self.resize[1]}"
        return {"ratio": self.ratio, "resize": size}

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["crop_from"] = self.source
        return info

    def ask_resized(self, query: Query, window: Box, trail: Trail) -> Answer:
        """The inner detector on the crop resized to `resize` (per axis), mapped back to the screen."""
        from PIL import Image as PILImage

        assert self.resize is not None
        x1, y1, x2, y2 = (int(v) for v in window.as_list())
        crop = query.image.crop((x1, y1, x2, y2)).resize(self.resize, PILImage.Resampling.LANCZOS)
        prediction = self.inner.predict(Query(image=crop, instruction=query.instruction, epoch=query.epoch))
        if not isinstance(prediction, Prediction):
            from ...evaluate.runner import as_prediction

            prediction = as_prediction(prediction)
        from ...core.usage import add_usage
        from .wrappers import _inner_attempts

        trail.attempts += _inner_attempts(prediction)
        trail.usage = add_usage(trail.usage, (prediction.meta or {}).get("usage"))
        trail.crops.append(window)
        sx, sy = (x2 - x1) / self.resize[0], (y2 - y1) / self.resize[1]
        click = _click(prediction)
        point = None if click is None else (x1 + click[0] * sx, y1 + click[1] * sy)
        box = None
        if prediction.box is not None:
            b = prediction.box
            box = Box(x1 + b.x1 * sx, y1 + b.y1 * sy, x1 + b.x2 * sx, y1 + b.y2 * sy)
        return Answer(window, prediction, point, box)

    def predict(self, query: Query) -> Prediction:
        trail, first, window = self.first_look(query, share=self.ratio)
        if window is None or first.point is None:
            return self.finish(first, trail)
        second = self.ask(query, window, trail) if self.resize is None else self.ask_resized(query, window, trail)
        if second.point is None:
            return self.finish(first, trail, stopped="no answer in the crop: the first answer stands")
        return self.finish(second, trail, first_stage=list(first.point))
