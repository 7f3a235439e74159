"""The reproduction check (analysis/reproduce.py): each detector with a known preset and dataset
against its published figure, as one section (docs: reproduction)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import TYPE_CHECKING, Any

from ..analysis.tracked import _number, name
from ._render import md_table
from .base import RUN, HtmlPage, Section

if TYPE_CHECKING:
    from ..analysis.document import RunRecords
    from ..analysis.result import RunResult

HEADER = ["detector", "benchmark", "preset", "published", "this run", "delta", "verdict", "95% CI", "detectable"]


class Reproduction(Section):
    name = "reproduction"
    title = "Reproduction"
    level = RUN
    order = 80

    def run_figures(self, found: RunRecords) -> list[dict[str, Any]]:
        """Each detector's figure against the published one, where --grounding-published (or the
        shipped table) has one for its dataset and preset; [] without a table."""
        published = found.scoring.published
        if published is None:
            return []
        from ..analysis import reproduce

        checked = reproduce.check(
            found.records,
            found.datasets,
            found.detector_info,
            published,
            interrupted=found.interrupted,
            limit=found.scoring.limit,
            registered=found.registered,
        )
        return [item.as_dict() for item in checked]

    def run_terminal(self, result: RunResult) -> list[str]:
        found = result.run.get(self.name) or []
        lines = [str(entry["line"]) for entry in found if isinstance(entry, Mapping) and entry.get("line")]
        return ["", *lines] if lines else []

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        found = document.get(self.name) or []
        if not found:
            return []
        rows = []
        for item in found:
            published = item.get("published") or {}
            figure = "-" if not published else f"{published['figure']:g} ({published['model']}; {published['source']})"
            measured = "-" if item["measured"] is None else f"{item['measured']:.1f}"
            delta = "-" if item["delta"] is None else f"{item['delta']:+.1f}"
            verdict = item["status"] + (f": {item['reason']}" if item.get("reason") else "")
            bounds = item.get("ci95")
            ci = (
                "-"
                if not bounds
                else f"{bounds[0]:.1f}-{bounds[1]:.1f}" + (" (inside)" if item["published_inside_ci95"] else "")
            )
            detectable = "-" if item.get("detectable_points") is None else f"{item['detectable_points']:.1f}"
            rows.append(
                [
                    item["detector"],
                    item["benchmark_title"],
                    item["preset"],
                    figure,
                    measured,
                    delta,
                    verdict,
                    ci,
                    detectable,
                ]
            )
        criterion = found[0]["within_points"]
        note = (
            f"Reproduced: at or above the published figure, or within {criterion:g} points. 95% CI: this run's "
            "interval, clustered by screen ((inside): the published figure lies in it); detectable: the smallest "
            "difference in points this run finds 80% of the time at 5%."
        )
        return ["### Reproduction", "", *md_table(HEADER, rows), note, ""]

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        found = document.get(self.name) or []
        if not found:
            return ""
        lines = "".join(f'<p class="mono">{escape(str(item["line"]))}</p>' for item in found)
        return f'<h3 id="reproduction">Reproduction</h3>{lines}'

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        """The measured figure, the published one, the difference and whether it reproduced
        (1 or 0), per benchmark, for the detector's entries."""
        detector = ((document.get("summary") or {}).get(key) or {}).get("detector", key)
        for item in document.get(self.name) or ():
            if item.get("detector") not in (key, detector):
                continue
            prefix = name("reproduction", item.get("benchmark"))
            published = (item.get("published") or {}).get("figure")
            for figure, value in (
                ("measured", item.get("measured")),
                ("published", published),
                ("delta", item.get("delta")),
            ):
                if (number := _number(value)) is not None:
                    yield f"{prefix}.{figure}", number
            yield f"{prefix}.reproduced", 1.0 if item.get("status") == "reproduced" else 0.0

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_REPORT["reproduction"]

    def schema_defs(self) -> Mapping[str, Any]:
        return SCHEMA_DEFS

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        entry = {
            "detector": _examples.KEY,
            "dataset": "ds",
            "benchmark": "screenspot-pro",
            "benchmark_title": "ScreenSpot-Pro",
            "preset": "p",
            "model": "m",
            "status": "reproduced",
            "published": {
                "model": "m",
                "figure": 50.0,
                "source": "paper",
                "split": "test",
                "average": "micro",
                "note": None,
                "agentic": False,
            },
            "measured": 50.0,
            "delta": 0.0,
            "within_points": 2.0,
            "ci95": [10.0, 90.0],
            "published_inside_ci95": True,
            "detectable_points": 40.0,
            "samples_run": 2,
            "samples_total": 2,
            "reason": None,
            "line": "reproduction d on ds (ScreenSpot-Pro, preset p): published 50.0, this run 50.0: reproduced",
        }
        return {**_examples.document(_examples.plain(), self), "reproduction": [entry]}


