"""The board: every saved report under a folder as one table, configurations by benchmarks, each
cell the report's own headline accuracy with its 95% interval and sample count, and each cell's
history (the change between consecutive runs with its paired interval, from compare.py).

Nothing is recomputed differently from the report: a cell's figure and interval are read from the
report's summary (a public benchmark's headline from `benchmarks`, else the dataset's row of
`by.dataset`), both computed by analysis/intervals.py when the run wrote them. Only the change
between two runs is new, and it is compare.paired's (McNemar's pairs, the clustered difference).

Pure: parsed reports in, frozen records out; no pytest, no I/O (cli/board.py reads the files)."""

from __future__ import annotations

import fnmatch
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..core.identity import display_name, identity_of, weights_of
from ..core.profiles import profile_of
from ..core.record import Task
from . import compare, intervals
from . import matrix as sample_matrix
from . import tiers as significance
from .card import rescore_options

SORTS = ("name", "accuracy", "date")  # or a benchmark's name: that column's accuracy, best first


@dataclass(frozen=True, order=True)
class Config:
    """A row: what decides the answers and how they are judged."""

    detector: str
    preset: str = ""
    engine: str = ""  # name and version, as the served detector's probe recorded them
    strategy: str = ""
    scoring: str = "pixel"
    # the spec's label= (issue 51): the row's name for people, never part of what makes it one row
    name: str = field(default="", compare=False)

    @property
    def label(self) -> str:
        parts = [self.name or self.detector]
        parts += [f"{name} {value}" for name, value in self.details() if value]
        return " · ".join(parts)

    def details(self) -> list[tuple[str, str]]:
        return [
            ("preset", self.preset),
            ("engine", self.engine),
            ("strategy", self.strategy),
            ("scoring", self.scoring),
        ]


@dataclass(frozen=True, order=True)
class Benchmark:
    """A column: a dataset as the reports name it, with its format and version (fingerprint)."""

    name: str
    format: str = ""
    fingerprint: str = ""

    @property
    def label(self) -> str:
        kind = f" ({self.format})" if self.format and self.format != self.name else ""
        return f"{self.name}{kind} @{self.fingerprint}" if self.fingerprint else f"{self.name}{kind}"


@dataclass(frozen=True)
class Run:
    """One report's figure for one cell."""

    source: str  # the report's path below the board's folder
    started: str | None
    accuracy: float | None
    ci95: tuple[float, float] | None
    samples: int  # scored samples (errors are in no accuracy)
    figure: str  # what the accuracy is: "accuracy" or the benchmark's own headline
    revision: str = ""  # the model's revision or commit, where the report records one
    version: str = ""  # pytest-grounding's version that wrote the report
    partial: bool = False
    merged: int = 0  # the shards a merged report was put together from
    html: str | None = None  # the run's HTML page beside the report (cli/board.py finds it)
    checked_frame: tuple[str, ...] = ()  # the frame check's `rescore` arguments (--grounding-frame-check=warn)
    rescored: tuple[str, ...] | None = None  # a report `rescore` wrote: its options (never the run's own figure)
    records: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    # the report's own section figures for the cell (MISS_SECTIONS), where the detector's block is this
    # dataset alone: what misses_of reads before it counts anything from the records (issue 55)
    figures: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def when(self) -> datetime | None:
        return parse_time(self.started)

    @property
    def size(self) -> int:
        """The samples the run ran on this benchmark (errors too): which run covers more."""
        return max(len(self.records), self.samples)


@dataclass(frozen=True)
class Change:
    """A run against the one before it in its cell: the headline's change, and the paired
    difference of hit rates on the samples both scored (clustered by screen, compare.paired)."""

    delta: float | None
    paired: int
    difference: intervals.Difference | None
    fixed: int = 0
    broken: int = 0
    p_value: float | None = None


@dataclass(frozen=True)
class Cell:
    runs: tuple[Run, ...]  # oldest first
    changes: tuple[Change | None, ...]  # one per run: against the run before (None for the first)

    @property
    def latest(self) -> Run:
        """The cell's figure: the latest run over the most samples, so a later first look (40
        samples) does not hide the whole run (issue 61); `smaller_later` is shown beside it."""
        most = max(run.size for run in self.runs)
        return next(run for run in reversed(self.runs) if run.size == most)

    @property
    def smaller_later(self) -> Run | None:
        """The newest run where it came after `latest` over fewer samples (None: it is `latest`)."""
        newest = self.runs[-1]
        return None if newest is self.latest else newest


