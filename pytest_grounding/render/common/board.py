"""The board (analysis/board.py) as text for a terminal and as markdown: one row per
configuration, one column per benchmark, each cell the latest run's figure, its 95% interval and
its sample count; with `history`, each cell's runs under the table, each against the one before."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...analysis import board as board_mod
from ...analysis import matrix as sample_matrix
from ...analysis import tiers as significance
from ...analysis.board import Benchmark, Board, Cell, Change, Config, Run
from ...analysis.intervals import span
from ...core.numbers import pct, points
from ...core.safetext import markdown_text, terminal_line

PARTIAL = "†"  # a partial run (interrupted), or a merge with shards missing
SMALLER = "‡"  # a later run over fewer samples (a first look), beside the cell's figure (issue 61)
RESCORED = "§"  # a report `rescore` wrote: the stored answers judged again offline, not the run's figure


def tier_mark(board: Board, row: Config, column: Benchmark) -> str:
    """`T1 ` where the row has a tier on that column, else nothing."""
    found = board.tiers.get(column)
    tier = found.tier_of(row.label) if found is not None else None
    return "" if tier is None else f"T{tier} "


def figure(run: Run) -> str:
    """`41.2% [35.0-47.5] n=85`."""
    mark = (PARTIAL if run.partial else "") + (RESCORED if run.rescored is not None else "")
    return f"{pct(run.accuracy)}{mark} [{span(run.ci95)}] n={run.samples}"


def rescored_text(run: Run) -> str:
    """`rescored offline (--frame rel1000)` for a report `rescore` wrote, else ""."""
    if run.rescored is None:
        return ""
    return "rescored offline" + (f" ({', '.join(run.rescored)})" if run.rescored else "")


def later_text(cell: Cell) -> str:
    """`‡ later 30.0% n=40`: the run after the cell's figure over fewer samples ("": none)."""
    later = cell.smaller_later
    return "" if later is None else f"{SMALLER} later {pct(later.accuracy)} n={later.samples}"


def cell_text(cell: Cell) -> str:
    """The cell's figure, with a later run over fewer samples beside it, marked."""
    later = later_text(cell)
    return figure(cell.latest) + (f" ({later})" if later else "")


def change_text(found: Change | None) -> str:
    """The change against the run before: the headline's, then the paired difference's interval."""
    if found is None:
        return "first run"
    head = "-" if found.delta is None else f"{points(found.delta)} points"
    if found.difference is None:
        return f"{head}; no sample scored by both runs: no paired interval"
    d = found.difference
    return (
        f"{head}; paired on {found.paired} samples: {points(d.delta)} points, {d.bounds()}, "
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
        if run.rescored is not None:
            where.append(rescored_text(run))
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
            [
                row.label,
                *(
                    tier_mark(board, row, c) + cell_text(cell) if (cell := board.cell(row, c)) else "-"
                    for c in board.columns
                ),
            ]
            for row in board.rows
        ]
        widths = _widths([head, *body])
        for values in [head, *body]:
            lines.append("  ".join(value.ljust(w) for value, w in zip(values, widths, strict=True)).rstrip())
        lines.append(
            "  (the latest run over the most samples of each cell: the report's headline accuracy, its 95% "
            f"interval clustered by screen, the samples scored; {PARTIAL} a partial run; {SMALLER} a later run over "
            f"fewer samples; {RESCORED} rescored offline from a run's stored answers (rescore), not the run's own "
            "figure; Tn its significance tier)"
        )
    else:
        lines.append("  no report matched")
    lines += _figures_said(board)
    lines += tier_lines(board)
    lines += _miss_lines(board)
    if history:
        lines += ["", "history (oldest first; each run against the one before it):"]
        for row in board.rows:
            for column in board.columns:
                cell = board.cell(row, column)
                if cell is None:
                    continue
                lines.append(f"  {row.label} on {column.label}:")
                lines += [f"    {line}" for line in _history_lines(cell)]
    lines += _running_lines(board)
    lines += _skipped_lines(board)
    return [terminal_line(line) for line in lines]


FRAME_SAID = ("as-preset", "unknown", None)  # no finding worth a line


def miss_rows(board: Board) -> list[tuple[str, str, dict[str, Any]]]:
    """(configuration, benchmark, why it misses) of every cell's latest run that has clicks."""
    found = []
    for row in board.rows:
        for column in board.columns:
            cell = board.cell(row, column)
            figures = board_mod.misses_of(cell.latest) if cell is not None else None
            if figures is not None:
                found.append((row.label, column.label, figures))
    return found


