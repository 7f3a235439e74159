"""The pytest plugin: options, hooks and fixtures, kept thin. The work happens in `session`
(run state), `runner` (one sample), `metrics`/`gates` (pure figures), `report` (text) and
`progress` (the progress line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import baseline, baseline_hooks, hookspecs, metrics, report
from .datasets import DatasetError
from .options import add_options
from .progress import Progress
from .runner import evaluate, evaluate_locate, explain
from .safetext import terminal_line, terminal_text
from .session import DetectorLoadError, GroundingRun, SettingError
from .types import Sample

RUN_KEY = pytest.StashKey[GroundingRun]()
RECORD = "grounding_record"
MISSED = "missed"  # the terminal's word for a miss: still a failed item, listed once, compactly
BENCHMARK_GROUP = "grounding"


class GroundingSampleError(Exception):
    """A sample that could not be scored (unreadable image, detector crash): an error, not a miss."""


def get_run(config) -> GroundingRun:
    return config.stash[RUN_KEY]


def is_worker(config) -> bool:
    return hasattr(config, "workerinput")


# -- set-up ---------------------------------------------------------------------------------------


def pytest_addhooks(pluginmanager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser) -> None:
    add_options(parser)


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "grounding(dataset=None, detector=None): pin a suite's datasets and/or detectors in code (str or list of str)",
    )
    try:
        config.stash[RUN_KEY] = GroundingRun.create(config)
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    if is_worker(config):
        done = config.workerinput.get("grounding_done") or []
        get_run(config).done_keys = frozenset(tuple(key) for key in done)
        expected = config.workerinput.get("grounding_baseline")
        if expected is not None:  # the controller read and checked the baseline; workers judge with it
            get_run(config).expected = baseline.expectations_from(expected)
            get_run(config).baseline_loaded = True
        config.pluginmanager.register(Worker(config), "grounding-worker")
    else:
        config.pluginmanager.register(Controller(config), "grounding-controller")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistHooks(config), "grounding-xdist")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session) -> None:
    config = session.config
    run = get_run(config)
    writer = config.pluginmanager.get_plugin("terminalreporter")

    def on_generate(folder: Path) -> None:
        if writer is not None and not is_worker(config):
            writer.write_line(
                f"grounding: generating the embedded synthetic benchmark into {folder} (first use; a few seconds)"
            )

    try:
        run.check_run_settings(on_generate=on_generate)
        if not is_worker(config):
            run.load_resume()
            run.load_baseline()
            run.load_published()
            run.open_predictions()
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config) -> list:
    run = get_run(config)
    settings = run.settings
    datasets = ", ".join(settings.dataset_specs) or "synthetic (embedded default)"
    note = "" if settings.detector_source != "default" else " (default; --detector to choose)"
    lines = [f"grounding: datasets {datasets}; detectors {', '.join(settings.detector_specs)}{note}"]
    if settings.task == metrics.LOCATE:
        lines.append(
            f"grounding task: locate (element at the recorded click; hit at IoU >= {settings.iou_threshold:g})"
        )
    if settings.gates:
        lines.append(
            "grounding gates: "
            + ", ".join(f"{g.label} >= {g.threshold:.1%}" for g in settings.gates)
            + f"; misses reported as {settings.misses}"
        )
    if run.resumed:
        lines.append(
            f"grounding: resuming {settings.predictions_path}: {len(run.resumed)} samples done before "
            "are kept and not run again"
        )
    if settings.baseline_path is not None:
        lines.append(f"grounding baseline: {settings.baseline_path} ({baseline_hooks.mode(run)})")
    lines += [f"grounding note: {text}" for text in run.notes]
    return lines


def _distributed(config) -> bool:
    return bool(config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None))


def _detector_lines(run: GroundingRun, specs) -> list:
    lines = []
    for spec in specs:
        try:
            run.pool.get(spec)
        except DetectorLoadError as exc:
            lines.append(f"grounding: {exc}")
            continue
        lines.append(f"grounding: detector {spec}: {report.runtime_line(run.pool.info[spec])}")
    return lines


def _item_params(item) -> dict[str, Any]:
    return getattr(getattr(item, "callspec", None), "params", {})


def _detector_specs_of(items) -> list:
    return list(
        dict.fromkeys(
            _item_params(item)["grounding_detector_name"]
            for item in items
            if "grounding_detector_name" in _item_params(item)
        )
    )


# -- collection -----------------------------------------------------------------------------------


def _marker_list(marker, key: str) -> list:
    if marker is None:
        return []
    value = marker.kwargs.get(key)
    if value is None and key == "dataset" and marker.args:
        value = marker.args[0]
    return [value] if isinstance(value, str) else list(value or [])


def pytest_generate_tests(metafunc) -> None:
    wants_sample = "grounding_sample" in metafunc.fixturenames
    wants_detector = "grounding_detector_name" in metafunc.fixturenames
    if not (wants_sample or wants_detector):
        return
    run = get_run(metafunc.config)
    marker = metafunc.definition.get_closest_marker("grounding")
    if wants_detector:
        specs = _marker_list(marker, "detector") or list(run.settings.detector_specs)
        run.check_detector_specs(specs, f"@pytest.mark.grounding in {metafunc.definition.nodeid}")
        metafunc.parametrize("grounding_detector_name", specs, ids=[_spec_id(s) for s in specs])
    if wants_sample:
        samples: list[Sample] = []
        try:
            datasets = run.datasets_for(_marker_list(marker, "dataset"), Path(metafunc.definition.path).parent)
        except DatasetError as exc:  # a pinned dataset: a collection error naming the file, no traceback
            pytest.fail(f"{metafunc.definition.nodeid}: {exc}", pytrace=False)
        for dataset in datasets:
            samples.extend(dataset.samples[: run.settings.limit])
        if _groups_screens(metafunc.config):
            metafunc.parametrize("grounding_sample", _grouped(samples, metafunc.config.workerinput["workercount"]))
        else:
            metafunc.parametrize("grounding_sample", samples, ids=[s.uid for s in samples])


# -- xdist: a screen's samples on one worker ---------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config):
    """`--dist loadgroup` sends all the samples of a screen to one worker, so a detector's per-screen
    cache (OCR, a parse) reads each screen once. Not the default: xdist's loadgroup scheduler puts
    an item whose worker crashed back in the queue, and a sample that kills its worker then kills
    every replacement until --max-worker-restart is spent. The default `load` hands out runs of
    consecutive items, and a screen's samples are consecutive, so most screens stay whole."""
    if is_worker(config) and config.workerinput.get("grounding_loadgroup"):
        config.option.loadgroup = True  # the worker's own command line may not say so
    return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist workers re-read the command line: tell them the run distributes by screen."""
    node.workerinput["grounding_loadgroup"] = node.config.getoption("dist", "no") == "loadgroup"


def _groups_screens(config) -> bool:
    """On an xdist worker of a `--dist loadgroup` run (the only mode that reads xdist_group marks;
    elsewhere no marks, so no cost at collection and test ids without the `@group` suffix)."""
    return is_worker(config) and bool(getattr(config.option, "loadgroup", False))


def _grouped(samples, workers: int) -> list:
    from .datasets import screen_groups

    marks: dict[str, Any] = {}
    params = []
    for sample, group in zip(samples, screen_groups(samples, workers), strict=True):
        if group not in marks:
            marks[group] = pytest.mark.xdist_group(group)  # one mark object per group, shared
        params.append(pytest.param(sample, marks=marks[group], id=sample.uid))
    return params


def _name_groups(items) -> None:
    """xdist's loadgroup scheduler reads a test's group from an "@group" suffix of its node id,
    which xdist writes into `item._nodeid`; pytest 9.2 keeps node ids in `item._id`, so the suffix
    is lost and the screens are spread over the workers (pytest-xdist#1386). Write it where this
    pytest reads it."""
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None or "@" in item.nodeid.rpartition("]")[2]:
            continue
        named = f"{item.nodeid}@{mark.args[0]}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import NodeId  # type: ignore[import-not-found,unused-ignore]  # pytest >= 9.2

            item._id = NodeId.parse(named)
        else:
            item._nodeid = named


def _spec_id(spec: str) -> str:
    from .datasets import slug

    return slug(spec).replace("_", "-") if ":" in spec else spec


@pytest.hookimpl(trylast=True)  # after xdist's own hook, which names the groups
def pytest_collection_modifyitems(session, config, items) -> None:
    """--grounding-resume: the samples already in the predictions file are deselected (the same
    on every xdist worker: the keys come from the controller)."""
    if _groups_screens(config):
        _name_groups(items)
    run = get_run(config)
    done = run.done_keys
    if not done:
        return
    keep: list[pytest.Item] = []
    skip: list[pytest.Item] = []
    for item in items:
        params = _item_params(item)
        sample = params.get("grounding_sample")
        key = (
            run.settings.task,
            params.get("grounding_detector_name"),
            getattr(sample, "dataset", None),
            getattr(sample, "uid", None),
        )
        (skip if key in done else keep).append(item)
    if skip:
        config.hook.pytest_deselected(items=skip)
        items[:] = keep


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture
def grounding_detector(request, grounding_detector_name: str) -> Any:
    """The detector for this item, loaded once per worker (a load failure is an error per item)."""
    try:
        return get_run(request.config).pool.get(grounding_detector_name)
    except DetectorLoadError as exc:
        raise GroundingSampleError(str(exc)) from None


@pytest.fixture
def grounding_check(request):
    """check(sample, detector): predict (or, with --grounding-task locate, find the element at the
    recorded click), score, record; fails the item on a miss (or xfails it when gates decide),
    reports an error for a sample that could not be scored."""
    run = get_run(request.config)
    measure = _benchmark_available(request)

    def check(sample, detector, name: str | None = None) -> dict[str, Any]:
        params = getattr(request.node, "callspec", None)
        name = str(
            name
            or (params.params.get("grounding_detector_name") if params else None)
            or getattr(detector, "name", type(detector).__name__)
        )
        used: dict[str, Any] = {}

        def around(fn):
            # Asked for only when a prediction is really timed, so a sample that errs before it
            # leaves pytest-benchmark no unused fixture to warn about.
            benchmark = used["benchmark"] = request.getfixturevalue("benchmark")
            benchmark.group = BENCHMARK_GROUP
            return benchmark.pedantic(fn, rounds=1, iterations=1)

        settings = run.settings
        if settings.task == metrics.LOCATE:
            result = evaluate_locate(
                sample,
                detector,
                detector_name=name,
                timeout=settings.timeout,
                threshold=settings.iou_threshold,
                around=around if measure else None,
            )
        else:
            result = evaluate(
                sample, detector, detector_name=name, timeout=settings.timeout, around=around if measure else None
            )
        record = result.record
        record["fingerprint"] = run.fingerprint_of(sample.dataset)
        if run.baseline_loaded:
            before = run.expected.get(baseline.sample_key(record))
            record["baseline"] = baseline.sample_verdict(record["outcome"], before)
        if "benchmark" in used:
            used["benchmark"].extra_info.update({k: v for k, v in record.items() if k != "meta"})
        request.node.user_properties.append((RECORD, record))
        request.node.user_properties.extend(baseline_hooks.junit_properties(record))
        outcome = record["outcome"]
        if outcome == metrics.ERROR:
            detail = f"\n\n{result.traceback}" if result.traceback else ""
            raise GroundingSampleError(explain(record) + detail)
        if outcome in (metrics.MISS, metrics.WRONG_FORMAT):
            if run.settings.baseline_path is not None:
                baseline_hooks.judge_miss(run, record, explain(record))
            if run.settings.misses == "xfail":
                pytest.xfail(explain(record))
            pytest.fail(explain(record), pytrace=False)
        return record

    return check


def _benchmark_available(request) -> bool:
    """pytest-benchmark can really measure: not under xdist (it switches itself off there) and not
    with --benchmark-skip (which would skip every sample) or --benchmark-disable."""
    config = request.config
    if is_worker(config) or not config.pluginmanager.hasplugin("benchmark"):
        return False
    return not (config.getoption("benchmark_skip", False) or config.getoption("benchmark_disable", False))


# -- reports --------------------------------------------------------------------------------------


def _record_of(report) -> dict[str, Any] | None:
    for entry in getattr(report, "user_properties", ()):  # collect reports have none
        name, value = entry[0], entry[1]
        if name == RECORD:
            return value
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if call.when == "teardown":
        # The teardown report's properties are what --junitxml writes: the flat ones, not the record
        # (read from the call report, and a dict's repr in the XML helps nobody).
        rep.user_properties = [p for p in rep.user_properties if p[0] != RECORD]
    excinfo = call.excinfo
    if excinfo is not None and excinfo.errisinstance(GroundingSampleError):
        rep.longrepr = terminal_text(str(excinfo.value))
        params = _item_params(item)
        if call.when == "setup" and "grounding_sample" in params and _record_of(rep) is None:
            # The detector did not load: the sample still counts, as an error.
            sample = params["grounding_sample"]
            record = metrics.error_record(
                sample, detector=params.get("grounding_detector_name", "?"), message=str(excinfo.value)
            )
            record["task"] = get_run(item.config).settings.task
            record["fingerprint"] = get_run(item.config).fingerprint_of(sample.dataset)
            rep.user_properties.append((RECORD, record))


def pytest_report_teststatus(report, config):
    record = _record_of(report)
    if record is None or not report.failed:
        return None
    if record.get("baseline") == baseline.REGRESSION and report.when == "call":
        return "failed", "F", "REGRESSION"
    if record["outcome"] == metrics.ERROR and report.when in ("call", "???"):
        return "error", "E", "ERROR"
    if record["outcome"] in (metrics.MISS, metrics.WRONG_FORMAT) and report.when == "call":
        # Still a failed item (exit status, --lf, -x, junitxml all see a failure); the terminal
        # lists misses once, one line each, in the grounding summary instead of a block each.
        return MISSED, "F", "MISS"
    return None


def _is_record_report(report) -> bool:
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
        if _distributed(config):
            return
        self.progress.expect(len(session.items))
        if config.option.collectonly:
            return
        writer = config.pluginmanager.get_plugin("terminalreporter")
        for line in _detector_lines(self.run, _detector_specs_of(session.items)):
            writer.write_line(terminal_line(line))  # a headline may quote a server (its model's name)

    def pytest_runtest_logreport(self, report) -> None:
        record = _record_of(report)
        if record is not None and _is_record_report(report):
            self.run.add_record(record)
            line = self.progress.advance(record["detector"])
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
            ):
                failed = "FAILED" in line and line.startswith(("gate", "errors"))
                write(line, red=failed, bold=failed)
        for line in baseline_hooks.summary_lines(run):
            failed = "FAILED" in line or line.startswith("  regression")
            write(line, red=failed, bold=failed)
        for target, path in (
            ("JSON report", run.settings.json_path),
            ("HTML report", run.settings.html_path),
            ("plots", run.settings.plots_dir),
            ("predictions", run.settings.predictions_path),
        ):
            if path is not None:
                write(f"grounding {target}: {path}")
        for problem in run.output_errors:
            write(f"grounding output FAILED: {problem}", red=True, bold=True)
        if run.summary:
            verdict = report.verdict_line(
                run.summary,
                run.verdicts,
                gated=bool(run.settings.gates),
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


class Worker:
    """Hooks of an xdist worker: load the detectors before the first item (outside any item's
    captured output), hand their descriptions and the datasets' to the controller."""

    def __init__(self, config) -> None:
        self.config = config

    def pytest_collection_finish(self, session) -> None:
        if not self.config.option.collectonly:
            _detector_lines(get_run(self.config), _detector_specs_of(session.items))

    def pytest_sessionfinish(self, session) -> None:
        run = get_run(self.config)
        self.config.workeroutput["grounding_detectors"] = run.pool.info
        self.config.workeroutput["grounding_datasets"] = {d.name: d.summary() for d in run.datasets.values()}
        run.pool.close()


class XdistHooks:
    def __init__(self, config) -> None:
        self.config = config

    def pytest_configure_node(self, node) -> None:
        run = get_run(self.config)
        node.workerinput["grounding_done"] = [list(key) for key in sorted(run.done_keys)]
        found = run.baseline if run.baseline_loaded else None
        node.workerinput["grounding_baseline"] = found.expectations() if found is not None else None

    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        controller = self.config.pluginmanager.get_plugin("grounding-controller")
        controller.progress.expect(len(ids))

    def pytest_testnodedown(self, node, error) -> None:
        output = getattr(node, "workeroutput", {})
        run = get_run(self.config)
        run.detector_info.update(output.get("grounding_detectors") or {})
        run.worker_datasets.update(output.get("grounding_datasets") or {})

    def pytest_handlecrashitem(self, crashitem, report, sched) -> None:
        """A worker died in the middle of an item (a detector that kills its process): the sample
        is recorded as an error, so the totals still add up to the items."""
        worker = getattr(getattr(report, "node", None), "gateway", None)
        message = f"worker {getattr(worker, 'id', '?')} crashed while running {crashitem}"
        record = get_run(self.config).crash_record(crashitem, message)
        if record is not None:
            report.user_properties.append((RECORD, record))
