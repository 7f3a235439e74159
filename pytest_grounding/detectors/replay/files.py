"""Predictions files written by other harnesses (and by this one), read into `Answer` rows.

The format is recognised from the content, never from the file name:

- `pytest-grounding`: this plugin's --grounding-predictions JSONL (rows with detector, dataset, uid,
  outcome) or a --grounding-json report (its `samples`); matched by the dataset's id.
- `pointerbench`: Pointerbench-Pro eval.py's predictions JSONL, `{"id", "point": [x, y]}`; by id.
- `screenspot-pro`: the official ScreenSpot-Pro script's results JSON (`{"details": [...],
  "metrics": {...}}`) or the same rows as JSONL (OmniParser's published log); rows carry no id, so
  they are matched by the image path below `images/` and `prompt_to_evaluate`.
- `eee`: an Every Eval Ever samples sidecar (InstanceLevelEvaluationLog lines, as `export --eee`
  writes them; detectors/replay/eee.py); matched by `sample_id`.
- `mapping`: any other JSON/JSONL with `id_field=` and `point_field=` (dotted paths: `doc.id`,
  `resps.0`), optional `box_field=` and `correct_field=`.

Coordinates are pixels of the original image unless `coords=normalized` (0-1) is given.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import safefile, safejson
from ...core.record import RAW_LIMIT, SCORED, Outcome
from . import eee

Pair = tuple[float, float]
Quad = tuple[float, float, float, float]

FORMATS = ("pytest-grounding", "pointerbench", "screenspot-pro", "eee", "mapping")
BY_ID, BY_SCREEN = "id", "image+instruction"
SHOWN = 200  # characters of a bad value quoted in a message
_PAIR_TEXT = re.compile(r"^\s*[\[(]?\s*(-?\d+(?:\.\d+)?)\s*[,\s]\s*(-?\d+(?:\.\d+)?)\s*[\])]?\s*$")


class ReplayError(ValueError):
    """A file that cannot be replayed at all: named, with what was expected."""


@dataclass(frozen=True)
class FieldMap:
    """A user's field mapping for a file in no known format (dotted paths into each row)."""

    id_field: str
    point_field: str | None = None
    box_field: str | None = None
    correct_field: str | None = None


@dataclass(frozen=True)
class Answer:
    """One row of a predictions file: how it is matched, what it answered, what it said of itself.

    `invalid` is set when the row's answer cannot be read at all (a point of three numbers): the
    sample it matches becomes an error naming the row. `error` is the file's own error record."""

    line: int
    id: str | None = None
    dataset: str | None = None
    fingerprint: str | None = None  # this plugin's rows: the dataset version they were scored on
    detector: str | None = None
    image: str | None = None  # the image's path below images/ (screenspot-pro rows)
    prompt: str | None = None
    language: str | None = None
    style: str | None = None
    gt_type: str | None = None
    bbox: Quad | None = None  # the target box the file scored against, where it says
    point: Pair | None = None
    box: Quad | None = None
    points: tuple[Pair, ...] | None = None
    refusal: bool = False
    wrong_format: bool = False
    error: str | None = None
    invalid: str | None = None
    raw: str | None = None
    their_verdict: str | None = None  # the file's own word: correct / wrong / wrong_format, hit / miss ...
    their_correct: bool | None = None


@dataclass(frozen=True)
class ReplayFile:
    path: Path
    format: str
    by: str  # BY_ID or BY_SCREEN
    answers: tuple[Answer, ...]
    metrics: Mapping[str, Any] | None = None  # the file's own `metrics` (ScreenSpot-Pro results JSON)
    skipped: tuple[str, ...] = field(default_factory=tuple)  # rows that could not be keyed, said why


