"""The board (analysis/board.py) as one static HTML file: no server, no script. Each cell holds the
latest run's figure, interval and sample count, a link to that run's HTML page where one sits
beside its report, a small inline-SVG trend of every run of the cell (each run's interval as a
whisker), and the cell's history in a <details> element."""

from __future__ import annotations

from html import escape
from pathlib import Path

from ...analysis.board import Board, Cell
from ...core.numbers import pct
from ...core.paths import shown_text
from ...core.safetext import terminal_line
from ...store.reports import write_atomic
from ..common.board import (
    PARTIAL,
    RESCORED,
    SMALLER,
    change_text,
    figure,
    later_text,
    miss_rows,
    miss_text,
    rescored_text,
    tier_mark,
)
from .assets import CSS
from .matrix import MATRIX_CSS, MATRIX_SCRIPT, matrix_html, tiers_html

TREND_W, TREND_H, PAD = 120, 48, 4
BOARD_CSS = """
td.cell{min-width:170px}
td.cell .fig{font-weight:600;font-variant-numeric:tabular-nums}
td.cell details{font-size:12px}
td.cell details li{margin:2px 0}
svg.trend{display:block;margin:3px 0}
"""


def e(value: object) -> str:
    """Report text as inert HTML on one line (control characters shown escaped, as in a terminal)."""
    return escape(terminal_line(value), quote=True)


