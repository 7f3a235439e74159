"""The board (analysis/board.py) as text for a terminal and as markdown: one row per
configuration, one column per benchmark, each cell the latest run's figure, its 95% interval and
its sample count; with `history`, each cell's runs under the table, each against the one before."""

from __future__ import annotations

from ..analysis.board import Board, Cell, Change, Run
from ..analysis.intervals import span
from ..core.numbers import pct
from ..core.safetext import markdown_text, terminal_line

PARTIAL = "†"  # a partial run (interrupted), or a merge with shards missing


def figure(run: Run) -> str:
    """`41.2% [35.0-47.5] n=85`."""
    mark = PARTIAL if run.partial else ""
    return f"{pct(run.accuracy)}{mark} [{span(run.ci95)}] n={run.samples}"


def change_text(found: Change | None) -> str:
    """The change against the run before: the headline's, then the paired difference's interval."""
    if found is None:
        return "first run"
    head = "-" if found.delta is None else f"{found.delta * 100:+.1f} points"
    if found.difference is None:
        return f"{head}; no sample scored by both runs: no paired interval"
    d = found.difference
    return (
        f"{head}; paired on {found.paired} samples: {d.delta * 100:+.1f} points, {d.bounds()}, "
        f"{found.fixed} fixed, {found.broken} broken"
    )


def _history_lines(cell: Cell) -> list[str]:
    lines = []
    for run, found in zip(cell.runs, cell.changes, strict=True):
        where = [run.started or "time not recorded", run.source]
        if run.revision:
            where.append(f"model {run.revision}")
        if run.version:
            where.append(f"pytest-grounding {run.version}")
        if run.merged:
            where.append(f"merged from {run.merged} shards")
        lines.append(f"{figure(run)}  ({', '.join(where)}): {change_text(found)}")
    return lines


def _widths(rows: list[list[str]]) -> list[int]:
    return [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]


def text_lines(board: Board, *, history: bool = False) -> list[str]:
    """The board for a terminal (every line passed through terminal_line: report text is data)."""
    lines = [f"board: {board.reports} reports, {len(board.rows)} configurations, {len(board.columns)} benchmarks"]
    if board.rows:
        head = ["configuration", *(c.label for c in board.columns)]
        body = [
            [row.label, *(figure(cell.latest) if (cell := board.cell(row, c)) else "-" for c in board.columns)]
            for row in board.rows
        ]
        widths = _widths([head, *body])
        for values in [head, *body]:
            lines.append("  ".join(value.ljust(w) for value, w in zip(values, widths, strict=True)).rstrip())
        lines.append(
            "  (the latest run of each cell: the report's headline accuracy, its 95% interval clustered by "
            f"screen, the samples scored; {PARTIAL} a partial run)"
        )
    else:
        lines.append("  no report matched")
    lines += _figures_said(board)
    if history:
        lines += ["", "history (oldest first; each run against the one before it):"]
        for row in board.rows:
            for column in board.columns:
                cell = board.cell(row, column)
                if cell is None:
                    continue
                lines.append(f"  {row.label} on {column.label}:")
                lines += [f"    {line}" for line in _history_lines(cell)]
    lines += _skipped_lines(board)
    return [terminal_line(line) for line in lines]


def _figures_said(board: Board) -> list[str]:
    """What each column's figure is where it is a benchmark's own headline, not plain accuracy."""
    said = []
    for column in board.columns:
        kinds = {cell.latest.figure for (_, c), cell in board.cells.items() if c == column}
        kinds.discard("accuracy")
        said += [f"  {column.name}: {kind}" for kind in sorted(kinds)]
    return ["", "headline figures:", *said] if said else []


def _skipped_lines(board: Board) -> list[str]:
    if not board.skipped:
        return []
    return ["", f"not on the board ({len(board.skipped)}):", *(f"  {s.path}: {s.reason}" for s in board.skipped)]


def markdown_lines(board: Board, *, history: bool = False) -> list[str]:
    """The same as GitHub-flavoured markdown (data escaped by markdown_text)."""
    lines = [f"## Board: {board.reports} reports", ""]
    if not board.rows:
        lines.append("No report matched.")
    else:
        lines.append("| configuration | " + " | ".join(markdown_text(c.label) for c in board.columns) + " |")
        lines.append("|---|" + "---:|" * len(board.columns))
        for row in board.rows:
            cells = [markdown_text(figure(cell.latest)) if (cell := board.cell(row, c)) else "-" for c in board.columns]
            lines.append(f"| {markdown_text(row.label)} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "The latest run of each cell: the report's headline accuracy, its 95% interval (clustered by screen) "
            f"and the samples scored; {PARTIAL} a partial run.",
        ]
    said = _figures_said(board)
    if said:
        lines += ["", *(f"- {markdown_text(line.strip())}" for line in said[2:])]
    if history:
        lines += ["", "### History", ""]
        for row in board.rows:
            for column in board.columns:
                cell = board.cell(row, column)
                if cell is not None:
                    lines.append(f"- **{markdown_text(row.label)}** on {markdown_text(column.label)}:")
                    lines += [f"    - {markdown_text(line)}" for line in _history_lines(cell)]
    if board.skipped:
        lines += ["", "### Not on the board", ""]
        lines += [f"- {markdown_text(s.path)}: {markdown_text(s.reason)}" for s in board.skipped]
    return lines
