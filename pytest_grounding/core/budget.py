"""--grounding-budget: what a run may spend (requests, tokens, seconds, cost) and the meter that
spends it in the process that predicts. The meter is asked before each sample is sent to its
detector (by the prefetch pipeline or by the item itself) and before each HTTP request a served
detector sends; once a budget is spent it refuses, so nothing beyond it is sent, and the samples
it refused become not run (plugin/worker/budget_hooks.py). Pure apart from the clock."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

KEYS = ("requests", "tokens", "seconds", "cost")


class BudgetSpent(RuntimeError):
    """An HTTP request the run's budget refused (a served detector's retry past the budget)."""


@dataclass(frozen=True)
class Budget:
    """The run's limits; None: no limit of that kind."""

    requests: int | None = None
    tokens: int | None = None
    seconds: float | None = None
    cost: float | None = None  # USD, priced with --grounding-price

    def as_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    def describe(self) -> str:
        return ",".join(self.label(key) for key in self.as_dict())

    def label(self, kind: str) -> str:
        """`requests=5`: one of the limits as it is written on the command line."""
        value = getattr(self, kind)
        return f"{kind}={value}" if isinstance(value, int) else f"{kind}={value:g}"

    def after_requests(self, spent: int) -> Budget:
        """The budget left once `spent` requests went (the start-up checks'); never below zero."""
        if self.requests is None or spent <= 0:
            return self
        return replace(self, requests=max(0, self.requests - spent))

    def after_seconds(self, spent: float) -> Budget:
        """The budget left once the start-up checks took `spent` seconds (the frame check's requests);
        never below zero (then every sample is refused)."""
        if self.seconds is None or spent <= 0:
            return self
        return replace(self, seconds=max(0.0, self.seconds - spent))

    def share(self, index: int, count: int) -> Budget:
        """Worker `index` of `count`'s part: the requests, tokens and cost split so the parts add up
        to the whole (never more); the seconds are everyone's (wall time)."""
        if count <= 1:
            return self

        def part(total: Any, whole: bool) -> Any:
            if total is None:
                return None
            if whole:
                return total // count + (1 if index < total % count else 0)
            return total / count

        return Budget(part(self.requests, True), part(self.tokens, True), self.seconds, part(self.cost, False))


def parse_budget(value: Any, source: str) -> Budget | None:
    """`requests=N,tokens=N,seconds=N,cost=X` (any subset, each once) -> Budget; ValueError names `source`."""
    if value in (None, ""):
        return None
    found: dict[str, float] = {}
    for part in str(value).split(","):
        key, sep, text = part.strip().partition("=")
        key = key.strip()
        if not sep or key not in KEYS:
            raise ValueError(f"{source}: {part.strip()!r} is not one of {', '.join(k + '=N' for k in KEYS)}")
        if key in found:
            raise ValueError(f"{source}: {key} given twice")
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{source}: {key}={text.strip()!r} is not a number") from None
        if not math.isfinite(number) or number <= 0:
            raise ValueError(f"{source}: {key}={text.strip()} must be a finite number > 0")
        if key in ("requests", "tokens") and number != int(number):
            raise ValueError(f"{source}: {key}={text.strip()} must be a whole number")
        found[key] = number
    return Budget(
        requests=int(found["requests"]) if "requests" in found else None,
        tokens=int(found["tokens"]) if "tokens" in found else None,
        seconds=found.get("seconds"),
        cost=found.get("cost"),
    )


class Meter:
    """What this process spent of its budget; thread-safe (the pipeline's threads send too)."""

    def __init__(self, budget: Budget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self.clock = clock
        self.started = clock()
        self.samples = 0  # samples sent to a detector: one request each
        self.http = 0  # HTTP requests a served detector sent (retries too)
        self.tokens = 0
        self.cost = 0.0
        self.ended: str | None = None  # which budget was spent: "requests", "tokens", "seconds", "cost"
        self._lock = threading.Lock()

    def _spent(self, more_requests: int) -> str | None:
        budget = self.budget
        if budget.requests is not None and max(self.samples, self.http) + more_requests > budget.requests:
            return "requests"
        if budget.tokens is not None and self.tokens >= budget.tokens:
            return "tokens"
        if budget.cost is not None and self.cost >= budget.cost:
            return "cost"
        if budget.seconds is not None and self.clock() - self.started >= budget.seconds:
            return "seconds"
        return None

    def admit(self, count: int = 1) -> bool:
        """`count` samples may be sent now (counted as sent); False once a budget is spent."""
        with self._lock:
            if self.ended is None:
                self.ended = self._spent(count)
            if self.ended is not None:
                return False
            self.samples += count
            return True

    def send_http(self) -> None:
        """One HTTP request is about to go: counted, or BudgetSpent when the requests are spent
        (a retry, or a detector that sends several per sample)."""
        with self._lock:
            limit = self.budget.requests
            if limit is not None and self.http >= limit:
                self.ended = self.ended or "requests"
                raise BudgetSpent(f"not sent: the run's request budget ({limit}) is spent")
            self.http += 1

    def spend(self, usage: Mapping[str, int] | None, cost: float | None) -> None:
        """A finished sample's tokens and cost."""
        with self._lock:
            if usage:
                self.tokens += int(usage.get("total_tokens", 0))
            if cost:
                self.cost += cost

    def figures(self) -> dict[str, Any]:
        return {
            "requests": max(self.samples, self.http),
            "tokens": self.tokens,
            "seconds": round(self.clock() - self.started, 3),
            "cost": round(self.cost, 6),
        }


_current: Meter | None = None  # this process's meter while its loop runs (None: no budget)


def install(meter: Meter | None) -> None:
    global _current
    _current = meter


def current() -> Meter | None:
    return _current


def merged(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The processes' figures as one: spent summed (seconds: the longest), the first budget ended."""
    if not parts:
        return None
    spent: dict[str, float] = {}
    for part in parts:
        for key, value in part.get("spent", {}).items():
            spent[key] = max(spent.get(key, 0), value) if key == "seconds" else spent.get(key, 0) + value
    ended = next((part["ended"] for part in parts if part.get("ended")), None)
    return {"ended": ended, "spent": spent}
