"""The run's notes whose words come from the harness (not from a detector or a file): the line that
names the items no report came for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SHOWN = 5  # not-run samples the summary line names; the JSON report lists all of them


def not_run_line(
    not_run: Sequence[Any], total: int, *, crashes: int, interrupted: bool, resumable: bool, reason: str | None = None
) -> str:
    """The summary's line (a note): how many, why (`reason` when the caller knows it), and the first few ids."""
    if reason is not None:
        pass  # the caller knows: a budget was spent
    elif crashes and not interrupted:
        reason = f"xdist stopped after {crashes} worker crashes, --max-worker-restart"
    elif interrupted:
        reason = "the run was interrupted: Ctrl-C, -x or --maxfail"
    else:
        reason = "no report came for them"
    shown = ", ".join(entry.id for entry in not_run[:SHOWN])
    more = f" and {len(not_run) - SHOWN} more" if len(not_run) > SHOWN else ""
    resume = ", --grounding-resume runs them" if resumable else ""
    return f"not run: {len(not_run)} of {total} samples ({reason}): {shown}{more} (the JSON report's not_run{resume})"
