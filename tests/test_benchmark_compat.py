"""plugin/compat/benchmark_compat.py leans on pytest-benchmark's session object: this test fails when the
installed pytest-benchmark no longer keeps its table's groups there."""

import inspect

import pytest

session_mod = pytest.importorskip("pytest_benchmark.session")

from pytest_grounding.plugin.compat.benchmark_compat import hide_benchmark_group  # noqa: E402


def test_the_benchmark_session_keeps_its_groups_and_regressions_on_the_config():
    source = inspect.getsource(session_mod.BenchmarkSession)
    assert "self.groups" in source and "self.performance_regressions" in source
    plugin = inspect.getsource(pytest.importorskip("pytest_benchmark.plugin"))
    assert "config._benchmarksession" in plugin


def test_the_grounding_group_leaves_the_table_and_others_stay():
    session = type("Session", (), {})()
    session.groups = [("grounding", [{"group": "grounding"}]), ("other", [{"group": "x"}, {"group": "grounding"}])]
    session.performance_regressions = []
    config = type("Config", (), {"_benchmarksession": session})()
    hide_benchmark_group(config, "grounding")
    assert session.groups == [("other", [{"group": "x"}])]
    session.performance_regressions = [("slower", "x")]  # a regression keeps the table whole
    session.groups = [("grounding", [{"group": "grounding"}])]
    hide_benchmark_group(config, "grounding")
    assert session.groups == [("grounding", [{"group": "grounding"}])]
