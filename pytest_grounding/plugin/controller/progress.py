"""The progress line: samples done per detector, rate and ETA, every few seconds. Pure apart from
the clock; the plugin decides where the line goes."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

INTERVAL_S = 10.0  # at most one line per interval, plus one at each quarter of the run


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@dataclass
class Progress:
    enabled: bool
    clock: Callable[[], float] = time.monotonic
    total: int | None = None
    done: dict[str, int] = field(default_factory=dict)
    in_flight: dict[str, int] = field(default_factory=dict)  # process -> predictions in flight at its last report
    started: float | None = None
    _last_line: float = 0.0
    _last_quarter: int = 0

    @classmethod
    def for_config(cls, config, mode: str) -> Progress:
        """`mode`: the run's checked --grounding-progress (auto, on, off)."""
        enabled = config.option.verbose > -2 and sys.stdout.isatty() if mode == "auto" else mode == "on"
        return cls(enabled=enabled)

    def expect(self, total: int) -> None:
        self.total = total
        self.started = self.clock()
        self._last_line = self.started

    def advance(self, detector: str, in_flight: tuple[str, int] | None = None) -> str | None:
        """Count one finished sample (and the predictions in flight in the process that ran it,
        when it prefetches); the line to print now, if any."""
        self.done[detector] = self.done.get(detector, 0) + 1
        if in_flight is not None:
            self.in_flight[in_flight[0]] = in_flight[1]
        if not self.enabled or not self.total or self.started is None:
            return None
        now = self.clock()
        finished = sum(self.done.values())
        quarter = min(4, finished * 4 // self.total)
        if quarter == self._last_quarter and now - self._last_line < INTERVAL_S:
            return None
        self._last_quarter, self._last_line = quarter, now
        return self.line(now)

    def line(self, now: float) -> str:
        assert self.total and self.started is not None
        finished = sum(self.done.values())
        elapsed = max(now - self.started, 1e-9)
        rates = "  ".join(f"{name} {count} ({count / elapsed:.1f}/s)" for name, count in sorted(self.done.items()))
        left = max(self.total - finished, 0)
        eta = "done" if not left else f"ETA {_duration(left * elapsed / finished)}"
        flying = f"; {sum(self.in_flight.values())} predictions in flight" if self.in_flight else ""
        return (
            f"grounding progress: {finished}/{self.total} samples ({finished / self.total:.0%}) in "
            f"{_duration(elapsed)}, {eta}; {rates}{flying}"
        )
