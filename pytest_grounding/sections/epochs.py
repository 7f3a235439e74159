"""--grounding-epochs N: the figures over repeated answers (analysis/epochs.py) as one section:
a detector block's two lines, the markdown's and the HTML page's "Repeated sampling" table, the
tracker's metrics."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis import epochs
from ..analysis.intervals import span
from ..analysis.tracked import _figure
from ..core.numbers import pct
from ._render import html_table, md_table
from .base import BlockRecords, DetectorView, HtmlPage, Section

HEADER = ["detector", "epochs", "samples", "mean accuracy", "pass@k", "majority", "outcome changed"]


def ci(bounds: Any) -> str:
    return f" [95% CI {span(bounds)}]" if bounds else ""


class Epochs(Section):
    name = "epochs"
    title = "Repeated sampling"
    order = 20

    def figures(self, found: BlockRecords) -> Any | None:
        return epochs.figures(found.group)

    def terminal(self, view: DetectorView) -> list[str]:
        found = view.found(self.name)
        if not found:
            return []
        k = found["epochs"]
        return [
            f"  epochs {k} over {found['samples']} samples: mean accuracy {pct(found['mean_accuracy'])}"
            f"{ci(found.get('mean_ci95'))}   pass@{k} {pct(found['pass_at_k']['accuracy'])}"
            f"{ci(found['pass_at_k'].get('ci95'))}   majority {pct(found['majority']['accuracy'])}"
            f"{ci(found['majority'].get('ci95'))}",
            f"  outcome changed across epochs on {found['changed']}/{found['samples']} samples "
            f"(stability {pct(found['stability'])})",
        ]

    def rows(self, document: Mapping[str, Any]) -> list[list[Any]]:
        return [
            [
                name,
                found["epochs"],
                found["samples"],
                f"{pct(found['mean_accuracy'])} ({span(found.get('mean_ci95'))})",
                f"{pct(found['pass_at_k']['accuracy'])} ({span(found['pass_at_k'].get('ci95'))})",
                f"{pct(found['majority']['accuracy'])} ({span(found['majority'].get('ci95'))})",
                f"{found['changed']} ({pct(found['stability'])})",
            ]
            for name, found in self.blocks(document)
        ]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = self.rows(document)
        return ["### Repeated sampling", "", *md_table(HEADER, rows)] if rows else []

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        rows = self.rows(document)
        if not rows:
            return ""
        numeric = [False, True, True, True, True, True, True]
        return '<h2 id="epochs">Repeated sampling</h2>' + html_table(HEADER, rows, numeric)

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = self.found_in(document, key) or {}
        yield from _figure("epochs.mean_accuracy", found.get("mean_accuracy"), found.get("mean_ci95"))
        pass_at_k = found.get("pass_at_k") or {}
        yield from _figure("epochs.pass_at_k", pass_at_k.get("accuracy"), pass_at_k.get("ci95"))

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_BLOCK

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        records = [
            _examples.record(f"s{i}-e{k}", outcome, epoch=k, point=[float(k), 1.0])
            for i, outcomes in ((1, ("hit", "miss")), (2, ("hit", "hit")))
            for k, outcome in enumerate(outcomes, start=1)
        ]
        return _examples.document(records, self)


SECTION = Epochs()

SCHEMA_BLOCK = {
    "type": "object",
    "description": "--grounding-epochs N: figures over the repeated answers (analysis/epochs.py).",
    "required": [
        "epochs",
        "samples",
        "scored_epochs",
        "mean_accuracy",
        "mean_ci95",
        "pass_at_k",
        "majority",
        "stability",
        "changed",
    ],
    "properties": {
        "epochs": {"$ref": "#/$defs/count", "description": "N: the most epochs a sample ran"},
        "samples": {"$ref": "#/$defs/count", "description": "samples with at least one scored epoch"},
        "scored_epochs": {"$ref": "#/$defs/count"},
        "mean_accuracy": {"$ref": "#/$defs/fraction_or_null", "description": "hits over every scored epoch"},
        "mean_ci95": {"$ref": "#/$defs/ci95"},
        "pass_at_k": {
            "type": "object",
            "required": ["accuracy", "ci95", "hits"],
            "properties": {
                "k": {"$ref": "#/$defs/count"},
                "accuracy": {"$ref": "#/$defs/fraction_or_null"},
                "ci95": {"$ref": "#/$defs/ci95"},
                "hits": {"$ref": "#/$defs/count"},
                "tie_rule": {"type": "string"},
            },
            "additionalProperties": False,
            "description": "samples hit in at least one of their k = N epochs",
        },
        "majority": {
            "type": "object",
            "required": ["accuracy", "ci95", "hits"],
            "properties": {
                "k": {"$ref": "#/$defs/count"},
                "accuracy": {"$ref": "#/$defs/fraction_or_null"},
                "ci95": {"$ref": "#/$defs/ci95"},
                "hits": {"$ref": "#/$defs/count"},
                "tie_rule": {"type": "string"},
            },
            "additionalProperties": False,
            "description": "samples whose consensus answer (most common; tie: the first given) is a hit",
        },
        "stability": {
            "$ref": "#/$defs/fraction_or_null",
            "description": "share of samples whose outcome is not the same in every epoch",
        },
        "changed": {"$ref": "#/$defs/count", "description": "samples whose outcome changed across epochs"},
    },
    "additionalProperties": False,
}
