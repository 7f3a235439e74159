"""The annotations.json being curated: its elements in order, their review status, the resume
position, and the atomic save (a temporary file beside it, then `os.replace`: a killed process leaves
either the old file or the new one, never half of one).

The document stays a plain dict, so fields this module does not know survive a review untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import safejson
from ...datasets.harness import ACCEPTED, DRAFT, REJECTED, STATUSES
from ...store.reports import write_atomic

__all__ = ["ACCEPTED", "DRAFT", "REJECTED", "STATUSES"]
# Where review stopped: {"review": {"at": "SCREEN_ID/ELEMENT_ID"}} at the top of the document
# (the harness loader ignores top-level keys it does not know).
REVIEW_KEY = "review"
SCHEMA_VERSION = "1.0"


class CurationError(Exception):
    """A file that cannot be curated; the message names it and says why."""


@dataclass(frozen=True)
class ElementRef:
    """One element of the document: its position and the key the resume position is stored by."""

    sample: int
    element: int
    key: str  # "SCREEN_ID/ELEMENT_ID"


def new_document(dataset: str) -> dict[str, Any]:
    return {"version": SCHEMA_VERSION, "dataset": dataset, "samples": []}


def status_of(element: dict[str, Any]) -> str:
    """An element written without a status (by hand, or before curation existed) counts as accepted."""
    return str(element.get("status") or ACCEPTED)


def element_refs(document: dict[str, Any]) -> list[ElementRef]:
    refs = []
    for i, sample in enumerate(document.get("samples") or []):
        screen = str(sample.get("id") or f"s{i:04d}")
        for j, element in enumerate(sample.get("elements") or []):
            refs.append(ElementRef(i, j, f"{screen}/{element.get('id') or j}"))
    return refs


def element_of(document: dict[str, Any], ref: ElementRef) -> dict[str, Any]:
    return document["samples"][ref.sample]["elements"][ref.element]


def counts(document: dict[str, Any]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for ref in element_refs(document):
        status = status_of(element_of(document, ref))
        out[status] = out.get(status, 0) + 1
    return out


def resume_index(document: dict[str, Any], refs: list[ElementRef]) -> int | None:
    """Where a review starts: the stored position when it is still a draft, else the first draft
    after it (wrapping round); None when nothing is left to review."""
    if not refs:
        return None
    at = (document.get(REVIEW_KEY) or {}).get("at")
    start = next((i for i, ref in enumerate(refs) if ref.key == at), 0)
    return next_draft(document, refs, start, include_start=True)


def next_draft(document: dict[str, Any], refs: list[ElementRef], start: int, include_start: bool = False) -> int | None:
    """The next element still in draft, searching forward from `start` and wrapping round."""
    count = len(refs)
    for step in range(0 if include_start else 1, count + (1 if include_start else 0)):
        index = (start + step) % count
        if status_of(element_of(document, refs[index])) == DRAFT:
            return index
    return None


def iter_elements(document: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for sample in document.get("samples") or []:
        for element in sample.get("elements") or []:
            yield sample, element


# --- I/O -----------------------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    try:
        document = safejson.read_path(path)  # a regular file, bounded
    except FileNotFoundError:
        raise CurationError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CurationError(f"{path}: cannot read: {exc}") from None
    except ValueError as exc:
        raise CurationError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        raise CurationError(f"{path}: expected an annotations.json object with a 'samples' list")
    for index, sample in enumerate(document["samples"]):
        if not isinstance(sample, dict) or not isinstance(sample.get("image"), str):
            raise CurationError(f"{path}: samples[{index}] has no image")
        elements = sample.setdefault("elements", [])
        if not isinstance(elements, list) or not all(isinstance(e, dict) for e in elements):
            raise CurationError(f"{path}: samples[{index}].elements is not a list of objects")
    return document


# A box or point on one line ("bbox": [0.1, 0.2, 0.3, 0.4]), so that a reviewed file diffs by element.
# Only lists json.dumps itself broke over lines: a string never holds a raw newline, so no text changes.
_NUMBER_LIST = re.compile(r"\[\n\s*-?[\d.eE+-]+(?:,\n\s*-?[\d.eE+-]+)*\n\s*\]")


def _one_line(match: re.Match[str]) -> str:
    return "[" + ", ".join(part.strip() for part in match.group(0)[1:-1].split(",")) + "]"


def save(path: Path, document: dict[str, Any]) -> None:
    """Write atomically: the file on disk is always a whole document, the old one or the new one."""
    text = _NUMBER_LIST.sub(_one_line, json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
    write_atomic(path, text, sync=True)  # keeps the file's mode (mkstemp alone made it 0600)
