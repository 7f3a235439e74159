"""Token usage reported by served detectors and, with --grounding-price, what the run cost
(analysis/cost.py), as one section. The figures are the report's `cost` (computed with the
summary by analysis/document.figures); the terminal shows each detector's under its block."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..analysis import cost as cost_mod
from ..analysis.tracked import _numbers
from ._render import md_table
from .base import RUN, DetectorView, Section

if TYPE_CHECKING:
    from ..analysis.document import RunRecords

HEADER = ["detector", "samples with usage", "prompt tokens", "completion tokens", "cost", "per 1,000 samples"]


def usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.4g}"


class Cost(Section):
    name = "cost"
    title = "Tokens and cost"
    level = RUN
    order = 70

    def run_figures(self, found: RunRecords) -> Mapping[str, Any] | None:
        """The report's `cost`: each summary block's token usage and, with --grounding-price, its
        cost (None: no detector reported usage and no price was set)."""
        from ..analysis.metrics import summary_key

        price = found.scoring.price
        return cost_mod.document(cost_mod.summarize(found.records, price, key=summary_key), price)

    def terminal(self, view: DetectorView) -> list[str]:
        return cost_mod.lines(view.cost, view.price)

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        cost = document.get(self.name)
        if not cost or not cost.get("detectors"):
            return []
        rows = [
            [
                name,
                f"{block['with_usage']}/{block['samples']}",
                f"{block['prompt_tokens']:,}",
                f"{block['completion_tokens']:,}",
                usd(block["cost_usd"]),
                usd(block["cost_per_1000_samples_usd"]),
            ]
            for name, block in cost["detectors"].items()
        ]
        return ["### Tokens and cost", "", *md_table(HEADER, rows)]

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = ((document.get(self.name) or {}).get("detectors") or {}).get(key) or {}
        return _numbers("cost", found)

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_REPORT["cost"]

    def schema_defs(self) -> Mapping[str, Any]:
        return SCHEMA_DEFS

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        usage = {
            "samples": 2,
            "with_usage": 2,
            "prompt_tokens": 2000,
            "completion_tokens": 20,
            "total_tokens": 2020,
            "cost_usd": None,
            "cost_per_1000_samples_usd": None,
        }
        return {
            **_examples.document(_examples.plain(), self),
            "cost": {"price": None, "detectors": {_examples.KEY: usage}},
        }


SECTION = Cost()

SCHEMA_REPORT = {
    "cost": {
        "description": "Token usage reported by served detectors (a record's meta.usage), summed per "
        "summary block, and with --grounding-price the cost. Absent when no detector reported "
        "usage and no price was set (null in older reports).",
        "oneOf": [
            {"type": "null"},
            {
                "type": "object",
                "required": ["price", "detectors"],
                "properties": {
                    "price": {
                        "oneOf": [
                            {"type": "null"},
                            {
                                "type": "object",
                                "required": ["prompt_per_million_usd", "completion_per_million_usd"],
                                "properties": {
                                    "prompt_per_million_usd": {"type": "number", "minimum": 0},
                                    "completion_per_million_usd": {"type": "number", "minimum": 0},
                                },
                                "additionalProperties": False,
                            },
                        ]
                    },
                    "detectors": {"type": "object", "additionalProperties": {"$ref": "#/$defs/usage"}},
                },
                "additionalProperties": False,
            },
        ],
    }
}
SCHEMA_DEFS = {
    "usage": {
        "type": "object",
        "required": [
            "samples",
            "with_usage",
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
            "cost_usd",
            "cost_per_1000_samples_usd",
        ],
        "properties": {
            "samples": {"$ref": "#/$defs/count", "description": "the block's records."},
            "with_usage": {"$ref": "#/$defs/count", "description": "records whose detector reported token usage."},
            "prompt_tokens": {"$ref": "#/$defs/count"},
            "completion_tokens": {"$ref": "#/$defs/count"},
            "total_tokens": {"$ref": "#/$defs/count"},
            "cost_usd": {
                "type": ["number", "null"],
                "minimum": 0,
                "description": "with --grounding-price: the cost of the tokens counted.",
            },
            "cost_per_1000_samples_usd": {
                "type": ["number", "null"],
                "minimum": 0,
                "description": "cost_usd per 1,000 of the samples with usage.",
            },
        },
        "additionalProperties": False,
    }
}