def trend(cell: Cell) -> str:
    """Every run of the cell left to right (oldest first) on a 0-100% scale: a line through the
    figures, each run's 95% interval a vertical whisker; titled with each run's figure."""
    runs = cell.runs
    count = len(runs)

    def x(i: int) -> float:
        return PAD + (TREND_W - 2 * PAD) * (i / (count - 1) if count > 1 else 0.5)

    def y(share: float) -> float:
        return TREND_H - PAD - (TREND_H - 2 * PAD) * max(0.0, min(1.0, share))

    parts = [f'<rect x="0" y="0" width="{TREND_W}" height="{TREND_H}" fill="#f3f5f8"/>']
    points = [(x(i), y(r.accuracy)) for i, r in enumerate(runs) if r.accuracy is not None]
    if len(points) > 1:
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(f'<polyline class="line" points="{path}" fill="none" stroke="#3b6fd8" stroke-width="1.5"/>')
    for i, run in enumerate(runs):
        title = f"<title>{e(run.started or run.source)}: {e(figure(run))}</title>"
        if run.ci95 is not None:
            low, high = run.ci95
            parts.append(
                f'<line class="ci" x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(low):.1f}" y2="{y(high):.1f}" '
                f'stroke="#7f8ea6" stroke-width="3">{title}</line>'
            )
        if run.accuracy is not None:
            parts.append(
                f'<circle class="run" cx="{x(i):.1f}" cy="{y(run.accuracy):.1f}" r="2.5" '
                f'fill="#1d3f8a">{title}</circle>'
            )
    label = f"trend of {count} run{'s' if count != 1 else ''}"
    return (
        f'<svg class="trend" role="img" aria-label="{label}" width="{TREND_W}" height="{TREND_H}" '
        f'viewBox="0 0 {TREND_W} {TREND_H}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )


def safe_href(target: str | None) -> str | None:
    """A link the board may write: an http(s) URL as it is, or a relative path percent-encoded and
    led by `./` (a file named `javascript:alert(1).html` is a path then, never a scheme); anything
    else (another scheme, an absolute or drive path, `//host`) is no link."""
    from urllib.parse import quote, urlsplit

    if not target:
        return None
    text = str(target).replace("\\", "/")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        return None
    if urlsplit(text).scheme.lower() in ("http", "https") and text.lower().startswith(("http://", "https://")):
        return text
    if text.startswith("/") or (len(text) > 1 and text[1] == ":" and text[0].isalpha()):
        return None
    return "./" + quote(text.removeprefix("./"), safe="/")


def _link(target: str | None, text: str) -> str:
    href = safe_href(target)
    return f'<a href="{e(href)}">{e(text)}</a>' if href else e(text)


def cell_html(cell: Cell, links: dict[str, str], tier: str = "") -> str:
    """`links`: the board page's relative link to each report (by its source) and to its HTML page."""
    latest = cell.latest
    page = links.get(f"html:{latest.source}")
    items = []
    for run, found in zip(reversed(cell.runs), reversed(cell.changes), strict=True):
        source = _link(links.get(f"html:{run.source}"), run.source)
        extra = f", model {e(run.revision)}" if run.revision else ""
        extra += f", {e(rescored_text(run))}" if run.rescored is not None else ""
        items.append(
            f"<li><b>{e(pct(run.accuracy))}</b> {e(run.started or 'time not recorded')} · {source}{extra}: "
            f"{e(change_text(found))}</li>"
        )
    runs = len(cell.runs)
    return (
        f'<td class="cell" data-runs="{runs}">'
        + (f'<span class="tier" title="significance tier">{e(tier.strip())}</span> ' if tier else "")
        + f'<span class="fig">{_link(page, figure(latest))}</span>'
        + (f' <span class="muted">({e(rescored_text(latest))})</span>' if latest.rescored is not None else "")
        + (f' <span class="later muted">({e(later_text(cell))})</span>' if cell.smaller_later else "")
        + f"{trend(cell)}<details><summary>{runs} run{'s' if runs != 1 else ''}</summary>"
        f"<ul>{''.join(items)}</ul></details></td>"
    )


def render(board: Board, links: dict[str, str]) -> str:
    head = "".join(f"<th>{e(c.label)}</th>" for c in board.columns)
    rows = []
    for row in board.rows:
        cells = [
            cell_html(cell, links, tier_mark(board, row, c))
            if (cell := board.cell(row, c)) is not None
            else '<td class="cell empty">-</td>'
            for c in board.columns
        ]
        rows.append(f'<tr><th scope="row">{e(row.label)}</th>{"".join(cells)}</tr>')
    figures = sorted({(c.name, cell.latest.figure) for (_, c), cell in board.cells.items()})
    said = "".join(f"<li>{e(name)}: {e(kind)}</li>" for name, kind in figures if kind != "accuracy")
    skipped = "".join(f"<li><span class='mono'>{e(s.path)}</span>: {e(s.reason)}</li>" for s in board.skipped)
    running = "".join(f"<li><span class='mono'>{e(r.path)}</span>: {e(r.text)}</li>" for r in board.running)
    misses = "".join(
        f"<tr><th scope='row'>{e(r)}</th><td>{e(c)}</td><td>{e(miss_text(f))}</td></tr>" for r, c, f in miss_rows(board)
    )
    sections = []
    for index, column in enumerate(board.columns):
        found, table_of = board.tiers.get(column), board.matrices.get(column)
        parts = [f'<h2 id="benchmark-{index}">{e(column.label)}</h2>']
        if found is not None and len(found.ranked) > 1:
            parts.append(f"<h3>Significance tiers</h3>{tiers_html(found)}")
        if table_of is not None and table_of.rows:
            page_links, specs = [], []
            for name in table_of.columns:
                row = next(r for r in board.rows if r.label == name)
                cell = board.cell(row, column)
                run = cell.latest if cell is not None else None
                page_links.append(links.get(f"html:{run.source}", "") if run is not None else "")
                specs.append(str(run.records[0].get("detector", row.detector)) if run and run.records else row.detector)
            parts.append(f"<h3>Samples x models</h3>{matrix_html(index, table_of, page_links, specs)}")
        sections.append("".join(parts))
    table = (
        f'<table id="board"><thead><tr><th>configuration</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        if board.rows
        else "<p>No report matched.</p>"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>pytest-grounding board</title><style>{CSS}{BOARD_CSS}{MATRIX_CSS}</style></head><body><header>"
        f"<h1>pytest-grounding board</h1><p class='muted'>{board.reports} reports · {len(board.rows)} "
        f"configurations · {len(board.columns)} benchmarks</p></header><main>{table}"
        "<p class='muted'>Each cell: the latest run over the most samples, its headline accuracy, its 95% interval "
        f"(clustered by screen) and the samples scored ({PARTIAL} a partial run; {SMALLER} a later run over fewer "
        f"samples, beside it; {RESCORED} rescored offline from a run's stored answers, not the run's own figure); "
        "the trend shows every run, oldest first.</p>"
        + (f"<h2>Headline figures</h2><ul>{said}</ul>" if said else "")
        + (
            "<h2>Why they miss</h2><p class='muted'>Accuracy with a click within N px of its box counted a hit; "
            "a frame the diagnosis found (docs: why it misses).</p>"
            f'<table id="misses"><thead><tr><th>configuration</th><th>benchmark</th><th>within N px</th></tr></thead>'
            f"<tbody>{misses}</tbody></table>"
            if misses
            else ""
        )
        + (f'<h2>Running</h2><ul id="running">{running}</ul>' if running else "")
        + "".join(sections)
        + (f'<h2>Not on the board</h2><ul id="skipped">{skipped}</ul>' if skipped else "")
        + f"</main><script>{MATRIX_SCRIPT}</script></body></html>\n"
    )


def write_board(board: Board, path: Path) -> int:
    """The page at `path`, each run's HTML page (Run.html) linked relative to it, so that the folder
    can move as a whole. Returns the bytes written."""
    import os

    links = {}
    for cell in board.cells.values():
        for run in cell.runs:
            if run.html:
                target = os.path.relpath(Path(run.html).resolve(), Path(path).resolve().parent)
                links[f"html:{run.source}"] = Path(target).as_posix()
    data = shown_text(render(board, links)).encode("utf-8")  # a shared page: no absolute home path
    write_atomic(Path(path), data)
    return len(data)
