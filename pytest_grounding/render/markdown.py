"""The JSON report as GitHub-flavoured markdown, for a CI job's summary page ($GITHUB_STEP_SUMMARY):
the verdict first, then one row per detector, the gates, and the baseline's regressions,
improvements and slices beyond their tolerance. Pure: a report dict in, text out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.headlines import markdown_lines as headline_markdown
from ..analysis.intervals import span
from ..core.numbers import ms as _ms
from ..core.numbers import pct as _pct
from ..core.record import Outcome
from ..core.safetext import markdown_text as md
from .replay import markdown_lines as replay_markdown
from .robustness import markdown_lines as robustness_markdown
from .terminal import profile_lines

SHOWN = 20  # samples listed per kind; the rest are counted (all of them are in the report artifact)


def _word(passed: bool) -> str:
    return "passed" if passed else "FAILED"


def _change(before: float | None, now: float | None) -> str:
    return "-" if before is None or now is None else f"{(now - before) * 100:+.1f}"


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


def report_markdown(document: Mapping[str, Any], title: str = "Grounding benchmark") -> str:
    lines = [f"## {title}", ""]
    problems = failures(document)
    lines += [("**FAILED**: " + "; ".join(problems)) if problems else "**passed**", ""]
    for line in profile_lines(document.get("scoring_profile")):  # none for the default profile
        lines += [md(line), ""]
    summary = document.get("summary") or {}
    if summary:
        rows = [
            [
                name,
                _pct(block["accuracy"]),
                span(block.get("ci95")),
                f"{block['hits']}/{block['scored']}",
                block["misses"],
                block[Outcome.WRONG_FORMAT],
                block["errors"],
                _ms(block["latency_ms"]["p50"]),
                _ms(block["latency_ms"]["p95"]),
            ]
            for name, block in summary.items()
        ]
        header = ["detector", "accuracy", "95% CI", "hits", "misses", "wrong format", "errors", "p50 ms", "p95 ms"]
        lines += _table(header, rows)
        lines += _epoch_markdown(summary)
        lines += robustness_markdown(summary)  # --grounding-perturb
        lines += headline_markdown(summary)
    gates = document.get("gates") or []
    if gates:
        rows = [
            [
                g["detector"],
                g["slice"],
                _pct(g["accuracy"]),
                span(g.get("ci95")),
                g.get("judged_on", "accuracy"),
                _pct(g["threshold"]),
                _word(g["passed"]),
            ]
            for g in gates
        ]
        header = ["detector", "slice", "accuracy", "95% CI", "judged on", "threshold", "verdict"]
        lines += ["### Accuracy gates", "", *_table(header, rows)]
    lines += _baseline_lines(document.get("baseline"))
    lines += _reproduction_lines(document.get("reproduction") or [])
    lines += _cost_lines(document.get("cost"))
    lines += _errata_lines(document.get("errata"))  # --grounding-errata (issue 47)
    lines += replay_markdown(document.get("samples") or [])
    lines += _not_run_lines(document.get("not_run") or [])
    return "\n".join(lines).rstrip() + "\n"


def _epoch_markdown(summary: Mapping[str, Any]) -> list[str]:
    """--grounding-epochs: one row per detector (analysis/epochs.py)."""
    rows = []
    for name, block in summary.items():
        found = block.get("epochs")
        if not found:
            continue
        rows.append(
            [
                name,
                found["epochs"],
                found["samples"],
                f"{_pct(found['mean_accuracy'])} ({span(found.get('mean_ci95'))})",
                f"{_pct(found['pass_at_k']['accuracy'])} ({span(found['pass_at_k'].get('ci95'))})",
                f"{_pct(found['majority']['accuracy'])} ({span(found['majority'].get('ci95'))})",
                f"{found['changed']} ({_pct(found['stability'])})",
            ]
        )
    if not rows:
        return []
    header = ["detector", "epochs", "samples", "mean accuracy", "pass@k", "majority", "outcome changed"]
    return ["### Repeated sampling", "", *_table(header, rows)]


def _not_run_lines(not_run: Sequence[Mapping[str, Any]]) -> list[str]:
    """The samples the run was to score and never did: no figure counts them, so they are listed."""
    if not not_run:
        return []
    lines = ["### Samples that never ran", ""]
    lines += [f"- {md(r['detector'])} {md(r['dataset'])}/{md(r['id'])}" for r in not_run[:SHOWN]]
    if len(not_run) > SHOWN:
        lines.append(f"- ... {len(not_run) - SHOWN} more in the report artifact")
    return [*lines, ""]


def _reproduction_lines(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """The reproduction check: published figure, this run's, the verdict (docs: reproduction)."""
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
    header = ["detector", "benchmark", "preset", "published", "this run", "delta", "verdict", "95% CI", "detectable"]
    criterion = found[0]["within_points"]
    note = (
        f"Reproduced: at or above the published figure, or within {criterion:g} points. 95% CI: this run's interval, "
        "clustered by screen ((inside): the published figure lies in it); detectable: the smallest difference in "
        "points this run finds 80% of the time at 5%."
    )
    return ["### Reproduction", "", *_table(header, rows), note, ""]


