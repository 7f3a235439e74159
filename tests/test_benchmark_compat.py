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


def test_the_benchmark_header_only_where_it_measures_for_someone():
    from pytest_grounding.plugin.compat.benchmark_compat import header_wanted

    assert not header_wanted(["suites/", "--grounding-limit", "40"])  # the README's first look
    assert not header_wanted(["suites/test_grounding.py", "-n", "2"])
    assert header_wanted(["suites/", "--benchmark-json", "b.json"])  # asked for its figures
    assert header_wanted(["suites/", "--grounding-benchmark-table"])
    assert header_wanted(["tests/test_speed.py"])  # a project's own benchmarks: not ours to hide


def test_a_grounding_run_opens_without_the_benchmark_header(pytester):
    from helpers import FIXTURES, make_project

    make_project(pytester)
    quiet = pytester.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector=center", "--grounding-limit=1")
    assert not any(line.startswith("benchmark: ") for line in quiet.outlines)
    asked = pytester.runpytest(
        f"--dataset={FIXTURES / 'mini'}", "--detector=center", "--grounding-limit=1", "--benchmark-json=b.json"
    )
    assert any(line.startswith("benchmark: ") and "(defaults:" in line for line in asked.outlines)
