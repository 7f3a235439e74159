"""The plugin's side of baselines (pytest-facing): each sample's verdict as a test outcome, and the
JUnit XML properties. The comparison itself is pure, in analysis/baseline.py; its text in
render/baseline.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ...analysis import baseline


def junit_properties(record: Mapping[str, Any], roots: Sequence[Any] = ()) -> list[tuple[str, Any]]:
    """Flat name/value pairs for --junitxml (record_property's channel): a CI system that reads the XML
    shows each sample's outcome and figures. Only built-in types: they cross xdist's wire too. A path
    under one of `roots` (the sample's dataset folder) in the error is shown relative to it."""
    point = record.get("point")
    error = record.get("error")
    if isinstance(error, str):
        for root in roots:
            folder = str(root).rstrip("/")
            error = error.replace(folder + "/", "") if folder and folder != "." else error
    values = {
        "outcome": record["outcome"],
        "detector": record["detector"],
        "dataset": record["dataset"],
        "sample_id": record["id"],
        "element_type": record.get("element_type"),
        "app": record.get("app"),
        "point": None if point is None else f"{point[0]:g},{point[1]:g}",
        "iou": record.get("iou"),
        "distance_px": record.get("distance"),
        "latency_ms": record.get("latency_ms"),
        "baseline": record.get("baseline"),
        "error": error,
    }
    return [(f"grounding_{name}", value) for name, value in values.items() if value is not None]


def judge_miss(where: Path, judged: bool, record: Mapping[str, Any], explained: str) -> None:
    """With a baseline the baseline decides: a hit that became a miss fails its item, named as a
    regression; any other miss is expected (known, new, or being recorded) and xfails."""
    verdict = record.get("baseline")
    if verdict == baseline.REGRESSION:
        pytest.fail(f"REGRESSION against the baseline {where} (a hit there): {explained}", pytrace=False)
    if verdict == baseline.KNOWN_MISS:
        pytest.xfail(f"known miss (a miss in the baseline {where} too): {explained}")
    why = "not in the baseline" if judged else "recorded in the baseline being written"
    pytest.xfail(f"miss {why}: {explained}")
