"""Why a click missed (issue 46): each scored miss of the grounding task gets a `miss_kind`, and
each record with a click its `distance_px` to the target box. Pure: no pytest, no I/O.

- `off_image`: the click lies outside the screen ([0, W] x [0, H]);
- `near`: within the near tolerance of the box (the larger of 10 px and 1% of the screen's short
  side, `frames.near_tolerance`);
- `wrong_element`: inside another annotated element of the same screen (the other samples of that
  screen: the harness schema's element lists, the synthetic generator's elements, a dataset with
  several targets per screen);
- `empty`: on the screen, on no annotated element;
- `no_answer`: no click could be read (a wrong format) or the model refused a present target;
- `answer_in_reasoning`: no click could be read from the message's `content` (empty or unreadable)
  while the engine's reasoning field (`reasoning`, `reasoning_content`) held text: a reasoning
  parser filed the answer there (issue 56); `answer_from=reasoning-if-empty` reads it.

A click on an absent target (a negative sample) is `wrong_element`, `off_image` or `empty`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .frames import distance, near_tolerance, pair
from .record import Record, to_json, with_fields

MISS_KINDS = ("near", "wrong_element", "off_image", "empty", "no_answer", "answer_in_reasoning")
ELEMENT_KINDS = ("wrong_element", "empty")  # what the other elements of a screen decide
Rect = tuple[float, float, float, float]


def screen_key(record: Mapping[str, Any]) -> tuple[str, str]:
    return str(record.get("dataset")), str(record.get("image"))


def miss_fields(record: Mapping[str, Any], others: Sequence[Sequence[float]] = ()) -> dict[str, Any]:
    """`miss_kind` (misses of the grounding task only) and `distance_px` for a record; `others`: the
    boxes of the other annotated elements on its screen."""
    if record.get("task", "grounding") != "grounding":
        return {}
    out: dict[str, Any] = {}
    negative = bool(record.get("negative"))
    target = _rect(record.get("target"))
    point = pair(record.get("point"))
    has_point = point is not None
    if point is not None and target is not None and not negative:
        out["distance_px"] = round(distance(target, point), 3)
    outcome = record.get("outcome")
    if outcome == "wrong_format" or (outcome == "miss" and not has_point):
        out["miss_kind"] = "answer_in_reasoning" if answer_in_reasoning(record.get("meta")) else "no_answer"
        return out
    if outcome != "miss" or point is None:
        return out
    x, y = point
    size = pair(record.get("image_size"))
    if size is not None and not (0 <= x <= size[0] and 0 <= y <= size[1]):
        out["miss_kind"] = "off_image"
        return out
    if "distance_px" in out and size is not None and out["distance_px"] <= near_tolerance((int(size[0]), int(size[1]))):
        out["miss_kind"] = "near"
        return out
    for box in others:
        other = _rect(box)
        if other is not None and other != target and distance(other, (x, y)) == 0.0:
            out["miss_kind"] = "wrong_element"
            return out
    out["miss_kind"] = "empty"
    return out


def answer_in_reasoning(meta: Any) -> bool:
    """The engine's reasoning field held text the answer was not read from (a refusal aside)."""
    if not isinstance(meta, Mapping) or meta.get("refusal") or meta.get("answer_from") == "reasoning":
        return False
    chars = meta.get("reasoning_chars")
    return isinstance(chars, int) and chars > 0


def _rect(value: Any) -> Rect | None:
    if isinstance(value, (list, tuple)) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value):
        return float(value[0]), float(value[1]), float(value[2]), float(value[3])
    return None


def screen_elements(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[list[float]]]:
    """The annotated boxes of each screen, from the records themselves (rescore, merge): one per
    sample, each box once."""
    found: dict[tuple[str, str], list[list[float]]] = {}
    for record in records:
        target = record.get("target")
        if record.get("negative") or _rect(target) is None or record.get("variant"):
            continue
        boxes = found.setdefault(screen_key(record), [])
        if list(target) not in boxes:  # type: ignore[arg-type]
            boxes.append(list(target))  # type: ignore[arg-type]
    return found


def classified(records: Sequence[Mapping[str, Any]], stored: Sequence[Mapping[str, Any]] | None = None) -> list[Record]:
    """Records whose misses are classified again against the other annotated elements of their
    screens as the records themselves give them (rescore, merge); each keeps the kind it was stored
    with while its click and outcome stand (`kept_kind`; `stored`: the records as read, one for
    each, by default the records themselves)."""
    before = records if stored is None else stored
    if len(before) != len(records):
        raise ValueError("classified: one stored record for each record")
    elements = screen_elements(records)
    out: list[Record] = []
    for record, old in zip(records, before, strict=True):
        fields = miss_fields(record, elements.get(screen_key(record), ()))
        out.append(kept_kind(with_fields(to_json(record), **fields) if fields else to_json(record), old))
    return out


def kept_kind(record: Record, stored: Mapping[str, Any]) -> Record:
    """`record` (scored again) with the miss kind `stored` was written with, while its click and
    outcome are the stored ones: the run classified it against every element of its dataset, which
    the records of a rescore, a merge or a resume may not show (`-k`, one shard). Only the kinds
    that depend on those elements (`wrong_element`, `empty`): the others the record itself decides."""
    kind = stored.get("miss_kind")
    same = record.get("outcome") == stored.get("outcome") and pair(record.get("point")) == pair(stored.get("point"))
    if record.get("miss_kind") in ELEMENT_KINDS and kind in ELEMENT_KINDS and same and kind != record["miss_kind"]:
        return with_fields(record, miss_kind=kind)
    return record
