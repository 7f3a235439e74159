"""Why a model misses (issue 46), as report sections: accuracy against tolerance (`tolerance`, in
px; `tolerance_share`, in shares of the diagonal), the misses by kind with their distances and a
heat map (`miss_analysis`), the coordinate-frame diagnosis (`diagnosis`), all from a detector
block's records (analysis/misses.py); and the frame check before the run (`frame_check`, at the
report's top: plugin/common/plan.py puts it there)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import TYPE_CHECKING, Any, ClassVar

from ..analysis import misses
from ..core.frames import FRAME_NAMES
from ..core.misses import MISS_KINDS
from ..core.numbers import pct
from ._render import html_table, md_table
from .base import RUN, BlockRecords, DetectorView, HtmlPage, Section

if TYPE_CHECKING:
    from ..analysis.document import RunRecords

COUNT = {"$ref": "#/$defs/count"}
SHARE = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
NUMBER = {"type": ["number", "null"]}


def _grounding(found: BlockRecords) -> bool:
    return bool(found.records) and found.task == "grounding"


class Tolerance(Section):
    name = "tolerance"
    title = "Accuracy against tolerance"
    order = 44  # under the accuracy lines

    def figures(self, found: BlockRecords) -> Any | None:
        return misses.tolerance_curve(found.records)["px"] if _grounding(found) else None

    def terminal(self, view: DetectorView) -> list[str]:
        curve = view.found(self.name)
        if not curve:
            return []
        return ["  within px   " + "   ".join(f"{row['px']}: {pct(row['accuracy'])}" for row in curve)]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = [[key, *(pct(row["accuracy"]) for row in curve)] for key, curve in self.blocks(document)]
        if not rows:
            return []
        header = ["detector", *(f"{px} px" for px in misses.TOLERANCES_PX)]
        return ["### Accuracy against tolerance", "", *md_table(header, rows)]

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        blocks = self.blocks(document)
        if not blocks:
            return ""
        return '<h2 id="tolerance">Accuracy against tolerance</h2>' + "".join(
            f"<h3>{escape(key)}</h3>{curve_svg(curve)}" for key, curve in blocks
        )

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        for row in self.found_in(document, key) or []:
            if isinstance(row.get("accuracy"), (int, float)):
                yield f"tolerance.px{row['px']}", float(row["accuracy"])

    def schema(self) -> Mapping[str, Any]:
        return {
            "type": "array",
            "description": "issue 46: accuracy with a click within px of its box counted a hit (analysis/misses.py); "
            "px 0 is the accuracy.",
            "items": {
                "type": "object",
                "required": ["px", "accuracy", "ci95"],
                "properties": {
                    "px": {"type": "number", "minimum": 0},
                    "accuracy": SHARE,
                    "ci95": {"$ref": "#/$defs/ci95"},
                },
                "additionalProperties": False,
            },
        }

    def example(self) -> Mapping[str, Any]:
        from . import testing

        return testing.document(testing.misses_records(), self)


class ToleranceShare(Section):
    name = "tolerance_share"
    title = "Accuracy against tolerance, as a share of the diagonal"
    order = 45
    not_in: ClassVar[Mapping[str, str]] = {
        "terminal": "the px curve (tolerance) is the line shown; this one is in the JSON",
        "markdown": "the px curve (tolerance) is the table shown; this one is in the JSON",
        "html": "the px curve (tolerance) is the chart shown; this one is in the JSON",
    }

    def figures(self, found: BlockRecords) -> Any | None:
        return misses.tolerance_curve(found.records)["share_of_diagonal"] if _grounding(found) else None

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        for row in self.found_in(document, key) or []:
            if isinstance(row.get("accuracy"), (int, float)):
                share = f"{row['share'] * 100:g}".replace(".", "_")  # 0.5% -> pct0_5: the dot separates names
                yield f"tolerance_share.pct{share}", float(row["accuracy"])

    def schema(self) -> Mapping[str, Any]:
        return {
            "type": "array",
            "description": "issue 46: accuracy at tolerances that are a share of the screen's diagonal.",
            "items": {
                "type": "object",
                "required": ["share", "accuracy", "ci95"],
                "properties": {
                    "share": {"type": "number", "minimum": 0},
                    "accuracy": SHARE,
                    "ci95": {"$ref": "#/$defs/ci95"},
                },
                "additionalProperties": False,
            },
        }

    def example(self) -> Mapping[str, Any]:
        from . import testing

        return testing.document(testing.misses_records(), self)


class MissAnalysis(Section):
    name = "miss_analysis"
    title = "Why it misses"
    order = 46

    def figures(self, found: BlockRecords) -> Any | None:
        return misses.miss_figures(found.records) if _grounding(found) else None

    def terminal(self, view: DetectorView) -> list[str]:
        found = view.found(self.name)
        if not found or not found["misses"]:
            return []
        kinds = ", ".join(f"{kind} {n}" for kind, n in found["kinds"].items() if n)
        median = found["distance_px"]["median"]
        far = f"; median distance {median:.0f} px" if median is not None else ""
        return [f"  failed items by kind  {kinds or '-'}{far}"]  # misses and wrong formats: one word (issue 61)

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = [
            [key, f["misses"], *(f["kinds"].get(kind, 0) for kind in MISS_KINDS), _px(f["distance_px"]["median"])]
            for key, f in self.blocks(document)
            if f["misses"]
        ]
        if not rows:
            return []
        return ["### Why it misses", "", *md_table(["detector", "failed items", *MISS_KINDS, "median px"], rows)]

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        blocks = [(key, f) for key, f in self.blocks(document) if f["misses"]]
        if not blocks:
            return ""
        header = ["detector", "failed items", *MISS_KINDS, "median px"]
        rows = [[key, f["misses"], *(f["kinds"].get(k, 0) for k in MISS_KINDS), _px(f["distance_px"]["median"])]
                for key, f in blocks]  # fmt: skip
        maps = "".join(heatmap_figure(key, f) for key, f in blocks)
        return (
            '<h2 id="why-it-misses">Why it misses</h2>'
            + html_table(header, rows, [False] + [True] * (len(header) - 1))
            + maps
        )

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = self.found_in(document, key) or {}
        for kind, count in (found.get("kinds") or {}).items():
            yield f"miss_analysis.{kind}", float(count)
        median = (found.get("distance_px") or {}).get("median")
        if isinstance(median, (int, float)):
            yield "miss_analysis.median_px", float(median)

    def schema(self) -> Mapping[str, Any]:
        bins = {
            "type": "object",
            "required": ["from_px", "to_px", "misses"],
            "properties": {"from_px": {"type": "number"}, "to_px": NUMBER, "misses": COUNT},
            "additionalProperties": False,
        }
        return {
            "type": "object",
            "description": "issue 46: the misses by kind (a record's miss_kind), their distances to the box "
            "(quantiles, bins) and a heat map of where their clicks fall (rows top to bottom).",
            "required": ["misses", "kinds", "distance_px", "heatmap"],
            "properties": {
                "misses": COUNT,
                "kinds": {"type": "object", "additionalProperties": COUNT},
                "distance_px": {
                    "type": "object",
                    "properties": {
                        "with_click": COUNT,
                        "p25": NUMBER,
                        "median": NUMBER,
                        "p75": NUMBER,
                        "p90": NUMBER,
                        "bins": {"type": "array", "items": bins},
                    },
                    "additionalProperties": False,
                },
                "heatmap": {
                    "type": "object",
                    "required": ["grid", "cells"],
                    "properties": {
                        "grid": {"type": "integer", "minimum": 1},
                        "cells": {"type": "array", "items": {"type": "array", "items": COUNT}},
                    },
                    "additionalProperties": False,
                },
            },
            "additionalProperties": False,
        }

    def example(self) -> Mapping[str, Any]:
        from . import testing

        return testing.document(testing.misses_records(), self)


FRAME_FINDING = {
    "type": "object",
    "required": ["name", "evidence", "suggestion"],
    "properties": {
        "name": {"enum": list(FRAME_NAMES)},
        "frame": {"type": ["string", "null"]},
        "evidence": {"type": "string"},
        "suggestion": {
            "type": "array",
            "items": {"type": "string"},
            "description": "the rescore arguments that decode the stored answers in the frame found; empty when "
            "none is named.",
        },
        "readable": COUNT,
        "answers": COUNT,
        "on_target": {"type": "object", "additionalProperties": COUNT},
        "fitted": {"type": "object", "additionalProperties": {"type": "number"}},
    },
    "additionalProperties": False,
}


class Diagnosis(Section):
    name = "diagnosis"
    title = "Coordinate-frame diagnosis"
    order = 47

    def figures(self, found: BlockRecords) -> Any | None:
        return misses.diagnosis(found.records) if _grounding(found) else None

    def terminal(self, view: DetectorView) -> list[str]:
        finding = (view.found(self.name) or {}).get("frame") or {}
        if finding.get("name") in (None, "as-preset", "unknown"):
            return []
        return [
            f"  frame diagnosis  answers fit frame {finding.get('frame')}: {finding.get('evidence')}; "
            f"try `rescore {' '.join(finding.get('suggestion') or [])}`"
        ]

    def rows(self, document: Mapping[str, Any]) -> list[list[Any]]:
        from ..analysis.frame_hint import suggestion_of

        # "rescore with": the diagnosis's suggestion, else the frame check's (issue 61: warn runs on)
        summary, checks = document.get("summary") or {}, document.get("frame_check") or {}
        return [
            [key, f["frame"]["name"], suggestion_of(summary[key], checks), f["frame"]["evidence"]]
            for key, f in self.blocks(document)
            if f.get("frame")
        ]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = self.rows(document)
        header = ["detector", "frame", "rescore with", "evidence"]
        return ["### Coordinate-frame diagnosis", "", *md_table(header, rows)] if rows else []

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        rows = self.rows(document)
        if not rows:
            return ""
        header = ["detector", "frame", "rescore with", "evidence"]
        return '<h2 id="frame-diagnosis">Coordinate-frame diagnosis</h2>' + html_table(header, rows)

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        finding = (self.found_in(document, key) or {}).get("frame") or {}
        if finding.get("name"):
            yield "diagnosis.frame_mismatch", float(finding["name"] not in ("as-preset", "unknown"))

    def schema(self) -> Mapping[str, Any]:
        return {
            "type": "object",
            "description": "issue 46: the coordinate-frame fit of the clicks against their targets, from the records "
            "alone (core/frames.py).",
            "required": ["frame"],
            "properties": {"frame": {"$ref": "#/$defs/frameFinding"}},
            "additionalProperties": False,
        }

    def schema_defs(self) -> Mapping[str, Any]:
        return {"frameFinding": FRAME_FINDING}

    def example(self) -> Mapping[str, Any]:
        from . import testing

        return testing.document(testing.misses_records(), self)


class FrameCheck(Section):
    name = "frame_check"
    title = "Frame check"
    level = RUN
    order = 5
    not_in: ClassVar[Mapping[str, str]] = {
        "terminal": "its line is a note of the run's header and summary (plugin/controller/startup.py)",
        "tracker": "a check before the run, not a figure of it; its finding is in the report",
    }

    def run_figures(self, found: RunRecords) -> Mapping[str, Any] | None:
        """What each model detector's frame check found before the run (None: no check ran)."""
        return dict(found.checks.get(self.name) or {}) or None

    def rows(self, document: Mapping[str, Any]) -> list[list[Any]]:
        found = document.get(self.name) or {}
        return [
            [spec, c["name"], c["mode"], c["requests"], c["cached"], " ".join(c["suggestion"]) or "-", c["evidence"]]
            for spec, c in found.items()
        ]

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = self.rows(document)
        header = ["detector", "frame", "mode", "requests", "from the cache", "rescore with", "evidence"]
        return ["### Frame check", "", *md_table(header, rows)] if rows else []

    def example(self) -> Mapping[str, Any]:
        from . import testing

        check = {
            "name": "rel1000",
            "frame": "rel1000",
            "mode": "warn",
            "requests": 12,
            "cached": 0,
            "failed": 0,
            "evidence": "rel1000 12/12",
            "suggestion": ["--frame", "rel1000"],
        }
        return {**testing.document(testing.plain(), self), "frame_check": {testing.KEY: check}}

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        rows = self.rows(document)
        if not rows:
            return ""
        header = ["detector", "frame", "mode", "requests", "from the cache", "rescore with", "evidence"]
        return '<h2 id="frame-check">Frame check</h2>' + html_table(header, rows)

    def schema(self) -> Mapping[str, Any]:
        return {
            "type": "object",
            "description": "issue 46, --grounding-frame-check: per detector spec, what the frame check before the run "
            "found (detectors/frame_check.py): its mode, requests (and those the answer cache answered), failed "
            "requests, the calibration answers, and the fit (name, frame, evidence, suggestion).",
            "additionalProperties": {
                "type": "object",
                "required": ["mode", "requests", "cached", "failed", "name", "evidence", "suggestion"],
                "properties": {
                    "mode": {"enum": ["fail", "warn", "off"]},
                    "requests": COUNT,
                    "cached": COUNT,
                    "failed": COUNT,
                    "raw_answers": {"type": "array", "items": {"type": ["string", "null"]}},
                    "answers": COUNT,
                    "name": {"type": "string"},
                    "frame": {"type": ["string", "null"]},
                    "evidence": {"type": "string"},
                    "suggestion": {"type": "array", "items": {"type": "string"}},
                    "readable": COUNT,
                    "on_target": {"type": "object", "additionalProperties": COUNT},
                    "fitted": {"type": "object", "additionalProperties": {"type": "number"}},
                },
                "additionalProperties": False,
            },
        }


