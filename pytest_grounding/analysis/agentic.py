"""Model-driven grounding's figures (issue 39), from the records' traces (`turns`, `agent_end`):
turns and crops per sample (mean, p95), the accuracy by number of turns (95% intervals clustered by
screen), and how the episodes ended: clicks, refusals and terminations, invalid actions, loops and
spent budgets apart from wrong formats. Pure; the summary, the JSON report and the HTML page read it."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.record import AGENT_BUDGET_ENDS, SCORED, AgentEnd, Outcome
from . import intervals


def is_agentic(record: Mapping[str, Any]) -> bool:
    return isinstance(record.get("turns"), list)


def crops_of(record: Mapping[str, Any]) -> int:
    """The crops the model was shown: the regions sent after each crop action."""
    turns = [t for t in record.get("turns") or [] if isinstance(t, Mapping)]
    shown = 0
    for before, after in itertools.pairwise(turns):
        action = before.get("action")
        if isinstance(action, Mapping) and action.get("kind") == "crop" and isinstance(after.get("shown"), list):
            shown += len(after["shown"])
    return shown


def figures_of(group: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A detector's episode figures (the summary's `agentic`), None when none of its records is
    agentic. Errors are left out: no episode finished."""
    records = [r for r in group if is_agentic(r) and r.get("outcome") != Outcome.ERROR]
    return figures(records) if records else None


def figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    turns = [len(r["turns"]) for r in records]
    crops = [crops_of(r) for r in records]
    ends: dict[str, int] = {}
    for record in records:
        end = str(record.get("agent_end") or "unknown")
        ends[end] = ends.get(end, 0) + 1
    return {
        "samples": len(records),
        "turns": spread(turns),
        "crops": spread(crops),
        "by_turns": by_turns(records),
        "ends": dict(sorted(ends.items())),
        "clicks": ends.get(AgentEnd.CLICK, 0),
        "refusals": ends.get(AgentEnd.REFUSAL, 0),
        "invalid_actions": ends.get(AgentEnd.INVALID, 0),
        "loops": ends.get(AgentEnd.LOOP, 0),
        "budget_exhausted": sum(ends.get(e, 0) for e in AGENT_BUDGET_ENDS),
        "wrong_formats": ends.get(AgentEnd.WRONG_FORMAT, 0),
    }


def by_turns(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Accuracy of the scored samples grouped by how many turns their episode took."""
    grouped: dict[int, list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get("outcome") in SCORED:
            grouped.setdefault(len(record["turns"]), []).append(record)
    rows = []
    for count in sorted(grouped):
        group = grouped[count]
        hits = sum(r["outcome"] == Outcome.HIT for r in group)
        rows.append(
            {
                "turns": count,
                "scored": len(group),
                "hits": hits,
                "accuracy": hits / len(group),
                "ci95": intervals.ci95(intervals.proportion(intervals.Outcomes.of(group))),
            }
        )
    return rows


def spread(values: Sequence[int]) -> dict[str, Any]:
    """Mean, p95 (nearest rank) and max of per-sample counts."""
    ordered = sorted(values)
    rank = max(1, math.ceil(0.95 * len(ordered)))
    return {"mean": round(sum(values) / len(values), 4), "p95": ordered[rank - 1], "max": ordered[-1]}


def agent_mode(info: Mapping[str, Any]) -> str | None:
    """The agent mode of a detector's description (`agent: {mode: ...}`), None for a single shot."""
    agent = info.get("agent")
    mode = agent.get("mode") if isinstance(agent, Mapping) else None
    return str(mode) if mode else None


def mode_mismatch(published_agentic: bool, mode: str | None, preset: str) -> str | None:
    """Why a published figure does not apply to a run: an agentic figure to a single-shot run, or
    the other way round (issue 39: the two are never set against each other)."""
    if published_agentic and mode is None:
        return f"the published figure for preset {preset} is agentic; this run is single-shot"
    if not published_agentic and mode is not None:
        return f"this run is agentic (agent={mode}); the published figure for preset {preset} is single-shot"
    return None
