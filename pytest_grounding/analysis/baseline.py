"""Baselines: what a detector scored before, per sample and per slice, kept in the repository so
a change can be judged against it (pytest-regressions' workflow: written on the first run, compared
on the next ones, rewritten on purpose). Pure: the tolerances, the comparison and the verdicts here;
the file format, the keys and the checks of a file in `baseline_file` (its names importable from
here as before); no pytest, no I/O beyond text in and text out."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..core.numbers import pct as _pct
from ..core.numbers import points
from ..core.record import Outcome
from . import intervals, metrics
from .baseline_file import (
    FORMAT_VERSION,
    MARKER,
    OUTCOMES,
    Baseline,
    BaselineError,
    Key,
    _slice_keys,
    build,
    check_compatible,
    dumps,
    expectations_from,
    loads,
    sample_key,
)
from .compare import mcnemar_exact
from .gates import Gate, parse_gate

__all__ = [
    "ERROR",
    "FORMAT_VERSION",
    "IMPROVED",
    "KNOWN_MISS",
    "MARKER",
    "NEW",
    "OUTCOMES",
    "REGRESSION",
    "SAMPLE_VERDICTS",
    "STILL_HIT",
    "Baseline",
    "BaselineError",
    "Comparison",
    "Key",
    "LatencyVerdict",
    "PairedChange",
    "SliceVerdict",
    "Tolerance",
    "Tolerances",
    "build",
    "check_compatible",
    "compare",
    "comparison_lines",
    "document_of",
    "dumps",
    "expectations_from",
    "loads",
    "parse_tolerance",
    "sample_key",
    "sample_verdict",
]

EPSILON = 1e-9  # a drop equal to the tolerance passes, whatever the float rounding

# A sample's verdict against the baseline (the record's "baseline" field).
STILL_HIT, IMPROVED, KNOWN_MISS, REGRESSION, NEW, ERROR = (
    "still_hit",
    "improved",
    "known_miss",
    "regression",
    "new",
    "error",
)
SAMPLE_VERDICTS = (STILL_HIT, IMPROVED, KNOWN_MISS, REGRESSION, NEW, ERROR)


Tolerance = Gate  # a slice's largest drop below the baseline (a share: 0.02 = 2 points): one rule, gates' grammar


def parse_tolerance(spec: str, source: str = "") -> Gate:
    """`0.02`, `2%`, or `KEY=VALUE:TOL`: the grammar of `--grounding-min-accuracy`."""
    return parse_gate(spec, source, what="tolerance")


@dataclass(frozen=True)
class Tolerances:
    """A bare number applies to every slice (overall included); `KEY=VALUE:TOL` overrides one.
    Without any: 0, every drop counts (a deterministic detector that changed nothing drops nothing)."""

    default: float = 0.0
    per_slice: tuple[Tolerance, ...] = ()

    @classmethod
    def parse(cls, specs: Iterable[str], source: str = "") -> Tolerances:
        parsed = [parse_tolerance(spec, source) for spec in specs]
        bare = [t for t in parsed if t.key is None]
        return cls(default=bare[-1].threshold if bare else 0.0, per_slice=tuple(t for t in parsed if t.key is not None))

    def of(self, label: str) -> float:
        found = [t.threshold for t in self.per_slice if t.label.lower() == label.lower()]
        return found[-1] if found else self.default


# -- one sample ----------------------------------------------------------------------------------------


def sample_verdict(outcome: str, before: str | None) -> str:
    """Now against the baseline: a hit that became a miss is the regression; a miss that was a miss
    is known; a miss that became a hit is an improvement."""
    if outcome == Outcome.ERROR:
        return ERROR
    if before is None:
        return NEW
    if outcome == Outcome.HIT:
        return STILL_HIT if before == Outcome.HIT else IMPROVED
    return REGRESSION if before == Outcome.HIT else KNOWN_MISS


# -- the whole run ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SliceVerdict:
    detector: str
    label: str
    before: float | None
    now: float | None
    scored: int
    tolerance: float

    @property
    def drop(self) -> float:
        if self.before is None or self.now is None:
            return 0.0
        return self.before - self.now

    @property
    def passed(self) -> bool:
        return self.scored > 0 and self.drop <= self.tolerance + EPSILON

    def describe(self) -> str:
        if self.scored == 0:
            return (
                f"baseline FAILED: detector {self.detector} {self.label}: no sample scored both in the baseline "
                "and now (a tolerance for a slice that does not exist?)"
            )
        status = "passed" if self.passed else "FAILED"
        change = (self.now or 0.0) - (self.before or 0.0)
        return (
            f"baseline {status}: detector {self.detector} {self.label}: accuracy {_pct(self.now)} "
            f"(baseline {_pct(self.before)}, {points(change)} points) over {self.scored} samples; "
            f"tolerance {self.tolerance * 100:.1f} points"
        )


@dataclass(frozen=True)
class LatencyVerdict:
    detector: str
    figure: str  # p50 | p95
    before: float
    now: float
    max_slowdown: float

    @property
    def ratio(self) -> float:
        return self.now / self.before

    @property
    def passed(self) -> bool:
        return self.ratio <= self.max_slowdown + EPSILON

    def describe(self) -> str:
        status = "passed" if self.passed else "FAILED"
        return (
            f"latency {status}: detector {self.detector} {self.figure} {self.now:.2f} ms, baseline {self.before:.2f} "
            f"ms: x{self.ratio:.2f} (at most x{self.max_slowdown:g}, --grounding-max-slowdown)"
        )


@dataclass(frozen=True)
class PairedChange:
    """A detector now against its baseline on the samples scored both times: the change in accuracy
    with its 95% interval clustered by screen, and McNemar's exact test on the changed samples."""

    detector: str
    difference: intervals.Difference
    fixed: int  # a miss then, a hit now
    broken: int  # a hit then, a miss now

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.fixed, self.broken)

    def describe(self) -> str:
        found = self.difference
        return (
            f"baseline paired: detector {self.detector}: {points(found.delta)} points against the baseline on "
            f"{found.samples} samples ({self.fixed} fixed, {self.broken} broken), {found.bounds()}, "
            f"McNemar exact p = {self.p_value:.3g}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            **self.difference.as_dict(),
            "fixed": self.fixed,
            "broken": self.broken,
            "p_value": self.p_value,
        }


