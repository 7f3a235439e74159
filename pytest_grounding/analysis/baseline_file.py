"""The baseline file: its format, the keys of its samples, reading it (every value checked) and
writing it (one line per slice and per sample, so a changed sample is a one-line diff in review),
and whether a baseline fits a run. Pure: text in and text out; `baseline` compares a run with it.

A sample's key is (dataset fingerprint, sample id, detector spec), never a test node id: renaming a
suite or a test function keeps the baseline valid, a new dataset version or another detector
setting does not."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import safejson
from ..core.record import Outcome
from . import metrics

FORMAT_VERSION = 1
MARKER = "pytest_grounding_baseline"  # the first key of the file: says what the file is and its version

Key = tuple[str, str, str]  # (fingerprint, sample id, detector spec)


class BaselineError(ValueError):
    """A baseline file that cannot be used for this run; the message says why and what to do."""


def sample_key(record: Mapping[str, Any]) -> Key:
    """The dataset's own id; a repeated id (real datasets have them) keeps the `-dupN` the loader
    gave its test id, so two rows sharing an id are still two keys."""
    dup = re.search(r"-dup(\d+)$", str(record.get("uid", "")))
    sample = str(record["id"]) + (f"#{dup.group(1)}" if dup else "")
    return (str(record.get("fingerprint") or ""), sample, str(record["detector"]))


@dataclass(frozen=True)
class Baseline:
    task: str
    datasets: Mapping[str, str]  # name -> fingerprint
    detectors: tuple[str, ...]
    outcomes: Mapping[Key, str]
    latency: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # detector -> p50, p95, n
    slices: tuple[Mapping[str, Any], ...] = ()

    # -- wire (to xdist workers): plain lists --------------------------------------------------

    def expectations(self) -> list[list[str]]:
        return [[*key, outcome] for key, outcome in sorted(self.outcomes.items())]


def expectations_from(rows: Iterable[Sequence[str]]) -> dict[Key, str]:
    return {(row[0], row[1], row[2]): row[3] for row in rows}


# -- the file ----------------------------------------------------------------------------------------


def build(records: Sequence[Mapping[str, Any]], task: str) -> dict[str, Any]:
    """The baseline document of a finished run: every sample's outcome, every slice's figures (so a
    reviewer reads the accuracy change in the pull request's diff) and each detector's latency."""
    summary = metrics.summarize(records)
    samples = []
    datasets: dict[str, str] = {}
    for record in records:
        fingerprint, sample, detector = sample_key(record)
        datasets[str(record["dataset"])] = fingerprint
        samples.append(
            {
                "detector": detector,
                "dataset": record["dataset"],
                "fingerprint": fingerprint,
                "id": sample,
                "outcome": record["outcome"],
            }
        )
    samples.sort(key=lambda s: (s["detector"], s["dataset"], s["fingerprint"], s["id"]))
    slices = []
    latency = {}
    for block in summary.values():
        detector = block["detector"]
        slices.append(_slice_row(detector, "overall", block))
        for key in _slice_keys(block):
            slices += [_slice_row(detector, f"{key}={row['value']}", row) for row in block["by"][key]]
        lat = block["latency_ms"]
        latency[detector] = {"p50": _round(lat["p50"]), "p95": _round(lat["p95"]), "n": lat["n"]}
    return {
        MARKER: FORMAT_VERSION,
        "task": task,
        "datasets": dict(sorted(datasets.items())),
        "detectors": sorted({s["detector"] for s in samples}),
        "latency_ms": dict(sorted(latency.items())),
        "slices": slices,
        "samples": samples,
    }


def _slice_keys(block: Mapping[str, Any]) -> list[str]:
    """The summary's slices; the dataset slice only when there are several (one is the overall)."""
    return [key for key in metrics.SLICES if key != "dataset" or len(block["by"][key]) > 1]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _slice_row(detector: str, label: str, row: Mapping[str, Any]) -> dict[str, Any]:
    accuracy = row["accuracy"]
    return {
        "detector": detector,
        "slice": label,
        "accuracy": None if accuracy is None else round(accuracy, 6),
        "hits": row["hits"],
        "scored": row["scored"],
    }


def dumps(document: Mapping[str, Any]) -> str:
    """JSON with one line per slice and per sample, in a fixed order: a changed sample is a one-line
    diff in review, and two runs that agree write the same bytes (latency aside)."""
    head = [f"  {json.dumps(key)}: {json.dumps(document[key])}" for key in document if key not in ("slices", "samples")]
    blocks = []
    for key in ("slices", "samples"):
        rows = ",\n".join(f"    {json.dumps(row)}" for row in document[key])
        blocks.append(f'  "{key}": [\n{rows}\n  ]' if rows else f'  "{key}": []')
    return "{\n" + ",\n".join(head + blocks) + "\n}\n"


def loads(text: str, where: str) -> Baseline:
    try:
        document = safejson.loads(text)
    except ValueError as exc:
        raise BaselineError(
            f"{where} is not JSON ({exc}): fix it or rewrite it with --grounding-update-baseline"
        ) from None
    if not isinstance(document, dict) or MARKER not in document:
        raise BaselineError(f"{where} is not a pytest-grounding baseline (no {MARKER!r} key)")
    if document[MARKER] != FORMAT_VERSION:
        raise BaselineError(
            f"{where} is baseline format {document[MARKER]!r}; this version reads {FORMAT_VERSION}: "
            "rewrite it with --grounding-update-baseline"
        )
    try:
        outcomes = _outcomes(document["samples"], where)
        latency = _checked_latency(document.get("latency_ms") or {}, where)
        return Baseline(
            task=str(document["task"]),
            datasets={str(k): str(v) for k, v in document["datasets"].items()},
            detectors=tuple(document["detectors"]),
            outcomes=outcomes,
            latency=latency,
            slices=tuple(document.get("slices") or ()),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise BaselineError(
            f"{where} is missing a field ({exc}): rewrite it with --grounding-update-baseline"
        ) from None


OUTCOMES = (Outcome.HIT, Outcome.MISS, Outcome.WRONG_FORMAT, Outcome.ERROR)


def _outcomes(rows: Any, where: str) -> dict[tuple[str, str, str], str]:
    """Each sample's outcome; an outcome the plugin never writes, or two rows of one sample that
    disagree, is an error (either would turn a regression into something else)."""
    outcomes: dict[tuple[str, str, str], str] = {}
    for position, row in enumerate(rows, start=1):
        fields = (row["fingerprint"], row["id"], row["detector"])
        if not (all(isinstance(value, str) for value in fields) and fields[1] and fields[2]):  # "id": null: no key
            raise BaselineError(
                f"{where}: sample row {position} has fingerprint, id and detector "
                f"{', '.join(repr(v)[:40] for v in fields)}, not three texts: fix it or rewrite it with "
                "--grounding-update-baseline"
            )
        key = (str(row["fingerprint"]), str(row["id"]), str(row["detector"]))
        outcome = row["outcome"]
        if outcome not in OUTCOMES:
            raise BaselineError(
                f"{where}: sample {key[1]!r} of {key[2]!r} has outcome {str(outcome)[:40]!r}, none the plugin "
                f"writes ({', '.join(OUTCOMES)}): fix it or rewrite it with --grounding-update-baseline"
            )
        if outcomes.get(key, outcome) != outcome:
            raise BaselineError(
                f"{where}: sample {key[1]!r} of {key[2]!r} is listed twice, as {outcomes[key]!r} and {outcome!r}: "
                "fix it or rewrite it with --grounding-update-baseline"
            )
        outcomes[key] = outcome
    return outcomes


def _checked_latency(latency: Any, where: str) -> dict[str, Any]:
    """p50/p95 per detector: a positive number or null (no predictions); anything else would drop the
    latency gate without a word."""
    for detector, figures in latency.items():
        for figure in ("p50", "p95"):
            value = figures.get(figure)
            if value is None:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (math.isfinite(value) and value > 0)
            ):
                raise BaselineError(
                    f"{where}: latency {figure} of {detector!r} is {str(value)[:40]!r}, not a positive number of ms: "
                    "fix it or rewrite it with --grounding-update-baseline"
                )
    return dict(latency)


def check_compatible(
    baseline: Baseline, *, where: str, task: str, datasets: Mapping[str, str], detectors: Sequence[str]
) -> None:
    """Comparing against a baseline from another dataset version, detector setting or task would
    report noise as regressions: each is refused, saying what differs and how to go on."""
    rewrite = "run with --grounding-update-baseline to rewrite it on purpose"
    if baseline.task != task:
        raise BaselineError(f"{where} is a baseline of the {baseline.task} task; this run measures {task}: {rewrite}")
    known = set(baseline.datasets.values())
    for name, fingerprint in sorted(datasets.items()):
        if fingerprint in known:
            continue
        if name in baseline.datasets:
            raise BaselineError(
                f"dataset {name} changed: its fingerprint is {fingerprint}, {where} was written on fingerprint "
                f"{baseline.datasets[name]} (another version of the dataset); {rewrite}"
            )
        held = ", ".join(f"{n} ({f})" for n, f in sorted(baseline.datasets.items())) or "none"
        raise BaselineError(
            f"dataset {name} (fingerprint {fingerprint}) is not in {where}, which holds {held}; {rewrite}"
        )
    for spec in detectors:
        if spec not in baseline.detectors:
            raise BaselineError(
                f"detector {spec!r} is not in {where}, which holds {', '.join(baseline.detectors) or 'none'} "
                f"(a detector spec with other options is another detector); {rewrite}, or run those detectors"
            )
