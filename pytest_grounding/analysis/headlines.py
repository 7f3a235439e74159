"""Each public benchmark's own headline figure and slices, computed as its authors compute them,
beside the pooled accuracy. Pure: records in (plain dicts carrying `benchmark`, the slices a
loader put in `Sample.extra["benchmark"]`), plain dicts out. Errors (not the model's answers) are
left out everywhere, as in the pooled accuracy; wrong-format answers stay in as misses.

- OSWorld-G: accuracy over every row, refusal rows included (its eval.py), and per paper category
  (multi-label: a row counts in each of its categories).
- UI-Vision: the unweighted mean of the basic, functional and spatial splits ("Final Avg").
- MMBench-GUI L2: mean of Basic and Advanced, each sample-weighted over its platforms.
- CUActSpot: the unweighted mean over modalities.
- Showdown-Clicks: accuracy (its utils.py adds a 95% bootstrap interval; every headline here has
  its 95% interval, `ci95`, from analysis/intervals.py: clustered by screen, no random draws).
- ScreenSpot-v2 variants: accuracy per instruction style, negative rows scored on refusal.
- VenusBench-GD: eval.py's action_acc, correct over all rows (micro), by task, group, application...
- WinDeskGround: correct over the rows counted; the rows its evaluate_model.py skips (no image,
  instruction or box) are errors here and their number is said beside the figure (`not_counted`).
- CAGUI-Grounding: the mean of the fun2point and text2point accuracies (the README's "average"
  also holds bbox2text, which is no grounding task).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.record import Outcome
from . import intervals


@dataclass(frozen=True)
class Headline:
    label: str  # what the figure is, said in the summary
    slices: tuple[str, ...]  # the benchmark's own slice keys, in the order shown
    figure: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]
    over: str | None = None  # the slice whose values' accuracies the figure averages; None: micro


def averaged(label: str, slices: tuple[str, ...], key: str, expected: Sequence[str] = ()) -> Headline:
    """A headline that is the unweighted mean of `key`'s values' accuracies."""
    return Headline(label, slices, mean_over(key, expected), over=key)


def accuracy(records: Sequence[Mapping[str, Any]]) -> float | None:
    scored = [r for r in records if r["outcome"] != Outcome.ERROR]
    return sum(1 for r in scored if r["outcome"] == Outcome.HIT) / len(scored) if scored else None


def values_of(record: Mapping[str, Any], key: str) -> list[str]:
    value = record.get("benchmark", {}).get(key)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def slice_rows(records: Sequence[Mapping[str, Any]], key: str) -> list[dict[str, Any]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        for value in values_of(record, key):
            groups.setdefault(value, []).append(record)
    rows = []
    for value in sorted(groups):
        scored = [r for r in groups[value] if r["outcome"] != Outcome.ERROR]
        rows.append(
            {
                "value": value,
                "samples": len(groups[value]),
                "scored": len(scored),
                "hits": sum(1 for r in scored if r["outcome"] == Outcome.HIT),
                "accuracy": accuracy(groups[value]),
            }
        )
    return rows


def mean_over(key: str, expected: Sequence[str] = ()) -> Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]:
    """The unweighted mean of the accuracies of `key`'s values (each value's own micro accuracy).
    `expected` values absent from the run are named, so a partial run is not mistaken for the
    benchmark's figure."""

    def figure(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        parts = {row["value"]: row["accuracy"] for row in slice_rows(records, key)}
        present = [v for v in parts.values() if v is not None]
        missing = [v for v in expected if v not in parts]
        return {
            "value": sum(present) / len(present) if present else None,
            "parts": parts,
            "missing": missing,
        }

    return figure


def micro(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"value": accuracy(records), "parts": {}, "missing": []}


def counted(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Accuracy over the rows counted, one part per data file (condition) when there are several,
    and how many rows were not counted (errors: rows the authors' code skips, or that failed)."""
    parts = {row["value"]: row["accuracy"] for row in slice_rows(records, "condition")}
    return {
        "value": accuracy(records),
        "parts": parts if len(parts) > 1 else {},
        "missing": [],
        "not_counted": sum(1 for r in records if r["outcome"] == Outcome.ERROR),
    }


HEADLINES: dict[str, Headline] = {
    "osworld-g": Headline(
        "accuracy over all rows, refusal rows included (authors' eval.py)",
        ("category", "box_type", "instructions"),
        micro,
    ),
    "osworld-g-refined": Headline(
        "accuracy over all rows of the REFINED split, refusal rows included (not comparable with the original)",
        ("category", "box_type", "instructions"),
        micro,
    ),
    "ui-vision": averaged(
        "Final Avg: mean of the basic, functional and spatial splits",
        ("split", "platform", "category", "element_type"),
        "split",
        ("basic", "functional", "spatial"),
    ),
    "mmbench-gui": averaged(
        "Average: mean of Basic and Advanced (each over its platforms, by sample)",
        ("grounding_type", "platform", "data_type"),
        "grounding_type",
        ("basic", "advanced"),
    ),
    "cuactspot": averaged(
        "mean over modalities", ("modality", "task_kind"), "modality", ("Canvas", "GUI", "Image", "Table", "Text")
    ),
    "showdown-clicks": Headline("accuracy (with its 95% interval, as its authors give one)", (), micro),
    "screenspot-v2-variants": averaged(
        "accuracy per instruction style (negative: a refusal is right)", ("style", "platform", "ui_type"), "style"
    ),
    "venusbench-gd": Headline(
        "action_acc: correct over all rows (micro), refusal rows scored on refusal",
        ("task", "tier", "group", "application", "platform", "ui_type"),
        micro,
    ),
    "windeskground": Headline(
        "accuracy: correct over the rows counted (evaluate_model.py)", ("condition", "category"), counted
    ),
    "cagui-grounding": averaged(
        "mean of fun2point and text2point (the README's average also holds bbox2text, not grounding)",
        ("task",),
        "task",
        ("fun2point", "text2point"),
    ),
}


def benchmark_figures(records: Sequence[Mapping[str, Any]], refusal_rows: str = "include") -> list[dict[str, Any]]:
    """One entry per dataset whose records carry a known benchmark: its headline and slices (as the
    authors count, whatever the policy) and the pooled accuracy (under the run's `refusal_rows`)."""
    per_dataset: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in records:
        name = record.get("benchmark", {}).get("name") if isinstance(record.get("benchmark"), Mapping) else None
        if name in HEADLINES:
            per_dataset.setdefault((record["dataset"], name), []).append(record)
    out = []
    for (dataset, name), group in sorted(per_dataset.items()):
        headline = HEADLINES[name]
        pooled = [r for r in group if not r.get("negative")] if refusal_rows == "exclude" else group
        outcomes = intervals.Outcomes.of(group)
        out.append(
            {
                "dataset": dataset,
                "benchmark": name,
                "label": headline.label,
                "pooled_accuracy": accuracy(pooled),
                "pooled_ci95": intervals.ci95(intervals.proportion(intervals.Outcomes.of(pooled))),
                **headline.figure(group),
                "ci95": intervals.ci95(headline_interval(headline, outcomes)),
                "slices": {key: with_intervals(slice_rows(group, key), outcomes, key) for key in headline.slices},
            }
        )
    return out


def headline_interval(headline: Headline, outcomes: intervals.Outcomes) -> intervals.Interval | None:
    if headline.over is None:
        return intervals.proportion(outcomes)
    key = headline.over
    return intervals.mean_over(outcomes, (values_of(r, key) for r in outcomes.records))


def with_intervals(rows: list[dict[str, Any]], outcomes: intervals.Outcomes, key: str) -> list[dict[str, Any]]:
    """A benchmark's slice rows (a record may be in several) with their 95% intervals."""
    found = intervals.slices(outcomes, (values_of(r, key) for r in outcomes.records))
    return [{**row, "ci95": intervals.ci95(found.get(row["value"]))} for row in rows]
