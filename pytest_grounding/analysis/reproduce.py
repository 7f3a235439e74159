"""The reproduction check: a run on a known benchmark with a known preset, set against the figure
its authors published. Published figures ship as data (`published.json`, one entry per model,
preset and benchmark, each with its source); a project adds its own with `--grounding-published`.

Pure: records, dataset summaries and detector descriptions in, verdicts out. A dataset is a known
benchmark by its annotations' fingerprint, or by its format, sample count and name. The detector's
preset is read from its `describe()` (`preset`: a name, or a dict with `name`); the model from its
`model`. "Reproduced" follows ClawGUI: at or above the published figure, or within 2 points.
Beside it, the run's 95% interval (clustered by screen, analysis/intervals.py), whether the published
figure lies inside it, and the smallest difference a run of this size could detect: a fixed band
is about the noise at 1,581 samples and far narrower than it at 300, so the verdict says which."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.record import SCORED, Outcome
from . import intervals
from .agentic import agent_mode, mode_mismatch
from .published import AVERAGES as AVERAGES
from .published import SHIPPED as SHIPPED
from .published import Benchmark as Benchmark
from .published import Published as Published
from .published import PublishedError as PublishedError
from .published import Table as Table
from .published import parse_table as parse_table
from .published import read_table as read_table
from .published import shipped_table as shipped_table
from .published import squash as squash

REPRODUCED, NOT_REPRODUCED, DOES_NOT_APPLY = "reproduced", "not reproduced", "does not apply"


def tokens(text: str) -> str:
    """A model name as `-word-word-`: `ByteDance-Seed/UI-TARS-1.5-7B` -> `-bytedance-seed-ui-tars-1-5-7b-`."""
    return "-" + "-".join(re.findall(r"[a-z0-9]+", str(text).lower())) + "-"


def choose(candidates: Sequence[Published], model: str | None) -> tuple[Published | None, str | None]:
    """The published entry for the detector's model: the one whose `match` the model name holds
    (the longest match wins: GTA1-7B-2507 over GTA1-7B), or why none can be chosen."""
    if not candidates:
        return None, None
    name = tokens(model or "")
    scored = []
    for entry in candidates:
        found = [len(alt) for alt in entry.match if tokens(alt) in name]
        if not entry.match or found:
            scored.append((max(found, default=0), entry))
    listed = ", ".join(f"{c.model} {c.figure:g}" for c in candidates)
    if not scored:
        what = f"model {model!r}" if model else "the detector names no model"
        return None, f"{what} is none of the models with a published figure ({listed})"
    top = max(length for length, _ in scored)
    best = [entry for length, entry in scored if length == top]
    if len(best) > 1:
        return None, f"model {model!r} fits several published figures ({listed})"
    return best[0], None


@dataclass(frozen=True)
class Reproduction:
    detector: str
    dataset: str
    benchmark: Benchmark
    preset: str
    model: str | None
    status: str
    published: Published | None
    measured: float | None  # percent, averaged as the published figure is
    samples_run: int
    reason: str | None = None
    within_points: float = 2.0
    ci95: tuple[float, float] | None = None  # percent: the run's 95% interval of `measured`
    detectable: float | None = None  # points: the smallest difference this run detects (80% power, 5%)
    engine: str | None = None  # a served detector's engine and version (served_engine.py), as it ran

    @property
    def inside(self) -> bool | None:
        """Whether the published figure lies inside the run's 95% interval (None: no interval)."""
        if self.ci95 is None or self.published is None:
            return None
        return self.ci95[0] - 1e-9 <= self.published.figure <= self.ci95[1] + 1e-9

    @property
    def delta(self) -> float | None:
        if self.status == DOES_NOT_APPLY or self.measured is None or self.published is None:
            return None
        return self.measured - self.published.figure

    @property
    def average(self) -> str:
        return (self.published.average if self.published else None) or self.benchmark.average

    def as_dict(self) -> dict[str, Any]:
        delta = self.delta
        return {
            "detector": self.detector,
            "engine": self.engine,
            "dataset": self.dataset,
            "benchmark": self.benchmark.id,
            "benchmark_title": self.benchmark.title,
            "preset": self.preset,
            "model": self.model,
            "status": self.status,
            "published": None if self.published is None else self.published.as_dict(self.benchmark),
            "measured": None if self.measured is None else round(self.measured, 4),
            "delta": None if delta is None else round(delta, 4),
            "within_points": self.within_points,
            "ci95": None if self.ci95 is None else [round(v, 4) for v in self.ci95],
            "published_inside_ci95": self.inside,
            "detectable_points": None if self.detectable is None else round(self.detectable, 4),
            "samples_run": self.samples_run,
            "samples_total": self.benchmark.samples,
            "reason": self.reason,
            "line": self.line(),
        }

    def line(self) -> str:
        engine = f", on {self.engine}" if self.engine else ""
        head = (
            f"reproduction {self.detector} on {self.dataset} ({self.benchmark.title}, preset {self.preset}{engine}): "
        )
        published = self.published
        if published is None:
            return head + f"the comparison does not apply ({self.reason})"
        digits = max(1, _decimals(published.figure))
        text = head + f"published {published.figure:.{digits}f} for {published.model} ({published.source})"
        if self.measured is None:
            return text + f", this run has no scored sample: the comparison does not apply ({self.reason})"
        measured = f"{self.measured:.{digits}f}"
        if self.average == "cells":
            measured += " (mean over the platform x element-type cells)"
        if self.status == DOES_NOT_APPLY:
            return (
                text + f", this run {measured} on {self.samples_run} of {self.benchmark.samples} samples: "
                f"the comparison does not apply ({self.reason})"
            )
        delta = self.delta or 0.0
        return (
            text + f", this run {measured}, delta {delta:+.{digits}f}: {self.status} (reproduced means at or "
            f"above the published figure, or within {self.within_points:g} points)" + self.noise()
        )

    def noise(self) -> str:
        """`; 95% CI 71.2-86.4: the published figure inside it; this run detects differences of 7.9 points`."""
        if self.ci95 is None or self.detectable is None:
            return ""
        where = "inside it" if self.inside else "outside it"
        return (
            f"; 95% CI {self.ci95[0]:.1f}-{self.ci95[1]:.1f}: the published figure {where}; the smallest "
            f"difference this run can detect is {self.detectable:.1f} points"
        )


