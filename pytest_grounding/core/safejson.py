"""One JSON reader for every input file (datasets, baselines, published figures, predictions to
resume from, reports): a document nested deeper than anything the tool reads or writes is a clear
ValueError, never a RecursionError from the parser or from the code that walks the result. Pure."""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 100  # the deepest file the tool writes or reads is about 10 levels


class TooDeep(ValueError):
    """JSON nested deeper than MAX_DEPTH levels."""


def loads(text: str | bytes) -> Any:
    """json.loads, refusing documents nested deeper than MAX_DEPTH (a ValueError, as bad JSON is)."""
    try:
        document = json.loads(text)
    except RecursionError:
        raise TooDeep(f"JSON nested too deeply to read (more than {MAX_DEPTH} levels)") from None
    check_depth(document)
    return document


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