@dataclass(frozen=True)
class Skipped:
    """A file under the folder that is on no row: why, in a sentence."""

    path: str
    reason: str


@dataclass(frozen=True)
class Running:
    """A run still going: its --grounding-html page's sidecar (render/live.py) read back."""

    path: str  # the page below the board's folder
    done: int
    total: int
    accuracy: float | None
    eta_s: float | None
    started: str

    @property
    def text(self) -> str:
        accuracy = "-" if self.accuracy is None else f"{self.accuracy * 100:.1f}%"
        left = "-" if self.eta_s is None else f"{self.eta_s / 60:.1f} min"
        if not self.total and not self.done:
            return f"running since {self.started}: starting (loading the datasets and the detectors)"
        return (
            f"running since {self.started}: {self.done} of {self.total} samples, accuracy so far {accuracy}, "
            f"time left {left}"
        )


@dataclass(frozen=True)
class Board:
    rows: tuple[Config, ...]
    columns: tuple[Benchmark, ...]
    cells: Mapping[tuple[Config, Benchmark], Cell]
    skipped: tuple[Skipped, ...] = ()
    reports: int = 0  # reports read (each may fill several cells)
    tiers: Mapping[Benchmark, significance.Tiers] = field(default_factory=dict)  # per column, its rows' latest runs
    matrices: Mapping[Benchmark, sample_matrix.Matrix] = field(default_factory=dict)
    running: tuple[Running, ...] = ()

    def cell(self, row: Config, column: Benchmark) -> Cell | None:
        return self.cells.get((row, column))


def parse_time(text: str | None) -> datetime | None:
    """A report's `started` ("2026-11-27T06:40:15+0000"); None when absent or unreadable."""
    if not text:
        return None
    for form in ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text, form)
        except ValueError:
            continue
    return None


# -- one report to its cells --------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def config_of(spec: str, info: Mapping[str, Any], scoring: str) -> Config:
    """A row from a detector's spec and its describe() in the report (run.detectors): its identity
    (core/identity.py) less the weights, which a cell's history shows run by run. Runs that reached
    one model through other endpoints or with another concurrency share a row."""
    found = identity_of(spec, info, scoring)
    label = display_name(spec, info)
    named = label if label != spec else ""
    return Config(found.detector, found.preset, found.engine, found.strategy, found.scoring, name=named)


def revision_of(info: Mapping[str, Any]) -> str:
    """The model's commit or revision where the detector recorded one (core/identity.py)."""
    return weights_of(info)


def shard_reason(document: Mapping[str, Any]) -> str | None:
    """Why a report is on no row by itself: one shard of a split run (its merge is the figure)."""
    shard = document.get("shard")
    if isinstance(shard, Mapping) and not document.get("merge"):
        return (
            f"one shard ({shard.get('index')}/{shard.get('count')}) of a split run: merge the shards "
            "(python -m pytest_grounding merge) and the merged report is on the board"
        )
    return None


