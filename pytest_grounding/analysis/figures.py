"""The report's figures as plain data, from a JSON report document. Pure: the HTML page draws them
as inline SVG (htmlreport/svg.py), --grounding-plots as PNGs with matplotlib (plots.py), so both
show the same numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SIZE_BUCKETS = ("<32", "32-100", ">100")
IOU_BINS = 10
SLICE_TITLES = {
    "dataset": "dataset",
    "element_type": "element type",
    "app": "app",
    "app_category": "app category",
    "platform": "platform",
    "size": "target size (px)",
}


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float | None, ...]  # one per category (bars, lines, histograms)
    intervals: tuple[tuple[float, float] | None, ...] = ()  # each value's 95% interval (error bars), or none


def slice_intervals(
    rows: Sequence[Mapping[str, Any]], categories: Sequence[str]
) -> tuple[tuple[float, float] | None, ...]:
    """The rows' `ci95` in the order of `categories` (None where a row has none)."""
    found = {str(row["value"]): row.get("ci95") for row in rows}
    return tuple(
        (float(bounds[0]), float(bounds[1])) if bounds else None for bounds in (found.get(c) for c in categories)
    )


@dataclass(frozen=True)
class Point:
    name: str
    x: float
    y: float


@dataclass(frozen=True)
class Figure:
    """kind: line | bars (vertical, grouped) | hbars (horizontal, grouped) | scatter | histogram."""

    key: str
    kind: str
    title: str
    x_label: str
    y_label: str
    categories: tuple[str, ...] = ()
    series: tuple[Series, ...] = ()
    points: tuple[Point, ...] = ()
    fraction: bool = True  # values are shares 0..1 (drawn as percentages)


def blocks(document: Mapping[str, Any], task: str | None = None) -> list[tuple[str, Mapping[str, Any]]]:
    """(summary key, block) for the report's detectors, of one task or all."""
    summary = document.get("summary") or {}
    return [(key, block) for key, block in summary.items() if task is None or block.get("task", "grounding") == task]


def slice_values(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    return {str(row["value"]): row.get("accuracy") for row in rows}


def slice_figure(
    named: Sequence[tuple[str, Mapping[str, Any]]], key: str, *, limit: int | None = None, task: str = "grounding"
) -> Figure | None:
    """Accuracy per value of one slice, a bar per detector. `limit`: the values with most samples."""
    if not named:
        return None
    samples: dict[str, int] = {}
    for _, block in named:
        for row in block["by"][key]:
            samples[str(row["value"])] = samples.get(str(row["value"]), 0) + int(row["samples"])
    if key == "size":
        categories = [value for value in SIZE_BUCKETS if value in samples]
    else:
        categories = sorted(samples, key=lambda v: (-samples[v], v)) if limit else sorted(samples)
    categories = categories[:limit] if limit else categories
    if not categories:
        return None
    series = []
    for name, block in named:
        values = slice_values(block["by"][key])
        series.append(
            Series(name, tuple(values.get(c) for c in categories), slice_intervals(block["by"][key], categories))
        )
    measure = "hit rate" if task == "locate" else "accuracy"
    return Figure(
        key=f"{task}-by-{key}",
        kind="hbars",
        title=f"{measure} by {SLICE_TITLES[key]}",
        x_label=measure,
        y_label=SLICE_TITLES[key],
        categories=tuple(categories),
        series=tuple(series),
    )


def size_figure(named: Sequence[tuple[str, Mapping[str, Any]]]) -> Figure | None:
    """Accuracy by target size bucket, a line per detector."""
    if not named:
        return None
    series = []
    for name, block in named:
        values = slice_values(block["by"]["size"])
        series.append(
            Series(
                name,
                tuple(values.get(bucket) for bucket in SIZE_BUCKETS),
                slice_intervals(block["by"]["size"], SIZE_BUCKETS),
            )
        )
    return Figure(
        key="accuracy-by-size",
        kind="line",
        title="accuracy by target size",
        x_label="target size (px, sqrt(w*h))",  # as Box.side, the schema and the docs define it
        y_label="accuracy",
        categories=SIZE_BUCKETS,
        series=tuple(series),
    )


def latency_figure(named: Sequence[tuple[str, Mapping[str, Any]]]) -> Figure | None:
    """Median latency against accuracy, a point per detector (method)."""
    points = tuple(
        Point(name, float(block["latency_ms"]["p50"]), float(block["accuracy"]))
        for name, block in named
        if block["latency_ms"].get("p50") is not None and block.get("accuracy") is not None
    )
    if not points:
        return None
    return Figure(
        key="latency-vs-accuracy",
        kind="scatter",
        title="latency against accuracy",
        x_label="latency p50 (ms, log scale)",
        y_label="accuracy",
        points=points,
    )


def category_figure(named: Sequence[tuple[str, Mapping[str, Any]]]) -> Figure | None:
    """Accuracy by app category, a bar per detector."""
    if not named:
        return None
    categories = sorted({str(row["value"]) for _, block in named for row in block["by"]["app_category"]})
    if not categories:
        return None
    series = tuple(
        Series(
            name,
            tuple(slice_values(block["by"]["app_category"]).get(c) for c in categories),
            slice_intervals(block["by"]["app_category"], categories),
        )
        for name, block in named
    )
    return Figure(
        key="accuracy-by-app-category",
        kind="bars",
        title="accuracy by app category",
        x_label="app category",
        y_label="accuracy",
        categories=tuple(categories),
        series=series,
    )


def iou_figure(records: Sequence[Mapping[str, Any]]) -> Figure | None:
    """The element-at-click task's IoU between the returned and the target box, a histogram per
    detector (answers without a box are not counted)."""
    counts: dict[str, list[float]] = {}
    for record in records:
        if record.get("task") != "locate" or record.get("iou") is None:
            continue
        slot = counts.setdefault(str(record["detector"]), [0.0] * IOU_BINS)
        slot[min(int(float(record["iou"]) * IOU_BINS), IOU_BINS - 1)] += 1
    if not counts:
        return None
    categories = tuple(f"{i / IOU_BINS:.1f}" for i in range(IOU_BINS))
    return Figure(
        key="locate-iou-histogram",
        kind="histogram",
        title="element at click: IoU with the target box",
        x_label="IoU (bin start)",
        y_label="answers",
        categories=categories,
        series=tuple(Series(name, tuple(values)) for name, values in sorted(counts.items())),
        fraction=False,
    )


def design_figures(document: Mapping[str, Any]) -> list[Figure]:
    """The design's phase-4 plots that this report has data for."""
    grounding = blocks(document, "grounding")
    found = [
        size_figure(grounding),
        latency_figure(blocks(document)),
        category_figure(grounding),
        iou_figure(document.get("samples") or []),
    ]
    return [figure for figure in found if figure is not None]
