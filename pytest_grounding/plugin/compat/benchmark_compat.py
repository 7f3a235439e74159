"""The one use of pytest-benchmark's internals (the versions tested are bounded in pyproject.toml;
tests/test_benchmark_compat.py fails when pytest-benchmark changes under it): its session object
on the config (`_benchmarksession`), whose `groups` the table is printed from."""

from __future__ import annotations

from typing import Any

BENCHMARK_GROUP = "grounding"  # the group every sample's benchmark is in (hidden from the table)


def hide_benchmark_group(config: Any, group: str) -> None:
    """pytest-benchmark's table would hold one row per sample: leave the grounding group out of the
    table (its JSON was written before the summary, with every sample)."""
    session: Any = getattr(config, "_benchmarksession", None)
    groups = getattr(session, "groups", None)
    if not groups or getattr(session, "performance_regressions", None):
        # --benchmark-compare-fail judged a sample slower: pytest-benchmark checks that only while it
        # prints a table, and its table then names the samples, so the table stays.
        return
    kept = []
    for name, benchmarks in groups:
        benchmarks = [b for b in benchmarks if b.get("group") != group]
        if benchmarks:
            kept.append((name, benchmarks))
    session.groups = kept