def _px(value: Any) -> str:
    return "-" if value is None else f"{value:.0f}"


def curve_svg(curve: list[Mapping[str, Any]], width: int = 360, height: int = 160) -> str:
    """Accuracy (0-100%) against tolerance (px, evenly spaced ticks), as a polyline."""
    left, bottom, top, right = 36, height - 24, 10, width - 10
    n = max(1, len(curve) - 1)
    points, labels = [], []
    for i, row in enumerate(curve):
        x = left + (right - left) * i / n
        y = bottom - (bottom - top) * float(row.get("accuracy") or 0.0)
        points.append(f"{x:.1f},{y:.1f}")
        labels.append(f'<text x="{x:.1f}" y="{height - 8}" font-size="10" text-anchor="middle">{row["px"]}</text>')
        labels.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3"><title>{row["px"]} px: {pct(row["accuracy"])}</title></circle>'
        )
    axes = (
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#888"/>'
        f'<text x="4" y="{top + 8}" font-size="10">100%</text><text x="12" y="{bottom}" font-size="10">0%</text>'
    )
    line = f'<polyline fill="none" stroke="#3b5bdb" stroke-width="2" points="{" ".join(points)}"/>'
    return (
        f'<svg class="tolerance" width="{width}" height="{height}" role="img" '
        f'aria-label="accuracy against tolerance in px">{axes}{line}{"".join(labels)}</svg>'
    )


