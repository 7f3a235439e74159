"""Every Eval Ever samples sidecars (`<uuid>_samples.jsonl`, InstanceLevelEvaluationLog lines) read
as replay rows (issue 58), so a published run becomes a paired baseline on the same samples.

A line is matched by its `sample_id` (the dataset's id). The click is the terminal answer
attribution's `extracted_value`: `[x, y]` in pixels of the original screen (as `export --eee`
writes it; `coords=normalized` for 0-1), `refusal` for a refusal, anything else no click (a wrong
format). A line with an `error` is that sample's error. `metadata` (all strings, as EEE keeps it)
may add the dataset and fingerprint the run used, a box, several points, and the file's own
outcome; `evaluation.is_correct` is the file's own verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core import safejson

# The keys that make a row an EEE instance line (the format is recognised from them).
MAX_VALUE_CHARS = 1 << 20  # an extracted value is a click, a box or a few points
KEYS = frozenset({"evaluation_id", "sample_id", "answer_attribution", "evaluation"})


def is_eee(keys: set[str]) -> bool:
    return keys >= KEYS


def _terminal(row: Mapping[str, Any]) -> Mapping[str, Any] | None:
    attributions = row.get("answer_attribution")
    if not isinstance(attributions, list):
        return None
    found = [a for a in attributions if isinstance(a, Mapping)]
    terminal = [a for a in found if a.get("is_terminal") is True]
    chosen = terminal or found
    return chosen[-1] if chosen else None


def _decoded(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:  # bounded depth; a number past a double reads as null (that value is no click)
        return safejson.loads(value, max_chars=MAX_VALUE_CHARS, numbers_beyond="null")
    except ValueError:
        return value


def fields(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Answer fields of one EEE line (files.py makes the Answer); None without a sample id.
    `point` and `box` are raw values for files.py's readers; `invalid` names a value that is
    neither a click, a refusal nor empty."""
    sample_id = row.get("sample_id")
    if sample_id is None or (isinstance(sample_id, str) and not sample_id.strip()):
        return None
    metadata = row.get("metadata") if isinstance(row.get("metadata"), Mapping) else {}
    assert isinstance(metadata, Mapping)
    attribution = _terminal(row) or {}
    extracted = attribution.get("extracted_value")
    text = extracted.strip() if isinstance(extracted, str) else extracted
    output = row.get("output")
    raws = output.get("raw") if isinstance(output, Mapping) else None
    raw = raws[-1] if isinstance(raws, list) and raws and isinstance(raws[-1], str) else None
    evaluation = row.get("evaluation") if isinstance(row.get("evaluation"), Mapping) else {}
    assert isinstance(evaluation, Mapping)
    correct = evaluation.get("is_correct")
    error = row.get("error")
    return {
        "id": str(sample_id),
        "dataset": metadata.get("dataset") if isinstance(metadata.get("dataset"), str) else None,
        "fingerprint": metadata.get("fingerprint") if isinstance(metadata.get("fingerprint"), str) else None,
        "extracted": text,
        "point": _decoded(text) if text not in (None, "", "refusal") else None,
        "box": _decoded(metadata.get("box")),
        "points": _decoded(metadata.get("points")),
        "refusal": text == "refusal",
        "error": str(error) if error not in (None, "") else None,
        "raw": raw,
        "their_verdict": metadata.get("outcome") if isinstance(metadata.get("outcome"), str) else None,
        "their_correct": correct if isinstance(correct, bool) else None,
    }
