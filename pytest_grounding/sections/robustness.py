"""--grounding-perturb: each variant against the same samples' originals (analysis/robustness.py)
and --grounding-max-drop's gates, as one section: the terminal's table, the markdown's and the
HTML page's robustness sections, the tracker's metrics per variant."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..analysis import robustness
from ..analysis.tracked import _figure, _number, name
from . import robustness_text as text
from .base import BlockRecords, DetectorView, HtmlPage, Section


class Robustness(Section):
    name = "robustness"
    title = "Robustness"
    order = 40
    html_inline = False  # the page has its own section: chart, table and the flipped pairs' screens

    def figures(self, found: BlockRecords) -> Any | None:
        return robustness.figures(found.with_variants)

    def judge(self, summary: Mapping[str, Any], scoring: Any) -> list[Any]:
        return list(robustness.judge(getattr(scoring, "max_drops", ()), summary))

    def verdict_entries(self, verdicts: Sequence[Any]) -> Mapping[str, Any]:
        return robustness.gates_entry(verdicts)  # `robustness_gates`, where a max-drop gate was set

    def read_verdicts(self, document: Mapping[str, Any]) -> list[Any]:
        return robustness.verdicts_of(document)

    def terminal(self, view: DetectorView) -> list[str]:
        return text.terminal_lines(view.found(self.name))

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        return text.markdown_lines(document.get("summary") or {})

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        from . import robustness_page

        return robustness_page.section(document, page)

    def thumbnail_records(self, document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        from . import robustness_page

        return robustness_page.flip_records(document)

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        """Per variant: its accuracy, the originals', the change with its interval, McNemar's p,
        the pairs and the flips each way."""
        found = self.found_in(document, key) or {}
        for row in found.get("variants") or ():
            prefix = name("robustness", row.get("label"))
            yield from _figure(f"{prefix}.accuracy", row.get("accuracy"), None)
            yield from _figure(f"{prefix}.original_accuracy", row.get("original_accuracy"), None)
            yield from _figure(f"{prefix}.delta", row.get("delta"), row.get("delta_ci95"))
            for figure in ("mcnemar_p", "pairs", "no_variant"):
                if (number := _number(row.get(figure))) is not None:
                    yield f"{prefix}.{figure}", number
            for kind in ("hit_to_miss", "miss_to_hit"):
                yield f"{prefix}.{kind}", float(len(row.get(kind) or ()))

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_BLOCK

    def schema_report(self) -> Mapping[str, Any]:
        return SCHEMA_REPORT

    def schema_defs(self) -> Mapping[str, Any]:
        return SCHEMA_DEFS

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        records = [
            *_examples.plain(),
            _examples.record("s1~invert", "miss", variant="invert", axis="invert", original_uid="s1"),
            _examples.record("s2~invert", "miss", variant="invert", axis="invert", original_uid="s2"),
        ]
        return _examples.document(records, self)


SECTION = Robustness()

SCHEMA_BLOCK = {
    "type": "object",
    "description": "--grounding-perturb: each variant against the same samples' originals (analysis/robustness.py)",
    "required": ["variants", "originals"],
    "properties": {
        "variants": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "label",
                    "axis",
                    "perturbation",
                    "samples",
                    "scored",
                    "errors",
                    "accuracy",
                    "ci95",
                    "pairs",
                    "original_accuracy",
                    "paired_accuracy",
                    "delta",
                    "delta_ci95",
                    "clusters",
                    "mcnemar_p",
                    "hit_to_miss",
                    "miss_to_hit",
                    "no_variant",
                    "no_variant_reason",
                ],
                "properties": {
                    "label": {"type": "string"},
                    "axis": {"type": "string"},
                    "perturbation": {"type": ["string", "null"]},
                    "samples": {"$ref": "#/$defs/count", "description": "the variant's records"},
                    "scored": {"$ref": "#/$defs/count"},
                    "errors": {"$ref": "#/$defs/count"},
                    "accuracy": {
                        "$ref": "#/$defs/fraction_or_null",
                        "description": "over the variant's scored records",
                    },
                    "ci95": {"$ref": "#/$defs/ci95", "description": "clustered by the original screen"},
                    "pairs": {
                        "$ref": "#/$defs/count",
                        "description": "samples scored both as original and as this variant",
                    },
                    "original_accuracy": {
                        "$ref": "#/$defs/fraction_or_null",
                        "description": "the originals' accuracy on the pairs",
                    },
                    "paired_accuracy": {
                        "$ref": "#/$defs/fraction_or_null",
                        "description": "the variant's accuracy on the pairs",
                    },
                    "delta": {
                        "type": ["number", "null"],
                        "minimum": -1,
                        "maximum": 1,
                        "description": "variant - original on the pairs (a share)",
                    },
                    "delta_ci95": {
                        "$ref": "#/$defs/signed_ci95",
                        "description": "its 95% interval: clustered by screen, Student's t",
                    },
                    "clusters": {"type": ["integer", "null"], "minimum": 0},
                    "mcnemar_p": {
                        "$ref": "#/$defs/fraction_or_null",
                        "description": "McNemar's exact p on the discordant pairs",
                    },
                    "hit_to_miss": {"type": "array", "items": {"$ref": "#/$defs/flip"}},
                    "miss_to_hit": {"type": "array", "items": {"$ref": "#/$defs/flip"}},
                    "no_variant": {"$ref": "#/$defs/count", "description": "originals with no record of this variant"},
                    "no_variant_reason": {"type": "string"},
                },
                "additionalProperties": False,
            },
        },
        "originals": {"$ref": "#/$defs/count"},
        "paired_on": {"type": "string"},
        "interval": {"type": "string"},
    },
    "additionalProperties": False,
}
SCHEMA_REPORT = {
    "robustness_gates": {
        "type": "array",
        "description": "--grounding-max-drop: each gate against each variant it names (analysis/robustness.py)",
        "items": {
            "type": "object",
            "required": ["detector", "gate", "variant", "max_drop", "drop", "pairs", "passed"],
            "properties": {
                "detector": {"type": "string"},
                "gate": {
                    "type": ["string", "null"],
                    "description": "the variant or axis the gate names; null: every variant",
                },
                "variant": {"type": ["string", "null"], "description": "the variant judged; null: the gate found none"},
                "max_drop": {"type": "number", "minimum": 0, "maximum": 100},
                "drop": {
                    "type": ["number", "null"],
                    "description": "accuracy points lost against the originals on the pairs",
                },
                "pairs": {"type": "integer", "minimum": 0},
                "passed": {"type": "boolean"},
            },
            "additionalProperties": False,
        },
    }
}
SCHEMA_DEFS = {
    "flip": {
        "type": "object",
        "required": ["dataset", "uid", "variant_uid"],
        "properties": {
            "dataset": {"type": "string"},
            "id": {"type": ["string", "null"], "description": "the original sample's dataset id"},
            "uid": {"type": "string", "description": "the original sample's uid"},
            "variant_uid": {"type": "string"},
        },
        "additionalProperties": False,
    }
}