def _decimals(value: float) -> int:
    text = f"{value:g}"
    return len(text.partition(".")[2])


def noise(records: Sequence[Mapping[str, Any]], average: str) -> intervals.Interval | None:
    """The 95% interval of `measure`'s figure (a share), clustered by screen."""
    outcomes = intervals.Outcomes.of(r for r in records if r["outcome"] in SCORED)
    if average == "cells":
        return intervals.mean_over(outcomes, ([f"{r['platform']}\x1f{r['element_type']}"] for r in outcomes.records))
    return intervals.proportion(outcomes)


def measure(records: Sequence[Mapping[str, Any]], average: str) -> float | None:
    """Accuracy in percent over the scored records (wrong formats count as misses): micro, or the
    mean over the (platform, element type) cells."""
    scored = [r for r in records if r["outcome"] in SCORED]
    if not scored:
        return None
    if average == "cells":
        cells: dict[tuple[str, str], list[bool]] = {}
        for record in scored:
            cells.setdefault((str(record["platform"]), str(record["element_type"])), []).append(
                record["outcome"] == Outcome.HIT
            )
        return 100.0 * sum(sum(hits) / len(hits) for hits in cells.values()) / len(cells)
    hits: int = sum(r["outcome"] == Outcome.HIT for r in scored)
    return 100.0 * hits / len(scored)


