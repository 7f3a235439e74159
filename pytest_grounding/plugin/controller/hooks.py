"""Hooks of the process that sees every result (the xdist controller, or the only process): the
detectors' lines at the top, records gathered as reports arrive, the gates after the loop, the
summary at the end; and its side of xdist (what each worker is told and what it hands back)."""

from __future__ import annotations

from typing import Any

import pytest

from ...core.safetext import terminal_line
from ...datasets import sharding
from ...detectors import served_session
from ...render import terminal as report
from ..common.item_index import detector_specs_of
from ..common.pool import DetectorLoadError, LocalWorker
from ..common.wire import RECORD, WorkerInput, WorkerOutput, in_flight_of, record_of
from ..compat.benchmark_compat import BENCHMARK_GROUP, hide_benchmark_group
from ..compat.pytest_compat import log_made_cases, write_own_line
from ..compat.xdist_compat import MODES as CRASH_ONCE_MODES
from ..compat.xdist_compat import make_crash_scheduler
from . import gate_cases
from .controller_session import ControllerSession
from .progress import Progress


def is_record_report(report: Any) -> bool:
    return report.when in ("call", "???") or (report.when == "setup" and report.failed)


class Controller:
    """Hooks of the process that sees every result: the xdist controller, or the only process
    (which predicts too: `local` is its worker session)."""

    def __init__(self, config: Any, session: ControllerSession, local: LocalWorker | None) -> None:
        self.config = config
        self.session = session
        self.local = local
        self.progress = Progress.for_config(config, session.plan.settings.outputs.progress)

    def pytest_collection_finish(self, session) -> None:
        """What each detector really runs on, at the top of the run. Without xdist this process is
        the one that predicts, so the detectors load now (once, as they would anyway, and outside
        any test's captured output); under xdist each worker loads its own."""
        config = self.config
        if self.local is None:
            return
        self.progress.expect(len(session.items))
        if config.option.collectonly:
            return
        self.session.ledger.expect(item.nodeid for item in session.items)
        writer = config.pluginmanager.get_plugin("terminalreporter")
        specs = detector_specs_of(session.items)
        if specs:  # the running page before the detectors load (a model's weights take minutes)
            self.session.start_live(len(session.items))
        else:  # no grounding item: the page begun at the start goes (the run's folder with it)
            self.session.close_live()
        try:
            lines = self.local.detector_lines(specs)
        except DetectorLoadError as exc:
            raise pytest.UsageError(f"grounding: {exc}") from None
        for line in lines:
            writer.write_line(terminal_line(line))  # a headline may quote a server (its model's name)

    def pytest_runtest_logreport(self, report) -> None:
        if report.when in ("call", "???") or (report.when == "setup" and not report.passed):
            self.session.ledger.saw(report.nodeid)  # an item ran to its end (not one Ctrl-C cut off after set-up)
        record = record_of(report)
        if record is not None and is_record_report(report):
            if not self.session.add_record(record, report.nodeid, crash=report.when == "???"):
                return  # the item was counted already (xdist ran it again)
            name = self.session.plan.name_of(record["detector"])
            line = self.progress.advance(name, in_flight_of(report))  # a label= names it (issue 51)
            if line:
                write_own_line(self.config.pluginmanager.get_plugin("terminalreporter"), terminal_line(line))

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: after the terminal's own "[100%]"
    def pytest_runtestloop(self, session):
        outcome = yield
        self._finish(interrupted=outcome.excinfo is not None or session.shouldstop is not False)
        result = self.session.result
        if result is None or outcome.excinfo is not None:
            return
        cases = gate_cases.cases_of(result, self.session.plan.settings.verdict.max_errors)
        log_made_cases(self.config, gate_cases.as_logged(cases))  # each gate a test case: JUnit agrees
        if result.failed and all(case.passed for case in cases):
            session.testsfailed += 1  # pytest-cov's way: the exit status follows, the summary agrees

    def _finish(self, interrupted: bool) -> None:
        """The run's one result (later calls change nothing). The only process reports its own
        detectors first, as a worker does at its end."""
        if self.session.result is not None:
            return
        if self.local is not None:
            self.session.reports.detector_info.update(self.local.pool.info)
            sharding.merge_planned(self.session.reports.shard_planned, self.local.shard_planned)
            for spec, figures in self.local.served_stats().items():
                self.session.reports.served.setdefault(spec, {})["main"] = figures
            spent = self.config.pluginmanager.get_plugin("grounding-budget")
            if spent is not None and spent.figures() is not None:
                self.session.reports.budget.append(spent.figures())
        self.session.finish(interrupted)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        # Outermost wrapper: the summary comes after pytest's failure list and pytest-benchmark's
        # table, right above the final counts, where a person looks.
        if not self.session.plan.settings.outputs.benchmark_table:
            hide_benchmark_group(self.config, BENCHMARK_GROUP)
        try:
            return (yield)
        finally:  # pytest-benchmark's --benchmark-compare-fail raises from its own summary hook
            self._write_summary(terminalreporter)

    def _write_summary(self, terminalreporter) -> None:
        result = self.session.result
        if result is None or (not result.records and not result.output_errors):
            return
        for line, style in report.run_lines(result):
            if style in (report.RULE, report.SECTION):
                terminalreporter.write_sep("-" if style == report.RULE else "=", line)
                continue
            failed = style == report.FAILED
            # data-derived text: no live escape sequence, no forged line
            terminalreporter.write_line(terminal_line(line), red=failed, bold=failed or style == report.BOLD)
        for problem in self.session.plan.sections.problems:  # a project section that raised: left out
            terminalreporter.write_line(terminal_line(f"grounding: {problem}"), yellow=True)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config) -> None:
        """After pytest's own last line (its counts: "40 xfailed"): where the page is, and, when
        gates are set, their verdict, so the run ends saying what its exit status means."""
        result = self.session.result
        writer = config.pluginmanager.get_plugin("terminalreporter")
        if result is None or writer is None or not result.records:
            return
        lines = report.run_lines(result)
        for line, _ in lines:
            if line.startswith("grounding HTML report: "):
                writer.write_line(terminal_line(line))
        if result.view.gated and lines and lines[-1][1] == report.BOLD:
            failed = result.failed
            writer.write_line(terminal_line(lines[-1][0]), red=failed, green=not failed, bold=True)

    def pytest_sessionfinish(self, session) -> None:
        self._finish(interrupted=True)  # nothing when the loop finished it; else the run was cut short
        assert self.session.result is not None
        result = self.session.write_outputs(self.session.result)
        if self.local is not None:
            self.local.pool.close()
        if self.session.startup.halt.message is not None:  # a frame check's fail, come while samples ran
            session.exitstatus = pytest.ExitCode.USAGE_ERROR  # as when it comes before them: exit 4
        elif result.output_errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # an output lost is a failed run (the summary says which)
        if self.session.interrupted_writing:
            self.session.result = result.with_output_errors(
                (
                    *result.output_errors,
                    "interrupted (Ctrl-C) while the outputs were written: they were completed first",
                )
            )
            session.exitstatus = pytest.ExitCode.INTERRUPTED


