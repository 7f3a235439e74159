"""Small report documents in which one built-in section has figures: `Section.example()` of each
built-in (tests/test_sections.py renders each in every output the section renders in). The
detector sections' figures are computed from records by analysis/metrics.summarize, as a run's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

KEY = "d"  # the example detector's summary key


def record(uid: str, outcome: str, **more: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "detector": KEY,
        "dataset": "ds",
        "id": uid,
        "uid": uid,
        "image": f"{uid}.png",
        "instruction": "Click Save",
        "element_type": "icon",
        "app": "App",
        "app_category": "office",
        "platform": "linux",
        "size": "<32",
        "outcome": outcome,
        "point": [1.0, 1.0],
        "iou": None,
        "latency_ms": 10.0,
        "meta": {},
    }
    return {**base, **more}


def document(records: Sequence[Mapping[str, Any]], **top: Any) -> dict[str, Any]:
    """A report with the records' summary, the detector's description (`run.detectors`) and `top`."""
    from ..analysis.metrics import summarize

    detectors = top.pop("detectors", {KEY: {"name": KEY}})
    return {"summary": summarize(records), "run": {"detectors": detectors}, "samples": list(records), **top}


def plain() -> list[dict[str, Any]]:
    return [record("s1", "hit"), record("s2", "miss")]


def with_block(name: str, figures: Any) -> dict[str, Any]:
    """The plain report with `figures` as the detector block's `name` (figures a run of the
    feature would need a model for: agentic episodes, a sweep, benchmark headlines)."""
    found = document(plain())
    found["summary"][KEY][name] = figures
    return found
