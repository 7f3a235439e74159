"""Model-driven grounding (issue 39): an agentic answer's trace, lifted out of the detector's meta
into the record's own keys, `turns` (each request: the regions shown, the answer, the action read,
latency, tokens) and `agent_end` (why the episode ended). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TRACE_KEYS = ("turns", "agent_end")


def lifted(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The record fields for a meta that carries a trace: `meta` without it, `turns`, `agent_end`;
    {} for a single-shot answer (its record keeps neither key)."""
    if not isinstance(meta, Mapping) or not isinstance(meta.get("turns"), list):
        return {}
    fields: dict[str, Any] = {"meta": {k: v for k, v in meta.items() if k not in TRACE_KEYS}}
    fields["turns"] = list(meta["turns"])
    if isinstance(meta.get("agent_end"), str):
        fields["agent_end"] = meta["agent_end"]
    return fields