def read_replay_file(
    path: Path, *, mapping: FieldMap | None = None, detector: str | None = None, fmt: str | None = None
) -> ReplayFile:
    """The file's answers; a ReplayError naming the file when it is unreadable or of no known format.
    `detector` picks one detector's rows from a pytest-grounding file that holds several."""
    path = Path(path)
    rows, container, metrics = _rows(path)
    if mapping is not None:
        fmt = "mapping"
    elif fmt is None:
        fmt = container or _sniff(path, rows)
    if fmt not in FORMATS:
        raise ReplayError(f"replay file {path}: unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if fmt == "mapping" and mapping is None:
        raise ReplayError(f"replay file {path}: format=mapping needs id_field= (and point_field= or box_field=)")
    answers: list[Answer] = []
    skipped: list[str] = []
    for line, row in rows:
        if isinstance(row, Unreadable):
            skipped.append(f"row {line} is not JSON ({row})")
            continue
        if not isinstance(row, dict):
            skipped.append(f"row {line} is a {type(row).__name__}, not an object")
            continue
        if fmt == "pytest-grounding":
            answer = _ours(line, row)
        elif fmt == "pointerbench":
            answer = _pointerbench(line, row)
        elif fmt == "screenspot-pro":
            answer = _screenspot_pro(line, row)
        elif fmt == "eee":
            answer = _eee(line, row)
        else:
            assert mapping is not None
            answer = _mapped(line, row, mapping)
        if answer is None:
            skipped.append(f"row {line} has no {'image and prompt' if fmt == 'screenspot-pro' else 'id'}")
            continue
        answers.append(answer)
    if fmt == "pytest-grounding":
        answers = _one_detector(path, answers, detector)
    by = BY_SCREEN if fmt == "screenspot-pro" else BY_ID
    return ReplayFile(path, fmt, by, tuple(answers), metrics if fmt == "screenspot-pro" else None, tuple(skipped))


# -- reading ------------------------------------------------------------------------------------


def _rows(path: Path) -> tuple[list[tuple[int, Any]], str | None, Mapping[str, Any] | None]:
    """(row number, row) pairs, the format a JSON container names, and its metrics."""
    try:
        text = safefile.read_text(path, limit=safejson.MAX_DOCUMENT_CHARS)  # a regular file, bounded
    except (OSError, ValueError) as exc:
        raise ReplayError(f"replay file {path}: cannot read it: {exc}") from None
    if not text.strip():
        raise ReplayError(f"replay file {path} is empty")
    try:
        document = safejson.loads(text, numbers_beyond="null")  # a row's absurd number: that row's answer
    except ValueError:
        document = None
        is_json = False
    else:
        is_json = True
    if is_json and isinstance(document, dict):
        if document.get("tool") == "pytest-grounding" and isinstance(document.get("samples"), list):
            return list(enumerate(document["samples"], start=1)), "pytest-grounding", None
        if isinstance(document.get("details"), list):
            metrics = document.get("metrics")
            rows = list(enumerate(document["details"], start=1))
            return rows, "screenspot-pro", metrics if isinstance(metrics, dict) else None
        if "\n" not in text.strip():  # JSON Lines of one row
            return [(1, document)], None, None
        keys = ", ".join(sorted(map(str, document))[:8])
        raise ReplayError(
            f"replay file {path}: a JSON object this replay does not know (keys: {keys}); expected a "
            "ScreenSpot-Pro results file ({'details': [...]}), a --grounding-json report, or JSON Lines"
        )
    if is_json and isinstance(document, list):
        return list(enumerate(document, start=1)), None, None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, safejson.loads(line, numbers_beyond="null")))
        except ValueError as exc:  # one bad row is that row's: skipped, said; the others are replayed
            rows.append((number, Unreadable(str(exc)[:200])))
    if rows and all(isinstance(row, Unreadable) for _, row in rows):
        raise ReplayError(f"replay file {path}:{rows[0][0]}: not JSON ({rows[0][1]})")
    return rows, None, None


@dataclass(frozen=True)
class Unreadable:
    """A JSON Lines row that is not JSON the bounded reader reads (nested too deeply, say)."""

    why: str

    def __str__(self) -> str:
        return self.why


def _sniff(path: Path, rows: Sequence[tuple[int, Any]]) -> str:
    first = next((row for _, row in rows if isinstance(row, dict)), None)
    if first is None:
        raise ReplayError(f"replay file {path}: no JSON object rows")
    keys = set(first)
    if {"prompt_to_evaluate", "img_path"} <= keys:
        return "screenspot-pro"
    if {"detector", "dataset", "uid", "outcome"} <= keys:
        return "pytest-grounding"
    if "id" in keys and "point" in keys:
        return "pointerbench"
    if eee.is_eee(keys):
        return "eee"
    shown = ", ".join(sorted(map(str, keys))[:10])
    raise ReplayError(
        f"replay file {path}: rows with keys [{shown}] match no known format (pytest-grounding predictions, "
        "Pointerbench-Pro {id, point}, ScreenSpot-Pro results, Every Eval Ever samples); map its fields with "
        "id_field=...,point_field=... (docs: Score predictions you already have)"
    )


