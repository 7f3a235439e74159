"""Each public benchmark's own headline figure and slices, as its authors compute them
(analysis/headlines.py), beside the pooled accuracy; as one section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis import intervals
from ..analysis.headlines import benchmark_figures
from ..analysis.tracked import _nested
from ..core.numbers import pct
from ..core.safetext import markdown_text as md
from .base import BlockRecords, DetectorView, Section


class Benchmarks(Section):
    name = "benchmarks"
    title = "Benchmark headlines"
    order = 10

    def figures(self, found: BlockRecords) -> Any | None:
        return benchmark_figures(found.records, found.refusal_rows) or None

    def terminal(self, view: DetectorView) -> list[str]:
        lines: list[str] = []
        for found in view.found(self.name) or ():
            ci = f"; 95% CI {intervals.span(found['ci95'])}" if found.get("ci95") else ""
            parts = ", ".join(f"{k} {pct(v)}" for k, v in found["parts"].items())
            missing = f"; not in this run: {', '.join(found['missing'])}" if found["missing"] else ""
            if found.get("not_counted"):
                missing += (
                    f"; {found['not_counted']} rows not counted (skipped as the authors' code skips them, or errors)"
                )
            lines.append(
                f"  {found['dataset']} ({found['benchmark']}) headline {pct(found['value'])}: {found['label']}"
                + (f" ({parts})" if parts else "")
                + f"{ci}; pooled {pct(found['pooled_accuracy'])}{missing}"
            )
            for key, rows in found["slices"].items():
                if len(rows) < 2 and key != "category":
                    continue
                cells = ", ".join(f"{r['value']} {pct(r['accuracy'])} ({r['hits']}/{r['scored']})" for r in rows)
                lines.append(f"    by {key}: {cells}")
        return lines

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = []
        for key, found_all in self.blocks(document):
            for found in found_all:
                ci = f" ({found['not_counted']} rows not counted)" if found.get("not_counted") else ""
                parts = ", ".join(f"{k} {pct(v)}" for k, v in found["parts"].items())
                rows.append(
                    f"| {md(key)} | {md(found['dataset'])} | {md(found['benchmark'])} | {pct(found['value'])}{ci} | "
                    f"{pct(found['pooled_accuracy'])} | {parts or '-'} | {intervals.span(found.get('ci95'))} |"
                )
        if not rows:
            return []
        header = "| detector | dataset | benchmark | headline | pooled | parts | headline's 95% CI |"
        return [
            "### Benchmark headlines (as their authors compute them)",
            "",
            header,
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        return _nested("benchmarks", self.found_in(document, key))

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_BLOCK

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        headline = {
            "dataset": "ds",
            "benchmark": "screenspot-pro",
            "label": "mean over groups",
            "value": 0.5,
            "ci95": [0.1, 0.9],
            "parts": {"text": 0.6, "icon": 0.4},
            "pooled_accuracy": 0.5,
            "missing": [],
            "slices": {"group": [{"value": "Dev", "samples": 2, "scored": 2, "hits": 1, "accuracy": 0.5}]},
        }
        return _examples.with_block(self.name, [headline])


SECTION = Benchmarks()

SCHEMA_BLOCK = {
    "type": "array",
    "description": "each public benchmark's headline figure, computed as its authors do, beside the pooled "
    "accuracy (headlines.py).",
    "items": {
        "type": "object",
        "required": ["dataset", "benchmark", "label", "pooled_accuracy", "value", "parts", "missing", "slices"],
        "properties": {
            "dataset": {"type": "string"},
            "benchmark": {"type": "string"},
            "label": {"type": "string", "description": "what the headline is"},
            "pooled_accuracy": {
                "$ref": "#/$defs/fraction_or_null",
                "description": "the accuracy over this dataset's rows, under --grounding-refusal-rows",
            },
            "value": {"$ref": "#/$defs/fraction_or_null", "description": "the authors' headline figure"},
            "parts": {
                "type": "object",
                "additionalProperties": {"$ref": "#/$defs/fraction_or_null"},
                "description": "the accuracies the headline averages (splits, modalities...)",
            },
            "missing": {
                "type": "array",
                "items": {"type": "string"},
                "description": "parts the benchmark has that this run did not",
            },
            "not_counted": {
                "$ref": "#/$defs/count",
                "description": "WinDeskGround: the rows left out of the headline "
                "(the authors' code skips rows without image, "
                "instruction or box; errors)",
            },
            "slices": {
                "type": "object",
                "additionalProperties": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["value", "samples", "scored", "hits", "accuracy"],
                        "properties": {
                            "value": {"type": "string"},
                            "samples": {"$ref": "#/$defs/count"},
                            "scored": {"$ref": "#/$defs/count"},
                            "hits": {"$ref": "#/$defs/count"},
                            "accuracy": {"$ref": "#/$defs/fraction_or_null"},
                            "ci95": {"$ref": "#/$defs/ci95"},
                        },
                        "additionalProperties": False,
                    },
                },
            },
            "ci95": {
                "$ref": "#/$defs/ci95",
                "description": "the 95% interval of the headline `value` (a mean over parts: of that mean)",
            },
            "pooled_ci95": {"$ref": "#/$defs/ci95", "description": "the 95% interval of pooled_accuracy"},
        },
        "additionalProperties": False,
    },
}
