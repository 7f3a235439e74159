"""The wrapper machinery every strategy shares (cropping, asking the inner detector, mapping back,
counting calls) and the two simple strategies: `regrounding` and `zoom`.

A strategy sees a Query (image and instruction) and nothing else: it cannot centre a crop on the
target because it never has it. Each answer it returns carries in `meta`: `strategy`, `attempts`
(model calls, the inner detector's own attempts included), `crops` (every window asked, in pixels
of the screen, in order) and `final_crop` (the window the answer came from); the final inner call's
own meta is kept under `inner`, in that crop's frame. A served inner detector's token `usage` is
summed over every call (the cost of the answer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.types import Box, Point, Prediction, Query
from ...core.usage import add_usage
from ..base import close, describe
from .geometry import box_to_frame, integral, shrink_toward, to_frame, window_around


@dataclass(frozen=True)
class Answer:
    """One inner call's answer, in screen pixels."""

    crop: Box
    prediction: Prediction  # as the inner detector gave it (its frame: the crop)
    point: Point | None
    box: Box | None


@dataclass
class Trail:
    """The calls made for one query (a fresh one per predict: detectors are shared across threads)."""

    attempts: int = 0
    crops: list[Box] = field(default_factory=list)
    usage: dict[str, int] | None = None  # tokens of every call, when the inner detector reports them


def _click(prediction: Prediction) -> Point | None:
    try:
        return prediction.click
    except (TypeError, ValueError):  # a malformed answer: the runner's checks report it if it is the final one
        return None


class Strategy:
    """Base of the built-in strategies: `ask` crops the screen, asks the inner detector and maps
    the answer back; `finish` builds the returned Prediction with the strategy's record."""

    name = "strategy"

    def __init__(self, detector: Any) -> None:
        self.inner = detector
        inner_name = getattr(detector, "name", type(detector).__name__)
        self.name = f"{inner_name}+{type(self).name}"

    def ask(self, query: Query, crop: Box | None, trail: Trail, instruction: str | None = None) -> Answer:
        """The inner detector on the crop (None: the whole screen), its answer in screen pixels."""
        frame = query.image.size
        window = Box(0.0, 0.0, float(frame[0]), float(frame[1])) if crop is None else integral(crop, frame)
        x1, y1, x2, y2 = (int(v) for v in window.as_list())
        image = query.image if crop is None else query.image.crop((x1, y1, x2, y2))
        sub = Query(
            image=image, instruction=query.instruction if instruction is None else instruction, epoch=query.epoch
        )
        prediction = self.inner.predict(sub)
        if not isinstance(prediction, Prediction):  # a quick custom detector's bare answer
            from ...evaluate.runner import as_prediction

            prediction = as_prediction(prediction)
        trail.attempts += _inner_attempts(prediction)
        trail.usage = add_usage(trail.usage, (prediction.meta or {}).get("usage"))
        trail.crops.append(window)
        click = _click(prediction)
        point = None if click is None else to_frame(click, window)
        box = None if prediction.box is None else box_to_frame(prediction.box, window)
        return Answer(window, prediction, point, box)

    def first_look(
        self, query: Query, share: float = 1.0, side: float | None = None
    ) -> tuple[Trail, Answer, Box | None]:
        """The first answer, on the whole screen, and the window around its click (`side` px a side,
        else `share` of the screen's width and height), in whole pixels: None when it did not click."""
        trail = Trail()
        first = self.ask(query, None, trail)
        if first.point is None:
            return trail, first, None
        frame = query.image.size
        size = (side, side) if side is not None else (frame[0] * share, frame[1] * share)
        return trail, first, integral(window_around(first.point, size, frame), frame)

    def finish(self, answer: Answer | None, trail: Trail, **extra: Any) -> Prediction:
        meta: dict[str, Any] = {
            "strategy": type(self).name,
            "attempts": trail.attempts,
            "crops": [c.as_list() for c in trail.crops],
            "final_crop": None if answer is None else answer.crop.as_list(),
            **extra,
        }
        if trail.usage is not None:
            meta["usage"] = trail.usage
        if answer is None or answer.point is None:
            raw = None if answer is None else answer.prediction.raw
            if answer is not None:
                meta["inner"] = dict(answer.prediction.meta)
            return Prediction(point=None, box=None, raw=raw, meta=meta)
        meta["inner"] = dict(answer.prediction.meta)
        return Prediction(point=answer.point, box=answer.box, raw=answer.prediction.raw, meta=meta)

    def options(self) -> dict[str, Any]:
        return {}

    def describe(self) -> dict[str, Any]:
        inner = describe(self.inner)
        settings = ", ".join(f"{k}={v}" for k, v in self.options().items())
        around = inner.get("headline") or inner.get("name")
        return {
            "headline": f"{type(self).name} ({settings}) around {around}",
            "strategy": type(self).name,
            "options": self.options(),
            "inner": inner,
        }

    def close(self) -> None:
        close(self.inner)


