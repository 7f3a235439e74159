"""Figures (pytest_grounding.analysis.figures) as inline SVG: no matplotlib, no script, no network."""

from __future__ import annotations

import math
from html import escape

from ...analysis.figures import Figure, Series

PALETTE = ("#3b6fd8", "#e07b28", "#2f9e57", "#c2413b", "#8a5cc7", "#7a6a55", "#d35fa8", "#6f7a86")
WIDTH = 560


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _text(x: float, y: float, text: str, *, anchor: str = "start", size: int = 11, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


def _label(value: float | None, fraction: bool) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.0f}%" if fraction else f"{value:g}"


def _legend(figure: Figure, y: float) -> list[str]:
    names = [s.name for s in figure.series] or list(dict.fromkeys(p.name for p in figure.points))
    parts, x = [], 10.0
    for index, name in enumerate(names):
        parts.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{colour(index)}"/>')
        parts.append(_text(x + 14, y, name))
        x += 24 + 7 * len(name)
    return parts


def _frame(figure: Figure, height: float, body: list[str]) -> str:
    title = _text(10, 16, figure.title, size=13, extra=' font-weight="600"')
    return (
        f'<svg class="figure" data-figure="{escape(figure.key)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{WIDTH}" height="{height:.0f}" viewBox="0 0 {WIDTH} {height:.0f}" role="img" '
        f'aria-label="{escape(figure.title)}">{title}{"".join(body)}</svg>'
    )


def _bounds(series: Series, index: int) -> tuple[float, float] | None:
    return series.intervals[index] if index < len(series.intervals) else None


def whisker(a: float, b: float, at: float, *, across: bool, title: str) -> str:
    """An error bar from `a` to `b` (pixels along the value axis) at `at`, with end caps:
    `across` True for horizontal bars (the bar runs along x)."""
    cap = 2.5
    if across:
        path = f"M{a:.1f},{at - cap:.1f}V{at + cap:.1f}M{a:.1f},{at:.1f}H{b:.1f}M{b:.1f},{at - cap:.1f}V{at + cap:.1f}"
    else:
        path = f"M{at - cap:.1f},{a:.1f}H{at + cap:.1f}M{at:.1f},{a:.1f}V{b:.1f}M{at - cap:.1f},{b:.1f}H{at + cap:.1f}"
    return (
        f'<path class="ci" d="{path}" stroke="#222" stroke-width="1" fill="none"><title>{escape(title)}</title></path>'
    )


def _ci_title(series: Series, category: str, bounds: tuple[float, float]) -> str:
    return f"{series.name}, {category}: 95% CI {_label(bounds[0], True)}-{_label(bounds[1], True)}"


def hbars(figure: Figure) -> str:
    """Horizontal grouped bars: a row per category, a bar per series, 0..100%."""
    left, right, bar = 150.0, WIDTH - 60.0, 9.0
    group = bar * len(figure.series) + 6
    top = 44.0
    height = top + group * len(figure.categories) + 14
    body = _legend(figure, 34)
    for row, category in enumerate(figure.categories):
        y0 = top + row * group
        name = category if len(category) <= 22 else category[:21] + "~"
        body.append(_text(left - 6, y0 + group / 2 + 1, name, anchor="end"))
        for index, series in enumerate(figure.series):
            value = series.values[row]
            width = (right - left) * (value or 0.0)
            y = y0 + index * bar
            body.append(
                f'<rect x="{left:.1f}" y="{y:.1f}" width="{max(width, 0.5):.1f}" height="{bar - 1:.1f}" '
                f'fill="{colour(index)}"><title>{escape(series.name)}, {escape(category)}: '
                f"{_label(value, True)}</title></rect>"
            )
            bounds = _bounds(series, row)
            label_x = left + width + 4
            if bounds is not None and value is not None:
                a, b = left + (right - left) * bounds[0], left + (right - left) * bounds[1]
                body.append(whisker(a, b, y + (bar - 1) / 2, across=True, title=_ci_title(series, category, bounds)))
                label_x = max(label_x, b + 4)
            body.append(_text(label_x, y + bar - 2, _label(value, True), size=9))
    body.append(f'<line x1="{left}" y1="{top - 2}" x2="{left}" y2="{height - 12:.1f}" stroke="#888"/>')
    return _frame(figure, height, body)


