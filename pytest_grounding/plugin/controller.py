"""Hooks of the process that sees every result (the xdist controller, or the only process): the
detectors' lines at the top, records gathered as reports arrive, the gates after the loop, the
summary at the end; and its side of xdist (what each worker is told and what it hands back)."""

from __future__ import annotations

from typing import Any

import pytest

from ..core.safetext import terminal_line
from ..datasets import sharding
from ..detectors import served_session
from ..render import terminal as report
from ..render.outputs import asked_for
from . import baseline_hooks, crash_scheduling, pipeline
from . import replay as replay_check
from .fixtures import BENCHMARK_GROUP
from .items import detector_specs_of
from .progress import Progress
from .state import DetectorLoadError, GroundingRun, get_run
from .wire import RECORD, WorkerInput, WorkerOutput, record_of


def distributed(config: Any) -> bool:
    return bool(config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None))


def is_record_report(report: Any) -> bool:
    return report.when in ("call", "???") or (report.when == "setup" and report.failed)


class Controller:
    """Hooks of the process that sees every result: the xdist controller, or the only process."""

    def __init__(self, config) -> None:
        self.config = config
        self.progress = Progress.for_config(config)

    @property
    def run(self) -> GroundingRun:
        return get_run(self.config)

    def pytest_collection_finish(self, session) -> None:
        """What each detector really runs on, at the top of the run. Without xdist this process is
        the one that predicts, so the detectors load now (once, as they would anyway, and outside
        any test's captured output); under xdist each worker loads its own."""
        config = self.config
        if distributed(config):
            return
        self.progress.expect(len(session.items))
        if config.option.collectonly:
            return
        self.run.ledger.expect(item.nodeid for item in session.items)
        writer = config.pluginmanager.get_plugin("terminalreporter")
        try:
            lines = self.run.detector_lines(detector_specs_of(session.items))
        except DetectorLoadError as exc:
            raise pytest.UsageError(f"grounding: {exc}") from None
        for line in lines:
            writer.write_line(terminal_line(line))  # a headline may quote a server (its model's name)

    def pytest_runtest_logreport(self, report) -> None:
        if report.when in ("call", "???") or (report.when == "setup" and not report.passed):
            self.run.ledger.saw(report.nodeid)  # an item ran to its end (not one Ctrl-C cut off after set-up)
        record = record_of(report)
        if record is not None and is_record_report(report):
            if not self.run.add_record(record, report.nodeid, crash=report.when == "???"):
                return  # the item was counted already (xdist ran it again)
            line = self.progress.advance(record["detector"], pipeline.in_flight_of(report))
            if line:
                _write_own_line(self.config.pluginmanager.get_plugin("terminalreporter"), line)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session):
        outcome = yield
        self.run.finish(interrupted=outcome.excinfo is not None or session.shouldstop is not False)
        if self.run.failed_gates or self.run.baseline_failed:
            session.testsfailed += 1  # pytest-cov's way: the exit status follows, the summary agrees

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        # Outermost wrapper: the summary comes after pytest's failure list and pytest-benchmark's
        # table, right above the final counts, where a person looks.
        if not self.run.settings.benchmark_table:
            _hide_grounding_benchmarks(self.config)
        try:
            return (yield)
        finally:  # pytest-benchmark's --benchmark-compare-fail raises from its own summary hook
            self._write_summary(terminalreporter)

    def _write_summary(self, terminalreporter) -> None:
        run = self.run
        if not run.records and not run.output_errors:
            return
        if run.records and run.summary is None:  # interrupted before the loop's end
            run.finish(interrupted=True)

        def write(line: str, **markup: bool) -> None:  # data-derived text: no live escape sequence, no forged line
            terminalreporter.write_line(terminal_line(line), **markup)

        item = None if run.settings.baseline_path is None else "the baseline decides: a regression fails, others xfail"
        misses = report.miss_lines(run.records, run.settings.show_misses, run.settings.misses, item)
        if misses:
            terminalreporter.write_sep("-", "grounding misses")
            for line in misses:
                write(line)
        terminalreporter.write_sep("=", "grounding summary")
        if run.summary:
            for line in report.summary_lines(
                run.summary,
                datasets=run.dataset_summaries(),
                detector_info=run.all_detector_info(),
                top_apps=run.settings.top_apps,
                verdicts=run.verdicts,
                partial=run.interrupted,
                notes=run.notes,
                resumed=len(run.resumed),
                records=run.records,
                order=run.settings.detector_specs,
                cost=run.cost,
                price=run.settings.price,
                reproductions=run.reproductions,
                profile=run.settings.profile.describe(),
            ):
                failed = "FAILED" in line and line.startswith(("gate", "errors"))
                write(line, red=failed, bold=failed)
        for line in baseline_hooks.summary_lines(run):
            failed = "FAILED" in line or line.startswith("  regression")
            write(line, red=failed, bold=failed)
        for line in replay_check.summary_lines(run.records, run.settings.detector_specs):
            write(line)
        for output, path in asked_for(run.settings):
            write(f"grounding {output.title}: {path}")
        for problem in run.output_errors:
            write(f"grounding output FAILED: {problem}", red=True, bold=True)
        if run.summary:
            verdict = report.verdict_line(
                run.summary,
                run.verdicts,
                gated=bool(run.settings.gates or run.settings.max_drops),  # --grounding-max-drop too
                misses_as=run.settings.misses,
                partial=run.interrupted,
                baseline=baseline_hooks.verdict(run),
            )
            write("")
            write(verdict, bold=True)

    def pytest_sessionfinish(self, session) -> None:
        run = self.run
        if run.records and run.summary is None:
            run.finish(interrupted=True)
        elif not run.records:
            run.finish(interrupted=run.interrupted)
        run.write_report()
        run.pool.close()
        if run.output_errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # an output lost is a failed run (the summary says which)
        if run.interrupted_writing:
            run.output_errors.append("interrupted (Ctrl-C) while the outputs were written: they were completed first")
            session.exitstatus = pytest.ExitCode.INTERRUPTED