def heatmap_figure(key: str, found: Mapping[str, Any]) -> str:
    """The heat map with what it covers said (issue 61): the failed items whose click lands on the
    screen, out of all of them; those without a click (wrong format) or off the screen are not drawn."""
    cells = found["heatmap"]["cells"]
    drawn = sum(sum(row) for row in cells)
    said = (
        f"{drawn} of {found['misses']} failed items drawn: those whose click lands on the screen (a wrong format "
        "has no click; a click off the screen has no cell). Each screen is split into a "
        f"{found['heatmap']['grid']} x {found['heatmap']['grid']} grid, scaled to the screen's size."
    )
    return (
        f"<h3>Where the failed items' clicks fall: {escape(key)}</h3>{heatmap_svg(cells)}"
        f'<p class="muted">{escape(said)}</p>'
    )


def heatmap_svg(cells: list[list[int]], size: int = 200) -> str:
    """Where on the screen the failed items' clicks fall: a grid, darker where more, with its axes
    (left to right, top to bottom, in shares of the screen) and its scale (clicks per cell)."""
    grid = max(1, len(cells))
    left, top, bottom, scale_w = 34, 6, 30, 70
    step = size / grid
    most = max((c for row in cells for c in row), default=0)
    parts = []
    for r, row in enumerate(cells):
        for c, count in enumerate(row):
            shade = count / most if most else 0.0
            parts.append(
                f'<rect x="{left + c * step:.1f}" y="{top + r * step:.1f}" width="{step:.1f}" height="{step:.1f}" '
                f'fill="rgba(201,42,42,{shade:.2f})" stroke="#ddd"><title>{count} failed items</title></rect>'
            )
    axis = f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="#888"/>'
    for share in (0.0, 0.5, 1.0):  # ticks: 0%, 50%, 100% of the screen's width and height
        x, y = left + share * size, top + share * size
        axis += (
            f'<text x="{x:.1f}" y="{top + size + 12}" font-size="9" text-anchor="middle">{share:.0%}</text>'
            f'<text x="{left - 3}" y="{y + 3:.1f}" font-size="9" text-anchor="end">{share:.0%}</text>'
        )
    axis += (
        f'<text x="{left + size / 2:.1f}" y="{top + size + 25}" font-size="10" text-anchor="middle">'
        "x: left to right</text>"
        f'<text x="10" y="{top + size / 2:.1f}" font-size="10" text-anchor="middle" '
        f'transform="rotate(-90 10 {top + size / 2:.1f})">y: top to bottom</text>'
    )
    x0 = left + size + 14
    scale = (
        '<defs><linearGradient id="heat-scale" x1="0" y1="1" x2="0" y2="0">'
        '<stop offset="0" stop-color="rgba(201,42,42,0)"/><stop offset="1" stop-color="rgba(201,42,42,1)"/>'
        "</linearGradient></defs>"
        f'<rect x="{x0}" y="{top}" width="12" height="{size}" fill="url(#heat-scale)" stroke="#888"/>'
        f'<text x="{x0 + 16}" y="{top + 8}" font-size="9">{most}</text>'
        f'<text x="{x0 + 16}" y="{top + size}" font-size="9">0</text>'
        f'<text x="{x0 + 16}" y="{top + size / 2:.1f}" font-size="9">per cell</text>'
    )
    width, height = left + size + scale_w, top + size + bottom
    return (
        f'<svg class="heatmap" width="{width}" height="{height}" role="img" '
        f'aria-label="where the failed items\' clicks fall on the screen: {most} at most in a cell">'
        f"{''.join(parts)}{axis}{scale}</svg>"
    )


TOLERANCE = Tolerance()
TOLERANCE_SHARE = ToleranceShare()
MISS_ANALYSIS = MissAnalysis()
DIAGNOSIS = Diagnosis()
FRAME_CHECK = FrameCheck()
