"""Absent targets and refusals (analysis/metrics.refusal_figures): refused on an absent target,
clicked on one, refused a present one; as one section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis.metrics import refusal_figures
from ..analysis.tracked import _numbers
from ..core.numbers import pct
from ..core.safetext import markdown_text as md
from .base import BlockRecords, DetectorView, Section


def policy_words(policy: str) -> str:
    return "in" if policy == "include" else "left out of"


class Refusals(Section):
    name = "refusals"
    title = "Absent targets and refusals"
    order = 8

    def figures(self, found: BlockRecords) -> Any | None:
        return refusal_figures(found.records, found.refusal_rows)

    def terminal(self, view: DetectorView) -> list[str]:
        found = view.found(self.name)
        if not found:
            return []
        return [
            f"  absent targets {found['absent_targets']}: refused {found['refused']} (hits), "
            f"clicked {found['clicked']} (misses), refusal accuracy {pct(found['refusal_accuracy'])}; "
            f"refusals on present targets {found['false_refusals']} (misses); absent-target rows "
            f"{policy_words(found['policy'])} the accuracy above (--grounding-refusal-rows {found['policy']})"
        ]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        lines: list[str] = []
        for key, found in self.blocks(document):
            lines += [
                f"{md(key)}: absent targets {found['absent_targets']} (refused {found['refused']}, clicked "
                f"{found['clicked']}); refusals on present targets {found['false_refusals']}; absent-target rows "
                f"{policy_words(found['policy'])} the accuracy",
                "",
            ]
        return lines

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        return _numbers("refusals", self.found_in(document, key) or {})

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_BLOCK

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        records = [
            *_examples.plain(),
            _examples.record("s3", "hit", negative=True, refusal=True, point=None),
            _examples.record("s4", "miss", negative=True),
        ]
        return _examples.document(records, self)


SECTION = Refusals()

SCHEMA_BLOCK = {
    "type": "object",
    "description": "absent targets and refusals, in their own line.",
    "required": [
        "policy",
        "absent_targets",
        "refused",
        "clicked",
        "refusal_accuracy",
        "false_refusals",
        "present_targets",
    ],
    "properties": {
        "policy": {"enum": ["include", "exclude"]},
        "absent_targets": {"$ref": "#/$defs/count"},
        "refused": {"$ref": "#/$defs/count", "description": "refusals on absent targets (hits)"},
        "clicked": {
            "$ref": "#/$defs/count",
            "description": "absent targets answered with a click or nothing usable (misses)",
        },
        "refusal_accuracy": {"$ref": "#/$defs/fraction_or_null"},
        "false_refusals": {"$ref": "#/$defs/count", "description": "refusals on present targets (misses)"},
        "present_targets": {"$ref": "#/$defs/count"},
    },
    "additionalProperties": False,
}