@dataclass(frozen=True)
class Comparison:
    regressions: tuple[Mapping[str, Any], ...]
    improvements: tuple[Mapping[str, Any], ...]
    known_misses: int
    new: int  # run now, not in the baseline
    not_run: int  # in the baseline (for this run's datasets and detectors), not run now
    compared: int
    slices: tuple[SliceVerdict, ...]
    latency: tuple[LatencyVerdict, ...]
    paired: tuple[PairedChange, ...] = ()

    @property
    def failed_slices(self) -> list[SliceVerdict]:
        return [v for v in self.slices if not v.passed]

    @property
    def passed(self) -> bool:
        return not self.regressions and not self.failed_slices and all(v.passed for v in self.latency)


def compare(
    baseline: Baseline,
    records: Sequence[Mapping[str, Any]],
    tolerances: Tolerances,
    max_slowdown: float | None = None,
) -> Comparison:
    """Slices are compared on the samples scored both then and now (a run cut by --grounding-limit
    or -k is compared on what it ran, an error is an error, not a miss): each slice's accuracy on
    that common set, then and now. Records are sorted first: the verdicts do not depend on the order
    xdist workers finished in."""
    ordered = sorted(records, key=metrics.record_order)
    regressions, improvements = [], []
    known = new = 0
    now_common: list[Mapping[str, Any]] = []
    then_common: list[Mapping[str, Any]] = []
    seen: set[Key] = set()
    for record in ordered:
        key = sample_key(record)
        seen.add(key)
        before = baseline.outcomes.get(key)
        verdict = sample_verdict(record["outcome"], before)
        if verdict == REGRESSION:
            regressions.append(_brief(record))
        elif verdict == IMPROVED:
            improvements.append(_brief(record))
        elif verdict == KNOWN_MISS:
            known += 1
        elif verdict == NEW:
            new += 1
        if before is not None and before != Outcome.ERROR and record["outcome"] != Outcome.ERROR:
            now_common.append(record)
            then_common.append({**record, "outcome": before})
    fingerprints = {k[0] for k in seen}
    detectors = {k[2] for k in seen}
    not_run = sum(1 for k in baseline.outcomes if k[0] in fingerprints and k[2] in detectors and k not in seen)
    slices = _slice_verdicts(then_common, now_common, tolerances, sorted(detectors))
    latency = _latency_verdicts(baseline, ordered, max_slowdown) if max_slowdown else ()
    return Comparison(
        regressions=tuple(regressions),
        improvements=tuple(improvements),
        known_misses=known,
        new=new,
        not_run=not_run,
        compared=len(now_common),
        slices=tuple(slices),
        latency=tuple(latency),
        paired=tuple(_paired(then_common, now_common)),
    )


