"""--grounding-baseline: what happened to the baseline and, when the run was compared with it,
the regressions, improvements, slices beyond their tolerance, latency ratios and the paired
difference (analysis/baseline.py), as one section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from ..analysis import baseline as baseline_mod
from ..analysis.tracked import _figure, _number
from ..core.identity import display_name
from ..core.numbers import ms, pct, points
from ..core.safetext import markdown_text as md
from ._render import html_table, md_table
from .base import RUN, HtmlPage, Section

if TYPE_CHECKING:
    from ..analysis.document import RunRecords
    from ..analysis.result import RunResult

SHOWN = 20  # samples listed per kind in the markdown; the rest are counted


def _word(passed: bool) -> str:
    return "passed" if passed else "FAILED"


def _change(before: float | None, now: float | None) -> str:
    return "-" if before is None or now is None else f"{points(now - before)}"


def _samples(title: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    lines = [f"**{title}** ({len(rows)}):", ""]
    lines += [f"- {md(r['detector'])} {md(r['dataset'])}/{md(r['id'])}: now {md(r['outcome'])}" for r in rows[:SHOWN]]
    if len(rows) > SHOWN:
        lines.append(f"- ... {len(rows) - SHOWN} more in the report artifact")
    return [*lines, ""]


def paired_text(pair: Mapping[str, Any]) -> str:
    low, high = pair["ci95"]
    return (
        f"{points(pair['delta'])} points against the baseline on {pair['samples']} "
        f"samples (95% CI {points(low)} to {points(high)}, {pair['clusters']} screens; "
        f"McNemar exact p = {pair['p_value']:.3g})"
    )


def baseline_lines(result: RunResult) -> list[str]:
    """The baseline's lines after the summary: the live run's comparison, or, for a report read back
    (`report`, `merge`, `rescore`), the comparison its `baseline` block holds: the same lines."""
    found = result.baseline
    if found is not None:
        path, problem, comparison = found.path, found.problem, found.comparison
    else:
        block = result.run.get("baseline")
        if not isinstance(block, Mapping):
            return []
        path, problem = str(block.get("path") or "?"), block.get("problem")
        try:
            comparison = baseline_mod.comparison_of(block)
        except (KeyError, TypeError, ValueError):  # a block not as the run writes it: its markdown says what it holds
            comparison = None
    lines = []
    if comparison is not None:
        names = {spec: display_name(spec, info) for spec, info in result.detector_info.items()}
        shown = baseline_mod.comparison_lines(comparison, path, result.view.show_misses, names)
        lines += ["", *shown]
    if problem is not None:
        lines += ["", f"baseline FAILED: {problem}"]
    return lines


class Baseline(Section):
    name = "baseline"
    title = "Baseline"
    level = RUN
    order = 90
    terminal_after_summary = True

    def run_figures(self, found: RunRecords) -> Mapping[str, Any] | None:
        """--grounding-baseline: what became of the baseline file and the comparison with it (the
        controller's check, handed in as found.checks; None without a baseline)."""
        baseline = found.checks.get(self.name)
        return dict(baseline) if isinstance(baseline, Mapping) else None

    def run_terminal(self, result: RunResult) -> list[str]:
        return baseline_lines(result)

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        baseline = document.get(self.name)
        if not baseline:
            return []
        lines = ["### Baseline", "", f"{md(baseline['path'])}: {md(baseline['status'])}", ""]
        if baseline.get("problem"):
            lines += [f"**{md(baseline['problem'])}**", ""]
        if "compared" not in baseline:
            return lines
        lines += [
            f"{baseline['compared']} samples compared: {len(baseline['regressions'])} regressions, "
            f"{len(baseline['improvements'])} improvements, {baseline['known_misses']} known misses",
            "",
        ]
        for pair in baseline.get("paired") or ():
            lines += [f"{md(pair['detector'])}: {paired_text(pair)}", ""]
        lines += _samples("Regressions", baseline["regressions"])
        lines += _samples("Improvements", baseline["improvements"])
        failed = [s for s in baseline["slices"] if not s["passed"]]
        if failed:
            rows = [
                [
                    s["detector"],
                    s["slice"],
                    pct(s["baseline"]),
                    pct(s["accuracy"]),
                    _change(s["baseline"], s["accuracy"]),
                    f"{s['tolerance'] * 100:.1f}",
                ]
                for s in failed
            ]
            header = ["detector", "slice", "baseline", "now", "change (points)", "tolerance (points)"]
            lines += ["**Slices below the baseline beyond their tolerance:**", "", *md_table(header, rows)]
        else:
            lines += [f"All {len(baseline['slices'])} slices within their tolerance.", ""]
        if baseline.get("latency"):
            rows = [
                [
                    v["detector"],
                    v["figure"],
                    ms(v["baseline_ms"]),
                    ms(v["ms"]),
                    f"x{v['ratio']:.2f}",
                    _word(v["passed"]),
                ]
                for v in baseline["latency"]
            ]
            limit = baseline["latency"][0]["max_slowdown"]
            lines += md_table(["detector", "latency", "baseline ms", "now ms", "ratio", f"at most x{limit:g}"], rows)
        return lines

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        baseline = document.get(self.name)
        if not baseline:
            return ""
        out = [
            '<h2 id="baseline">Baseline</h2>',
            f'<p><span class="mono">{escape(str(baseline["path"]))}</span>: {escape(str(baseline["status"]))}</p>',
        ]
        if baseline.get("problem"):
            out.append(f'<p class="fail">{escape(str(baseline["problem"]))}</p>')
        if "compared" in baseline:
            out.append(
                f"<p>{baseline['compared']} samples compared: {len(baseline['regressions'])} regressions, "
                f"{len(baseline['improvements'])} improvements, {baseline['known_misses']} known misses</p>"
            )
            out += [
                f'<p class="mono">{escape(str(pair["detector"]))}: {escape(paired_text(pair))}</p>'
                for pair in baseline.get("paired") or ()
            ]
            changed = [
                [r["detector"], f"{r['dataset']}/{r['id']}", kind, r["outcome"]]
                for kind in ("regressions", "improvements")
                for r in baseline[kind][:SHOWN]
            ]
            if changed:
                out.append(html_table(["detector", "sample", "change", "now"], changed))
            failed = [s for s in baseline["slices"] if not s["passed"]]
            if failed:
                rows = [
                    [
                        s["detector"],
                        s["slice"],
                        pct(s["baseline"]),
                        pct(s["accuracy"]),
                        _change(s["baseline"], s["accuracy"]),
                    ]
                    for s in failed
                ]
                out.append(html_table(["detector", "slice beyond its tolerance", "baseline", "now", "change"], rows))
        return "".join(out)

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        """The paired difference against the baseline with its interval, and the regressions and
        improvements, for the detector `key`."""
        baseline = document.get(self.name) or {}
        if "compared" not in baseline:
            return
        detector = ((document.get("summary") or {}).get(key) or {}).get("detector", key)
        mine = (key, detector)
        for pair in baseline.get("paired") or ():
            if pair.get("detector") in mine:
                yield from _figure("baseline.delta", pair.get("delta"), pair.get("ci95"))
                if (p := _number(pair.get("p_value"))) is not None:
                    yield "baseline.p_value", p
        for kind in ("regressions", "improvements"):
            yield f"baseline.{kind}", float(sum(1 for r in baseline.get(kind) or () if r.get("detector") in mine))

    def schema(self) -> Mapping[str, Any]:
        return SCHEMA_REPORT["baseline"]

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        change = {"detector": _examples.KEY, "dataset": "ds", "id": "s2", "uid": "s2", "outcome": "miss"}
        baseline = {
            "path": "baseline.json",
            "status": "compared",
            "problem": None,
            "tolerance": 0.02,
            "tolerances": [],
            "max_slowdown": None,
            "passed": False,
            "compared": 2,
            "known_misses": 0,
            "regressions": [change],
            "improvements": [],
            "slices": [],
            "latency": [],
            "paired": [
                {
                    "detector": _examples.KEY,
                    "delta": -0.5,
                    "ci95": [-1.0, 0.0],
                    "samples": 2,
                    "clusters": 2,
                    "fixed": 0,
                    "broken": 1,
                    "p_value": 1.0,
                }
            ],
        }
        return {**_examples.document(_examples.plain(), self), "baseline": baseline}


SECTION = Baseline()

SCHEMA_REPORT = {
    "baseline": {
        "description": "--grounding-baseline: what happened to the baseline and, when it was compared "
        "with, the verdicts. Absent without the option (null in older reports).",
        "oneOf": [
            {"type": "null"},
            {
                "type": "object",
                "required": ["path", "status", "problem", "tolerance", "tolerances", "max_slowdown"],
                "properties": {
                    "path": {"type": "string"},
                    "status": {
                        "enum": ["written", "updated", "compared", "not written", None],
                        "description": "written: absent, written by this run "
                        "(which fails); updated: "
                        "--grounding-update-baseline; compared; "
                        "not written: an interrupted or empty "
                        "run.",
                    },
                    "problem": {
                        "type": ["string", "null"],
                        "description": "why the baseline fails the run; null when it does not.",
                    },
                    "tolerance": {"type": "number", "minimum": 0, "maximum": 1},
                    "tolerances": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["slice", "tolerance"],
                            "properties": {
                                "slice": {"type": "string"},
                                "tolerance": {"type": "number", "minimum": 0, "maximum": 1},
                            },
                            "additionalProperties": False,
                        },
                    },
                    "max_slowdown": {"type": ["number", "null"]},
                    "passed": {"type": "boolean"},
                    "compared": {"$ref": "#/$defs/count"},
                    "known_misses": {"$ref": "#/$defs/count"},
                    "new": {"$ref": "#/$defs/count", "description": "samples run now that are not in the baseline."},
                    "not_run": {
                        "$ref": "#/$defs/count",
                        "description": "samples of the baseline (for this run's datasets and detectors) not run now.",
                    },
                    "regressions": {"type": "array", "items": {"$ref": "#/$defs/sampleChange"}},
                    "improvements": {"type": "array", "items": {"$ref": "#/$defs/sampleChange"}},
                    "slices": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["detector", "slice", "baseline", "accuracy", "scored", "tolerance", "passed"],
                            "properties": {
                                "detector": {"type": "string"},
                                "slice": {"type": "string"},
                                "baseline": {"$ref": "#/$defs/fraction_or_null"},
                                "accuracy": {"$ref": "#/$defs/fraction_or_null"},
                                "scored": {"$ref": "#/$defs/count"},
                                "tolerance": {"type": "number", "minimum": 0, "maximum": 1},
                                "passed": {"type": "boolean"},
                            },
                            "additionalProperties": False,
                        },
                    },
                    "latency": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["detector", "figure", "baseline_ms", "ms", "ratio", "max_slowdown", "passed"],
                            "properties": {
                                "detector": {"type": "string"},
                                "figure": {"enum": ["p50", "p95"]},
                                "baseline_ms": {"type": "number"},
                                "ms": {"type": "number"},
                                "ratio": {"type": "number"},
                                "max_slowdown": {"type": "number"},
                                "passed": {"type": "boolean"},
                            },
                            "additionalProperties": False,
                        },
                    },
                    "paired": {
                        "type": "array",
                        "description": "per detector: the change in accuracy "
                        "against the baseline on the samples "
                        "scored both times, its 95% interval "
                        "clustered by screen, and McNemar's exact "
                        "test on the changed samples",
                        "items": {
                            "type": "object",
                            "required": [
                                "detector",
                                "delta",
                                "ci95",
                                "samples",
                                "clusters",
                                "fixed",
                                "broken",
                                "p_value",
                            ],
                            "properties": {
                                "detector": {"type": "string"},
                                "delta": {
                                    "type": "number",
                                    "minimum": -1,
                                    "maximum": 1,
                                    "description": "now - baseline, a share",
                                },
                                "ci95": {
                                    "type": "array",
                                    "items": {"type": "number", "minimum": -1, "maximum": 1},
                                    "minItems": 2,
                                    "maxItems": 2,
                                },
                                "samples": {"$ref": "#/$defs/count"},
                                "clusters": {"$ref": "#/$defs/count"},
                                "fixed": {"$ref": "#/$defs/count"},
                                "broken": {"$ref": "#/$defs/count"},
                                "p_value": {"type": "number", "minimum": 0, "maximum": 1},
                            },
                            "additionalProperties": False,
                        },
                    },
                },
                "additionalProperties": False,
            },
        ],
    }
}