def _axes(figure: Figure, box: tuple[float, float, float, float], top_value: float) -> list[str]:
    left, top, right, bottom = box
    parts = [
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#888"/>',
    ]
    for step in range(5):
        value = top_value * step / 4
        y = bottom - (bottom - top) * step / 4
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(_text(left - 4, y + 4, _label(value, figure.fraction), anchor="end", size=9))
    parts.append(_text((left + right) / 2, bottom + 30, figure.x_label, anchor="middle", size=10))
    parts.append(
        _text(12, (top + bottom) / 2, figure.y_label, anchor="middle", size=10,
              extra=f' transform="rotate(-90 12 {(top + bottom) / 2:.1f})"')
    )  # fmt: skip
    return parts


def columns(figure: Figure) -> str:
    """Vertical grouped bars (bars, histogram) or a line per series (line)."""
    box = (50.0, 44.0, WIDTH - 16.0, 214.0)
    left, top, right, bottom = box
    top_value = 1.0
    if not figure.fraction:
        top_value = max([v or 0.0 for s in figure.series for v in s.values] + [1.0])
        top_value = float(math.ceil(top_value / 4) * 4)
    body = _legend(figure, 34) + _axes(figure, box, top_value)
    slot = (right - left) / max(len(figure.categories), 1)

    def y_of(value: float) -> float:
        return bottom - (bottom - top) * value / top_value

    for col, category in enumerate(figure.categories):
        body.append(_text(left + slot * (col + 0.5), bottom + 14, category, anchor="middle", size=9))
    for index, series in enumerate(figure.series):
        if figure.kind == "line":
            known = [(col, value) for col, value in enumerate(series.values) if value is not None]
            points = [(left + slot * (col + 0.5), y_of(value), value) for col, value in known]
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
            body.append(f'<polyline points="{path}" fill="none" stroke="{colour(index)}" stroke-width="2"/>')
            for (col, _), (x, y, value) in zip(known, points, strict=True):
                bounds = _bounds(series, col)
                if bounds is not None and figure.fraction:
                    title = _ci_title(series, figure.categories[col], bounds)
                    body.append(whisker(y_of(bounds[0]), y_of(bounds[1]), x, across=False, title=title))
                body.append(
                    f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour(index)}"><title>'
                    f"{escape(series.name)}: {_label(value, figure.fraction)}</title></circle>"
                )
            continue
        width = slot * 0.8 / max(len(figure.series), 1)
        for col, share in enumerate(series.values):
            x = left + slot * col + slot * 0.1 + index * width
            y = y_of(share or 0.0)
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(width - 1, 1):.1f}" height="{max(bottom - y, 0.5):.1f}" '
                f'fill="{colour(index)}"><title>{escape(series.name)}, {escape(figure.categories[col])}: '
                f"{_label(share, figure.fraction)}</title></rect>"
            )
            bounds = _bounds(series, col)
            if bounds is not None and share is not None and figure.fraction:
                title = _ci_title(series, figure.categories[col], bounds)
                middle = x + max(width - 1, 1) / 2
                body.append(whisker(y_of(bounds[0]), y_of(bounds[1]), middle, across=False, title=title))
    return _frame(figure, bottom + 40, body)


def scatter(figure: Figure) -> str:
    """Points on a log x axis (latency) against a share (accuracy)."""
    box = (50.0, 44.0, WIDTH - 16.0, 214.0)
    left, top, right, bottom = box
    body = _legend(figure, 34) + _axes(figure, box, 1.0)
    logs = [math.log10(max(p.x, 1e-3)) for p in figure.points]
    low, high = min(logs) - 0.5, max(logs) + 0.5  # half a decade of room either side

    def x_of(log: float) -> float:
        return left + (right - left) * (log - low) / (high - low)

    ticks = [d + math.log10(m) for d in range(math.floor(low), math.ceil(high) + 1) for m in (1, 2, 5)]
    for tick in (t for t in ticks if low <= t <= high):
        body.append(_text(x_of(tick), bottom + 14, f"{10.0**tick:.3g}", anchor="middle", size=9))
    names = list(dict.fromkeys(p.name for p in figure.points))
    for point, log in zip(figure.points, logs, strict=True):
        x, y = x_of(log), bottom - (bottom - top) * point.y
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour(names.index(point.name))}"><title>'
            f"{escape(point.name)}: {point.x:g} ms, {_label(point.y, True)}</title></circle>"
        )
        body.append(_text(x + 7, y - 6, point.name, size=10))
    return _frame(figure, bottom + 40, body)


def render(figure: Figure) -> str:
    if figure.kind == "hbars":
        return hbars(figure)
    if figure.kind == "scatter":
        return scatter(figure)
    return columns(figure)
