"""The baseline's text: the header's line (how the run is compared), the summary's lines, and its
part of the verdict line. The comparison itself is pure, in analysis/baseline.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..analysis.result import RunResult


def mode(*, update: bool, loaded: bool, tolerances: Any, max_slowdown: float | None) -> str:
    if update:
        return "rewritten from this run: --grounding-update-baseline"
    if not loaded:
        return "absent: written by this run, which then fails"
    text = f"compared; tolerance {tolerances.default * 100:.1f} points"
    text += "".join(f", {t.label} {t.threshold * 100:.1f}" for t in tolerances.per_slice)
    if max_slowdown:
        text += f"; latency at most x{max_slowdown:g}"
    return text


def baseline_verdict(result: RunResult) -> str | None:
    found = result.baseline
    if found is None or result.partial:
        return None
    if found.status in ("written", "not written") or found.comparison is None:
        return f"baseline {found.status or 'not written'}" + (": FAILED" if found.failed else "")
    if found.status == "updated":
        return "baseline rewritten"
    comparison = found.comparison
    failed = len(comparison.failed_slices) + sum(not v.passed for v in comparison.latency)
    parts = [f"{len(comparison.regressions)} regressions", f"{len(comparison.improvements)} improvements"]
    if failed:
        parts.append(f"{failed} baseline checks FAILED")
    return "baseline: " + ", ".join(parts)
