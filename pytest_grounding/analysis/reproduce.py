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

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core import safejson
from . import intervals
from .agentic import agent_mode, mode_mismatch

REPRODUCED, NOT_REPRODUCED, DOES_NOT_APPLY = "reproduced", "not reproduced", "does not apply"
AVERAGES = ("micro", "cells")  # cells: the mean over platform x element-type cells (SeeClick lineage)
SHIPPED = "published.json"


class PublishedError(ValueError):
    """A published-figures file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Benchmark:
    id: str
    title: str
    formats: tuple[str, ...]
    samples: int
    names: tuple[str, ...] = ()
    split: str = "test"
    average: str = "micro"
    fingerprints: tuple[str, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class Published:
    preset: str
    model: str
    benchmark: str
    figure: float  # percent
    source: str
    match: tuple[str, ...] = ()  # alternatives, one of which the detector's model name must hold; () = any
    split: str | None = None  # None: the benchmark's
    average: str | None = None  # None: the benchmark's
    note: str = ""
    agentic: bool = False  # measured with the model asking for crops over turns (issue 39)

    def as_dict(self, benchmark: Benchmark) -> dict[str, Any]:
        return {
            "agentic": self.agentic,
            "model": self.model,
            "figure": self.figure,
            "source": self.source,
            "split": self.split or benchmark.split,
            "average": self.average or benchmark.average,
            "note": self.note or None,
        }


@dataclass(frozen=True)
class Table:
    benchmarks: tuple[Benchmark, ...]
    results: tuple[Published, ...]
    within_points: float = 2.0

    def merged(self, other: Table) -> Table:
        """`other`'s benchmarks (one with a known id replaces it) and results added to these."""
        ids = {b.id for b in other.benchmarks}
        benchmarks = tuple(b for b in self.benchmarks if b.id not in ids) + other.benchmarks
        return replace(self, benchmarks=benchmarks, results=self.results + other.results)

    def identify(self, dataset: Mapping[str, Any]) -> Benchmark | None:
        """The benchmark a dataset summary is: its fingerprint listed, else its format and sample
        count with its name holding one of the benchmark's names (the longest such name wins, so a
        folder `screenspot-v2` is ScreenSpot-v2, not ScreenSpot)."""
        for benchmark in self.benchmarks:
            if dataset.get("fingerprint") in benchmark.fingerprints:
                return benchmark
        name = squash(dataset.get("name", ""))
        best: tuple[int, Benchmark] | None = None
        for benchmark in self.benchmarks:
            if dataset.get("format") not in benchmark.formats or dataset.get("samples") != benchmark.samples:
                continue
            for alias in map(squash, benchmark.names):
                if alias and alias in name and (best is None or len(alias) > best[0]):
                    best = (len(alias), benchmark)
        return None if best is None else best[1]

    def check(self, where: str) -> Table:
        """Every result names a benchmark of the table (after merging a project's file)."""
        ids = {b.id for b in self.benchmarks}
        for result in self.results:
            if result.benchmark not in ids:
                raise PublishedError(
                    f"{where}: the result for {result.model} ({result.preset}) names benchmark "
                    f"{result.benchmark!r}; known: {', '.join(sorted(ids))}"
                )
        return self

    def candidates(self, preset: str, benchmark: str) -> list[Published]:
        return [r for r in self.results if r.preset == preset and r.benchmark == benchmark]


def squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


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
    outcomes = intervals.Outcomes.of(r for r in records if r["outcome"] in ("hit", "miss", "wrong_format"))
    if average == "cells":
        return intervals.mean_over(outcomes, ([f"{r['platform']}\x1f{r['element_type']}"] for r in outcomes.records))
    return intervals.proportion(outcomes)


def measure(records: Sequence[Mapping[str, Any]], average: str) -> float | None:
    """Accuracy in percent over the scored records (wrong formats count as misses): micro, or the
    mean over the (platform, element type) cells."""
    scored = [r for r in records if r["outcome"] in ("hit", "miss", "wrong_format")]
    if not scored:
        return None
    if average == "cells":
        cells: dict[tuple[str, str], list[bool]] = {}
        for record in scored:
            cells.setdefault((str(record["platform"]), str(record["element_type"])), []).append(
                record["outcome"] == "hit"
            )
        return 100.0 * sum(sum(hits) / len(hits) for hits in cells.values()) / len(cells)
    hits: int = sum(r["outcome"] == "hit" for r in scored)
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
    errors = sum(r["outcome"] == "error" for r in group)
    if errors:
        reasons.append(f"{errors} samples ended in an error, not scored")
    return reasons