class XdistHooks:
    """The controller's side of xdist: what each worker is told, what it hands back, and the record
    of an item whose worker died."""

    def __init__(self, config: Any, session: ControllerSession) -> None:
        self.config = config
        self.session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: Any, log: Any) -> Any:
        """loadgroup, loadscope, loadfile, each: xdist's scheduler, a crashing item run once (xdist_compat.py)."""
        dist = config.getvalue("dist")
        return make_crash_scheduler(config, log, dist) if dist in CRASH_ONCE_MODES else None

    def pytest_configure_node(self, node: Any) -> None:
        WorkerInput(
            done=tuple(sorted(self.session.resumed.done_keys)),
            baseline=self.session.baseline.expectations(),
            loadgroup=node.config.getoption("dist", "no") == "loadgroup",  # workers re-read the command line
            served=served_session.export(),  # the servers started and probed here: workers do neither again
            startup_requests=self.session.startup.requests,
            startup_seconds=self.session.startup.seconds,
            halt=self.session.startup.halt.share() if self.session.startup.pending else None,
        ).send(node.workerinput)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Any) -> None:
        controller = self.config.pluginmanager.get_plugin("grounding-controller")
        if not self.session.ledger.expected:  # a replacement worker collects the same items again
            controller.progress.expect(len(ids))
        self.session.ledger.expect(ids)
        if self.config.option.collectonly:
            return
        if self.session.plan.index.identify(ids):
            self.session.start_live(len(ids))
        else:  # no grounding item: the page begun at the start goes (the run's folder with it)
            self.session.close_live()

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = WorkerOutput.received(getattr(node, "workeroutput", {}))
        reports = self.session.reports
        reports.detector_info.update(output.detectors)
        reports.datasets.update(output.datasets)
        sharding.merge_planned(reports.shard_planned, output.shard)
        self.session.keep_unscored(output.unscored)
        if output.budget is not None:
            reports.budget.append(output.budget)
        for spec, figures in output.served.items():
            reports.served.setdefault(spec, {})[str(getattr(node.gateway, "id", "?"))] = figures
        if output.load_failure:
            raise pytest.UsageError(output.load_failure)

    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """A worker died in the middle of an item (a detector that kills its process): the sample
        is recorded as an error, so the totals still add up to the items."""
        worker = getattr(getattr(report, "node", None), "gateway", None)
        message = f"worker {getattr(worker, 'id', '?')} crashed while running {crashitem}"
        record = self.session.plan.crash_record(crashitem, message)
        if record is not None:
            report.user_properties.append((RECORD, record))
