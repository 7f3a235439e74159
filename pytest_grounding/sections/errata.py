"""--grounding-errata (analysis/errata.py): each detector's corrected accuracy beside the official one,
as one section. The report's `errata` block is made by analysis/document.py from the run's records;
this section shows it (docs: audit)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import TYPE_CHECKING, Any

from ..core.numbers import pct
from ._render import md_table
from .base import RUN, HtmlPage, Section

if TYPE_CHECKING:
    from ..analysis.document import RunRecords
    from ..analysis.result import RunResult

HEADER = ["detector", "official", "hits", "corrected", "hits", "dropped", "boxes fixed", "verdicts changed"]
FIGURES = ("official", "corrected", "dropped", "refixed", "flipped", "instruction_only")


def _rows(found: Mapping[str, Any]) -> list[list[Any]]:
    return [
        [
            name,
            pct(t["official"]),
            f"{t['hits']}/{t['n']}",
            pct(t["corrected"]),
            f"{t['corrected_hits']}/{t['corrected_n']}",
            t["dropped"],
            t["refixed"],
            t["flipped"],
        ]
        for name, t in found["detectors"].items()
    ]


def _title(found: Mapping[str, Any]) -> str:
    from ..analysis.errata import applied_text

    return f"Errata {found['file']} ({applied_text(found)})"


class Errata(Section):
    name = "errata"
    title = "Errata"
    level = RUN
    order = 85

    def run_figures(self, found: RunRecords) -> Mapping[str, Any] | None:
        errata = found.scoring.errata
        if errata is None:
            return None
        from ..analysis import errata as errata_mod

        return errata_mod.block(found.records, errata)

    def run_terminal(self, result: RunResult) -> list[str]:
        found = result.run.get(self.name)
        if not isinstance(found, Mapping) or not result.records:
            return []
        from ..analysis import errata as errata_mod

        return ["", *errata_mod.summary_lines(found)]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        found = document.get(self.name)
        if not found:
            return []
        note = (
            "Official: the run as scored. Corrected: dropped samples left out, fixed boxes judged again on the same "
            "click; a fixed instruction alone keeps its verdict."
        )
        return [f"### {_title(found)}", "", *md_table(HEADER, _rows(found)), note, ""]

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        found = document.get(self.name)
        if not found:
            return ""
        head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
        body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in _rows(found))
        return f'<h3 id="errata">{escape(_title(found))}</h3><table><tr>{head}</tr>{body}</table>'

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        """The official and corrected accuracy and the counts, for the detector `key`."""
        found = document.get(self.name) or {}
        detector = ((document.get("summary") or {}).get(key) or {}).get("detector", key)
        figures = (found.get("detectors") or {}).get(detector) or {}
        for figure in FIGURES:
            value = figures.get(figure)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                yield f"errata.{figure}", float(value)

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA

    def example(self) -> Mapping[str, Any]:
        from ..analysis import errata as errata_mod
        from . import testing

        records = testing.plain()
        errata = errata_mod.parse(
            b'{"id": "s2", "action": "drop", "reason": "two Save buttons"}\n', "example", "e.jsonl"
        )
        return {**testing.document(records, self), self.name: errata_mod.block(records, errata)}


SECTION = Errata()

_COUNT = {"type": "integer", "minimum": 0}
SCHEMA = {
    "description": "--grounding-errata: the errata file applied (its path and sha256 digest, its counts) and, per "
    "detector, the official accuracy as the run scored it beside the corrected one (dropped samples left out, "
    "fixed boxes judged again on the same click). Absent without the option.",
    "type": "object",
    "required": ["file", "digest", "entries", "drops", "fixes", "detectors"],
    "properties": {
        "file": {"type": "string"},
        "digest": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "entries": _COUNT,
        "drops": {**_COUNT, "description": "the file's drops that applied to a record of this run"},
        "fixes": {**_COUNT, "description": "the file's fixes that applied to a record of this run"},
        "unmatched": {
            "description": "the file's ids that match no scored record of this run (not applied; absent from "
            "reports written before it was kept)",
            "type": "array",
            "items": {"type": "string"},
        },
        "corrections": {
            "description": "the errata file's entries as applied (one per sample id), so that merge corrects the "
            "merged records with the same file",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "action"],
                "properties": {
                    "id": {"type": "string"},
                    "action": {"enum": ["fix", "drop"]},
                    "bbox": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4},
                    "instruction": {"type": "string"},
                    "reason": {"type": "string"},
                },
            },
        },
        "detectors": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": [
                    "n",
                    "hits",
                    "official",
                    "corrected_n",
                    "corrected_hits",
                    "corrected",
                    "dropped",
                    "refixed",
                    "flipped",
                    "instruction_only",
                ],
                "properties": {
                    "n": _COUNT,
                    "hits": _COUNT,
                    "official": {"type": ["number", "null"]},
                    "corrected_n": _COUNT,
                    "corrected_hits": _COUNT,
                    "corrected": {"type": ["number", "null"]},
                    "dropped": _COUNT,
                    "refixed": _COUNT,
                    "flipped": _COUNT,
                    "instruction_only": _COUNT,
                },
            },
        },
    },
}