def miss_text(figures: Mapping[str, Any]) -> str:
    """`0 px 26.3% · 5 px 27.0% · ... ; frame rel1000 (rescore --frame rel1000)`."""
    curve = " · ".join(f"{px} px {pct(share)}" for px, share in figures["within_px"].items())
    if figures.get("best_format"):  # --grounding-perturb format (issue 56)
        curve += f"; {figures['best_format']}"
    frame = figures.get("frame")
    if frame in FRAME_SAID:
        return curve
    suggestion = figures.get("suggestion")
    hint = f" (rescore {' '.join(suggestion)})" if isinstance(suggestion, list) and suggestion else ""
    return f"{curve}; frame found: {frame}{hint}"


def _miss_lines(board: Board) -> list[str]:
    found = miss_rows(board)
    if not found:
        return []
    lines = ["", "why they miss (accuracy with a click within N px of its box counted; docs: why-it-misses):"]
    return lines + [f"  {row} on {column}: {miss_text(figures)}" for row, column, figures in found]


def _figures_said(board: Board) -> list[str]:
    """What each column's figure is where it is a benchmark's own headline, not plain accuracy."""
    said = []
    for column in board.columns:
        kinds = {cell.latest.figure for (_, c), cell in board.cells.items() if c == column}
        kinds.discard("accuracy")
        said += [f"  {column.name}: {kind}" for kind in sorted(kinds)]
    return ["", "headline figures:", *said] if said else []


def _running_lines(board: Board) -> list[str]:
    if not board.running:
        return []
    return ["", f"running ({len(board.running)}):", *(f"  {r.path}: {r.text}" for r in board.running)]


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
            cells = [
                markdown_text(tier_mark(board, row, c) + cell_text(cell)) if (cell := board.cell(row, c)) else "-"
                for c in board.columns
            ]
            lines.append(f"| {markdown_text(row.label)} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "The latest run over the most samples of each cell: the report's headline accuracy, its 95% interval "
            f"(clustered by screen) and the samples scored; {PARTIAL} a partial run; {SMALLER} a later run over fewer "
            f"samples; {RESCORED} rescored offline from a run's stored answers (rescore), not the run's own figure; "
            "Tn its significance tier (below).",
        ]
        lines += tier_markdown(board)
    said = _figures_said(board)
    if said:
        lines += ["", *(f"- {markdown_text(line.strip())}" for line in said[2:])]
    misses = miss_rows(board)
    if misses:
        lines += ["", "### Why they miss", "", "Accuracy with a click within N px of its box counted a hit.", ""]
        lines += [
            f"- **{markdown_text(r)}** on {markdown_text(c)}: {markdown_text(miss_text(f))}" for r, c, f in misses
        ]
    if history:
        lines += ["", "### History", ""]
        for row in board.rows:
            for column in board.columns:
                cell = board.cell(row, column)
                if cell is not None:
                    lines.append(f"- **{markdown_text(row.label)}** on {markdown_text(column.label)}:")
                    lines += [f"    - {markdown_text(line)}" for line in _history_lines(cell)]
    if board.running:
        lines += ["", "### Running", ""]
        lines += [f"- {markdown_text(r.path)}: {markdown_text(r.text)}" for r in board.running]
    if board.skipped:
        lines += ["", "### Not on the board", ""]
        lines += [f"- {markdown_text(s.path)}: {markdown_text(s.reason)}" for s in board.skipped]
    return lines


# -- significance tiers ------------------------------------------------------------------------------

TIERS_SAID = (
    "detectors ranked by accuracy; one tier = not distinguishable from the tier's best at 95% (McNemar's exact "
    "test on the samples both scored, p adjusted by Holm over all pairs)"
)


def _verdict(pair: significance.Pair) -> str:
    return "differ" if pair.significant else "tied"


def _difference(pair: significance.Pair) -> str:
    d = pair.difference
    return "-" if d is None else f"{points(d.delta)} points, {d.bounds()}"


