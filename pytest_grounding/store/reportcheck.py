"""A JSON report read back (`report`, `summary`, `compare`) is checked against the schema the
package ships (schema/report.schema.json) before anything renders it, so a crafted report cannot
put text where a number belongs (into HTML, markdown or the terminal). Always: jsonschema is a
dependency of the core install. Pure but for reading the shipped schema."""

from __future__ import annotations

import functools
from typing import Any

from ..core import safejson
from ..core.safetext import terminal_line

SHOWN = 3  # problems named in the message; the rest are counted


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    from importlib.resources import files

    import jsonschema  # imported when a report is read back, not by every pytest process

    schema = safejson.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator(schema)


def problems(document: Any) -> list[str]:
    """What in `document` breaks the report schema, each as `where: what` (empty: it fits)."""
    validator = _validator()
    found = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        found.append(f"{where}: {terminal_line(error.message)[:200]}")
    return found


def describe(problem_list: list[str]) -> str:
    more = len(problem_list) - SHOWN
    return "; ".join(problem_list[:SHOWN]) + (f"; and {more} more" if more > 0 else "")


def record_key(record: Any) -> tuple[str, str, str, str]:
    """What makes a record one: its dataset, uid (epoch and variant suffixes included), task and detector."""
    get = record.get if isinstance(record, dict) else (lambda key, default=None: default)
    return (str(get("dataset")), str(get("uid")), str(get("task", "grounding")), str(get("detector")))


def duplicate_record(records: Any) -> str | None:
    """None when no two records are one sample for one detector; else the sentence naming the first copy.
    Every reader of a report asks (read_report: export, rescore, board, compare, summary; merge): a record
    copied three times would count its hit four times."""
    seen: dict[tuple[str, str, str, str], int] = {}
    for position, record in enumerate(records if isinstance(records, list) else [], 1):
        if not isinstance(record, dict) or record.get("uid") is None:
            continue  # a line that names no sample is no copy of one (the schema, or its reader, judges it)
        key = record_key(record)
        if key in seen:
            dataset, uid, _task, detector = key
            return (
                f"record {position} ({dataset[:60]} {uid[:60]}, {detector[:60]}) is the same sample and detector "
                f"a second time (first: record {seen[key]}): a record copied or edited"
            )
        seen[key] = position
    return None


def more_than_run(document: Any) -> str | None:
    """None when no detector holds more samples of a dataset than the run's dataset has (`run.datasets[].
    samples`; epochs and variants count as their sample); else the sentence naming them. A record copied
    under a uid of its own (`-dup2` added, say) is no second copy of one key, but one sample too many."""
    from ..core.variants import base_uid

    if not isinstance(document, dict):
        return None
    sizes = {
        str(d.get("name")): d.get("samples")
        for d in (document.get("run") or {}).get("datasets") or []
        if isinstance(d, dict) and isinstance(d.get("samples"), int)
    }
    found: dict[tuple[str, str, str], set[str]] = {}
    for record in document.get("samples") or []:
        if isinstance(record, dict) and record.get("uid") is not None:
            key = (str(record.get("detector")), str(record.get("task", "grounding")), str(record.get("dataset")))
            found.setdefault(key, set()).add(base_uid(record))
    for (detector, _task, dataset), uids in found.items():
        size = sizes.get(dataset)
        if size is not None and len(uids) > size:
            return (
                f"detector {detector[:60]} has records of {len(uids)} samples of {dataset[:60]}, whose run "
                f"holds {size}: records copied or made up"
            )
    return None
