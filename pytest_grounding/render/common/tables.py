"""The tables every output shares, as plain text cells (each output escapes and styles them): the
detectors' headline row and the gates. One column list each, so the markdown summary and the HTML page
cannot drift apart (issue 55)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...analysis.intervals import span
from ...core.numbers import pct

GATE_HEADER = ("detector", "slice", "accuracy", "95% CI", "judged on", "threshold", "scored", "verdict")


def gate_rows(document: Mapping[str, Any]) -> list[list[str]]:
    """One row per accuracy gate of the report (`gates`); the verdict cell is "passed" or "FAILED"."""
    return [
        [
            str(g["detector"]),
            str(g["slice"]),
            pct(g["accuracy"]),
            span(g.get("ci95")),
            str(g.get("judged_on", "accuracy")),
            pct(g["threshold"]),
            str(g.get("scored", "-")),
            "passed" if g["passed"] else "FAILED",
        ]
        for g in document.get("gates") or []
    ]


def macro_cell(block: Mapping[str, Any], over: str) -> str:
    """`macro_app_accuracy` / `macro_dataset_accuracy` with its interval: `41.2% (35.0-47.5)`."""
    value, bounds = block.get(f"macro_{over}_accuracy"), block.get(f"macro_{over}_ci95")
    return f"{pct(value)} ({span(bounds)})" if bounds else pct(value)
