"""The report schema assembled from the sections' fragments: each DETECTOR section's `schema()`
under $defs.detectorSummary.properties[name], each RUN section's at properties[name], its
`schema_report()` keys at properties, its `schema_defs()` in $defs; the rest (the core: the run,
the tallies, the records) is the shipped file's own.

The shipped file (pytest_grounding/schema/report.schema.json) is the assembly written out, so a
report can be checked without importing every section; tests/test_sections.py fails when the
two differ. After changing a section's fragment:

    python -m pytest_grounding.sections.schema --write
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .base import DETECTOR
from .registry import SectionRegistry, builtin_sections

SHIPPED = Path(__file__).resolve().parent.parent / "schema" / "report.schema.json"


def read_shipped(path: Path = SHIPPED) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def assemble(base: Mapping[str, Any], registry: SectionRegistry | None = None) -> dict[str, Any]:
    """`base` with every section's fragments in their places (the built-ins' by default)."""
    schema = copy.deepcopy(dict(base))
    block = schema["$defs"]["detectorSummary"]["properties"]
    for section in (registry or builtin_sections()).sections():
        fragment = section.schema()
        if fragment is not None:
            (block if section.level == DETECTOR else schema["properties"])[section.name] = copy.deepcopy(fragment)
        for key, value in section.schema_report().items():
            schema["properties"][key] = copy.deepcopy(value)
        for key, value in section.schema_defs().items():
            schema["$defs"][key] = copy.deepcopy(value)
    return schema


def text(schema: Mapping[str, Any]) -> str:
    """The file's text: two-space indent, one newline at the end."""
    return json.dumps(schema, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write or check the shipped report schema from the sections.")
    parser.add_argument("--write", action="store_true", help="rewrite the shipped file (else: check it)")
    args = parser.parse_args(argv)
    found = SHIPPED.read_text(encoding="utf-8")
    assembled = text(assemble(json.loads(found)))
    if args.write:
        if assembled != found:
            SHIPPED.write_text(assembled, encoding="utf-8")
            print(f"{SHIPPED}: rewritten from the sections")
        return 0
    if assembled != found:
        print(f"{SHIPPED} differs from the sections' fragments: python -m pytest_grounding.sections.schema --write")
        return 1
    print(f"{SHIPPED}: matches the sections")
    return 0


if __name__ == "__main__":
    sys.exit(main())
