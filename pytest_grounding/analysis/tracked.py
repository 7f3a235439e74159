"""What --grounding-log sends to an experiment tracker, read from the finished report document
(analysis/document.py build()): one tracked run per detector, its params (what was run) and its
metrics (what came out) as flat name -> value maps. Pure: render/trackers.py does the logging.

Names are the report's own paths joined by dots (`by.app.GridCalc.accuracy`), with characters
trackers refuse replaced by `_`; an interval is two metrics, `.ci95_low` and `.ci95_high`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# MLflow's rule for names (W&B takes these too): letters, digits, _ - . / and space; 250 characters.
_REFUSED = re.compile(r"[^A-Za-z0-9_\-./ ]")
NAME_LIMIT = 250
PARAM_LIMIT = 500  # characters of a param's value (MLflow's limit is 6,000; short values read better)
TALLY = ("samples", "scored", "hits", "misses", "wrong_format", "errors", "mean_iou", "truncated")


@dataclass(frozen=True)
class TrackedRun:
    """One detector of a report, as a tracker logs it."""

    name: str  # the detector's spec (the summary's key)
    params: Mapping[str, str] = field(default_factory=dict)
    metrics: Mapping[str, float] = field(default_factory=dict)


def name(*parts: Any) -> str:
    return _REFUSED.sub("_", ".".join(str(p) for p in parts if p not in (None, "")))[:NAME_LIMIT]


def tracked_runs(document: Mapping[str, Any], sections: Sequence[Any] = ()) -> list[TrackedRun]:
    """A tracked run per detector in the report's summary, in the summary's order; `sections`: the
    report sections whose metrics each run logs too (render/trackers.py hands them in)."""
    summary = document.get("summary") or {}
    return [TrackedRun(key, params(document, key), metrics(document, key, sections)) for key in summary]


def params(document: Mapping[str, Any], key: str) -> dict[str, str]:
    run = document.get("run") or {}
    info = (run.get("detectors") or {}).get(key) or {}
    block = (document.get("summary") or {}).get(key) or {}
    found: dict[str, Any] = {"detector": key, "detector_name": block.get("detector"), "task": block.get("task")}
    preset = info.get("preset")
    found["preset"] = preset.get("name") if isinstance(preset, Mapping) else preset
    engine = info.get("engine")
    if isinstance(engine, Mapping):
        found["engine"] = engine.get("name")
        found["engine_version"] = engine.get("version")
    for field_name in ("model", "model_commit", "headline"):
        found[field_name] = info.get(field_name)
    for dataset in run.get("datasets") or []:
        if isinstance(dataset, Mapping) and dataset.get("name"):
            found[name("dataset", dataset["name"], "fingerprint")] = dataset.get("fingerprint")
            found[name("dataset", dataset["name"], "samples")] = dataset.get("samples")
    profile = document.get("scoring_profile") or {}
    found["scoring_profile"] = profile.get("name") if isinstance(profile, Mapping) else None
    found["scoring_version"] = document.get("scoring_version")
    for setting, value in (run.get("settings") or {}).items():
        if not isinstance(value, (list, dict)):
            found[name("settings", setting)] = value
    found["workers"] = run.get("workers")
    found["partial"] = document.get("partial")
    return {name(k): str(v)[:PARAM_LIMIT] for k, v in found.items() if v is not None}


def metrics(document: Mapping[str, Any], key: str, sections: Sequence[Any] = ()) -> dict[str, float]:
    """Every figure of the detector's summary block: the headline accuracy and macro averages with
    their intervals, the counts, each slice's accuracy with its interval, latency, throughput, and
    each registered section's metrics (benchmarks, epochs, robustness, agentic, cache, cost, ...)."""
    block = (document.get("summary") or {}).get(key) or {}
    out: dict[str, float] = {}
    out.update(_figure("accuracy", block.get("accuracy"), block.get("ci95")))
    for macro in ("app", "dataset"):
        out.update(
            _figure(f"macro_{macro}_accuracy", block.get(f"macro_{macro}_accuracy"), block.get(f"macro_{macro}_ci95"))
        )
    out.update(_numbers("", {k: block.get(k) for k in TALLY}))
    for slice_key, rows in (block.get("by") or {}).items():
        for row in rows or []:
            out.update(
                _figure(name("by", slice_key, row.get("value"), "accuracy"), row.get("accuracy"), row.get("ci95"))
            )
            if (n := _number(row.get("samples"))) is not None:
                out[name("by", slice_key, row.get("value"), "samples")] = n
    latency = block.get("latency_ms") or {}
    out.update(_numbers("latency_ms", {q: latency.get(q) for q in ("p50", "p95", "mean")}))
    info = ((document.get("run") or {}).get("detectors") or {}).get(key) or {}
    throughput = info.get("throughput") or {}
    if (rate := _number(throughput.get("samples_per_s"))) is not None:
        out["throughput.samples_per_s"] = rate
    for section in sections:  # each feature's own metrics (pytest_grounding/sections)
        out.update(section.metrics(document, key))
    return out


def _figure(key: str, value: Any, interval: Any) -> Iterator[tuple[str, float]]:
    """An accuracy and its interval's bounds, where they are numbers."""
    if (number := _number(value)) is not None:
        yield key, number
    if isinstance(interval, list) and len(interval) == 2:
        for bound, end in zip(interval, ("ci95_low", "ci95_high"), strict=True):
            if (number := _number(bound)) is not None:
                yield f"{key}.{end}", number


def _nested(prefix: str, value: Any) -> Iterator[tuple[str, float]]:
    """The numbers of a nested block (the benchmarks' headlines), named by their paths; an interval
    (`ci95` and friends: two numbers under a key ending in ci95) as its two bounds."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if str(k).endswith("ci95") and isinstance(v, list) and len(v) == 2:
                yield from (
                    (name(prefix, k) + end, n)
                    for end, b in zip(("_low", "_high"), v, strict=True)
                    if (n := _number(b)) is not None
                )
            else:
                yield from _nested(name(prefix, k), v)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            label = item.get("value") or item.get("name") if isinstance(item, Mapping) else None
            yield from _nested(name(prefix, label if label else index), item)
    elif (number := _number(value)) is not None:
        yield prefix, number


def _numbers(prefix: str, found: Mapping[str, Any]) -> Iterator[tuple[str, float]]:
    for key, value in found.items():
        if (number := _number(value)) is not None:
            yield name(prefix, key), number


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value == value and abs(value) != float("inf") else None
