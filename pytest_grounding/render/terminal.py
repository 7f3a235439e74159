"""The terminal summary as lines of text, from the summary dicts. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.frame_hint import rescore_lines
from ..core.identity import display_name
from ..core.record import Outcome
from ..sections import ordered
from .common.headline import dataset_line, detector_block, profile_lines

if TYPE_CHECKING:
    from ..analysis.result import RunResult

PLAIN, BOLD, FAILED = "plain", "bold", "failed"  # how run_lines' lines are drawn
RULE, SECTION = "rule", "section"  # a heading across the terminal: under "-", under "="


def summary_lines(result: RunResult) -> list[str]:
    """The grounding summary's figures: notes, datasets, each detector's block, the comparison
    table (two or more grounding detectors), the reproduction verdicts and the gates."""
    view = result.view
    found = ordered(result.sections or None)
    lines: list[str] = []
    if result.partial:
        lines.append("run interrupted: figures cover the samples that finished")
    if result.resumed:
        lines.append(f"resumed: {result.resumed} samples taken from the predictions file, the rest run now")
    lines += [f"note: {note}" for note in result.notes]
    lines += [dataset_line(dataset, result.shard) for dataset in result.datasets]
    lines += profile_lines(view.profile)
    for name, block in (result.summary or {}).items():
        lines.append("")
        lines += detector_block(
            name,
            block,
            info=result.detector_info.get(name),
            top_apps=view.top_apps,
            cost=result.cost.get(name),
            price=view.price,
            sections=found,
        )
    lines += comparison_block(result.summary or {}, result.records, view.order)
    for section in found:  # the run's own sections (reproduction), before the gates
        if not section.terminal_after_summary:
            lines += section.run_terminal(result)
    if result.verdicts:
        lines.append("")
        lines += [verdict.describe() for verdict in result.verdicts]
    return lines


def document_lines(document: Mapping[str, Any], sections: Any = None, **view: Any) -> list[str]:
    """The summary lines of a report document, as the run that wrote it printed them (summary_lines):
    what `merge` and `rescore` print. `view`: how to show it (View fields: top_apps, price, ...)."""
    from dataclasses import replace

    from ..analysis.document import verdicts_of
    from ..analysis.result import RunResult

    found = tuple(ordered(sections))
    result = RunResult.of_report(document, verdicts=verdicts_of(document, found), sections=found)
    if view:
        result = replace(result, view=replace(result.view, **view))
    after = [line for section in found if section.terminal_after_summary for line in section.run_terminal(result)]
    return summary_lines(result) + after  # the baseline, replayed files: as run_lines puts them


def run_lines(result: RunResult) -> list[tuple[str, str]]:
    """The whole grounding summary of a run, each line with how it is drawn (PLAIN; FAILED stands
    out, BOLD is bold; RULE and SECTION are headings across the terminal): the misses, the
    figures, the baseline, replayed files, the outputs, the verdict."""
    from .baseline import baseline_verdict

    def failed(yes: bool) -> str:
        return FAILED if yes else PLAIN

    out: list[tuple[str, str]] = []
    item = None if result.baseline is None else "the baseline decides: a regression fails, others xfail"
    names = {spec: display_name(spec, info) for spec, info in result.detector_info.items()}
    misses = miss_lines(result.records, result.view.show_misses, result.view.misses_as, item, names)
    if misses:
        out += [("grounding failed items", RULE), *((line, PLAIN) for line in misses)]
    out.append(("grounding summary", SECTION))
    if result.summary:
        out += [
            (line, failed("FAILED" in line and line.startswith(("gate", "errors")))) for line in summary_lines(result)
        ]
    for section in ordered(result.sections or None):  # after the summary: the baseline, replayed files
        if section.terminal_after_summary:
            found = section.run_terminal(result)
            out += [(line, failed("FAILED" in line or line.startswith("  regression"))) for line in found]
    out += [(f"grounding {title}: {path}", PLAIN) for title, path in result.outputs]
    out += [(line, PLAIN) for line in rescore_lines(result.summary, result.frame_checks, result.outputs)]
    out += [(f"grounding output FAILED: {problem}", FAILED) for problem in result.output_errors]
    if result.summary:
        verdict = verdict_line(
            result.summary,
            result.verdicts,
            gated=result.view.gated,
            misses_as=result.view.misses_as,
            partial=result.partial,
            baseline=baseline_verdict(result),
        )
        out += [("", PLAIN), (verdict, BOLD)]
    return out


def comparison_block(
    summary: Mapping[str, Mapping[str, Any]], records: Sequence[Mapping[str, Any]], order: Sequence[str] = ()
) -> list[str]:
    """The method matrix: one table over the run's grounding detectors (two or more), in `order`."""
    from ..analysis.compare import comparison_lines, methods_from_run

    methods = methods_from_run(summary, records, order)
    if len(methods) < 2:
        return []
    return ["", "comparison of methods:", *comparison_lines(methods)]


