"""The terminal summary as lines of text, from the summary dicts. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis import cost as cost_mod
from ..analysis.frame_hint import rescore_lines
from ..analysis.intervals import span
from ..core.identity import display_name
from ..core.numbers import ms, pct
from ..core.profiles import DEFAULT_PROFILE
from ..core.record import Outcome
from ..sections import LATENCY, DetectorView, ordered

if TYPE_CHECKING:
    from ..analysis.result import RunResult

PLAIN, BOLD, FAILED = "plain", "bold", "failed"  # how run_lines' lines are drawn
RULE, SECTION = "rule", "section"  # a heading across the terminal: under "-", under "="

TABLES = (
    ("dataset", "dataset"),
    ("element_type", "element type"),
    ("app", "app"),
    ("app_category", "app category"),
    ("platform", "platform"),
    ("size", "target size (px)"),
)


def table(title: str, rows: Sequence[Mapping[str, Any]], limit: int | None = None, by_count: bool = False) -> list[str]:
    """`by_count`: most samples first (the app table, whether cut to `limit` or not)."""
    shown = sorted(rows, key=lambda r: (-r["samples"], r["value"])) if by_count else list(rows)
    shown = shown[:limit] if limit is not None else shown
    width = max([len(title)] + [len(str(r["value"])) for r in shown])
    width = min(width, 40)
    lines = [
        f"  {title:<{width}}  {'n':>5} {'scored':>6} {'hits':>5} {'acc':>7} {'95% CI':>11} {'wrong':>5} {'err':>4} "
        f"{'IoU':>5}"
    ]
    for row in shown:
        value = str(row["value"])
        value = value if len(value) <= width else value[: width - 1] + "~"
        iou = "-" if row["mean_iou"] is None else f"{row['mean_iou']:.2f}"
        lines.append(
            f"  {value:<{width}}  {row['samples']:>5} {row['scored']:>6} {row['hits']:>5} "
            f"{pct(row['accuracy']):>7} {span(row.get('ci95')):>11} {row[Outcome.WRONG_FORMAT]:>5} {row['errors']:>4} "
            f"{iou:>5}"
        )
    hidden = len(rows) - len(shown)
    if hidden > 0:
        lines.append(f"  ... {hidden} more (all in the JSON report; --grounding-top-apps to show more)")
    return lines


def ci(bounds: Sequence[float] | None) -> str:
    """` [95% CI 21.9-32.1]` after a figure; nothing where it has no interval."""
    return f" [95% CI {span(bounds)}]" if bounds else ""


def macro_datasets(block: Mapping[str, Any]) -> str:
    """`   macro over datasets X [95% CI ..]` where the block spans two datasets or more (over one, it is
    the accuracy itself)."""
    if len((block.get("by") or {}).get("dataset") or []) < 2:
        return ""
    return f"   macro over datasets {pct(block.get('macro_dataset_accuracy'))}{ci(block.get('macro_dataset_ci95'))}"


def runtime_line(info: Mapping[str, Any]) -> str:
    """One short line: the detector's own `headline` when it gives one, else its scalar settings.
    The full description is in the JSON report."""
    if info.get("headline"):
        extra = f", load {info['load_s']:.1f} s" if isinstance(info.get("load_s"), (int, float)) else ""
        return f"{info['headline']}{extra}"
    parts = [
        f"{k}={v}"
        for k, v in info.items()
        if k not in ("name", "class", "deterministic") and isinstance(v, (int, float, str)) and len(str(v)) <= 40
    ]
    return ", ".join(parts)


def detector_block(
    name: str,
    block: Mapping[str, Any],
    *,
    info: Mapping[str, Any] | None,
    top_apps: int | None,
    cost: Mapping[str, Any] | None = None,
    price: cost_mod.Price | None = None,
    sections: Any = None,
) -> list[str]:
    """A detector's block: its headline lines (the accuracy, each section's lines, latency), then
    the slice tables."""
    lines = headline_lines(name, block, info=info, cost=cost, price=price, sections=sections)
    for key, title in TABLES:
        rows = block["by"][key]
        if key == "dataset" and len(rows) < 2:
            continue
        lines.append("")
        lines += table(title, rows, top_apps if key == "app" else None, by_count=key == "app")
    return lines


def headline_lines(
    name: str,
    block: Mapping[str, Any],
    *,
    info: Mapping[str, Any] | None,
    cost: Mapping[str, Any] | None = None,
    price: cost_mod.Price | None = None,
    page: bool = False,
    sections: Any = None,
) -> list[str]:
    """The detector's name and runtime, its accuracy, each registered section's lines (those
    ordered below sections.LATENCY before the latency line, the others after). `page`: the HTML
    page's detector box, which leaves out the sections that have a page section of their own."""
    runtime = runtime_line(info) if info else ""
    label = display_name(name, {**(info or {}), **block})  # the served model's name from its info (issue 61)
    named = f"{label} = {name}" if label != name else name  # a label= is tied to its spec once, here
    lines = [f"detector {named}" + (f"  ({runtime})" if runtime else "")]
    lat = block["latency_ms"]
    if block.get("task") != "locate":  # the locate section's lines stand in for these
        iou = "-" if block["mean_iou"] is None else f"{block['mean_iou']:.3f} over {block['with_box']} boxes"
        lines += [
            f"  accuracy {pct(block['accuracy'])}{ci(block.get('ci95'))} ({block['hits']}/{block['scored']} "
            f"scored, micro)   macro over apps {pct(block['macro_app_accuracy'])}{ci(block.get('macro_app_ci95'))}"
            + macro_datasets(block),
            f"  samples {block['samples']}   hits {block['hits']}   misses {block['misses']}   "
            f"wrong format {block[Outcome.WRONG_FORMAT]}   errors {block['errors']}   mean IoU {iou}",
        ]
        if block.get("truncated"):
            lines.append(
                f"  cut answers {block['truncated']}: the engine stopped them at max_tokens or the context's end "
                "(finish_reason length), scored as they came; `truncated` in their records"
            )
    view = DetectorView(name, block, info, cost, price)
    shown = [s for s in ordered(sections) if s.html_inline or not page]
    for section in shown:
        if section.order < LATENCY:
            lines += section.terminal(view)
    lines.append(
        f"  latency ms  p50 {ms(lat['p50'])}  p95 {ms(lat['p95'])}  mean {ms(lat['mean'])}  "
        f"({lat['n']} predictions, {lat['total_s']:.1f} s in the detector)"
        + (
            f"   throughput {info['throughput']['samples_per_s']:.2f} samples/s"
            if info and isinstance(info.get("throughput"), Mapping)
            else ""
        )
    )
    for section in shown:
        if section.order >= LATENCY:
            lines += section.terminal(view)
    return lines


