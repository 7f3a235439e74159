"""The JSON report as GitHub-flavoured markdown, for a CI job's summary page ($GITHUB_STEP_SUMMARY):
the verdict first, then one row per detector, the gates, and the baseline's regressions,
improvements and slices beyond their tolerance. Pure: a report dict in, text out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.card import rescored_by
from ..analysis.intervals import span
from ..core.identity import display_name
from ..core.numbers import ms as _ms
from ..core.numbers import pct as _pct
from ..core.numbers import points
from ..core.paths import shown_text
from ..core.record import Outcome
from ..core.safetext import markdown_text as md
from ..sections import LATENCY, ordered
from .common.headline import profile_lines
from .common.tables import GATE_HEADER, gate_rows, macro_cell

SHOWN = 20  # samples listed per kind; the rest are counted (all of them are in the report artifact)


def _word(passed: bool) -> str:
    return "passed" if passed else "FAILED"


def _change(before: float | None, now: float | None) -> str:
    return "-" if before is None or now is None else f"{points(now - before)}"


def _cell(text: Any) -> str:
    return md(text)  # data: no HTML, no markdown, no second line, no extra cell


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def failures(document: Mapping[str, Any]) -> list[str]:
    """What makes the run red, in words (errors fail their items, so they count too)."""
    found = []
    if document.get("partial"):
        found.append("the run was interrupted")
    not_run = document.get("not_run") or []
    if not_run:
        found.append(f"{len(not_run)} samples never ran")
    found += [f"gate {md(g['slice'])} of {md(g['detector'])}" for g in document.get("gates") or () if not g["passed"]]
    found += [f"too many errors for {md(e['detector'])}" for e in document.get("errors_check") or () if not e["passed"]]
    baseline = document.get("baseline") or {}
    regressions = baseline.get("regressions") or []
    if regressions:
        found.append(f"{len(regressions)} regressions against the baseline")
    slices = [s for s in baseline.get("slices") or () if not s["passed"]]
    if slices:
        found.append(f"{len(slices)} slices below the baseline beyond their tolerance")
    slow = [v for v in baseline.get("latency") or () if not v["passed"]]
    found += [f"{md(v['detector'])} {md(v['figure'])} x{v['ratio']:.2f} slower" for v in slow]
    if baseline.get("status") == "written":
        found.append("no baseline yet: written by this run")
    errors = sum(block.get("errors", 0) for block in (document.get("summary") or {}).values())
    if errors:
        found.append(f"{errors} samples not scored (errors)")
    return found


def verdict_when_clean(document: Mapping[str, Any]) -> str:
    """Nothing failed: **passed** when something judged the run (a gate, a max-drop gate, a
    baseline), else say that nothing did (a run with no gate did not pass one)."""
    if document.get("gates") or document.get("robustness_gates") or document.get("baseline"):
        return "**passed**"
    return (
        "**no gates**: nothing judged this run (set one with `--grounding-min-accuracy`, "
        "`--grounding-baseline` or `--grounding-max-drop`)"
    )


def report_markdown(document: Mapping[str, Any], title: str = "Grounding benchmark", sections: Any = None) -> str:
    """The markdown summary of a report document; `sections`: the report sections (default: the
    installed ones)."""
    lines = [f"## {title}", ""]
    problems = failures(document)
    lines += [("**FAILED**: " + "; ".join(problems)) if problems else verdict_when_clean(document), ""]
    for line in profile_lines(document.get("scoring_profile")):  # none for the default profile
        lines += [md(line), ""]
    rescored = rescored_by(document)
    if rescored:  # the figures below are not the run's: say so before any of them
        lines += [f"**{md(rescored[0].upper() + rescored[1:])}**: not the figures the run itself scored.", ""]
    summary = document.get("summary") or {}
    if summary:
        rows = [
            [
                display_name(name, block),
                _pct(block["accuracy"]),
                span(block.get("ci95")),
                f"{block['hits']}/{block['scored']}",
                block["misses"],
                block[Outcome.WRONG_FORMAT],
                block["errors"],
                macro_cell(block, "app"),
                macro_cell(block, "dataset"),
                block.get("truncated", 0),
                _ms(block["latency_ms"]["p50"]),
                _ms(block["latency_ms"]["p95"]),
            ]
            for name, block in summary.items()
        ]
        header = ["detector", "accuracy", "95% CI", "hits", "misses", "wrong format", "errors"]
        header += ["macro apps", "macro datasets", "cut answers", "p50 ms", "p95 ms"]
        lines += _table(header, rows)
    found = ordered(sections)
    for section in found:  # each feature's own part (pytest_grounding/sections): the detectors' first
        if section.order < LATENCY:
            lines += section.markdown(document)
    gates = gate_rows(document)  # the HTML page's table too (render/common/tables.py)
    if gates:
        lines += ["### Accuracy gates", "", *_table(GATE_HEADER, gates)]
    for section in found:
        if section.order >= LATENCY:
            lines += section.markdown(document)
    lines += _not_run_lines(document.get("not_run") or [])
    return shown_text("\n".join(lines).rstrip() + "\n")  # a job summary is shared: no absolute home path


def _not_run_lines(not_run: Sequence[Mapping[str, Any]]) -> list[str]:
    """The samples the run was to score and never did: no figure counts them, so they are listed."""
    if not not_run:
        return []
    lines = ["### Samples that never ran", ""]
    lines += [f"- {md(r['detector'])} {md(r['dataset'])}/{md(r['id'])}" for r in not_run[:SHOWN]]
    if len(not_run) > SHOWN:
        lines.append(f"- ... {len(not_run) - SHOWN} more in the report artifact")
    return [*lines, ""]
