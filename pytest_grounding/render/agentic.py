"""Model-driven grounding in the terminal summary (issue 39): a detector's episode figures
(analysis/agentic.py) as the lines under its accuracy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.numbers import pct


def agentic_lines(found: Mapping[str, Any] | None) -> list[str]:
    """Turns and crops per sample, how the episodes ended, the accuracy by number of turns."""
    if not found:
        return []
    turns, crops = found["turns"], found["crops"]
    lines = [
        f"  agentic: {found['samples']} episodes   turns per sample mean {turns['mean']:.2f} p95 {turns['p95']}   "
        f"crops per sample mean {crops['mean']:.2f} p95 {crops['p95']}",
        f"  episodes ended: click {found['clicks']}   refusal {found['refusals']}   invalid action "
        f"{found['invalid_actions']}   loop {found['loops']}   budget {found['budget_exhausted']}   "
        f"wrong format {found['wrong_formats']}",
    ]
    by = "   ".join(
        f"{row['turns']}: {pct(row['accuracy'])} ({row['hits']}/{row['scored']})" for row in found["by_turns"]
    )
    if by:
        lines.append(f"  accuracy by turns  {by}")
    return lines
