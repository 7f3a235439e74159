"""Test support, never imported by a run: small report documents in which one built-in section has
figures, for `Section.example()` of each built-in (tests/test_sections.py renders each in every
output the section renders in; each section imports this module inside its `example()` only). The
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


def document(records: Sequence[Mapping[str, Any]], *sections: Any, **top: Any) -> dict[str, Any]:
    """A report with the records' summary (the core figures and `sections`' own: the example's section,
    handed in, so that this module imports no registry), the detector's description (`run.detectors`)
    and `top`."""
    from ..analysis.metrics import summarize

    detectors = top.pop("detectors", {KEY: {"name": KEY}})
    found = [s for s in sections if s.level == "detector"]
    summary = summarize(records, figures=found)
    return {"summary": summary, "run": {"detectors": detectors}, "samples": list(records), **top}


def plain() -> list[dict[str, Any]]:
    return [record("s1", "hit"), record("s2", "miss")]


def with_block(name: str, figures: Any) -> dict[str, Any]:
    """The plain report with `figures` as the detector block's `name` (figures a run of the
    feature would need a model for: agentic episodes, a sweep, benchmark headlines)."""
    found = document(plain())
    found["summary"][KEY][name] = figures
    return found


def misses_records() -> list[dict[str, Any]]:
    """Ten grounding misses whose clicks are the targets' centres in a 0-1000 frame (a model that
    answers rel1000 read as pixels) and two hits: figures for the tolerance curve, the miss analysis
    and the frame diagnosis."""
    found = []
    for n in range(10):
        x1, y1 = 100.0 + 70 * n, 500.0 - 30 * n
        target = [x1, y1, x1 + 40, y1 + 20]
        cx, cy = x1 + 20, y1 + 10
        point = [round(cx * 1000 / 1600), round(cy * 1000 / 900)]
        distance = max(0.0, x1 - point[0], point[0] - target[2]) + max(0.0, y1 - point[1], point[1] - target[3])
        found.append(
            record(
                f"m{n}",
                "miss",
                target=target,
                image_size=[1600, 900],
                point=point,
                distance=distance,
                distance_px=distance,
                miss_kind="near" if distance < 100 else "far",
            )
        )
    hits = [record(f"h{n}", "hit", target=[10, 10, 50, 50], image_size=[1600, 900], point=[30, 30]) for n in range(2)]
    return [*found, *hits]