def _one_detector(path: Path, answers: list[Answer], detector: str | None) -> list[Answer]:
    found = sorted({a.detector for a in answers if a.detector})
    if detector is not None:
        if detector not in found:
            raise ReplayError(f"replay file {path} has no rows of detector {detector!r}; it has {', '.join(found)}")
        return [a for a in answers if a.detector == detector]
    if len(found) > 1:
        raise ReplayError(
            f"replay file {path} holds the answers of {len(found)} detectors ({', '.join(found)}): "
            "pick one with detector=NAME"
        )
    return answers


# -- one row per format ---------------------------------------------------------------------------


def _ours(line: int, row: Mapping[str, Any]) -> Answer | None:
    if row.get("id") is None:
        return None
    outcome = row.get("outcome")
    points = row.get("points")
    pair_list = tuple(p for p in (_pair(item) for item in points) if p) if isinstance(points, list) else None
    return Answer(
        line=line,
        id=str(row["id"]),
        dataset=_text(row.get("dataset")),
        fingerprint=_text(row.get("fingerprint")),
        detector=_text(row.get("detector")),
        point=_pair(row.get("point")),
        box=_quad(row.get("box")),
        points=pair_list if pair_list and len(pair_list) > 1 else None,
        refusal=row.get("refusal") is True,  # the boolean only: the text "false" is no refusal
        wrong_format=outcome == Outcome.WRONG_FORMAT,
        error=str(row.get("error") or Outcome.ERROR.value) if outcome == Outcome.ERROR else None,
        raw=_clip(row.get("raw")),
        their_verdict=_text(outcome),
        their_correct=None if outcome not in SCORED else outcome == Outcome.HIT,
    )


def _pointerbench(line: int, row: Mapping[str, Any]) -> Answer | None:
    if row.get("id") is None:
        return None
    value = row.get("point")
    point = _pair(value)
    invalid = None
    if value is not None and point is None:
        invalid = f"point {_shown(json.dumps(value))} is not [x, y]"
    return Answer(
        line=line,
        id=str(row["id"]),
        point=point,
        wrong_format=value is None,
        invalid=invalid,
        raw=_clip(value if isinstance(value, str) else json.dumps(value)),
    )


def below_images(path: Any) -> str | None:
    """The image's path below its `images/` folder ("davinci_mac/shot.png"), the part every copy of
    the dataset shares; the file name alone when the path has no images/ folder."""
    if not isinstance(path, str) or not path.strip():
        return None
    parts = [p for p in re.split(r"[\\/]+", path.strip()) if p not in ("", ".")]
    if "images" in parts:
        index = len(parts) - 1 - parts[::-1].index("images")
        rest = parts[index + 1 :]
        if rest:
            return "/".join(rest)
    return parts[-1] if parts else None


def _screenspot_pro(line: int, row: Mapping[str, Any]) -> Answer | None:
    image, prompt = below_images(row.get("img_path") or row.get("img_filename")), _text(row.get("prompt_to_evaluate"))
    if image is None or prompt is None:
        return None
    verdict = _text(row.get("correctness"))
    gt_type = _text(row.get("gt_type"))
    pred = row.get("pred")
    point, box = _pair(pred), _quad(pred)
    invalid = None
    if pred is not None and point is None and box is None:
        invalid = f"pred {_shown(json.dumps(pred))} is neither [x, y] nor [x1, y1, x2, y2]"
    # A negative row is right when the model said "negative" (a refusal); pred is then null.
    refusal = gt_type == "negative" and verdict == "correct"
    return Answer(
        line=line,
        image=image,
        prompt=prompt,
        language=_text(row.get("lang") or row.get("language")),
        style=_text(row.get("instruction_style")),
        gt_type=gt_type,
        bbox=_quad(row.get("bbox")),
        point=point,
        box=box,
        refusal=refusal,
        wrong_format=not refusal and (pred is None or verdict == Outcome.WRONG_FORMAT),
        invalid=invalid,
        raw=_clip(
            _json(row.get("raw_response")) if not isinstance(row.get("raw_response"), str) else row["raw_response"]
        ),
        their_verdict=verdict,
        their_correct=None if verdict is None else verdict == "correct",
    )


