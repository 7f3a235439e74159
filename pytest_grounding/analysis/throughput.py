"""Throughput beside latency: samples finished per second of wall time, per detector, and
what served detectors did (requests in flight reached, retries, cuts), merged over the processes
that predicted. Pure apart from the clock the caller passes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SUMMED = ("requests", "retries", "overloads", "cuts", "screens_encoded", "screens_reused")


@dataclass
class Timeline:
    """When each detector's records arrived: the first one's start (its arrival less its latency)
    to the last one's arrival is its wall time (figures that vary run to run: kept out of the summary,
    which must not, in the detector's run info)."""

    spans: dict[str, list[float]] = field(default_factory=dict)  # detector spec -> [start, end, count]

    def add(self, record: Mapping[str, Any], now: float) -> None:
        latency = record.get("latency_ms") or 0.0
        key = str(record.get("detector"))
        start = now - float(latency) / 1000.0
        span = self.spans.get(key)
        if span is None:
            self.spans[key] = [start, now, 1]
        else:
            span[0], span[1], span[2] = min(span[0], start), max(span[1], now), span[2] + 1

    def figures(self) -> dict[str, dict[str, Any]]:
        out = {}
        for key, (start, end, count) in self.spans.items():
            wall = max(end - start, 1e-9)
            out[key] = {"samples": int(count), "wall_s": round(wall, 3), "samples_per_s": round(count / wall, 3)}
        return out


def merge_served(per_process: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One detector's served figures from each process ("main", "gw0", ...): totals, the largest
    number of requests in flight reached in one process, and the per-process figures."""
    merged: dict[str, Any] = {key: sum(int(p.get(key) or 0) for p in per_process.values()) for key in SUMMED}
    merged["concurrency"] = next((p.get("concurrency") for p in per_process.values()), None)
    merged["concurrency_reached"] = max(
        (int(p.get("concurrency_reached") or 0) for p in per_process.values()), default=0
    )
    merged["processes"] = {name: dict(p) for name, p in sorted(per_process.items())}
    return merged


def served_line(served: Mapping[str, Any]) -> str:
    processes = served.get("processes") or {}
    where = f" per process ({len(processes)} processes)" if len(processes) > 1 else ""
    return (
        f"  served: {served.get('concurrency_reached', 0)} requests in flight reached{where} "
        f"(concurrency {served.get('concurrency')}), {served.get('requests', 0)} requests, "
        f"{served.get('retries', 0)} retries, {served.get('overloads', 0)} overloads (429/503/timeouts), "
        f"{served.get('cuts', 0)} cuts"
    )
