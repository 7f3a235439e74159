"""A JSON report read back (`report`, `summary`, `compare`) is checked against the schema the
package ships (schema/report.schema.json) before anything renders it, so a crafted report cannot
put text where a number belongs (into HTML, markdown or the terminal). jsonschema is in the dev
extra, not core: without it a hand check covers the top level and every number the renderers
format. Pure but for reading the shipped schema."""

from __future__ import annotations

import functools
import numbers
from collections.abc import Mapping
from typing import Any

from ..core import safejson
from ..core.record import Outcome
from ..core.safetext import terminal_line

SHOWN = 3  # problems named in the message; the rest are counted

# The per-sample fields the page and the plots format as numbers (None allowed).
NUMBERS = ("iou", "distance", "latency_ms", "size_px", "area_share", "threshold")
PAIRS = {"point": 2, "image_size": 2, "target": 4, "box": 4}


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    try:
        import jsonschema
    except ImportError:
        return None
    from importlib.resources import files

    schema = safejson.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator(schema)


def problems(document: Any) -> list[str]:
    """What in `document` breaks the report schema, each as `where: what` (empty: it fits)."""
    validator = _validator()
    if validator is None:
        return _hand_check(document)
    found = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        found.append(f"{where}: {terminal_line(error.message)[:200]}")
    return found


def describe(problem_list: list[str]) -> str:
    more = len(problem_list) - SHOWN
    return "; ".join(problem_list[:SHOWN]) + (f"; and {more} more" if more > 0 else "")


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool))


def _hand_check(document: Any) -> list[str]:
    if not isinstance(document, Mapping):
        return [f"(top level): a {type(document).__name__}, expected an object"]
    found = []
    for key, kind in (("summary", Mapping), ("samples", list), ("run", Mapping), ("gates", list)):
        if not isinstance(document.get(key), kind):
            found.append(f"{key}: missing or not {'an object' if kind is Mapping else 'an array'}")
    if found:
        return found
    for name, block in document["summary"].items():
        if not isinstance(block, Mapping):
            found.append(f"summary/{terminal_line(name)}: not an object")
            continue
        for key in ("accuracy", "hits", "scored", "misses", Outcome.WRONG_FORMAT.value, "errors", "samples"):
            if key in block and not _number(block[key]):
                found.append(f"summary/{terminal_line(name)}/{key}: not a number")
    for index, record in enumerate(document["samples"]):
        if not isinstance(record, Mapping):
            found.append(f"samples/{index}: not an object")
            continue
        for key in NUMBERS:
            if not _number(record.get(key)):
                found.append(f"samples/{index}/{key}: not a number")
        for key, length in PAIRS.items():
            value = record.get(key)
            if value is not None and (
                not isinstance(value, list) or len(value) != length or not all(_number(v) for v in value)
            ):
                found.append(f"samples/{index}/{key}: expected {length} numbers")
        for key in ("id", "dataset", "detector", "outcome", "image"):
            if not isinstance(record.get(key), str):
                found.append(f"samples/{index}/{key}: not a string")
    return found
