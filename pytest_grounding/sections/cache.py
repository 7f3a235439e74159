"""--grounding-cache: per detector, answers from the answer cache and answers stored in it
(analysis/cache_counts.py), as one section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis import cache_counts
from ..analysis.tracked import _numbers
from ._render import html_table, md_table
from .base import BlockRecords, DetectorView, HtmlPage, Section

HEADER = ["detector", "from the cache", "stored", "not from the cache", "not stored (write failed)"]


class Cache(Section):
    name = "cache"
    title = "Answer cache"
    order = 60

    def figures(self, found: BlockRecords) -> Any | None:
        return cache_counts.counts(found.records)

    def terminal(self, view: DetectorView) -> list[str]:
        return cache_counts.summary_lines(view.found(self.name))

    def rows(self, document: Mapping[str, Any]) -> list[list[Any]]:
        return [[name, f["hits"], f["stored"], f["asked"], f.get("not_stored", 0)] for name, f in self.blocks(document)]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = self.rows(document)
        return ["### Answer cache", "", *md_table(HEADER, rows)] if rows else []

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        rows = self.rows(document)
        if not rows:
            return ""
        return '<h2 id="cache">Answer cache</h2>' + html_table(HEADER, rows, [False, True, True, True, True])

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        return _numbers("cache", self.found_in(document, key) or {})

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_BLOCK

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        records = [
            _examples.record("s1", "hit", meta={"answer_cache": "hit"}),
            _examples.record("s2", "miss", meta={"answer_cache": "stored"}),
        ]
        return _examples.document(records, self)


SECTION = Cache()

SCHEMA_BLOCK = {
    "type": "object",
    "description": "--grounding-cache: answers from the answer cache (hits), answers stored in it, answers not "
    "from it (analysis/cache_counts.py); absent when the cache played no part.",
    "required": ["hits", "stored", "asked"],
    "properties": {
        "hits": {"$ref": "#/$defs/count"},
        "stored": {"$ref": "#/$defs/count"},
        "asked": {"$ref": "#/$defs/count"},
        "not_stored": {
            "$ref": "#/$defs/count",
            "description": "answers the store could not write (a full or read-only folder); absent when none.",
        },
    },
    "additionalProperties": False,
}