def tier_lines(board: Board) -> list[str]:
    """Each column's ranking in tiers, the rows not paired with their reason, then the pairs."""
    lines = []
    for column, found in board.tiers.items():
        if len(found.ranked) < 2:
            continue
        lines += ["", f"significance tiers on {column.label} ({TIERS_SAID}):"]
        for r in found.ranked:
            tier = f"tier {r.tier}" if r.tier is not None else "no tier"
            extra = f": {r.reason}" if r.reason else ""
            lines.append(f"  {r.rank}. {tier:<8} {r.name}  {pct(r.accuracy)} n={r.scored}{extra}")
        for p in found.pairs:
            lines.append(
                f"    {p.better} vs {p.worse}: {_verdict(p)} (paired on {p.n}, {p.wins} only the first hit, "
                f"{p.losses} only the second; p = {p.p_value:.3g}, Holm {p.p_holm:.3g}; {_difference(p)})"
            )
        lines += [f"  {note}" for note in found.notes]
    return lines


def tier_markdown(board: Board) -> list[str]:
    lines = []
    for column, found in board.tiers.items():
        if len(found.ranked) < 2:
            continue
        lines += [
            "",
            f"### Significance tiers: {markdown_text(column.label)}",
            "",
            TIERS_SAID[0].upper() + TIERS_SAID[1:] + ".",
            "",
        ]
        lines += ["| rank | tier | configuration | accuracy | n |", "|---:|---:|---|---:|---:|"]
        for r in found.ranked:
            tier = str(r.tier) if r.tier is not None else markdown_text(f"- ({r.reason})")
            lines.append(f"| {r.rank} | {tier} | {markdown_text(r.name)} | {pct(r.accuracy)} | {r.scored} |")
        if found.pairs:
            lines += [
                "",
                "| better | worse | paired | only better hit | only worse hit | p | p (Holm) | difference | |",
            ]
            lines.append("|---|---|---:|---:|---:|---:|---:|---|---|")
            lines += [
                f"| {markdown_text(p.better)} | {markdown_text(p.worse)} | {p.n} | {p.wins} | {p.losses} | "
                f"{p.p_value:.3g} | {p.p_holm:.3g} | {markdown_text(_difference(p))} | {_verdict(p)} |"
                for p in found.pairs
            ]
        lines += [f"- {markdown_text(note)}" for note in found.notes]
    return lines


# -- board --json ------------------------------------------------------------------------------------


def _latest(run: Run) -> dict[str, Any]:
    return {
        "source": run.source,
        "started": run.started,
        "accuracy": run.accuracy,
        "ci95": list(run.ci95) if run.ci95 else None,
        "samples": run.samples,
        "figure": run.figure,
        "partial": run.partial,
        "rescored": rescored_text(run) or None,
        "html": run.html,
    }


def json_document(board: Board) -> dict[str, Any]:
    """`board --json OUT`: per benchmark, every configuration with its latest figure, rank and tier,
    the pairwise table behind the tiers, and the sample x model matrix."""
    columns = []
    for column in board.columns:
        found = board.tiers.get(column)
        ranking = significance.as_dict(found) if found is not None else {"rows": [], "pairs": [], "notes": []}
        by_name = {r["name"]: r for r in ranking["rows"]}
        rows = []
        for row in board.rows:
            cell = board.cell(row, column)
            if cell is None:
                continue
            ranked = by_name.get(row.label, {})
            rows.append(
                {
                    "configuration": row.label,
                    **dict(row.details()),
                    "detector": row.detector,
                    "rank": ranked.get("rank"),
                    "tier": ranked.get("tier"),
                    **({"reason": ranked["reason"]} if "reason" in ranked else {}),
                    "latest": _latest(cell.latest),
                    "misses": board_mod.misses_of(cell.latest),
                    "runs": len(cell.runs),
                }
            )
        rows.sort(key=lambda r: (r["rank"] is None, r["rank"] or 0))
        table = board.matrices.get(column)
        columns.append(
            {
                "benchmark": column.name,
                "format": column.format,
                "fingerprint": column.fingerprint,
                "label": column.label,
                "rows": rows,
                "tiers": {k: v for k, v in ranking.items() if k != "rows"},
                "matrix": sample_matrix.as_dict(table) if table is not None else None,
            }
        )
    return {
        "tool": "pytest-grounding",
        "kind": "board",
        "reports": board.reports,
        "benchmarks": columns,
        "skipped": [{"path": s.path, "reason": s.reason} for s in board.skipped],
        "running": [
            {"page": r.path, "done": r.done, "total": r.total, "accuracy": r.accuracy, "eta_s": r.eta_s}
            for r in board.running
        ],
    }