def _paired(then: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> list[PairedChange]:
    """Per detector, the change on the samples scored both times (`then` and `now` in one order)."""
    per_detector: dict[str, list[tuple[bool, bool, tuple[str, str]]]] = {}
    for index, (before, after) in enumerate(zip(then, now, strict=True)):
        if after.get("variant") is not None:
            continue  # as the accuracy: originals only (a variant's item keeps its own verdict)
        per_detector.setdefault(after["detector"], []).append(
            (before["outcome"] == Outcome.HIT, after["outcome"] == Outcome.HIT, intervals.screen_of(after, index))
        )
    found = []
    for detector in sorted(per_detector):
        pairs = per_detector[detector]
        difference = intervals.difference([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs])
        if difference is None:
            continue
        fixed = sum(1 for b, a, _ in pairs if a and not b)
        broken = sum(1 for b, a, _ in pairs if b and not a)
        found.append(PairedChange(detector, difference, fixed, broken))
    return found


def _brief(record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "detector": record["detector"],
        "dataset": record["dataset"],
        "id": record["id"],
        "uid": record["uid"],
        "outcome": record["outcome"],
    }


def _slice_verdicts(
    then: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]], tolerances: Tolerances, detectors: list[str]
) -> list[SliceVerdict]:
    """Every slice of every detector is checked (overall first): a drop anywhere is named. A
    tolerance given for a slice that matched nothing fails, as a gate does: a typo must not pass."""
    before, after = metrics.summarize(then), metrics.summarize(now)
    verdicts = []
    for detector in detectors:
        block_then, block_now = before.get(detector), after.get(detector)
        rows: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = []
        if block_then is not None and block_now is not None:
            rows.append(("overall", block_then, block_now))
            for key in _slice_keys(block_now):
                then_rows = {r["value"]: r for r in block_then["by"][key]}
                rows += [(f"{key}={r['value']}", then_rows[r["value"]], r) for r in block_now["by"][key]]
        labels = {label.lower() for label, _, _ in rows}
        for label, row_then, row_now in rows:
            verdicts.append(
                SliceVerdict(
                    detector,
                    label,
                    row_then["accuracy"],
                    row_now["accuracy"],
                    row_now["scored"],
                    tolerances.of(label),
                )
            )
        for tolerance in tolerances.per_slice:
            if tolerance.label.lower() not in labels:
                verdicts.append(SliceVerdict(detector, tolerance.label, None, None, 0, tolerance.threshold))
    return verdicts


def _latency_verdicts(
    baseline: Baseline, records: Sequence[Mapping[str, Any]], max_slowdown: float
) -> list[LatencyVerdict]:
    verdicts = []
    for block in metrics.summarize(records).values():
        detector = block["detector"]
        then = baseline.latency.get(detector) or {}
        for figure in ("p50", "p95"):
            before, now = then.get(figure), block["latency_ms"][figure]
            if isinstance(before, (int, float)) and before > 0 and now is not None and math.isfinite(now):
                verdicts.append(LatencyVerdict(detector, figure, float(before), float(now), max_slowdown))
    return verdicts


# -- text --------------------------------------------------------------------------------------------


