"""The published files' text (analysis/publish.py's records): the Hub's `.eval_results/*.yaml`,
spelled by hand (PyYAML is no dependency: every string a JSON string, which YAML reads as a
double-quoted scalar), and ScreenSpot-Pro's results JSON as the authors' script indents it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.publish import EvalResult
from ..store.reports import dumps


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def eval_results_yaml(entries: Sequence[EvalResult]) -> str:
    """A YAML list of entries in the Hub's documented layout (dataset.id, dataset.task_id, value,
    date, source.url/name/user, notes); optional fields left out when unknown."""
    lines = []
    for entry in entries:
        lines += ["- dataset:", f"    id: {_quoted(entry.dataset_id)}", f"    task_id: {_quoted(entry.task_id)}"]
        lines.append(f"  value: {entry.value!r}")
        if entry.date:
            lines.append(f"  date: {_quoted(entry.date)}")
        if entry.source_url:
            lines += ["  source:", f"    url: {_quoted(entry.source_url)}"]
            lines += [f"    name: {_quoted(entry.source_name)}"] if entry.source_name else []
            lines += [f"    user: {_quoted(entry.source_user)}"] if entry.source_user else []
        if entry.notes:
            lines.append(f"  notes: {_quoted(entry.notes)}")
    return "\n".join(lines) + "\n"


def screenspot_pro_json(document: Mapping[str, Any]) -> str:
    """As eval_screenspot_pro.py writes its log (json.dump, indent 4); strict JSON."""
    return dumps(document, indent=4) + "\n"
