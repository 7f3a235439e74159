"""Parser coverage (issue 56): for a parse-then-match detector (`ocr`, `omniparser`, any that
declares its candidates: core/coverage.py), the share of targets some parsed element covers (the
accuracy's ceiling for that parser) with its interval clustered by screen, overall and by slice,
and its misses split into `not_detected` (the parser never saw the target) and `not_matched` (it
did; the matcher chose another element or none): what to improve first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..analysis import intervals
from ..analysis.tracked import _figure
from ..core.coverage import PARSER_MISSES
from ..core.numbers import pct
from ..core.safetext import markdown_text as md
from ._render import html_table, md_table
from .base import BlockRecords, DetectorView, HtmlPage, Section

SLICES = ("element_type", "platform", "app_category", "size", "dataset")


def _share(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    outcomes = intervals.Outcomes.of(records)
    found = intervals.proportion(outcomes.judged(bool(r.get("parser_covered")) for r in outcomes.records))
    return {
        "samples": len(outcomes),
        "covered": sum(1 for r in outcomes.records if r.get("parser_covered")),
        "coverage": found.estimate if found is not None and len(outcomes) else None,
        "ci95": intervals.ci95(found) if len(outcomes) else None,
    }


def coverage_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """None when no record of the block says whether its target was covered."""
    judged = [r for r in records if isinstance(r.get("parser_covered"), bool) and r.get("outcome") != "error"]
    if not judged:
        return None
    misses = {kind: sum(1 for r in judged if r.get("parser_miss") == kind) for kind in PARSER_MISSES}
    by: dict[str, dict[str, Any]] = {}
    for key in SLICES:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for record in judged:
            groups.setdefault(str(record.get(key)), []).append(record)
        if len(groups) > 1 or key == "element_type":
            by[key] = {value: _share(group) for value, group in sorted(groups.items())}
    hits = sum(1 for r in judged if r.get("outcome") == "hit")
    return {**_share(judged), "hits": hits, "misses": misses, "by": by}


def line(found: Mapping[str, Any]) -> str:
    m = found["misses"]
    ci = found.get("ci95")
    span = f" ({pct(ci[0])}-{pct(ci[1])})" if ci else ""
    slices = "; ".join(f"{value} {pct(s['coverage'])}" for value, s in (found["by"].get("element_type") or {}).items())
    return (
        f"  parser coverage  {pct(found['coverage'])}{span} of targets covered by a parsed element "
        f"({found['covered']} of {found['samples']}: the accuracy's ceiling); misses not_detected "
        f"{m['not_detected']}, not_matched {m['not_matched']}" + (f"; by element type: {slices}" if slices else "")
    )


HEAD = ["detector", "samples", "coverage (95% CI)", "hits", "not_detected", "not_matched"]


def _row(key: str, f: Mapping[str, Any]) -> list[Any]:
    ci = f.get("ci95")
    span = f" ({pct(ci[0])}-{pct(ci[1])})" if ci else ""
    return [key, f["samples"], f"{pct(f['coverage'])}{span}", f["hits"], *(f["misses"][k] for k in PARSER_MISSES)]


def _slice_rows(found: Mapping[str, Any]) -> list[list[Any]]:
    return [
        [key, value, s["samples"], pct(s["coverage"])]
        for key, values in found["by"].items()
        for value, s in values.items()
    ]


class Coverage(Section):
    name = "coverage"
    title = "Parser coverage"
    order = 48

    def figures(self, found: BlockRecords) -> Any | None:
        return coverage_figures(found.records)

    def terminal(self, view: DetectorView) -> list[str]:
        found = view.found(self.name)
        return [line(found)] if found else []

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        blocks = self.blocks(document)
        if not blocks:
            return []
        out = ["### Parser coverage", "", *md_table(HEAD, [[md(k), *_row(k, f)[1:]] for k, f in blocks]), ""]
        for key, found in blocks:
            out += [
                f"{md(key)} by slice:",
                "",
                *md_table(["slice", "value", "samples", "coverage"], _slice_rows(found)),
                "",
            ]
        return out

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        blocks = self.blocks(document)
        if not blocks:
            return ""
        table = html_table(HEAD, [_row(k, f) for k, f in blocks], [False] + [True] * (len(HEAD) - 1))
        slices = "".join(
            html_table(["slice", "value", "samples", "coverage"], _slice_rows(f), [False, False, True, True])
            for _, f in blocks
        )
        return '<h2 id="coverage">Parser coverage</h2>' + table + slices

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = self.found_in(document, key) or {}
        yield from _figure("coverage.coverage", found.get("coverage"), found.get("ci95"))
        for kind, count in (found.get("misses") or {}).items():
            yield f"coverage.{kind}", float(count)

    def schema(self) -> Mapping[str, Any]:
        count = {"$ref": "#/$defs/count"}
        share: dict[str, Any] = {
            "type": "object",
            "required": ["samples", "covered", "coverage", "ci95"],
            "properties": {
                "samples": count,
                "covered": count,
                "coverage": {"$ref": "#/$defs/fraction_or_null"},
                "ci95": {"$ref": "#/$defs/ci95"},
            },
            "additionalProperties": False,
        }
        return {
            "type": "object",
            "description": "issue 56: the share of targets a parsed element covers (box holds the target's centre "
            "or IoU >= 0.5; core/coverage.py), by slice, and the misses by not_detected / not_matched.",
            "required": ["samples", "covered", "coverage", "ci95", "hits", "misses", "by"],
            "properties": {
                **share["properties"],
                "hits": count,
                "misses": {"type": "object", "additionalProperties": count},
                "by": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": share}},
            },
            "additionalProperties": False,
        }

    def example(self) -> Mapping[str, Any]:
        from . import testing

        records = [
            testing.record("s1", "hit", parser_covered=True, parser_candidates=3),
            testing.record("s2", "miss", parser_covered=True, parser_candidates=3, parser_miss="not_matched"),
            testing.record(
                "s3", "miss", element_type="text", parser_covered=False, parser_candidates=3, parser_miss="not_detected"
            ),
        ]
        return testing.document(records, self)


SECTION = Coverage()