def _write_own_line(terminalreporter, line: str) -> None:
    """A line of its own amid the progress dots (xdist writes them past the reporter's tracking)."""
    terminalreporter.ensure_newline()
    if getattr(terminalreporter._tw, "width_of_current_line", 0):
        terminalreporter._tw.line()
    terminalreporter.write_line(terminal_line(line))


def _hide_grounding_benchmarks(config) -> None:
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
        benchmarks = [b for b in benchmarks if b.get("group") != BENCHMARK_GROUP]
        if benchmarks:
            kept.append((name, benchmarks))
    session.groups = kept


class XdistHooks:
    """The controller's side of xdist: what each worker is told, what it hands back, and the record
    of an item whose worker died."""

    def __init__(self, config: Any) -> None:
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: Any, log: Any) -> Any:
        """loadgroup, loadscope, loadfile, each: xdist's scheduler, a crashing item run once (crash_scheduling.py)."""
        dist = config.getvalue("dist")
        return crash_scheduling.make_scheduler(config, log, dist) if dist in crash_scheduling.MODES else None

    def pytest_configure_node(self, node: Any) -> None:
        run = get_run(self.config)
        found = run.baseline if run.baseline_loaded else None
        WorkerInput(
            done=tuple(sorted(run.done_keys)),
            baseline=found.expectations() if found is not None else None,
            loadgroup=node.config.getoption("dist", "no") == "loadgroup",  # workers re-read the command line
            served=served_session.export(),  # the servers started and probed here: workers do neither again
        ).send(node.workerinput)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Any) -> None:
        controller = self.config.pluginmanager.get_plugin("grounding-controller")
        if not get_run(self.config).ledger.expected:  # a replacement worker collects the same items again
            controller.progress.expect(len(ids))
        get_run(self.config).ledger.expect(ids)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = WorkerOutput.received(getattr(node, "workeroutput", {}))
        run = get_run(self.config)
        run.detector_info.update(output.detectors)
        run.worker_datasets.update(output.datasets)
        sharding.merge_planned(run.shard_planned, output.shard)
        pipeline.keep_unscored(run, output.unscored)
        for spec, figures in output.served.items():
            run.served.setdefault(spec, {})[str(getattr(node.gateway, "id", "?"))] = figures
        if output.load_failure:
            raise pytest.UsageError(output.load_failure)

    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """A worker died in the middle of an item (a detector that kills its process): the sample
        is recorded as an error, so the totals still add up to the items."""
        worker = getattr(getattr(report, "node", None), "gateway", None)
        message = f"worker {getattr(worker, 'id', '?')} crashed while running {crashitem}"
        record = get_run(self.config).crash_record(crashitem, message)
        if record is not None:
            report.user_properties.append((RECORD, record))