def _errata_lines(errata: Mapping[str, Any] | None) -> list[str]:
    """The official accuracy beside the corrected one, per detector."""
    if not errata:
        return []
    rows = [
        [
            name,
            _pct(t["official"]),
            f"{t['hits']}/{t['n']}",
            _pct(t["corrected"]),
            f"{t['corrected_hits']}/{t['corrected_n']}",
            t["dropped"],
            t["refixed"],
            t["flipped"],
        ]
        for name, t in errata["detectors"].items()
    ]
    header = ["detector", "official", "hits", "corrected", "hits", "dropped", "boxes fixed", "verdicts changed"]
    title = f"### Errata: {_cell(errata['file'])} (sha256 {str(errata['digest'])[:12]})"
    return [title, "", *_table(header, rows)]


def _cost_lines(cost: Mapping[str, Any] | None) -> list[str]:
    """Tokens the served detectors reported and, with a price, what they cost."""
    if not cost or not cost.get("detectors"):
        return []

    def usd(value: float | None) -> str:
        return "-" if value is None else f"${value:.4g}"

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
    header = ["detector", "samples with usage", "prompt tokens", "completion tokens", "cost", "per 1,000 samples"]
    return ["### Tokens and cost", "", *_table(header, rows)]


def _samples(title: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    lines = [f"**{title}** ({len(rows)}):", ""]
    lines += [f"- {md(r['detector'])} {md(r['dataset'])}/{md(r['id'])}: now {md(r['outcome'])}" for r in rows[:SHOWN]]
    if len(rows) > SHOWN:
        lines.append(f"- ... {len(rows) - SHOWN} more in the report artifact")
    return [*lines, ""]


def _baseline_lines(baseline: Mapping[str, Any] | None) -> list[str]:
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
        low, high = pair["ci95"]
        lines += [
            f"{md(pair['detector'])}: {pair['delta'] * 100:+.1f} points against the baseline on {pair['samples']} "
            f"samples (95% CI {low * 100:+.1f} to {high * 100:+.1f}, {pair['clusters']} screens; "
            f"McNemar exact p = {pair['p_value']:.3g})",
            "",
        ]
    lines += _samples("Regressions", baseline["regressions"])
    lines += _samples("Improvements", baseline["improvements"])
    failed = [s for s in baseline["slices"] if not s["passed"]]
    if failed:
        rows = [
            [
                s["detector"],
                s["slice"],
                _pct(s["baseline"]),
                _pct(s["accuracy"]),
                _change(s["baseline"], s["accuracy"]),
                f"{s['tolerance'] * 100:.1f}",
            ]
            for s in failed
        ]
        header = ["detector", "slice", "baseline", "now", "change (points)", "tolerance (points)"]
        lines += ["**Slices below the baseline beyond their tolerance:**", "", *_table(header, rows)]
    else:
        lines += [f"All {len(baseline['slices'])} slices within their tolerance.", ""]
    if baseline.get("latency"):
        rows = [
            [v["detector"], v["figure"], _ms(v["baseline_ms"]), _ms(v["ms"]), f"x{v['ratio']:.2f}", _word(v["passed"])]
            for v in baseline["latency"]
        ]
        limit = baseline["latency"][0]["max_slowdown"]
        lines += _table(["detector", "latency", "baseline ms", "now ms", "ratio", f"at most x{limit:g}"], rows)
    return lines