SECTION = Reproduction()

SCHEMA_REPORT = {
    "reproduction": {
        "description": "The reproduction check: one entry per detector with a preset and dataset "
        "recognised as a known benchmark (docs: reproduction). Empty when none.",
        "type": "array",
        "items": {"$ref": "#/$defs/reproduction"},
    }
}
SCHEMA_DEFS = {
    "reproduction": {
        "type": "object",
        "required": [
            "detector",
            "dataset",
            "benchmark",
            "benchmark_title",
            "preset",
            "model",
            "status",
            "published",
            "measured",
            "delta",
            "within_points",
            "samples_run",
            "samples_total",
            "reason",
            "line",
        ],
        "properties": {
            "detector": {"type": "string"},
            "engine": {
                "type": ["string", "null"],
                "description": "a served detector's engine, version and context "
                "as it ran (vLLM 0.32.0, context 21,504); null "
                "for the others.",
            },
            "dataset": {"type": "string"},
            "benchmark": {
                "type": "string",
                "description": "the known benchmark's id (screenspot-pro, screenspot-v2, screenspot, or a project's).",
            },
            "benchmark_title": {"type": "string"},
            "preset": {"type": "string", "description": "the detector's preset (its describe())."},
            "model": {
                "type": ["string", "null"],
                "description": "the detector's model name, which picks among a preset's published models.",
            },
            "status": {
                "enum": ["reproduced", "not reproduced", "does not apply"],
                "description": "reproduced: at or above the published figure, or within within_points below it.",
            },
            "published": {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "required": ["model", "figure", "source", "split", "average", "note", "agentic"],
                        "properties": {
                            "model": {"type": "string"},
                            "figure": {"type": "number", "minimum": 0, "maximum": 100, "description": "percent."},
                            "source": {"type": "string"},
                            "split": {"type": "string"},
                            "average": {
                                "enum": ["micro", "cells"],
                                "description": "micro: over samples; cells: mean over platform x element-type cells.",
                            },
                            "note": {"type": ["string", "null"]},
                            "agentic": {
                                "type": "boolean",
                                "description": "the "
                                "figure "
                                "was "
                                "measured "
                                "with "
                                "the "
                                "model "
                                "asking "
                                "for "
                                "crops "
                                "over "
                                "turns; "
                                "it "
                                "applies "
                                "only to "
                                "a run "
                                "with "
                                "agent=..., "
                                "and a "
                                "single-shot "
                                "figure "
                                "only to "
                                "a "
                                "single-shot "
                                "run",
                            },
                        },
                        "additionalProperties": False,
                    },
                ]
            },
            "measured": {
                "type": ["number", "null"],
                "minimum": 0,
                "maximum": 100,
                "description": "this run's accuracy in percent, averaged as the published figure is.",
            },
            "delta": {
                "type": ["number", "null"],
                "description": "measured - published, in points; null when the comparison does not apply.",
            },
            "within_points": {"type": "number", "minimum": 0},
            "samples_run": {"$ref": "#/$defs/count"},
            "samples_total": {"$ref": "#/$defs/count"},
            "reason": {"type": ["string", "null"], "description": "why the comparison does not apply."},
            "line": {"type": "string", "description": "the verdict as the terminal summary says it."},
            "ci95": {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "array",
                        "items": {"type": "number", "minimum": 0, "maximum": 100},
                        "minItems": 2,
                        "maxItems": 2,
                    },
                ],
                "description": "percent, as `measured`: the run's 95% interval of it, clustered by screen",
            },
            "published_inside_ci95": {
                "type": ["boolean", "null"],
                "description": "whether the published figure lies inside `ci95`",
            },
            "detectable_points": {
                "type": ["number", "null"],
                "minimum": 0,
                "description": "the smallest difference from a fixed "
                "figure this run detects 80% of the "
                "time at 5% two-sided: (1.96 + 0.84) x "
                "its clustered standard error, in "
                "points",
            },
        },
        "additionalProperties": False,
    }
}
