"""agent=crop (issue 39): a detector's episodes (analysis/agentic.py): turns and crops per sample,
how the episodes ended, the accuracy by number of turns, as one section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis import agentic
from ..analysis.tracked import _figure, _numbers, name
from ..core.numbers import pct
from ._render import html_table, md_table
from .base import BlockRecords, DetectorView, HtmlPage, Section

HEADER = ["detector", "episodes", "turns mean", "turns p95", "crops mean", "crops p95", "ended", "accuracy by turns"]
ENDS = ("clicks", "refusals", "invalid_actions", "loops", "budget_exhausted", "wrong_formats")


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


class Agentic(Section):
    name = "agentic"
    title = "Agentic episodes"
    order = 30

    def figures(self, found: BlockRecords) -> Any | None:
        return agentic.figures_of(found.records)

    def terminal(self, view: DetectorView) -> list[str]:
        return agentic_lines(view.found(self.name))

    def rows(self, document: Mapping[str, Any]) -> list[list[Any]]:
        rows = []
        for key, found in self.blocks(document):
            ended = ", ".join(f"{end.replace('_', ' ')} {found[end]}" for end in ENDS if found.get(end))
            by = ", ".join(f"{r['turns']}: {pct(r['accuracy'])} ({r['hits']}/{r['scored']})" for r in found["by_turns"])
            turns, crops = found["turns"], found["crops"]
            rows.append(
                [
                    key,
                    found["samples"],
                    f"{turns['mean']:.2f}",
                    turns["p95"],
                    f"{crops['mean']:.2f}",
                    crops["p95"],
                    ended or "-",
                    by or "-",
                ]
            )
        return rows

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = self.rows(document)
        return ["### Agentic episodes", "", *md_table(HEADER, rows)] if rows else []

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        rows = self.rows(document)
        if not rows:
            return ""
        numeric = [False, True, True, True, True, True, False, False]
        return '<h2 id="agentic">Agentic episodes</h2>' + html_table(HEADER, rows, numeric)

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = self.found_in(document, key) or {}
        if not found:
            return
        yield from _numbers("agentic", {"samples": found.get("samples"), **{e: found.get(e) for e in ENDS}})
        for spread in ("turns", "crops"):
            yield from _numbers(name("agentic", spread), found.get(spread) or {})
        for row in found.get("by_turns") or ():
            yield from _figure(
                name("agentic.by_turns", row.get("turns"), "accuracy"), row.get("accuracy"), row.get("ci95")
            )

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_BLOCK

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        return _examples.with_block(
            self.name,
            {
                "samples": 2,
                "turns": {"mean": 1.5, "p95": 2, "max": 2},
                "crops": {"mean": 0.5, "p95": 1, "max": 1},
                "by_turns": [{"turns": 1, "scored": 1, "hits": 1, "accuracy": 1.0, "ci95": [0.2, 1.0]}],
                "ends": {"click": 2},
                "clicks": 2,
                "refusals": 0,
                "invalid_actions": 0,
                "loops": 0,
                "budget_exhausted": 0,
                "wrong_formats": 0,
            },
        )


SECTION = Agentic()

SCHEMA_BLOCK = {
    "type": "object",
    "description": "agent=crop: the episodes' figures (analysis/agentic.py), errors left out.",
    "required": [
        "samples",
        "turns",
        "crops",
        "by_turns",
        "ends",
        "clicks",
        "refusals",
        "invalid_actions",
        "loops",
        "budget_exhausted",
        "wrong_formats",
    ],
    "additionalProperties": False,
    "properties": {
        "samples": {"$ref": "#/$defs/count"},
        "turns": {
            "type": "object",
            "required": ["mean", "p95", "max"],
            "properties": {"mean": {"type": "number"}, "p95": {"type": "integer"}, "max": {"type": "integer"}},
            "additionalProperties": False,
            "description": "requests per sample",
        },
        "crops": {
            "type": "object",
            "required": ["mean", "p95", "max"],
            "properties": {"mean": {"type": "number"}, "p95": {"type": "integer"}, "max": {"type": "integer"}},
            "additionalProperties": False,
            "description": "crops shown per sample",
        },
        "by_turns": {
            "type": "array",
            "description": "accuracy of the scored samples by the number of turns their episode took",
            "items": {
                "type": "object",
                "required": ["turns", "scored", "hits", "accuracy", "ci95"],
                "additionalProperties": False,
                "properties": {
                    "turns": {"type": "integer", "minimum": 1},
                    "scored": {"type": "integer", "minimum": 0},
                    "hits": {"type": "integer", "minimum": 0},
                    "accuracy": {"type": "number", "minimum": 0, "maximum": 1},
                    "ci95": {"$ref": "#/$defs/ci95"},
                },
            },
        },
        "ends": {
            "type": "object",
            "description": "episodes by agent_end",
            "additionalProperties": {"type": "integer", "minimum": 0},
        },
        "clicks": {"type": "integer", "minimum": 0},
        "refusals": {"type": "integer", "minimum": 0},
        "invalid_actions": {"type": "integer", "minimum": 0},
        "loops": {"type": "integer", "minimum": 0},
        "budget_exhausted": {
            "type": "integer",
            "minimum": 0,
            "description": "episodes ended by a budget: turns, crops, crops per turn, tokens",
        },
        "wrong_formats": {"type": "integer", "minimum": 0},
    },
}