def dataset_line(dataset: Mapping[str, Any], shard: Mapping[str, Any] | None = None) -> str:
    """`dataset NAME: FORMAT, 300 samples, ...`; a shard's line says what it scores of the set
    (`shard 1/2: 150 of 300 samples`), as its header does."""
    defects = f", {dataset['defects']} unusable" if dataset.get("defects") else ""
    problems = f", {len(dataset['problems'])} label problems" if dataset.get("problems") else ""
    count = f"{dataset['samples']} samples"
    if dataset.get("limit") is not None:
        count = f"{dataset['limit']} of {dataset['samples']} samples (--grounding-limit)"
    planned = shard_planned(shard, dataset["name"])
    if shard is not None and planned is not None:
        cut = f" (--grounding-limit {dataset['limit']})" if dataset.get("limit") is not None else ""
        count = f"shard {shard['index']}/{shard['count']}: {planned} of {dataset['samples']} samples{cut}"
    fingerprint = dataset["fingerprint"]
    return f"dataset {dataset['name']}: {dataset['format']}, {count}{defects}{problems}, fingerprint {fingerprint}"


def shard_planned(shard: Mapping[str, Any] | None, name: str) -> int | None:
    """How many of dataset `name`'s samples the shard was to score (None: not a shard, or the
    shard entry does not list the set)."""
    for entry in (shard or {}).get("datasets") or ():
        if entry.get("name") == name:
            return int(entry["planned"])
    return None


def profile_lines(profile: Mapping[str, Any] | None) -> list[str]:
    """The scoring profile's line of the header: none for the default (pixel) profile."""
    name = str((profile or {}).get("name") or DEFAULT_PROFILE)
    if name == DEFAULT_PROFILE:
        return []
    rule = (profile or {}).get("rule")
    return [f"scoring: {name}" + (f" ({rule})" if rule else "")]


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
    result = RunResult.of_report(document, verdicts=verdicts_of(document), sections=found)
    if view:
        result = replace(result, view=replace(result.view, **view))
    return summary_lines(result)


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
