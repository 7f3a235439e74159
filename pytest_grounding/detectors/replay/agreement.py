"""Our verdict beside the replayed file's own (pure): where a row says whether it was right
(ScreenSpot-Pro's `correctness`, this plugin's `outcome`, a mapped `correct_field`), the two are
compared and each disagreement gets the reason a person would look for first."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...core.record import SCORED, Outcome
from .files import Answer


def compare(record: Mapping[str, Any], answer: Answer, *, file: str, fmt: str) -> dict[str, Any]:
    """The record's `replay` field: the row, what the file said, and whether we agree (null when
    the file does not say)."""
    ours = record.get("outcome")
    out: dict[str, Any] = {
        "file": file,
        "format": fmt,
        "row": answer.line,
        "their_verdict": answer.their_verdict,
        "their_correct": answer.their_correct,
        "agree": None,
        "reason": None,
    }
    if answer.their_correct is None or ours not in SCORED:
        return out
    agree = (ours == Outcome.HIT) == answer.their_correct
    out["agree"] = agree
    if not agree:
        out["reason"] = reason(record, answer)
    return out


def reason(record: Mapping[str, Any], answer: Answer) -> str:
    """Why our outcome and the file's differ, the most telling cause first."""
    ours = record.get("outcome")
    target = [float(v) for v in record.get("target") or (0, 0, 0, 0)]
    if answer.bbox is not None and not _close(answer.bbox, target):
        theirs = list(answer.bbox)
        x, y, w, h = theirs
        if _close((x, y, x + w, y + h), target):
            return (
                f"box format: the file's target {_fmt(theirs)} is [x, y, w, h], ours {_fmt(target)} is [x1, y1, x2, y2]"
            )
        return f"another target: the file scored against {_fmt(theirs)}, this dataset's box is {_fmt(target)}"
    if ours == Outcome.WRONG_FORMAT:
        if answer.invalid:
            return f"unreadable answer in the file: {answer.invalid}"
        return "no point: the file counts it correct but gives no point (pred null) to score"
    if answer.their_verdict == Outcome.WRONG_FORMAT:
        return "wrong format in the file, but its row carries a point, scored here"
    if record.get("refusal") or answer.refusal:
        return "refusal: the file and this dataset disagree on whether the element is absent"
    point = record.get("point")
    if answer.point is None and answer.box is not None:
        return f"box answer: the file gives a box {_fmt(list(answer.box))}, scored here by its centre"
    if point is not None and len(target) == 4:
        edge = _edge(point, target)
        if edge:
            integer = all(float(v).is_integer() for v in point)
            kind = "an integer click" if integer else "a click"
            return f"{kind} on the box's {edge} edge ({_fmt(point)} on {_fmt(target)}): edges count as inside here"
        distance = record.get("distance")
        if isinstance(distance, (int, float)) and 0 < distance <= 1.0:
            return (
                f"rounding: the click {_fmt(point)} is {distance:g} px outside {_fmt(target)} "
                "(the file may round or compare normalised coordinates)"
            )
    return f"unexplained: ours {ours}, the file's {answer.their_verdict}"


def _edge(point: Sequence[float], box: Sequence[float]) -> str | None:
    x, y = float(point[0]), float(point[1])
    x1, y1, x2, y2 = box
    inside = x1 <= x <= x2 and y1 <= y <= y2
    if not inside:
        return None
    for name, a, b in (("right", x, x2), ("left", x, x1), ("bottom", y, y2), ("top", y, y1)):
        if math.isclose(a, b, abs_tol=1e-9):
            return name
    return None


def _close(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-6 for x, y in zip(a, b, strict=True))


def _plain(text: Any) -> str:
    """Text from a file, safe on a terminal: control characters written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def _fmt(values: Sequence[float]) -> str:
    return "[" + ", ".join(f"{float(v):g}" for v in values) + "]"


def against_own_targets(answers: Iterable[Answer], *, file: str, fmt: str) -> dict[str, Any]:
    """A file checked without its dataset: each row that carries its own target box and verdict
    (ScreenSpot-Pro's `bbox` and `correctness`) scored by this plugin's rule against that box
    (edges included, a box answer by its centre), beside the file's verdict."""
    from ...core.types import Box

    compared, agree, disagreements = 0, 0, []
    for answer in answers:
        if answer.bbox is None or answer.their_correct is None or answer.invalid or answer.refusal:
            continue
        target = Box(*answer.bbox)
        click = answer.point or (Box(*answer.box).center if answer.box is not None else None)
        record: dict[str, Any] = {"outcome": Outcome.WRONG_FORMAT, "point": None, "target": list(answer.bbox)}
        if click is not None and not answer.wrong_format:
            inside = target.contains(click)
            record.update(
                outcome=Outcome.HIT if inside else Outcome.MISS, point=list(click), distance=target.distance_to(click)
            )
        verdict = compare(record, answer, file=file, fmt=fmt)
        compared += 1
        if verdict["agree"]:
            agree += 1
        else:
            item = {"row": answer.line, "ours": record["outcome"], "theirs": answer.their_verdict}
            disagreements.append({**item, "reason": verdict["reason"]})
    return {"compared": compared, "agree": agree, "disagreements": disagreements}
