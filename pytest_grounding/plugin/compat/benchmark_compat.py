"""The uses of pytest-benchmark's internals (the versions tested are bounded in pyproject.toml;
tests/test_benchmark_compat.py fails when pytest-benchmark changes under it): its session object
on the config (`_benchmarksession`), whose `groups` the table is printed from; and the form of its
header line (`benchmark: VERSION (defaults: ...)`), left out of a grounding run that asks nothing
of pytest-benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

BENCHMARK_GROUP = "grounding"  # the group every sample's benchmark is in (hidden from the table)
HEADER = "benchmark: "  # pytest-benchmark's header line starts so and holds "(defaults:"


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


def header_wanted(args: list[str]) -> bool:
    """pytest-benchmark's header line earns its place where it measures for someone (issue 61): a
    `--benchmark-...` option or `--grounding-benchmark-table` on the command line, or a run that is
    no grounding run (a project's own benchmarks); a grounding run that asks nothing of it (its
    figures go nowhere, or xdist switches it off) opens without it."""
    if any(a.startswith(("--benchmark-", "--grounding-benchmark-table")) for a in args):
        return True
    grounding = any(
        a.startswith(("--grounding-", "--detector", "--dataset")) or "test_grounding" in a or Path(a).name == "suites"
        for a in args
    )
    return not grounding


class BenchmarkHeader:
    """Drops pytest-benchmark's header line from a grounding run that asks nothing of it."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_header(self, config: Any) -> Any:
        lines = yield
        if header_wanted([str(a) for a in config.invocation_params.args]):
            return lines
        return [
            line for line in lines if not (isinstance(line, str) and line.startswith(HEADER) and "(defaults:" in line)
        ]


def register(config: Any) -> None:
    if config.pluginmanager.hasplugin("benchmark"):
        config.pluginmanager.register(BenchmarkHeader(), "grounding-benchmark-header")
