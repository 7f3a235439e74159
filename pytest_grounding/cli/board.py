"""`python -m pytest_grounding board DIR`: every JSON report under a folder as one table
(analysis/board.py), printed as text or markdown, or written as one static HTML page."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DESCRIPTION = (
    "Reads every JSON report (--grounding-json, merged shard reports too) under DIR, recursively, and shows one "
    "table: a row per configuration (detector, preset, engine and version, strategy, scoring profile), a column "
    "per benchmark (dataset, format, fingerprint), each cell the latest run's headline accuracy with its 95% "
    "interval and the samples scored, as the report gives them. A file that is no readable report is listed with "
    "its reason. Exit 0: the board was shown; 2: DIR is no folder, or a filter or sort cannot be understood."
)


def add_command(commands: Any) -> None:
    board = commands.add_parser("board", help="one table of every report under a folder", description=DESCRIPTION)
    board.add_argument(
        "folder",
        type=Path,
        nargs="?",
        metavar="DIR",
        help="a folder of JSON reports, searched recursively (default: ./grounding-runs, where every run keeps its "
        "report, or $GROUNDING_RUNS_DIR)",
    )
    board.add_argument("--html", type=Path, metavar="OUT", help="write the board as one static HTML page")
    board.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help="write the board as JSON: per benchmark each configuration's latest figure, rank and significance "
        "tier, the pairwise tests behind the tiers, and the sample x model matrix",
    )
    board.add_argument("--markdown", action="store_true", help="print the board as markdown")
    board.add_argument(
        "--history", action="store_true", help="each cell's runs, oldest first, each against the one before"
    )
    board.add_argument(
        "--benchmark", action="append", default=[], metavar="NAME", help="only this benchmark (glob; repeatable)"
    )
    board.add_argument(
        "--detector", action="append", default=[], metavar="SPEC", help="only this detector (glob; repeatable)"
    )
    board.add_argument(
        "-k", dest="keyword", metavar="EXPR", help="only rows and columns whose labels match, as pytest's -k"
    )
    board.add_argument(
        "--sort",
        default="name",
        metavar="KEY",
        help="rows by name (default), accuracy (mean over the columns shown), date (latest run), or a benchmark's "
        "name (that column's accuracy)",
    )


def html_page(report: Path, document: dict[str, Any]) -> Path | None:
    """The run's HTML page where one sits beside its report: the --grounding-html the run was given
    (as recorded in run.args, found as given or by its name beside the report), else REPORT.html
    (as `report REPORT.json --html` is usually called)."""
    args = [str(a) for a in (document.get("run") or {}).get("args") or []]
    asked = []
    for i, arg in enumerate(args):
        if arg == "--grounding-html" and i + 1 < len(args):
            asked.append(args[i + 1])
        elif arg.startswith("--grounding-html="):
            asked.append(arg.split("=", 1)[1])
    candidates = []
    for given in asked:
        path = Path(given)
        candidates += [path] if path.is_absolute() else []
        candidates.append(report.parent / path.name)
    candidates.append(report.with_suffix(".html"))
    beside = report.resolve().parent
    for path in candidates:
        if path.is_file() and path.resolve().parent == beside:
            return path
    return None


MAX_FOLDER_DEPTH = 64  # folders below the board's folder; deeper ones are named, not read


def json_files(folder: Path, suffix: str = ".json") -> tuple[list[Path], list[str]]:
    """Every regular file named *`suffix` under `folder`, sorted, walked with a stack (Path.rglob recurses:
    a RecursionError at ~1,000 nested folders), links to folders not followed (no loop); and the
    folders left out below MAX_FOLDER_DEPTH."""
    import os

    found, deeper = [], []
    pending = [(Path(folder), 0)]
    while pending:
        here, depth = pending.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_FOLDER_DEPTH:
                    deeper.append(Path(entry.path).relative_to(folder).as_posix())
                else:
                    pending.append((Path(entry.path), depth + 1))
            elif entry.name.endswith(suffix) and entry.is_file(follow_symlinks=True):
                found.append(Path(entry.path))
    return sorted(found), sorted(deeper)


def running_under(folder: Path, damaged: list[Any] | None = None) -> list[Any]:
    """The runs still going under `folder`: their running HTML pages' sidecars (render/live.py). A file
    named like one that is not one (damaged, truncated, another tool's) is added to `damaged` (a Skipped
    naming it and why): the board names it and goes on."""
    from ..analysis.board import Running, Skipped
    from ..render.live import SUFFIX, running_state

    out = []
    for path in json_files(folder, SUFFIX)[0]:
        try:
            state = running_state(path)
        except ValueError as exc:
            if damaged is not None:
                damaged.append(Skipped(path.relative_to(folder).as_posix(), str(exc)))
            continue
        started = state.get("started")
        out.append(
            Running(
                path.relative_to(folder).as_posix()[: -len(SUFFIX)],
                int(_number(state.get("done"), 0, 10**12) or 0),
                int(_number(state.get("total"), 0, 10**12) or 0),
                _number(state.get("accuracy"), 0.0, 1.0, whole=False),
                _number(state.get("eta_s"), 0.0, 10.0**9, whole=False),
                started[:40] if isinstance(started, str) else "",
            )
        )
    return out


def _number(value: Any, low: float, high: float, *, whole: bool = True) -> float | None:
    """A sidecar's number as the board shows it, or None: a damaged sidecar ("abc", NaN, Infinity, a nested
    object, a bool, a number out of range) is shown without that number, never stops the board."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or not low <= value <= high:
        return None
    return float(int(value)) if whole else float(value)


