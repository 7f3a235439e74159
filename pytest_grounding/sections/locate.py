"""The element-at-click task (--grounding-task locate): detection and false-positive rates,
attempts and which transform answered (analysis/metrics.locate_figures), as one section. Its
terminal lines stand in for the grounding accuracy lines of a locate block."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis.metrics import locate_figures
from ..analysis.tracked import _numbers, name
from ..core.numbers import pct
from ..core.record import Outcome, Task
from ._render import md_table
from .base import BlockRecords, DetectorView, Section

HEADER = ["detector", "hit rate", "IoU threshold", "detection rate", "false positives", "mean attempts", "by transform"]


def ci(bounds: Any) -> str:
    from ..analysis.intervals import span

    return f" [95% CI {span(bounds)}]" if bounds else ""


class Locate(Section):
    name = "locate"
    title = "Element at click"
    order = 0

    def figures(self, found: BlockRecords) -> Any | None:
        return locate_figures(found.records) if found.task == Task.LOCATE else None

    def terminal(self, view: DetectorView) -> list[str]:
        """The table columns read hits = IoU at the threshold, wrong = no box found."""
        figures = view.found(self.name)
        if not figures:
            return []
        block = view.block
        iou = "-" if block["mean_iou"] is None else f"{block['mean_iou']:.3f} over {block['with_box']} boxes"
        attempts = "-" if figures["mean_attempts"] is None else f"{figures['mean_attempts']:.2f}"
        return [
            f"  element at click: hit rate {pct(block['accuracy'])}{ci(block.get('ci95'))} at IoU >= "
            f"{figures['threshold']} "
            f"({block['hits']}/{block['scored']} scored)   detection rate {pct(figures['detection_rate'])}   "
            f"false positives {pct(figures['false_positive_rate'])}",
            f"  samples {block['samples']}   hits {block['hits']}   false positives {block['misses']}   "
            f"not found {block[Outcome.WRONG_FORMAT]}   errors {block['errors']}   mean IoU {iou}",
            f"  mean attempts {attempts}   answered by transform: {by_transform(figures)}",
        ]

    def rows(self, document: Mapping[str, Any]) -> list[list[Any]]:
        summary = document.get("summary") or {}
        rows = []
        for key, figures in self.blocks(document):
            attempts = figures.get("mean_attempts")
            rows.append(
                [
                    key,
                    pct(summary[key].get("accuracy")),
                    figures.get("threshold"),
                    pct(figures.get("detection_rate")),
                    pct(figures.get("false_positive_rate")),
                    "-" if attempts is None else f"{attempts:.2f}",
                    by_transform(figures),
                ]
            )
        return rows

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = self.rows(document)
        return ["### Element at click", "", *md_table(HEADER, rows)] if rows else []

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = self.found_in(document, key) or {}
        yield from _numbers("locate", {k: v for k, v in found.items() if k != "by_transform"})
        for transform, slot in (found.get("by_transform") or {}).items():
            yield from _numbers(name("locate.by_transform", transform), slot)

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_BLOCK

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        records = [
            _examples.record("s1", "hit", task="locate", iou=0.8, threshold=0.5, attempts=1, transform="original"),
            _examples.record("s2", "miss", task="locate", iou=0.1, threshold=0.5, attempts=2, transform="zoom"),
        ]
        return _examples.document(records, self)


def by_transform(figures: Mapping[str, Any]) -> str:
    slots = figures.get("by_transform") or {}
    return ", ".join(f"{name} {slot['samples']} ({slot['hits']} hits)" for name, slot in slots.items()) or "-"


SECTION = Locate()

SCHEMA_BLOCK = {
    "type": "object",
    "description": "The element-at-click task only.",
    "required": ["threshold", "detection_rate", "false_positive_rate", "mean_attempts", "by_transform"],
    "properties": {
        "threshold": {"type": ["number", "null"]},
        "detection_rate": {"$ref": "#/$defs/fraction_or_null"},
        "false_positive_rate": {"$ref": "#/$defs/fraction_or_null"},
        "mean_attempts": {"$ref": "#/$defs/number_or_null"},
        "by_transform": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["samples", "hits"],
                "properties": {"samples": {"$ref": "#/$defs/count"}, "hits": {"$ref": "#/$defs/count"}},
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}