def comparison_lines(
    comparison: Comparison, where: str, show: int | None = 10, names: Mapping[str, str] | None = None
) -> list[str]:
    """The summary's baseline block: counts, the regressions and improvements named, the slices that
    dropped beyond their tolerance (the ones within it in one line), the latency ratios. Detectors
    by their label= where `names` ({spec: label}) has one (the comparison keys on the spec)."""
    names = names or {}

    def named(verdict: Any) -> Any:
        return replace(verdict, detector=names.get(verdict.detector, verdict.detector))

    lines = [
        f"baseline {where}: {comparison.compared} samples compared: {len(comparison.regressions)} regressions, "
        f"{len(comparison.improvements)} improvements, {comparison.known_misses} known misses"
        + (f", {comparison.new} not in the baseline" if comparison.new else "")
        + (f", {comparison.not_run} in the baseline not run now" if comparison.not_run else "")
    ]
    for title, rows, now in (
        ("regression", comparison.regressions, "a hit in the baseline, now a"),
        ("improvement", comparison.improvements, "not a hit in the baseline, now a"),
    ):
        shown = rows if show is None else rows[:show]
        lines += [
            f"  {title}: {names.get(r['detector'], r['detector'])} {r['dataset']}/{r['id']} ({now} {r['outcome']})"
            for r in shown
        ]
        if len(shown) < len(rows):
            lines.append(f"  ... {len(rows) - len(shown)} more {title}s in the JSON report")
    failed = comparison.failed_slices
    passed = len(comparison.slices) - len(failed)
    lines += [named(v).describe() for v in failed]
    if comparison.slices:
        lines.append(f"baseline: {passed} of {len(comparison.slices)} slices within their tolerance")
    lines += [named(v).describe() for v in comparison.latency]
    lines += [named(p).describe() for p in comparison.paired]
    return lines


def document_of(comparison: Comparison) -> dict[str, Any]:
    """The JSON report's view of a comparison."""
    return {
        "passed": comparison.passed,
        "compared": comparison.compared,
        "known_misses": comparison.known_misses,
        "new": comparison.new,
        "not_run": comparison.not_run,
        "regressions": [dict(r) for r in comparison.regressions],
        "improvements": [dict(r) for r in comparison.improvements],
        "slices": [
            {
                "detector": v.detector,
                "slice": v.label,
                "baseline": v.before,
                "accuracy": v.now,
                "scored": v.scored,
                "tolerance": v.tolerance,
                "passed": v.passed,
            }
            for v in comparison.slices
        ],
        "paired": [p.as_dict() for p in comparison.paired],
        "latency": [
            {
                "detector": v.detector,
                "figure": v.figure,
                "baseline_ms": v.before,
                "ms": v.now,
                "ratio": v.ratio,
                "max_slowdown": v.max_slowdown,
                "passed": v.passed,
            }
            for v in comparison.latency
        ],
    }


def comparison_of(found: Mapping[str, Any]) -> Comparison | None:
    """A report's `baseline` block (`document_of`) read back as the comparison it was written from, so
    that `report`, `merge` and `rescore` print the baseline's lines as the run did. None when the block
    holds no comparison (the baseline was written, or could not be read)."""
    if not isinstance(found.get("compared"), int):
        return None

    def rows(key: str) -> list[Mapping[str, Any]]:
        value = found.get(key)
        return [row for row in value if isinstance(row, Mapping)] if isinstance(value, list) else []

    def paired(row: Mapping[str, Any]) -> PairedChange:
        low, high = row["ci95"]
        difference = intervals.Difference(row["delta"], low, high, 0.0, row["samples"], row["clusters"])
        return PairedChange(row["detector"], difference, row["fixed"], row["broken"])

    return Comparison(
        regressions=tuple(rows("regressions")),
        improvements=tuple(rows("improvements")),
        known_misses=int(found.get("known_misses") or 0),
        new=int(found.get("new") or 0),
        not_run=int(found.get("not_run") or 0),
        compared=found["compared"],
        slices=tuple(
            SliceVerdict(r["detector"], r["slice"], r["baseline"], r["accuracy"], r["scored"], r["tolerance"])
            for r in rows("slices")
        ),
        latency=tuple(
            LatencyVerdict(r["detector"], r["figure"], r["baseline_ms"], r["ms"], r["max_slowdown"])
            for r in rows("latency")
        ),
        paired=tuple(paired(r) for r in rows("paired")),
    )
