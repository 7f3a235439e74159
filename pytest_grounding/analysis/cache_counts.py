"""--grounding-cache in the summary: per detector, how many answers came from the answer cache
and how many were stored in it, counted from the records themselves (each prediction's meta says
what the cache did: core.record.CacheUse), so xdist workers, resumed runs and merged shards add up
with no figure carried beside the records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.record import CACHE_META, CacheUse


def counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """{hits, stored, asked} of one detector's records (and `not_stored`: answers the store could
    not keep, a full or read-only folder); None when the cache played no part (off)."""
    uses = [(r.get("meta") or {}).get(CACHE_META) for r in records]
    hits = sum(1 for use in uses if use == CacheUse.HIT)
    stored = sum(1 for use in uses if use == CacheUse.STORED)
    failed = sum(1 for use in uses if use == CacheUse.NOT_STORED)
    if not hits and not stored and not failed:
        return None
    found = {"hits": hits, "stored": stored, "asked": len(records) - hits}
    return {**found, "not_stored": failed} if failed else found


def summary_lines(found: Mapping[str, Any] | None) -> list[str]:
    """The detector block's line: `cache: N hits, M stored`."""
    if not found:
        return []
    lines = [
        f"  cache: {found['hits']} hits, {found['stored']} stored  ({found['asked']} answers not from the cache; "
        "`cached` in the records of the hits)"
    ]
    if found.get("not_stored"):
        lines.append(
            f"  cache: {found['not_stored']} answers could not be written to the cache folder (full or read-only?)"
        )
    return lines
