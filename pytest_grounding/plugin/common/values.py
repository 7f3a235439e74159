"""The parsers of single option values that need the domain (specs and labels, shards, gates,
tolerances, log targets, errata): each turns the raw value into what the settings hold, or raises
ValueError naming where the value came from. The generic ones live beside Option (options.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...analysis import baseline as baseline_mod
from ...analysis import errata as errata_mod
from ...analysis import gates as gates_mod
from ...core import identity, safefile
from ...datasets import sharding
from .options import as_list, positive_float, positive_int
from .replay import labelled_first


def detector_specs(value: Any, source: str) -> tuple[str, ...]:
    """Each spec once, a replay's label first (plugin/common/replay.py)."""
    return tuple(dict.fromkeys(labelled_first(spec) for spec in as_list(value)))


def split_labels(specs: tuple[str, ...], source: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """The specs without their `label=` (the detector's identity) and {spec: label}: a label
    names one detector (two with one label, or one detector given twice, is a usage error)."""
    plain: list[str] = []
    labels: dict[str, str] = {}
    for written in specs:
        try:
            spec, label = identity.split_label(written)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
        if spec in plain:
            raise ValueError(f"{source}: {written!r} is detector {spec!r} again: give each detector once")
        if label is not None:
            if label in labels.values():
                raise ValueError(f"{source}: label {label!r} names two detectors: give each its own")
            labels[spec] = label
        plain.append(spec)
    # the names rows are shown under, compared without case (a file system, a reader): no two alike, and a
    # label is never another detector's name in the run (`center:label=random` beside `random:label=center`)
    shown: dict[str, str] = {}
    for spec in plain:
        name = labels.get(spec, spec)
        if name.casefold() in shown:
            raise ValueError(
                f"{source}: {shown[name.casefold()]!r} and {spec!r} would both be shown as {name!r}: give each "
                "detector a name of its own (another label=)"
            )
        shown[name.casefold()] = spec
    named = {spec.casefold(): spec for spec in plain}
    for spec, label in labels.items():
        other = named.get(label.casefold())
        if other is not None and other != spec:
            raise ValueError(
                f"{source}: label {label!r} of {spec!r} is the name of detector {other!r} in this run: give it a "
                "label of its own"
            )
    return tuple(plain), labels


def all_or_count(value: Any, source: str) -> int | None:
    """A whole number >= 0; 0 means all (None)."""
    return positive_int(value, source, allow_zero=True) or None


def ratio(value: Any, source: str) -> float | None:
    """A ratio >= 1 (1.25 = 25% slower)."""
    number = positive_float(value, source)
    if number is not None and number < 1:
        raise ValueError(f"{source}: {number:g} is below 1 (a ratio: 1.25 = 25% slower)")
    return number


def shard_of(value: Any, source: str) -> sharding.Shard | None:
    """K/N or env; 1/1 is a plain run."""
    if value in (None, ""):
        return None
    return sharding.parse_shard(str(value), source)


def parse_log_targets(value: Any, source: str) -> tuple[Any, ...]:
    """--grounding-log: each target parsed and its extra found (a usage error at start, not at the end)."""
    if not as_list(value):
        return ()
    from ...render.trackers import parse_target

    return tuple(parse_target(text, source) for text in as_list(value))


def accuracy_gates(value: Any, source: str) -> tuple[gates_mod.Gate, ...]:
    return tuple(gates_mod.parse_gate(spec, source) for spec in as_list(value))


def parse_tolerances(value: Any, source: str) -> baseline_mod.Tolerances:
    return baseline_mod.Tolerances.parse(as_list(value), source)


def read_errata(value: Any, source: str) -> errata_mod.Errata | None:
    """--grounding-errata FILE read and checked before any sample runs; a bad file names `source`."""
    if value in (None, ""):
        return None
    path = Path(str(value)).expanduser()
    try:
        data = safefile.read_bytes(path, limit=safefile.MAX_FILE_BYTES)  # a regular file, bounded
    except OSError as exc:
        raise ValueError(f"{source}: {path}: {exc.strerror or exc}") from None
    except safefile.FileTooLarge as exc:
        raise ValueError(f"{source}: {exc}") from None
    try:
        return errata_mod.parse(data, f"{source} {path}", str(path))
    except errata_mod.ErrataError as exc:
        raise ValueError(str(exc)) from None
