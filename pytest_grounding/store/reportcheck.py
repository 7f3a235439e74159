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
