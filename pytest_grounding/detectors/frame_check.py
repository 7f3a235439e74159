"""The frame check before a run (issue 46, `--grounding-frame-check`): a model detector is shown
the harness's own calibration screens (a plain background, one solid red square, "Click the red
square.": three sizes and aspect ratios, four positions each, 12 requests), its answers decoded by
the run's preset as every sample's are, and core/frames.py fits the frame the model (or its
server) really answers in. It runs once, from the controller's checks before the run
(plugin/controller/startup.py: beside the first samples, unless a budget is set), never per worker;
with --grounding-cache the detector's answer cache answers it like any request.

A detector declares that it needs the check with a class attribute `frame_check = True` (the model
detectors: openai, vllm, qwenvl, uitars); the others (ocr, the floors, replay) declare none."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import frames
from ..core.record import CACHE_META, CacheUse
from ..core.types import Prediction, Query
from .encoding import same_in_every_run

if TYPE_CHECKING:
    from PIL.Image import Image

INSTRUCTION = "Click the red square."
BACKGROUND = (236, 238, 241)
RED = (220, 30, 30)
# (width, height) and the squares' centres as shares of the screen: different on every screen, never
# the centre, x != y, so that no single click, no constant share and no swap lands on two of them
SCREENS: tuple[tuple[tuple[int, int], tuple[tuple[float, float], ...]], ...] = (
    ((1600, 900), ((0.18, 0.30), (0.72, 0.22), (0.40, 0.78), (0.86, 0.64))),
    ((1024, 768), ((0.26, 0.62), (0.62, 0.38), (0.12, 0.14), (0.80, 0.86))),
    ((720, 1280), ((0.34, 0.16), (0.70, 0.54), (0.22, 0.88), (0.58, 0.72))),
)
MODES = ("fail", "warn", "off")


def needs_check(factory: Any) -> bool:
    from .batch_files import writing

    return getattr(factory, "frame_check", False) is True and writing() is None  # --grounding-batch-out: no server


@dataclass(frozen=True)
class Screen:
    size: tuple[int, int]
    square: tuple[int, int, int, int]  # x1, y1, x2, y2 px

    def image(self) -> Image:
        from PIL import Image, ImageDraw

        image = Image.new("RGB", self.size, BACKGROUND)
        x1, y1, x2, y2 = self.square
        ImageDraw.Draw(image).rectangle((x1, y1, x2 - 1, y2 - 1), fill=RED)
        return same_in_every_run(image)  # a served detector encodes it once per process


def calibration_screens() -> list[Screen]:
    out = []
    for (width, height), centres in SCREENS:
        side = max(16, round(0.05 * min(width, height)))
        for fx, fy in centres:
            cx, cy = round(fx * width), round(fy * height)
            out.append(
                Screen((width, height), (cx - side // 2, cy - side // 2, cx - side // 2 + side, cy - side // 2 + side))
            )
    return out


@dataclass(frozen=True)
class CheckResult:
    """What the check found for one detector spec: the fit, the requests it made (and how many
    the answer cache answered), answers that failed, and the one line the header shows."""

    spec: str
    finding: frames.Finding
    requests: int
    cached: int
    failed: int
    answers: tuple[str | None, ...] = ()

    @property
    def unreadable(self) -> bool:
        return self.finding.name == frames.UNKNOWN and self.finding.readable < frames.CHECK_RULE.min_readable

    def line(self) -> str:
        counted = f"{self.requests} requests" + (f", {self.cached} from the answer cache" if self.cached else "")
        if self.finding.mismatch:
            found = f"the model answers in frame {self.finding.frame.spec if self.finding.frame else self.finding.name}"
        elif self.finding.name == frames.AS_PRESET:
            found = "the model answers in the preset's frame"
        elif self.unreadable:
            found = f"the calibration answers could not be read ({self.finding.evidence}): the run goes on"
        else:
            found = f"no frame named ({self.finding.evidence}): the run goes on"
        return f"frame check {self.spec}: {found} ({counted})"

    def message(self, preset: str | None = None, *, in_flight: bool = False) -> str:
        """The usage error that stops the run: the frame, its evidence, what to try; `in_flight`: the
        check ran beside the first samples, and what became of them."""
        assert self.finding.frame is not None
        samples = (
            "The run stopped: the samples scored before this verdict are kept, the rest are not run"
            if in_flight
            else "No dataset sample was sent"
        )
        return (
            f"frame check: detector {self.spec} answers in frame {self.finding.frame.spec!r}, not as its preset "
            f"decodes ({self.finding.evidence}). Try: {frames.suggestion_text(self.finding, preset)}. "
            f"{samples}; --grounding-frame-check=warn runs anyway "
            f"(then `rescore {' '.join(self.finding.suggestion)}`), off skips the check."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "cached": self.cached,
            "failed": self.failed,
            "raw_answers": list(self.answers),
            **self.finding.as_dict(),
        }


def answer_of(prediction: Prediction, screen: Screen) -> frames.Answer:
    meta = prediction.meta if isinstance(prediction.meta, dict) else dict(prediction.meta or {})
    click = prediction.click
    point = (float(click[0]), float(click[1])) if click is not None and all(math.isfinite(c) for c in click) else None
    model = meta.get("model_image")
    region = frames.view_of(meta)  # an agent's click on a crop: decoded on the crop
    return frames.Answer(
        point=point,
        values=frames.values_of(meta.get("model_coordinates")),
        original=screen.size if region is None else frames.region_size(region),
        model=(int(model[0]), int(model[1])) if isinstance(model, (list, tuple)) and len(model) == 2 else None,
        target=tuple(float(v) for v in screen.square),  # type: ignore[arg-type]
        region=region,
    )


def unread(screen: Screen) -> frames.Answer:
    """A failed request: an answer that could not be read."""
    return frames.Answer(None, None, screen.size, None, tuple(float(v) for v in screen.square))  # type: ignore[arg-type]


def run_check(
    spec: str,
    detector: Any,
    screens: Sequence[Screen] | None = None,
    *,
    timeout_s: float | None = None,
    budget_s: float | None = None,
) -> CheckResult:
    """The calibration screens sent through the detector together (as many in flight as its
    `concurrency`, one for a detector without it): about one round trip, not twelve. Each request is
    given the run's --grounding-timeout (`timeout_s`: the check waits that long for each round of
    requests in flight, so an in-process model answering one at a time is not cut for being serial)
    and all of them together no more than what the run's seconds budget leaves (`budget_s`). A failed
    or late request is an unreadable answer, never the run's end; then the fit."""
    from concurrent.futures import Future, wait

    chosen = list(screens) if screens is not None else calibration_screens()
    width = getattr(detector, "concurrency", 1)
    width = max(1, min(len(chosen) or 1, width if isinstance(width, int) and not isinstance(width, bool) else 1))
    rounds = -(-len(chosen) // width)
    limits = [(timeout_s * rounds, "--grounding-timeout")] if timeout_s is not None else []
    limits += [(budget_s, "the seconds budget")] if budget_s is not None else []
    limit_s, why = min(limits, key=lambda pair: pair[0]) if limits else (None, "")

    def ask(screen: Screen) -> Any:
        from .encoding import SCREEN_SLOTS

        with SCREEN_SLOTS.yielding():  # sent beside the first samples: their screens are prepared first
            return detector.predict(Query(image=screen.image(), instruction=INSTRUCTION))

    futures: list[Future[Any]] = [Future() for _ in chosen]
    pending = list(zip(chosen, futures, strict=True))
    lock = threading.Lock()

    def sender() -> None:
        while True:
            with lock:
                if not pending:
                    return
                screen, future = pending.pop(0)
            if not future.set_running_or_notify_cancel():  # past the check's limit: not sent
                continue
            try:
                future.set_result(ask(screen))
            except BaseException as exc:  # any failure: an unreadable answer, the check goes on
                future.set_exception(exc)

    # Daemon threads, not an executor's: Python joins an executor's threads at exit, so a request still
    # waiting on a slow server kept the finished run's process alive until its HTTP timeout.
    for n in range(width):
        threading.Thread(target=sender, name=f"frame-check-{n}", daemon=True).start()
    wait(futures, timeout=limit_s)
    for future in futures:
        future.cancel()  # the ones not sent yet; a late request is not waited for
    answers: list[frames.Answer] = []
    raws: list[str | None] = []
    cached = failed = 0
    for screen, future in zip(chosen, futures, strict=True):
        if not future.done():
            failed += 1
            raws.append(f"no answer within {limit_s:g} s ({why})")
            answers.append(unread(screen))
            continue
        exc = future.exception() if not future.cancelled() else None
        if future.cancelled() or exc is not None:  # a broken or refusing server: that answer is unreadable
            failed += 1
            raws.append("cancelled" if exc is None else f"{type(exc).__name__}: {str(exc)[:120]}")
            answers.append(unread(screen))
            continue
        prediction = future.result()
        if not isinstance(prediction, Prediction):
            failed += 1
            raws.append(None)
            answers.append(unread(screen))
            continue
        cached += prediction.meta.get(CACHE_META) == CacheUse.HIT
        raws.append(None if prediction.raw is None else str(prediction.raw)[:200])
        answers.append(answer_of(prediction, screen))
    finding = frames.fit(answers, frames.CHECK_RULE)
    return CheckResult(spec, finding, len(chosen), cached, failed, tuple(raws))
