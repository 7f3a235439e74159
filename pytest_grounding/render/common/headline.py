"""A detector's headline lines and the slice tables as text, which the terminal, the markdown summary
and the HTML page's detector box all show (issue 55: one text for every output). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...analysis import cost as cost_mod
from ...analysis.intervals import span
from ...core.identity import display_name
from ...core.numbers import ms, pct
from ...core.profiles import DEFAULT_PROFILE
from ...core.record import Outcome
from ...sections import LATENCY, DetectorView, ordered

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
