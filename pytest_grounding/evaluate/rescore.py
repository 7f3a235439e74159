"""A run's records scored again without the model (`python -m pytest_grounding rescore`): each
record's sample rebuilt from the record itself (its target, shape, image size and slices), its
answer taken as stored or parsed again from the raw answer (another preset: the caller's `parse`),
and scored by a profile (core/profiles.py). The records are those a fresh run with that preset and
profile writes. Pure: no pytest, no I/O, no detector imported (the caller passes `parse`).

Kept as they are: error records (no answer to score), the element-at-click task's records. A raw
answer cut by an older version (500 characters and "...") is parsed as it is and counted."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.misses import classified
from ..core.profiles import Profile
from ..core.record import Outcome, Record, Task, to_json, with_fields
from ..core.types import Prediction
from . import scoring
from .resume import prediction_of
from .sample_of_record import RescoreError, sample_of

OLD_RAW_LIMIT = 500  # what versions before the whole raw answer kept, then "..."
# A stored record's fields that the new answer or outcome makes stale when the new record lacks them
# (a multi-point answer's `points`, the baseline's verdict on the old outcome); the other fields the
# scoring does not write (fingerprint, queue_ms, ...) are kept.
STALE = ("points", "baseline", "miss_kind", "distance_px")
Parse = Callable[[Mapping[str, Any], tuple[int, int]], Prediction]


@dataclass(frozen=True)
class Rescored:
    records: tuple[Record, ...]
    changed: int  # records whose outcome is not the stored one
    parsed: int  # records whose raw answer was parsed again
    kept: int  # records kept as written (errors, the locate task)
    cut: int  # raw answers cut at the old 500 characters (parsed as they are)
    not_parsed: int  # records with no model answer to parse (not a VLM's), scored from their stored click


def is_model_answer(record: Mapping[str, Any]) -> bool:
    """A VLM's single answer (its meta names the image the model was given): one a preset can parse
    again. An agent's episode (meta `agent`) is not: its last answer may be on a crop."""
    meta = record.get("meta")
    return (
        isinstance(meta, Mapping)
        and "model_image" in meta
        and "agent" not in meta
        and isinstance(record.get("raw"), (str, type(None)))
    )


def was_cut(raw: Any) -> bool:
    return isinstance(raw, str) and len(raw) == OLD_RAW_LIMIT + 3 and raw.endswith("...")


_PRESET = re.compile(r"(?<=[:,])preset=[^,]*")


def respec(spec: str, preset: str) -> str:
    """A detector spec as it reads with another preset (`openai:base_url=U,preset=A` -> `...,preset=B`;
    a spec without one gets it), so the records name what parsed their answers."""
    if _PRESET.search(spec):
        return _PRESET.sub(lambda _: f"preset={preset}", spec, count=1)
    return f"{spec}{',' if ':' in spec else ':'}preset={preset}"


_FRAME = re.compile(r"(?<=[:,])frame=(?:'[^']*'|\"[^\"]*\"|[^,]*)")


def reframe(spec: str, frame: str) -> str:
    """A detector spec as it reads once its answers were decoded in another frame (`rescore --frame`):
    `spec,frame=NAME` (quoted where the frame holds a comma), so the rescored run is a configuration of
    its own on the board, in every export and comparison, and names its frame."""
    value = f"'{frame}'" if "," in frame and "'" not in frame else frame
    if _FRAME.search(spec):
        return _FRAME.sub(lambda _: f"frame={value}", spec, count=1)
    return f"{spec}{',' if ':' in spec else ':'}frame={value}"


def rescore_record(
    record: Mapping[str, Any],
    profile: Profile,
    parse: Parse | None = None,
    preset: str | None = None,
    stored_clicks: bool = False,
) -> tuple[Record, bool]:
    """The record a run with this profile (and, given `parse`, the preset named `preset`) writes for
    the stored answer, and whether the raw answer was parsed again (its detector spec then names the
    preset). `stored_clicks`: `parse` also reads the records that hold no model answer (a frame
    re-maps any stored click: a replayed file's). RescoreError for a record that cannot be."""
    try:
        sample = sample_of(record)
    except (KeyError, TypeError, ValueError) as exc:
        raise RescoreError(f"sample {record.get('id')!r:.60}: {exc}") from None
    size = sample.image_size
    if size is None:
        raise RescoreError(f"sample {sample.id!r:.60}: no image size to score it in")
    reparse = parse is not None and is_model_answer(record)
    try:
        use = parse is not None and (reparse or stored_clicks)
        prediction = parse(record, size) if parse is not None and use else prediction_of(record)
    except ValueError as exc:
        raise RescoreError(f"sample {sample.id!r:.60}: {exc}") from None
    latency = record.get("latency_ms")
    detector = str(record["detector"])
    fresh = scoring.score(
        sample,
        prediction,
        detector=respec(detector, preset) if reparse and preset else detector,
        latency_ms=float(latency or 0.0),
        image_size=size,
        profile=profile,
    )
    kept = {key: value for key, value in record.items() if key not in fresh and key not in STALE}
    return with_fields(fresh, **kept, **({"latency_ms": None} if latency is None else {})), reparse


def rescore(
    records: Sequence[Mapping[str, Any]],
    profile: Profile,
    parse: Parse | None = None,
    preset: str | None = None,
    stored_clicks: bool = False,
) -> Rescored:
    """Every record scored again (see the module doc; `stored_clicks` as in rescore_record)."""
    out: list[Record] = []
    changed = parsed = kept = cut = not_parsed = 0
    for record in records:
        if record.get("outcome") == Outcome.ERROR or record.get("task", Task.GROUNDING) != Task.GROUNDING:
            out.append(to_json(dict(record)))
            kept += 1
            continue
        fresh, reparsed = rescore_record(record, profile, parse, preset, stored_clicks)
        out.append(fresh)
        parsed += reparsed
        not_parsed += parse is not None and not reparsed
        cut += reparsed and was_cut(record.get("raw"))
        changed += fresh["outcome"] != record.get("outcome")
    return Rescored(tuple(classified(out, records)), changed, parsed, kept, cut, not_parsed)
