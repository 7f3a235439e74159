"""One JSON reader for every input file (datasets, baselines, published figures, predictions to
resume or replay, reports, shard reports, hub configs): a document that no honest file needs is a
clear ValueError, never a RecursionError, an OverflowError or an exhausted memory further on:

- nesting deeper than MAX_DEPTH levels (the parser's recursion, and the code that walks the result);
- a number literal longer than MAX_NUMBER_CHARS characters (a 400-digit integer overflows a float
  wherever it is used as a coordinate; Python refuses ints past 4,300 digits anyway), or a float
  outside the doubles (1e999); NaN and Infinity (not JSON, but some exporters write them) read as null;
- a document longer than the reader's limit (`max_chars`; `read_path` reads a regular file only, at
  most that much of it: core/safefile.py).

Pure but for `read_path`, which reads the one file it is given."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

MAX_DEPTH = 100  # the deepest file the tool writes or reads is about 10 levels
MAX_NUMBER_CHARS = 40  # a float's 17 significant digits, its sign, point and exponent fit many times
MAX_DOCUMENT_CHARS = 1 << 30  # 1 GiB of text: far above a report of a million samples' records


class TooDeep(ValueError):
    """JSON nested deeper than MAX_DEPTH levels."""


class TooLarge(ValueError):
    """A number literal or a document beyond what the reader accepts."""


def _integer(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise TooLarge(f"a number of {len(text)} digits (more than {MAX_NUMBER_CHARS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise TooLarge(f"a number literal of {len(text)} characters (more than {MAX_NUMBER_CHARS})")
    value = float(text)
    if not math.isfinite(value):
        raise TooLarge(f"the number {text[:MAX_NUMBER_CHARS]} is beyond a double")
    return value


def _integer_or_null(text: str) -> int | None:
    return int(text) if len(text) <= MAX_NUMBER_CHARS else None


def _float_or_null(text: str) -> float | None:
    value = float(text) if len(text) <= MAX_NUMBER_CHARS else math.inf
    return value if math.isfinite(value) else None


def _constant(text: str) -> None:
    return None  # NaN, Infinity, -Infinity: no number any figure can use


def loads(text: str | bytes, *, max_chars: int = MAX_DOCUMENT_CHARS, numbers_beyond: str = "refuse") -> Any:
    """json.loads, refusing what the module's doc lists (a ValueError, as bad JSON is).
    `numbers_beyond="null"`: a number past the bounds reads as null instead, so that a file of
    independent rows (answers to replay) loses that row's value only, and the row says so."""
    if len(text) > max_chars:
        raise TooLarge(f"a JSON document of {len(text):,} characters (more than {max_chars:,})")
    lenient = numbers_beyond == "null"
    try:
        document = json.loads(
            text,
            parse_int=_integer_or_null if lenient else _integer,
            parse_float=_float_or_null if lenient else _float,
            parse_constant=_constant,
        )
    except RecursionError:
        raise TooDeep(f"JSON nested too deeply to read (more than {MAX_DEPTH} levels)") from None
    check_depth(document)
    return document


def read_path(path: Path, *, max_chars: int = MAX_DOCUMENT_CHARS) -> Any:
    """The JSON document a file holds: its size checked before it is read (OSError, UnicodeDecodeError
    and ValueError as reading and parsing raise them)."""
    from . import safefile

    try:  # UTF-8: at most four bytes a character; a FIFO or a device is refused (safefile)
        text = safefile.read_text(path, limit=max_chars * 4)
    except safefile.FileTooLarge as exc:
        raise TooLarge(str(exc)) from None
    return loads(text, max_chars=max_chars)


def check_depth(document: Any, limit: int = MAX_DEPTH) -> None:
    """Walk without recursion: TooDeep past `limit` levels of arrays and objects."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            raise TooDeep(f"JSON nested more than {limit} levels deep")
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def check_values(document: Any, limit: int = MAX_DEPTH) -> None:
    """A document another parser made (TOML) held to this reader's bounds, walked without recursion: TooDeep
    past `limit` levels, TooLarge for an integer of more than MAX_NUMBER_CHARS digits or a float that is not
    finite (TOML writes `inf` and `nan`), naming the key that holds it (`presets.a.decoding.temperature`)."""
    check_depth(document, limit)
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, dict):
            pending.extend((f"{where}.{key}" if where else str(key), child) for key, child in value.items())
        elif isinstance(value, list):
            pending.extend((f"{where}[{n}]", child) for n, child in enumerate(value))
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int) and abs(value) >= 10**MAX_NUMBER_CHARS:
            raise TooLarge(f"{where[:200]}: a number of more than {MAX_NUMBER_CHARS} digits")
        elif isinstance(value, float) and not math.isfinite(value):
            raise TooLarge(f"{where[:200]}: {value} is not a finite number")