def _inner_attempts(prediction: Prediction) -> int:
    value = prediction.meta.get("attempts") if prediction.meta else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


class Regrounding(Strategy):
    """ReGround: ground on the screen, crop a size x size window around the answer (slid inside the
    screen), ground again in it, map back. When the window is the whole screen, the first answer
    stands (a second call would see the same pixels). No second answer: the first stands."""

    name = "regrounding"

    def __init__(self, detector: Any, /, *, size: int = 1024) -> None:
        super().__init__(detector)
        self.validate_options(size=size)
        self.size = int(size)

    @staticmethod
    def validate_options(size: int = 1024) -> None:
        if size < 16:
            raise ValueError(f"size={size}: a crop needs at least 16 px a side")

    def options(self) -> dict[str, Any]:
        return {"size": self.size}

    def predict(self, query: Query) -> Prediction:
        trail, first, window = self.first_look(query, side=self.size)
        if window is None:
            return self.finish(first, trail)
        if window == first.crop:
            return self.finish(first, trail, stopped="crop is the whole screen")
        second = self.ask(query, window, trail)
        if second.point is None:
            return self.finish(first, trail, stopped="no answer in the crop: the first answer stands")
        return self.finish(second, trail)


class Zoom(Strategy):
    """Iterative narrowing: ground on the screen, then `rounds` times crop a window `factor` times
    the last one's sides (never below min_size px), centred on the last answer and slid inside the
    screen, and ground in it. A round without an answer ends the search with the last answer; a
    window that can shrink no further ends it too."""

    name = "zoom"

    def __init__(self, detector: Any, /, *, rounds: int = 3, factor: float = 0.5, min_size: int = 256) -> None:
        super().__init__(detector)
        self.validate_options(rounds=rounds, factor=factor, min_size=min_size)
        self.rounds, self.factor, self.min_size = int(rounds), float(factor), int(min_size)

    @staticmethod
    def validate_options(rounds: int = 3, factor: float = 0.5, min_size: int = 256) -> None:
        if rounds < 1:
            raise ValueError(f"rounds={rounds}: at least 1")
        if not 0 < factor < 1:
            raise ValueError(f"factor={factor}: the window shrinks, so 0 < factor < 1")
        if min_size < 16:
            raise ValueError(f"min_size={min_size}: at least 16 px")

    def options(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "factor": self.factor, "min_size": self.min_size}

    def predict(self, query: Query) -> Prediction:
        trail = Trail()
        frame = query.image.size
        best = self.ask(query, None, trail)
        if best.point is None:
            return self.finish(best, trail)
        window = best.crop
        for _ in range(self.rounds):
            assert best.point is not None
            narrower = integral(shrink_toward(best.point, window, self.factor, self.min_size, frame), frame)
            if narrower.width >= window.width and narrower.height >= window.height:
                return self.finish(best, trail, stopped="window at its minimum size")
            answer = self.ask(query, narrower, trail)
            if answer.point is None:
                return self.finish(best, trail, stopped="no answer in the narrower window: the last answer stands")
            best, window = answer, narrower
        return self.finish(best, trail)