def _eee(line: int, row: Mapping[str, Any]) -> Answer | None:
    found = eee.fields(row)
    if found is None:
        return None
    point, box = _pair(found["point"]), _quad(found["box"])
    points = found["points"]
    pair_list = tuple(p for p in (_pair(item) for item in points) if p) if isinstance(points, list) else None
    invalid = None
    if found["point"] is not None and point is None:
        invalid = f"extracted_value {_shown(_json(found['extracted']))} is not [x, y]"
    return Answer(
        line=line,
        id=found["id"],
        dataset=found["dataset"],
        fingerprint=found["fingerprint"],
        point=point,
        box=box,
        points=pair_list if pair_list and len(pair_list) > 1 else None,
        refusal=found["refusal"],
        wrong_format=point is None and box is None and not found["refusal"] and invalid is None,
        error=found["error"],
        invalid=invalid,
        raw=_clip(found["raw"]),
        their_verdict=found["their_verdict"],
        their_correct=found["their_correct"],
    )


def _mapped(line: int, row: Mapping[str, Any], mapping: FieldMap) -> Answer | None:
    found, value = dig(row, mapping.id_field)
    if not found or value is None:
        return None
    point_value = dig(row, mapping.point_field)[1] if mapping.point_field else None
    box_value = dig(row, mapping.box_field)[1] if mapping.box_field else None
    point, box = _pair(point_value), _quad(box_value)
    invalid = None
    if point_value is not None and point is None:
        invalid = f"{mapping.point_field} {_shown(_json(point_value))} is not a point [x, y]"
    elif box_value is not None and box is None and point is None:
        invalid = f"{mapping.box_field} {_shown(_json(box_value))} is not a box [x1, y1, x2, y2]"
    correct = dig(row, mapping.correct_field)[1] if mapping.correct_field else None
    their = _truth(correct)
    return Answer(
        line=line,
        id=str(value),
        point=point,
        box=box,
        wrong_format=point is None and box is None and invalid is None,
        invalid=invalid,
        raw=_clip(_json(point_value if point_value is not None else box_value)),
        their_verdict=None if correct is None else str(correct),
        their_correct=their,
    )


# -- values ---------------------------------------------------------------------------------------


def dig(row: Any, dotted: str | None) -> tuple[bool, Any]:
    """(found, value) at a dotted path: keys of objects, indices of lists (`resps.0.1`)."""
    if not dotted:
        return False, None
    value = row
    for part in dotted.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def _numbers(value: Any, count: int) -> tuple[float, ...] | None:
    if isinstance(value, str):
        if count != 2:
            return None
        match = _PAIR_TEXT.match(value)
        pair = (float(match.group(1)), float(match.group(2))) if match else None
        return pair if pair and all(math.isfinite(v) for v in pair) else None
    if not isinstance(value, (list, tuple)) or len(value) != count:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return None
    numbers = tuple(float(v) for v in value)
    return numbers if all(math.isfinite(v) for v in numbers) else None


def _pair(value: Any) -> Pair | None:
    numbers = _numbers(value, 2)
    return (numbers[0], numbers[1]) if numbers else None


def _quad(value: Any) -> Quad | None:
    numbers = _numbers(value, 4)
    return (numbers[0], numbers[1], numbers[2], numbers[3]) if numbers else None


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("correct", "true", Outcome.HIT, "yes", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in (
        "wrong",
        "false",
        Outcome.MISS,
        "no",
        "0",
        Outcome.WRONG_FORMAT,
    ):
        return False
    return None


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _json(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _clip(value: Any) -> str | None:
    """A replayed answer kept whole up to RAW_LIMIT characters (core/record.py), so it can be parsed again."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + "..."


def _shown(value: str | None) -> str:
    value = str(value)
    return value if len(value) <= SHOWN else value[:SHOWN] + "..."