def miss_line(record: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """One line per miss: where it clicked, how far off, for what; the detector by its label=
    where `names` ({spec: label}) has one."""
    detector = (names or {}).get(record["detector"], record["detector"])
    where = f"{record['dataset']}/{record['id']}"
    instruction = record["instruction"] if len(record["instruction"]) <= 60 else record["instruction"][:57] + "..."
    if record.get("task") == "locate":
        x, y = record["point"]
        found = (
            "no box found" if record["outcome"] == Outcome.WRONG_FORMAT else f"false positive, IoU {record['iou']:.2f}"
        )
        tries = "1 attempt" if record["attempts"] == 1 else f"{record['attempts']} attempts"
        return f"  {detector} (locate) {where}: {found} at ({x:g}, {y:g}) after {tries}"
    cut = " (answer cut by the engine)" if record.get("truncated") else ""
    if record["outcome"] == Outcome.WRONG_FORMAT:
        raw = str(record.get("raw") or "")
        raw = raw if len(raw) <= 40 else raw[:37] + "..."
        return f"  {detector} {where}: wrong format{cut} for {instruction!r}; raw {raw!r}"
    if record.get("refusal"):
        return f"  {detector} {where}: refused (said not on screen) for {instruction!r}"
    if record.get("negative"):
        x, y = record["point"]
        return f"  {detector} {where}: clicked ({x:g}, {y:g}) on an absent target for {instruction!r}"
    x, y = record["point"]
    return f"  {detector} {where}: clicked ({x:g}, {y:g}), {record['distance']:.0f} px off{cut} for {instruction!r}"


def miss_lines(
    records: Sequence[Mapping[str, Any]],
    limit: int | None,
    misses_as: str = "fail",
    item: str | None = None,
    names: Mapping[str, str] | None = None,
) -> list[str]:
    """The misses (and wrong-format answers), sorted, `limit` of them (None: all)."""
    misses = sorted(
        (r for r in records if r["outcome"] in (Outcome.MISS, Outcome.WRONG_FORMAT)),
        key=lambda r: (r.get("task", "grounding"), r["detector"], r["dataset"], r["uid"]),
    )
    if not misses or limit == 0:
        return []
    shown = misses if limit is None else misses[:limit]
    item = item or ("each fails its item" if misses_as == "fail" else "each reported as xfail (a gate decides)")
    wrong = sum(1 for r in misses if r["outcome"] == Outcome.WRONG_FORMAT)
    kinds = failed_items_text(len(misses) - wrong, wrong).partition(" (")[2].rstrip(")")
    lines = [f"failed items ({len(misses)}: {kinds}; {item}, listed here once):"]
    lines += [miss_line(r, names) for r in shown]
    if len(shown) < len(misses):
        lines.append(
            f"  ... {len(misses) - len(shown)} more in the JSON report and the predictions file "
            "(--grounding-show-misses all lists them)"
        )
    return lines


def failed_items_text(misses: int, wrong_format: int) -> str:
    """The one phrase for misses and wrong formats together (issue 61: one word for one number):
    `221 failed items (90 misses, 131 wrong format)`; a kind that is none is left out."""
    total = misses + wrong_format
    head = f"{total} failed item{'' if total == 1 else 's'}"
    parts = [
        f"{misses} miss{'' if misses == 1 else 'es'}" if misses else "",
        f"{wrong_format} wrong format" if wrong_format else "",
    ]
    said = ", ".join(p for p in parts if p)
    return f"{head} ({said})" if said else head


def verdict_line(
    summary: Mapping[str, Mapping[str, Any]],
    verdicts: Sequence[Any],
    *,
    gated: bool,
    misses_as: str,
    partial: bool,
    baseline: str | None = None,
) -> str:
    """One line that says what the exit status means."""
    missed = sum(b["misses"] for b in summary.values())
    wrong = sum(b[Outcome.WRONG_FORMAT] for b in summary.values())
    misses = missed + wrong  # failed items: one word for their sum (issue 61)
    failed_items = failed_items_text(missed, wrong)
    errors = sum(b["errors"] for b in summary.values())
    if partial:
        return f"verdict: run interrupted, no verdict ({failed_items}, {errors} errors so far)"
    parts = []
    gates = [v for v in verdicts if hasattr(v, "gate")]
    if gated:
        failed = sum(1 for v in gates if not v.passed)
        parts.append(f"{failed} of {len(gates)} gates FAILED" if failed else f"all {len(gates)} gates passed")
    if baseline:
        parts.append(baseline)
    unreliable = [v.detector for v in verdicts if not hasattr(v, "gate") and not v.passed]
    if unreliable:
        parts.append(f"too many errors for {', '.join(unreliable)} (--grounding-max-errors): FAILED")
    if misses and misses_as == "fail":
        advice = (
            ""
            if gated
            else (
                ": expected for a benchmark run; set a gate (--grounding-min-accuracy) to make "
                "the exit status a verdict"
            )
        )
        parts.append(f"{failed_items} fail the run{advice}")
    elif misses:
        parts.append(f"{failed_items} reported as xfail" if not baseline else failed_items)
    if errors:
        parts.append(f"{errors} errors (samples not scored: see ERROR above)")
    return "verdict: " + ("; ".join(parts) if parts else "every sample hit")