# -- the data ---------------------------------------------------------------------------------------


def parse_table(document: Any, where: str) -> Table:
    """A published-figures document (the shape of the shipped `published.json`), every field
    checked; a bad entry is a PublishedError naming the file and the entry."""
    if not isinstance(document, Mapping):
        raise PublishedError(f"{where}: expected a JSON object with benchmarks and results")
    unknown = sorted(set(document) - {"about", "criterion", "benchmarks", "results"})
    if unknown:
        raise PublishedError(f"{where}: unknown key(s) {', '.join(unknown)} (benchmarks, results, criterion)")
    criterion = document.get("criterion") or {}
    within: Any = criterion.get("within_points", 2.0) if isinstance(criterion, Mapping) else None
    if not (_number(within) and within >= 0):
        raise PublishedError(f"{where}: criterion.within_points must be a number >= 0, got {within!r}")
    benchmarks = tuple(
        _benchmark(item, f"{where}: benchmarks[{i}]") for i, item in enumerate(_list(document, "benchmarks", where))
    )
    results = tuple(_result(item, f"{where}: results[{i}]") for i, item in enumerate(_list(document, "results", where)))
    return Table(benchmarks, results, float(within))


def _list(document: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = document.get(key, [])
    if not isinstance(value, list):
        raise PublishedError(f"{where}: {key} must be a list, got {type(value).__name__}")
    return value


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _fields(item: Any, where: str, required: Mapping[str, type], optional: Mapping[str, type]) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise PublishedError(f"{where}: expected an object, got {type(item).__name__}")
    missing = [key for key in required if key not in item]
    if missing:
        raise PublishedError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(set(item) - set(required) - set(optional))
    if unknown:
        raise PublishedError(f"{where}: unknown key(s) {', '.join(unknown)}")
    out = {}
    for key, kind in {**required, **optional}.items():
        if key not in item:
            continue
        value = item[key]
        if kind is float:
            ok = _number(value)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        elif kind is bool:
            ok = isinstance(value, bool)
        elif kind is tuple:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            value = tuple(value) if ok else value
        else:
            ok = isinstance(value, str) and (bool(value.strip()) or key == "note")
        if not ok:
            words = {float: "a number", int: "a whole number > 0", tuple: "a list of strings", bool: "true or false"}
            expected = words.get(kind, "a text")
            raise PublishedError(f"{where}: {key} must be {expected}, got {value!r}")
        out[key] = value
    if out.get("average", "micro") not in AVERAGES:
        raise PublishedError(f"{where}: average {out['average']!r} is not one of {', '.join(AVERAGES)}")
    return out


def _benchmark(item: Any, where: str) -> Benchmark:
    fields = _fields(
        item,
        where,
        {"id": str, "title": str, "formats": tuple, "samples": int},
        {"names": tuple, "split": str, "average": str, "fingerprints": tuple, "source": str},
    )
    return Benchmark(**fields)


def _result(item: Any, where: str) -> Published:
    fields = _fields(
        item,
        where,
        {"preset": str, "model": str, "benchmark": str, "figure": float, "source": str},
        {"match": tuple, "split": str, "average": str, "note": str, "agentic": bool},
    )
    if not 0 <= fields["figure"] <= 100:
        raise PublishedError(f"{where}: figure {fields['figure']!r} is not a percentage (0..100)")
    fields["figure"] = float(fields["figure"])
    return Published(**fields)


def shipped_table() -> Table:
    """The figures shipped with the package."""
    from importlib.resources import files

    text = (files("pytest_grounding") / SHIPPED).read_text(encoding="utf-8")
    return parse_table(json.loads(text), SHIPPED).check(SHIPPED)


def read_table(path: Path) -> Table:
    """A project's own figures (`--grounding-published`), in the shipped file's shape."""
    try:
        document = safejson.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PublishedError(f"cannot read {path}: {exc}") from None
    except ValueError as exc:
        raise PublishedError(f"{path} is not JSON: {exc}") from None
    return parse_table(document, str(path))


def lines(found: Sequence[Reproduction]) -> list[str]:
    return [item.line() for item in found]
