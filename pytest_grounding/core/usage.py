"""A record's token usage: the counts a served detector keeps in `meta.usage` (a cropping strategy
sums its calls' here), read under the names every API gives them. Pure; analysis/cost.py sums and
prices them per detector."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

PROMPT, COMPLETION, TOTAL = "prompt_tokens", "completion_tokens", "total_tokens"
# Other APIs' names for the same counts (Anthropic, OpenAI's Responses API).
ALIASES = {"input_tokens": PROMPT, "output_tokens": COMPLETION}


def usage_of(record: Mapping[str, Any]) -> dict[str, int] | None:
    """A record's token counts (prompt, completion, total), or None when its detector reported none."""
    meta = record.get("meta")
    usage = meta.get("usage") if isinstance(meta, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    counts: dict[str, int] = {}
    for key, value in usage.items():
        name = ALIASES.get(key, key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if name in (PROMPT, COMPLETION, TOTAL) and number and value >= 0:
            counts[name] = counts.get(name, 0) + int(value)
    if PROMPT not in counts and COMPLETION not in counts:
        return None
    counts.setdefault(PROMPT, 0)
    counts.setdefault(COMPLETION, 0)
    counts.setdefault(TOTAL, counts[PROMPT] + counts[COMPLETION])
    return counts


def add_usage(total: Mapping[str, int] | None, more: Mapping[str, Any] | None) -> dict[str, int] | None:
    """Two usage objects summed (a strategy's calls); either may be None."""
    counts = usage_of({"meta": {"usage": more}}) if more is not None else None
    if total is None:
        return counts
    if counts is None:
        return dict(total)
    return {key: total.get(key, 0) + counts.get(key, 0) for key in (PROMPT, COMPLETION, TOTAL)}
