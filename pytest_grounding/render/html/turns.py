"""A model-driven episode in the HTML gallery (issue 39): each crop the model asked for drawn on the
whole screen, numbered in order, and the list of its turns (what each showed, the answer, the action
read, latency and tokens). Numbers only reach the SVG; texts are escaped."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from ...core.numbers import ms

CROP_COLOURS = ("#1c64f2", "#7e3af2", "#0e9f6e", "#c27803", "#d61f69")


def _region(value: Any) -> list[float] | None:
    numbers = isinstance(value, list) and len(value) == 4
    if numbers and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    return None


def _turns(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    turns = record.get("turns")
    return [t for t in turns if isinstance(t, Mapping)] if isinstance(turns, list) else []


def crop_marks(record: Mapping[str, Any], unit: float) -> str:
    """The crops shown after the first turn, as numbered rectangles in screen pixels."""
    out = []
    number = 0
    for turn in _turns(record)[1:]:
        for shown in turn.get("shown") or []:
            region = _region(shown)
            if region is None:
                continue
            number += 1
            x1, y1, x2, y2 = region
            colour = CROP_COLOURS[(number - 1) % len(CROP_COLOURS)]
            out.append(
                f'<rect x="{x1}" y="{y1}" width="{x2 - x1}" height="{y2 - y1}" fill="none" stroke="{colour}" '
                f'stroke-width="2" stroke-dasharray="6 2" vector-effect="non-scaling-stroke"/>'
                f'<text x="{x1 + 3 * unit:.1f}" y="{y1 + 14 * unit:.1f}" font-size="{13 * unit:.1f}" '
                f'fill="{colour}" font-weight="700">{number}</text>'
            )
    return "".join(out)


def turns_list(record: Mapping[str, Any]) -> str:
    """The episode's turns, in order; '' for a single-shot record."""
    turns = _turns(record)
    if not turns:
        return ""
    items = []
    for turn in turns:
        action: Mapping[str, Any] = turn["action"] if isinstance(turn.get("action"), Mapping) else {}
        kind = str(action.get("kind", "?"))
        detail = ""
        if kind == "crop":
            detail = " " + ", ".join(str(r) for r in action.get("crops") or [] if _region(r))
        elif kind == "click" and isinstance(action.get("point"), list):
            detail = " (" + ", ".join(f"{v:g}" for v in action["point"] if isinstance(v, (int, float))) + ")"
        elif action.get("problem"):
            detail = f": {action['problem']}"
        tokens: Mapping[str, Any] = turn["tokens"] if isinstance(turn.get("tokens"), Mapping) else {}
        spent = [f"{tokens[k]} {k}" for k in ("prompt", "completion") if isinstance(tokens.get(k), int)]
        latency = turn.get("latency_ms")
        facts = [f"{ms(latency)} ms" if isinstance(latency, (int, float)) else "", ", ".join(spent)]
        answer = turn.get("answer")
        items.append(
            f'<li><b>{escape(kind)}</b>{escape(detail)} <span class="muted">{escape(" · ".join(filter(None, facts)))}'
            f"</span>" + (f'<div class="raw mono">{escape(str(answer)[:600])}</div>' if answer else "") + "</li>"
        )
    end = escape(str(record.get("agent_end") or ""))
    return (
        f'<div class="turns"><p>episode: {len(turns)} turn(s), ended by <b>{end}</b></p><ol>{"".join(items)}</ol></div>'
    )