def preset_of(info: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(preset, model, strategy) from a detector's description; a cropping strategy's inner
    detector is looked into (its figures are not the model's alone: the strategy is named)."""
    inner, strategy = _unwrap(info)
    preset = inner.get("preset")
    if isinstance(preset, Mapping):
        preset = preset.get("name")
    model = inner.get("model")
    return (
        str(preset) if isinstance(preset, str) and preset else None,
        str(model) if model else None,
        strategy,
    )


def _unwrap(info: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
    strategy = None
    while isinstance(info.get("inner"), Mapping) and info.get("strategy"):
        strategy = str(info["strategy"]) if strategy is None else f"{strategy}+{info['strategy']}"
        info = info["inner"]
    return info, strategy


def overridden(info: Mapping[str, Any], registered: Mapping[str, Any] | None) -> list[str]:
    """The parts of the detector's resolved preset (its describe()'s `preset` dict) that differ
    from the preset as registered: a figure measured with another max_pixels or prompt is not the
    published setup's."""
    preset = _unwrap(info)[0].get("preset")
    if not isinstance(preset, Mapping) or registered is None:
        return []
    return sorted(key for key in set(preset) | set(registered) if preset.get(key) != registered.get(key))


def check(
    records: Iterable[Mapping[str, Any]],
    datasets: Sequence[Mapping[str, Any]],
    detectors: Mapping[str, Mapping[str, Any]],
    table: Table,
    *,
    interrupted: bool = False,
    limit: int | None = None,
    registered: Callable[[str], Mapping[str, Any] | None] | None = None,
) -> list[Reproduction]:
    """One verdict per (detector with a preset, dataset that is a known benchmark) in the run.
    `registered(name)`: the preset as registered (its describe()), to tell an overridden one."""
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get("task", "grounding") == "grounding":
            grouped.setdefault((record["detector"], record["dataset"]), []).append(record)
    found = []
    for dataset in datasets:
        benchmark = table.identify(dataset)
        if benchmark is None:
            continue
        for detector in sorted({d for d, name in grouped if name == dataset["name"]}):
            preset, model, strategy = preset_of(detectors.get(detector) or {})
            if preset is None:
                continue
            group = grouped[detector, dataset["name"]]
            published, reason = choose(
                same_mode(table.candidates(preset, benchmark.id), detectors.get(detector)), model
            )
            if published is None and reason is None:
                reason = mode_reason(table.candidates(preset, benchmark.id), detectors.get(detector), preset) or (
                    f"no published figure for preset {preset} on {benchmark.title}"
                )
            reasons = [reason] if reason else []
            changed = overridden(detectors.get(detector) or {}, registered(preset) if registered else None)
            if changed:
                reasons.append(
                    f"preset parts overridden ({', '.join(changed)}): the figure is for the preset as published"
                )
            if strategy:
                reasons.append(
                    f"the model runs inside the cropping strategy {strategy}; the figure is the model's alone"
                )
            reasons += _partial(group, dataset, benchmark, interrupted=interrupted, limit=limit)
            average = (published.average if published else None) or benchmark.average
            measured = measure(group, average)
            spread = noise(group, average)
            if reasons:
                status = DOES_NOT_APPLY
            else:
                assert published is not None and measured is not None
                # rounded: 47.6 - 49.6 must read as -2.0 points, not -2.0000000000000036
                delta = round(measured - published.figure, 9)
                status = REPRODUCED if delta >= -table.within_points else NOT_REPRODUCED
            found.append(
                Reproduction(
                    detector=detector,
                    engine=_engine(detectors.get(detector) or {}),
                    dataset=dataset["name"],
                    benchmark=benchmark,
                    preset=preset,
                    model=model,
                    status=status,
                    published=published,
                    measured=measured,
                    samples_run=len(group),
                    reason="; ".join(reasons) or None,
                    within_points=table.within_points,
                    ci95=None if spread is None else (100.0 * spread.low, 100.0 * spread.high),
                    detectable=None if spread is None else 100.0 * spread.detectable,
                )
            )
    return found


def same_mode(candidates: Sequence[Published], info: Mapping[str, Any] | None) -> list[Published]:
    """The figures measured as the detector runs: agentic ones for agent=..., single-shot otherwise."""
    agentic = agent_mode(info or {}) is not None
    return [c for c in candidates if c.agentic == agentic]


def mode_reason(candidates: Sequence[Published], info: Mapping[str, Any] | None, preset: str) -> str | None:
    """Why none applies when the preset's figures are all of the other mode (agentic, single-shot)."""
    mode = agent_mode(info or {})
    return next((r for c in candidates if (r := mode_mismatch(c.agentic, mode, preset))), None)


def _engine(info: Mapping[str, Any]) -> str | None:
    """The engine a served detector ran on (its record's headline), else None."""
    engine = info.get("engine")
    return str(engine.get("headline")) if isinstance(engine, Mapping) and engine.get("headline") else None


def _partial(
    group: Sequence[Mapping[str, Any]],
    dataset: Mapping[str, Any],
    benchmark: Benchmark,
    *,
    interrupted: bool,
    limit: int | None,
) -> list[str]:
    """Why the run's figure is not the benchmark's: what did not run, or ran without a score."""
    reasons = []
    if interrupted:
        reasons.append("the run was interrupted")
    total = int(dataset.get("samples") or benchmark.samples)
    if limit is not None and limit < total:
        reasons.append(f"--grounding-limit {limit}: {len(group)} of {total} samples ran")
    elif len(group) < total:
        reasons.append(f"{len(group)} of {total} samples ran (-k or another deselection)")
    errors = sum(r["outcome"] == Outcome.ERROR for r in group)
    if errors:
        reasons.append(f"{errors} samples ended in an error, not scored")
    return reasons


def lines(found: Sequence[Reproduction]) -> list[str]:
    return [item.line() for item in found]
