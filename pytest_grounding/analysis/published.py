"""Published figures for the reproduction check, as data: the shipped `published.json` and a
project's own file (`--grounding-published`), every field checked; the benchmarks they name, how a
dataset is recognised as one, the figures a preset has. Pure but for reading the files."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core import safejson

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
        document = safejson.read_path(path)  # a regular file, bounded
    except (OSError, UnicodeDecodeError) as exc:
        raise PublishedError(f"cannot read {path}: {exc}") from None
    except ValueError as exc:
        raise PublishedError(f"{path} is not JSON: {exc}") from None
    return parse_table(document, str(path))