def _dataset_row(block: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    by = block.get("by")
    rows = by.get("dataset") if isinstance(by, Mapping) else None
    return next((r for r in rows or [] if isinstance(r, Mapping) and r.get("value") == name), None)


def _headline(block: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    return next((b for b in block.get("benchmarks") or [] if b.get("dataset") == name), None)


def runs_of(source: str, document: Mapping[str, Any], html: str | None = None) -> list[tuple[Config, Benchmark, Run]]:
    """Every (row, column, run) a parsed report fills: each grounding detector on each dataset it
    scored. The figure is the report's: the benchmark's headline where the report has one, else
    the dataset's accuracy, each with the interval the report gives."""
    run = _mapping(document.get("run"))
    detectors = _mapping(run.get("detectors"))
    datasets = [d for d in run.get("datasets") or [] if isinstance(d, Mapping)]
    scoring = profile_of(document)
    errata = _mapping(document.get("errata"))
    if errata.get("digest"):  # --grounding-errata: another scoring configuration, a row of its own
        scoring = f"{scoring} + errata {str(errata['digest'])[:12]}"
    versions = _mapping(document.get("versions"))
    merge = _mapping(document.get("merge"))
    records = [r for r in document.get("samples") or [] if isinstance(r, Mapping)]
    out = []
    for block in (document.get("summary") or {}).values():
        if block.get("task", Task.GROUNDING) != Task.GROUNDING:
            continue
        spec = str(block.get("detector"))
        info = _mapping(detectors.get(spec))
        config = config_of(spec, info, scoring)
        mine = [r for r in records if r.get("detector") == spec and r.get("task", Task.GROUNDING) == Task.GROUNDING]
        scored_sets = [r for r in _mapping(block.get("by")).get("dataset") or () if isinstance(r, Mapping)]
        own = {k: block[k] for k in MISS_SECTIONS if block.get(k)} if len(scored_sets) == 1 else {}
        for dataset in datasets:
            name = str(dataset.get("name"))
            row = _dataset_row(block, name)
            if row is None:
                continue
            headline = _headline(block, name)
            accuracy, bounds, figure = row.get("accuracy"), row.get("ci95"), "accuracy"
            if headline is not None:
                accuracy, bounds, figure = headline.get("value"), headline.get("ci95"), str(headline.get("label"))
            column = Benchmark(name, str(dataset.get("format") or ""), str(dataset.get("fingerprint") or ""))
            out.append(
                (
                    config,
                    column,
                    Run(
                        source=source,
                        started=document.get("started") if isinstance(document.get("started"), str) else None,
                        accuracy=accuracy,
                        ci95=(float(bounds[0]), float(bounds[1])) if bounds else None,
                        samples=int(row.get("scored") or 0),
                        figure=figure,
                        revision=revision_of(info),
                        version=str(versions.get("pytest-grounding") or ""),
                        partial=bool(document.get("partial")),
                        merged=len([p for p in merge.get("reports") or [] if p.get("used")]),
                        html=html,
                        checked_frame=checked_frame(document, spec),
                        rescored=rescore_options(document),
                        records=tuple(r for r in mine if r.get("dataset") == name),
                        figures=own,
                    ),
                )
            )
    return out


# -- the table ---------------------------------------------------------------------------------


def change(before: Run, after: Run) -> Change:
    """`after` against `before`: compare.paired on the samples both scored (the same dataset
    version), and the headline's own change."""
    delta = None if before.accuracy is None or after.accuracy is None else after.accuracy - before.accuracy
    pair = compare.paired(compare.Method("before", {}, before.records), compare.Method("after", {}, after.records))
    if pair.n == 0:
        return Change(delta, 0, None)
    return Change(delta, pair.n, pair.difference, pair.fixed, pair.broken, pair.p_value)


def _order(run: Run) -> tuple[float, str]:
    when = run.when
    return (when.timestamp() if when is not None else float("-inf"), run.source)


@dataclass(frozen=True)
class Filters:
    benchmarks: tuple[str, ...] = ()  # glob patterns on the column's name or format
    detectors: tuple[str, ...] = ()  # glob patterns on the detector spec
    keyword: Callable[[str], bool] | None = None  # -k (pytest's grammar) on "row label column label"

    def column(self, column: Benchmark) -> bool:
        return not self.benchmarks or any(
            fnmatch.fnmatchcase(column.name, p) or fnmatch.fnmatchcase(column.format, p) for p in self.benchmarks
        )

    def row(self, row: Config) -> bool:
        return not self.detectors or any(fnmatch.fnmatchcase(row.detector, p) for p in self.detectors)


def build(
    found: Iterable[tuple[Config, Benchmark, Run]],
    skipped: Sequence[Skipped] = (),
    *,
    filters: Filters = Filters(),
    sort: str = "name",
    reports: int = 0,
    running: Sequence[Running] = (),
) -> Board:
    """The board of the runs found, filtered and sorted: every cell's runs oldest first, each with
    its change against the one before."""
    grouped: dict[tuple[Config, Benchmark], list[Run]] = {}
    named: dict[Config, tuple[tuple[float, str], str]] = {}  # row -> its latest run's label= (when, name)
    for row, column, run in found:
        if not (filters.row(row) and filters.column(column)):
            continue
        if filters.keyword is not None and not filters.keyword(f"{row.label} {column.label}"):
            continue
        grouped.setdefault((row, column), []).append(run)
        if row not in named or _order(run) >= named[row][0]:
            named[row] = (_order(run), row.name)
    cells = {}
    for (row, column), runs in grouped.items():
        runs.sort(key=_order)
        changes = (None, *(change(a, b) for a, b in itertools.pairwise(runs)))
        # the name is no part of a row's identity: the row shows the one its latest run gave
        cells[(replace(row, name=named[row][1]), column)] = Cell(tuple(runs), changes)
    columns = tuple(sorted({c for _, c in cells}))
    rows = distinct_labels(sort_rows({r for r, _ in cells}, columns, cells, sort))
    ranked, matrices = {}, {}
    for column in columns:
        latest = [(row, cell.latest) for row in rows if (cell := cells.get((row, column))) is not None]
        ranked[column] = significance.tiers(
            [significance.Contender(row.label, row.scoring, run.records) for row, run in latest]
        )
        ranking = [r.name for r in ranked[column].ranked]  # the matrix's columns in the tiers' order
        latest.sort(key=lambda pair: ranking.index(pair[0].label) if pair[0].label in ranking else len(ranking))
        matrices[column] = sample_matrix.matrix(
            [sample_matrix.Column(row.label, run.source, run.records) for row, run in latest]
        )
    return Board(rows, columns, cells, tuple(skipped), reports, ranked, matrices, tuple(running))


MISS_SECTIONS = ("tolerance", "diagnosis", "formats")  # the sections whose figures say why a cell misses


def misses_of(run: Run) -> dict[str, Any] | None:
    """Why a cell's latest run misses (issue 46): the report's tolerance curve (accuracy within 0 to
    100 px of the box, every point the `tolerance` section gives), the frame its `diagnosis` found and
    the best format (issue 56). Read from the report's own section figures where the detector's block
    is this one dataset (issue 55: a rescored or corrected report's figures are the board's); for a
    block over several datasets, counted from the cell's records by the sections' own functions.
    None for a run with neither (the element-at-click task has no click to place)."""
    from . import formats, misses

    own = run.figures
    if own.get("tolerance"):  # the report's figures
        curve, best = own["tolerance"], own.get("formats")
        frame = _mapping(_mapping(own.get("diagnosis")).get("frame"))
    else:
        grounding = [r for r in run.records if r.get("task", Task.GROUNDING) == Task.GROUNDING]
        if not grounding:
            return None
        originals = [r for r in grounding if r.get("variant") is None]
        curve, frame = misses.tolerance_curve(originals)["px"], misses.diagnosis(originals)["frame"]
        best = formats.figures(grounding)  # --grounding-perturb format (issue 56): the best format
    found = {
        "within_px": {str(point["px"]): point["accuracy"] for point in curve},
        "frame": frame.get("name"),
        "suggestion": frame.get("suggestion"),
        **({"best_format": formats.best_text(best)} if best else {}),
    }
    if not frame.get("suggestion") and run.checked_frame:  # the check before the run named one (issue 61)
        found.update(frame=f"{run.checked_frame[-1]} (frame check)", suggestion=list(run.checked_frame))
    return found


def checked_frame(document: Mapping[str, Any], spec: str) -> tuple[str, ...]:
    """The `rescore` arguments the report's frame check gave the detector (empty: none named)."""
    check = _mapping(_mapping(document.get("frame_check")).get(spec))
    suggestion = check.get("suggestion")
    return tuple(str(s) for s in suggestion) if isinstance(suggestion, list) else ()


def distinct_labels(rows: Sequence[Config]) -> tuple[Config, ...]:
    """Rows that would show the same name (one label= given to two configurations) say which
    detector each is: the tiers and the matrix know rows by their shown name."""
    shown = Counter(row.label for row in rows)
    return tuple(
        replace(row, name=f"{row.name or row.detector} [{row.detector}]") if shown[row.label] > 1 else row
        for row in rows
    )


def sort_rows(
    rows: Iterable[Config], columns: Sequence[Benchmark], cells: Mapping[tuple[Config, Benchmark], Cell], sort: str
) -> tuple[Config, ...]:
    """By name; by mean latest accuracy over the columns shown, or by one column's (best first,
    rows without a figure last); by the latest run (newest first)."""
    ordered = sorted(rows, key=lambda r: r.label)
    if sort == "name":
        return tuple(ordered)
    if sort == "date":
        newest = {r: max(_order(c.latest) for (row, _), c in cells.items() if row == r) for r in ordered}
        return tuple(sorted(ordered, key=lambda r: newest[r], reverse=True))
    if sort == "accuracy":
        wanted = list(columns)
    else:
        wanted = [c for c in columns if sort in (c.name, c.format)]
        if not wanted:
            names = ", ".join(sorted({c.name for c in columns})) or "none"
            raise ValueError(f"--sort {sort!r}: one of {', '.join(SORTS)} or a benchmark shown ({names})")

    def score(row: Config) -> tuple[int, float]:
        values = [cell.latest.accuracy for c in wanted if (cell := cells.get((row, c))) is not None]
        present = [v for v in values if v is not None]
        return (0, -sum(present) / len(present)) if present else (1, 0.0)

    return tuple(sorted(ordered, key=score))
