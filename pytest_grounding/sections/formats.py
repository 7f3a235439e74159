"""Which coordinate format a model answers best (issue 56, `--grounding-perturb format`): per
format asked the accuracy with its interval, the paired change against the preset's own prompt and
format with the flips, the spread across formats (one robustness figure) and the best format, in
the terminal, the markdown summary, the HTML page (and its detector card), the trackers and the
board (analysis/board.misses_of). Figures: analysis/formats.py, over the robustness block's pairs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

from ..analysis import formats
from ..analysis.tracked import _figure
from ..core.numbers import pct, points
from ..core.safetext import markdown_text as md
from ._render import html_table, md_table
from .base import BlockRecords, DetectorView, HtmlPage, Section

HEAD = ["format", "n", "accuracy (95% CI)", "change vs preset (95% CI)", "McNemar p", "flips -/+"]


def _ci(bounds: Any) -> str:
    return f" ({pct(bounds[0])}-{pct(bounds[1])})" if bounds else ""


def _change(row: Mapping[str, Any]) -> str:
    if row.get("delta") is None:
        return "-"
    bounds = row.get("delta_ci95")
    span = f" ({points(bounds[0])} to {points(bounds[1])})" if bounds else ""
    return f"{points(row['delta'])}{span}"


def rows_of(found: Mapping[str, Any]) -> list[list[str]]:
    own = found.get("own_format") or "?"
    rows = [[f"preset ({own})", "-", f"{pct(found.get('own_accuracy'))}{_ci(found.get('own_ci95'))}", "-", "-", "-"]]
    for row in found["formats"]:
        p = "-" if row["mcnemar_p"] is None else f"{row['mcnemar_p']:.3f}"
        rows.append(
            [
                row["format"] + (" (best)" if row["format"] == found.get("best") else ""),
                str(row["scored"]),
                f"{pct(row['accuracy'])}{_ci(row['ci95'])}",
                _change(row),
                p,
                f"{row['hit_to_miss']}/{row['miss_to_hit']}",
            ]
        )
    return rows


def spread_text(found: Mapping[str, Any]) -> str:
    spread = found.get("spread_points")
    if spread is None:
        return ""
    return f"spread across formats {spread:.1f} points (std; range {found['range_points']:.1f})"


class Formats(Section):
    name = "formats"
    title = "Which format the model answers best"
    order = 41  # beside the robustness table

    def figures(self, found: BlockRecords) -> Any | None:
        return formats.figures(found.with_variants)

    def terminal(self, view: DetectorView) -> list[str]:
        found = view.found(self.name)
        if not found:
            return []
        line = f"  answer formats  {formats.best_text(found)}"
        spread = spread_text(found)
        cells = "  ".join(f"{r['format']} {pct(r['accuracy'])}" for r in found["formats"])
        own = f"preset ({found.get('own_format') or '?'}) {pct(found.get('own_accuracy'))}"
        return [line + (f"; {spread}" if spread else ""), f"    {own}  {cells}"]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        lines: list[str] = []
        for key, found in self.blocks(document):
            spread = spread_text(found)
            said = formats.best_text(found) + (f"; {spread}" if spread else "")
            lines += [f"### Which format {md(key)} answers best", "", md(said), "", *md_table(HEAD, rows_of(found)), ""]
        return lines

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        parts = []
        for key, found in self.blocks(document):
            spread = spread_text(found)
            parts.append(
                f"<h3>{escape(key)}</h3><p>{escape(formats.best_text(found))}"
                f"{'; ' + escape(spread) if spread else ''}</p>"
                + html_table(HEAD, rows_of(found), [False] + [True] * (len(HEAD) - 1))
            )
        return '<h2 id="formats">Which format the model answers best</h2>' + "".join(parts) if parts else ""

    def card(self, document: Mapping[str, Any], key: str) -> str:
        found = self.found_in(document, key)
        return escape(formats.best_text(found)) if found else ""

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = self.found_in(document, key) or {}
        for row in found.get("formats") or ():
            yield from _figure(f"formats.{row['format']}.accuracy", row.get("accuracy"), row.get("ci95"))
            yield from _figure(f"formats.{row['format']}.delta", row.get("delta"), row.get("delta_ci95"))
        yield from _figure("formats.own_accuracy", found.get("own_accuracy"), found.get("own_ci95"))
        if isinstance(found.get("spread_points"), (int, float)):
            yield "formats.spread_points", float(found["spread_points"])

    def schema(self) -> Mapping[str, Any]:
        share = {"$ref": "#/$defs/fraction_or_null"}
        count = {"$ref": "#/$defs/count"}
        number = {"type": ["number", "null"]}
        return {
            "type": "object",
            "description": "issue 56: --grounding-perturb format: each coordinate format asked against the preset's "
            "own (the originals), the spread across formats (std, points) and the best format (analysis/formats.py).",
            "required": ["own_format", "own_accuracy", "own_ci95", "formats", "spread_points", "range_points", "best"],
            "properties": {
                "own_format": {"type": ["string", "null"]},
                "own_accuracy": share,
                "own_ci95": {"$ref": "#/$defs/ci95"},
                "formats": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["format", "label", "scored", "accuracy", "ci95", "pairs", "delta"],
                        "properties": {
                            "format": {"type": "string"},
                            "label": {"type": "string"},
                            "scored": count,
                            "accuracy": share,
                            "ci95": {"$ref": "#/$defs/ci95"},
                            "pairs": count,
                            "delta": number,
                            "delta_ci95": {"type": ["array", "null"], "items": {"type": "number"}},
                            "mcnemar_p": number,
                            "hit_to_miss": count,
                            "miss_to_hit": count,
                        },
                        "additionalProperties": False,
                    },
                },
                "spread_points": number,
                "range_points": number,
                "best": {"type": ["string", "null"], "description": "a format, 'preset' (its own), or null on a tie"},
            },
            "additionalProperties": False,
        }

    def example(self) -> Mapping[str, Any]:
        from . import testing

        def variant(uid: str, outcome: str, fmt: str) -> dict[str, Any]:
            return testing.record(
                f"{uid}~fmt-{fmt}",
                outcome,
                variant=f"fmt-{fmt}",
                axis="format",
                perturbation=f"format:answer_format={fmt}",
                original_uid=uid,
            )

        records = [
            testing.record("s1", "miss", meta={"asked_format": "pixels"}),
            testing.record("s2", "miss", meta={"asked_format": "pixels"}),
            variant("s1", "hit", "rel1"),
            variant("s2", "hit", "rel1"),
            variant("s1", "miss", "rel1000"),
            variant("s2", "hit", "rel1000"),
        ]
        return testing.document(records, self)


SECTION = Formats()
