"""The plugin's side of baselines (pytest-facing, kept out of plugin.py): the header's line, each
sample's verdict as a test outcome, the JUnit XML properties, the summary's lines. The comparison
itself is pure, in `baseline`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ..analysis import baseline
from .state import GroundingRun


def mode(run: GroundingRun) -> str:
    if run.settings.update_baseline:
        return "rewritten from this run: --grounding-update-baseline"
    if not run.baseline_loaded:
        return "absent: written by this run, which then fails"
    tolerances = run.settings.tolerances
    text = f"compared; tolerance {tolerances.default * 100:.1f} points"
    text += "".join(f", {t.label} {t.share * 100:.1f}" for t in tolerances.per_slice)
    if run.settings.max_slowdown:
        text += f"; latency at most x{run.settings.max_slowdown:g}"
    return text


def junit_properties(record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Flat name/value pairs for --junitxml (record_property's channel): a CI system that reads the XML
    shows each sample's outcome and figures. Only built-in types: they cross xdist's wire too."""
    point = record.get("point")
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
        "error": record.get("error"),
    }
    return [(f"grounding_{name}", value) for name, value in values.items() if value is not None]


def judge_miss(run: GroundingRun, record: Mapping[str, Any], explained: str) -> None:
    """With a baseline the baseline decides: a hit that became a miss fails its item, named as a
    regression; any other miss is expected (known, new, or being recorded) and xfails."""
    where = run.settings.baseline_path
    verdict = record.get("baseline")
    if verdict == baseline.REGRESSION:
        pytest.fail(f"REGRESSION against the baseline {where} (a hit there): {explained}", pytrace=False)
    if verdict == baseline.KNOWN_MISS:
        pytest.xfail(f"known miss (a miss in the baseline {where} too): {explained}")
    why = "not in the baseline" if run.baseline_loaded else "recorded in the baseline being written"
    pytest.xfail(f"miss {why}: {explained}")


def summary_lines(run: GroundingRun) -> list[str]:
    lines = []
    if run.comparison is not None:
        where = str(run.settings.baseline_path)
        lines += ["", *baseline.comparison_lines(run.comparison, where, run.settings.show_misses)]
    if run.baseline_problem is not None:
        lines += ["", f"baseline FAILED: {run.baseline_problem}"]
    return lines


def verdict(run: GroundingRun) -> str | None:
    if run.settings.baseline_path is None or run.interrupted:
        return None
    if run.baseline_status in ("written", "not written") or run.comparison is None:
        return f"baseline {run.baseline_status or 'not written'}" + (": FAILED" if run.baseline_failed else "")
    if run.baseline_status == "updated":
        return "baseline rewritten"
    found = run.comparison
    failed = len(found.failed_slices) + sum(not v.passed for v in found.latency)
    parts = [f"{len(found.regressions)} regressions", f"{len(found.improvements)} improvements"]
    if failed:
        parts.append(f"{failed} baseline checks FAILED")
    return "baseline: " + ", ".join(parts)