def collect(folder: Path) -> tuple[list[Any], list[Any], int]:
    """(rows found, files skipped, reports read) from every *.json under `folder` (a running
    page's sidecar is no report: running_under reads those)."""
    from ..analysis.board import Skipped, runs_of, shard_reason
    from ..render.live import is_sidecar
    from ..store.reports import OutputError, read_report

    found: list[Any] = []
    skipped = []
    reports = 0
    paths, deeper = json_files(folder)
    skipped += [Skipped(name, f"more than {MAX_FOLDER_DEPTH} folders deep: not read") for name in deeper]
    elsewhere, missing = pointed_reports(folder, paths)
    skipped += missing
    for path in [*(p for p in paths if not is_sidecar(p)), *elsewhere]:
        source = path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)
        try:
            document = read_report(path)  # bounded, checked against the schema
        except OutputError as exc:
            skipped.append(Skipped(source, str(exc).replace(str(path), "the file")))
            continue
        shard = shard_reason(document)
        if shard is not None:
            skipped.append(Skipped(source, shard))
            continue
        page = html_page(path, document)
        runs = runs_of(source, document, str(page) if page is not None else None)
        if not runs:
            skipped.append(Skipped(source, "a report with no grounding results"))
            continue
        reports += 1
        found += runs
    return found, skipped, reports


def pointed_reports(folder: Path, read: Sequence[Path]) -> tuple[list[Path], list[Any]]:
    """The reports run folders point to (`--grounding-json PATH` written outside them: their
    `report.path`), each once and not one read under `folder` already; and a pointer whose report
    is gone, as a line of "not on the board"."""
    from ..analysis.board import Skipped
    from ..render.run_folder import POINTER, pointed

    seen = {p.resolve() for p in read}
    found, missing = [], []
    for pointer in json_files(folder, POINTER)[0]:
        target = pointed(pointer)
        if target is None or not target.is_file():
            where = pointer.relative_to(folder).as_posix()
            missing.append(Skipped(where, f"points to {target}, which is no file now (moved or deleted?)"))
            continue
        if target.resolve() not in seen:
            seen.add(target.resolve())
            found.append(target)
    return found, missing


def run(args: argparse.Namespace) -> int:
    from ..analysis.board import Filters, build
    from ..core.safetext import terminal_line
    from ..plugin.compat.pytest_compat import keyword_matcher
    from ..render.run_folder import default_runs_dir

    folder: Path = args.folder if args.folder is not None else default_runs_dir()
    if not folder.is_dir():
        print(f"error: {terminal_line(f'{folder} is not a folder')}", file=sys.stderr)
        return 2
    try:  # a malformed -k fails before any file is read
        keyword = keyword_matcher(args.keyword) if args.keyword is not None else None
    except ValueError as exc:
        print(f"error: {terminal_line(exc)}", file=sys.stderr)
        return 2
    filters = Filters(tuple(args.benchmark), tuple(args.detector), keyword)
    found, skipped, reports = collect(folder)
    running = running_under(folder, skipped)  # a damaged sidecar: named with the files not on the board
    try:
        board = build(found, skipped, filters=filters, sort=args.sort, reports=reports, running=running)
    except ValueError as exc:
        print(f"error: {terminal_line(exc)}", file=sys.stderr)
        return 2
    if args.json is not None:
        import json

        from ..render.common.board import json_document
        from ..store.reports import write_atomic

        try:
            write_atomic(args.json, (json.dumps(json_document(board), indent=1) + "\n").encode("utf-8"))
        except OSError as exc:
            print(f"error: {terminal_line(f'board {args.json} not written: {exc.strerror or exc}')}", file=sys.stderr)
            return 2
        print(f"wrote {terminal_line(args.json)}: {len(board.rows)} configurations x {len(board.columns)} benchmarks")
    if args.html is not None:
        from ..render.html.board import write_board

        try:
            size = write_board(board, args.html)
        except OSError as exc:
            print(f"error: {terminal_line(f'board {args.html} not written: {exc.strerror or exc}')}", file=sys.stderr)
            return 2
        print(
            f"wrote {terminal_line(args.html)}: {len(board.rows)} configurations x {len(board.columns)} benchmarks "
            f"from {reports} reports, {size / 1e3:.0f} kB"
        )  # and the table below, as without --html (issue 61)
    from ..render.common.board import markdown_lines, text_lines

    lines: Sequence[str] = (
        markdown_lines(board, history=args.history) if args.markdown else text_lines(board, history=args.history)
    )
    print("\n".join(lines))
    return 0
