"""--grounding-plots DIR: the report's figures (pytest_grounding.analysis.figures) as PNGs with matplotlib,
the `plots` extra; imported here only, when plots are asked for. The HTML page draws the same
figures as SVG without it."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..analysis.figures import Figure, design_figures

PALETTE = ("#3b6fd8", "#e07b28", "#2f9e57", "#c2413b", "#8a5cc7", "#7a6a55", "#d35fa8", "#6f7a86")


class PlotsUnavailable(Exception):
    """matplotlib is not installed, or the folder cannot be made."""


def matplotlib_installed() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def check_plots(folder: Path) -> None:
    """Before the first sample runs: the extra is installed and the folder can be made."""
    if not matplotlib_installed():
        raise PlotsUnavailable(
            "needs the 'plots' extra (matplotlib is not installed): pip install \"pytest-grounding[plots]\""
        )
    if folder.exists() and not folder.is_dir():
        raise PlotsUnavailable(f"{folder} is a file, expected a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PlotsUnavailable(f"cannot create the folder {folder}: {exc.strerror or exc}") from None


def _draw(figure: Figure, axes: Any) -> None:
    if figure.kind == "scatter":
        names = list(dict.fromkeys(p.name for p in figure.points))
        for point in figure.points:
            axes.scatter([point.x], [point.y], color=PALETTE[names.index(point.name) % len(PALETTE)], s=50)
            axes.annotate(point.name, (point.x, point.y), textcoords="offset points", xytext=(6, 6), fontsize=9)
        axes.set_xscale("log")
        xs = [p.x for p in figure.points]
        axes.set_xlim(min(xs) / 3, max(xs) * 3)
        from matplotlib.ticker import LogLocator, NullFormatter

        axes.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))  # labels within one decade too
        axes.xaxis.set_major_formatter(lambda value, _pos: f"{value:g}")
        axes.xaxis.set_minor_formatter(NullFormatter())
    else:
        count = max(len(figure.series), 1)
        positions = list(range(len(figure.categories)))
        width = 0.8 / count
        for index, series in enumerate(figure.series):
            colour = PALETTE[index % len(PALETTE)]
            values = [math.nan if v is None else v for v in series.values]
            if figure.kind == "line":
                axes.plot(positions, values, marker="o", color=colour, label=series.name)
            elif figure.kind == "hbars":
                offsets = [p - 0.4 + width * (index + 0.5) for p in positions]
                axes.barh(offsets, [0 if math.isnan(v) else v for v in values], height=width, color=colour,
                          label=series.name)  # fmt: skip
            else:
                offsets = [p - 0.4 + width * (index + 0.5) for p in positions]
                axes.bar(offsets, [0 if math.isnan(v) else v for v in values], width=width, color=colour,
                         label=series.name)  # fmt: skip
        if figure.kind == "hbars":
            axes.set_yticks(positions, figure.categories)
            axes.invert_yaxis()
        else:
            axes.set_xticks(positions, figure.categories)
        axes.legend(fontsize=9)
    if figure.fraction:
        axis = axes.xaxis if figure.kind == "hbars" else axes.yaxis
        (axes.set_xlim if figure.kind == "hbars" else axes.set_ylim)(0, 1.02)
        axis.set_major_formatter(lambda value, _pos: f"{value * 100:.0f}%")
    axes.set_title(figure.title)
    axes.set_xlabel(figure.x_label)
    axes.set_ylabel(figure.y_label)
    axes.grid(alpha=0.3)


def write_plots(document: Mapping[str, Any], folder: Path) -> list[Path]:
    """One PNG per figure the report has data for, named after the figure."""
    try:  # a bare Figure, not pyplot: no GUI backend, no global state
        from matplotlib.figure import Figure as MplFigure
    except ImportError:
        raise PlotsUnavailable("needs the 'plots' extra: pip install \"pytest-grounding[plots]\"") from None

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for figure in design_figures(document):
        canvas = MplFigure(figsize=(6.4, 4.0), dpi=100, layout="constrained")
        _draw(figure, canvas.add_subplot())
        path = folder / f"{figure.key}.png"
        canvas.savefig(path)
        written.append(path)
    return written
