"""The pytest plugin: options, hooks and fixtures, kept thin. The work happens in `session`
(run state), `runner` (one sample), `metrics`/`gates` (pure figures) and `report` (text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from . import hookspecs, metrics, report
from .datasets import DatasetError
from .options import add_options
from .runner import evaluate, explain
from .session import DetectorLoadError, GroundingRun, SettingError

RUN_KEY = pytest.StashKey[GroundingRun]()
RECORD = "grounding_record"


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
    config.addinivalue_line("markers", "grounding(dataset=None, detector=None): pin a suite's "
                                       "datasets and/or detectors in code (str or list of str)")
    try:
        config.stash[RUN_KEY] = GroundingRun.create(config)
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    if is_worker(config):
        config.pluginmanager.register(Worker(config), "grounding-worker")
    else:
        config.pluginmanager.register(Controller(config), "grounding-controller")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistHooks(config), "grounding-xdist")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session) -> None:
    try:
        get_run(session.config).check_run_settings()
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config) -> list:
    run = get_run(config)
    settings = run.settings
    datasets = ", ".join(settings.dataset_specs) or "synthetic (embedded default)"
    note = "" if settings.detector_source != "default" else " (default; --detector to choose)"
    lines = [f"grounding: datasets {datasets}; detectors {', '.join(settings.detector_specs)}{note}"]
    if settings.gates:
        lines.append("grounding gates: " + ", ".join(f"{g.label} >= {g.threshold:.1%}" for g in settings.gates)
                     + f"; misses reported as {settings.misses}")
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
        samples = []
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
    """Under xdist with no --dist chosen, distribute by screen (`loadgroup`) rather than by item:
    a detector that caches its per-screen work (OCR, a parse) then parses each screen once."""
    if is_worker(config):
        if config.workerinput.get("grounding_loadgroup"):
            config.option.loadgroup = True  # the worker's own command line may not say so
    elif (config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None)
            and config.getoption("dist", "no") == "no" and not config.getoption("distload", False)):
        config.option.dist = "loadgroup"  # before xdist's own hook would make it "load"
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

    marks: Dict[str, Any] = {}
    params = []
    for sample, group in zip(samples, screen_groups(samples, workers)):
        if group not in marks:
            marks[group] = pytest.mark.xdist_group(group)  # one mark object per group, shared
        params.append(pytest.param(sample, marks=marks[group], id=sample.uid))
    return params


def _spec_id(spec: str) -> str:
    from .datasets import slug

    return slug(spec).replace("_", "-") if ":" in spec else spec


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
    """check(sample, detector): predict, score, record; fails the item on a miss (or xfails it
    when gates decide), reports an error for a sample that could not be scored."""
    run = get_run(request.config)
    benchmark = _benchmark(request)

    def check(sample, detector, name: Optional[str] = None) -> Dict[str, Any]:
        params = getattr(request.node, "callspec", None)
        name = name or (params.params.get("grounding_detector_name") if params else None) \
            or getattr(detector, "name", type(detector).__name__)
        around = None
        if benchmark is not None:
            around = lambda fn: benchmark.pedantic(fn, rounds=1, iterations=1)  # noqa: E731
        result = evaluate(sample, detector, detector_name=name, timeout=run.settings.timeout, around=around)
        record = result.record
        if benchmark is not None:
            benchmark.extra_info.update({k: v for k, v in record.items() if k != "meta"})
        request.node.user_properties.append((RECORD, record))
        outcome = record["outcome"]
        if outcome == metrics.ERROR:
            detail = f"\n\n{result.traceback}" if result.traceback else ""
            raise GroundingSampleError(explain(record) + detail)
        if outcome in (metrics.MISS, metrics.WRONG_FORMAT):
            if run.settings.misses == "xfail":
                pytest.xfail(explain(record))
            pytest.fail(explain(record), pytrace=False)
        return record

    return check


def _benchmark(request):
    """pytest-benchmark's fixture when it can really measure: not under xdist (it switches itself
    off there) and not with --benchmark-skip (which would skip every sample)."""
    config = request.config
    if is_worker(config) or not config.pluginmanager.hasplugin("benchmark"):
        return None
    if config.getoption("benchmark_skip", False) or config.getoption("benchmark_disable", False):
        return None
    return request.getfixturevalue("benchmark")


# -- reports --------------------------------------------------------------------------------------

def _record_of(report) -> Optional[Dict[str, Any]]:
    for entry in getattr(report, "user_properties", ()):  # collect reports have none
        name, value = entry[0], entry[1]
        if name == RECORD:
            return value
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    excinfo = call.excinfo
    if excinfo is not None and excinfo.errisinstance(GroundingSampleError):
        rep.longrepr = str(excinfo.value)
        params = getattr(item, "callspec", None)
        if call.when == "setup" and params and "grounding_sample" in params.params and _record_of(rep) is None:
            # The detector did not load: the sample still counts, as an error.
            record = metrics.error_record(params.params["grounding_sample"],
                                          detector=params.params.get("grounding_detector_name", "?"),
                                          message=str(excinfo.value))
            rep.user_properties.append((RECORD, record))


def pytest_report_teststatus(report, config):
    record = _record_of(report)
    if record is not None and report.failed and record["outcome"] == metrics.ERROR and report.when == "call":
        return "error", "E", "ERROR"
    return None


class Controller:
    """Hooks of the process that sees every result: the xdist controller, or the only process."""

    def __init__(self, config) -> None:
        self.config = config

    @property
    def run(self) -> GroundingRun:
        return get_run(self.config)

    def pytest_collection_finish(self, session) -> None:
        """What each detector really runs on, at the top of the run. Without xdist this process is
        the one that predicts, so the detectors load now (once, as they would anyway); under xdist
        each worker loads its own and the controller holds no model it never uses."""
        config = self.config
        if config.option.collectonly or _distributed(config):
            return
        specs = dict.fromkeys(item.callspec.params["grounding_detector_name"] for item in session.items
                              if "grounding_detector_name" in getattr(getattr(item, "callspec", None), "params", {}))
        writer = config.pluginmanager.get_plugin("terminalreporter")
        for line in _detector_lines(self.run, specs):
            writer.write_line(line)

    def pytest_sessionstart(self, session) -> None:
        # Make the embedded default once, here, so xdist workers find it ready instead of all
        # generating it side by side (the cache's atomic rename would keep them correct, not fast).
        if _distributed(self.config) and not self.run.settings.dataset_specs:
            from .synth import default_dataset_dir

            default_dataset_dir()

    def pytest_runtest_logreport(self, report) -> None:
        record = _record_of(report)
        if record is not None and (report.when == "call" or (report.when == "setup" and report.failed)):
            self.run.add_record(record)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session):
        outcome = yield
        self.run.finish(interrupted=outcome.excinfo is not None or session.shouldstop is not False)
        if self.run.failed_gates:
            session.testsfailed += 1  # pytest-cov's way: the exit status follows, the summary agrees

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        # Outermost wrapper: the summary comes after pytest's failure list and pytest-benchmark's
        # table, right above the final counts, where a person looks.
        result = yield
        self._write_summary(terminalreporter)
        return result

    def _write_summary(self, terminalreporter) -> None:
        run = self.run
        if not run.records:
            return
        if run.summary is None:  # interrupted before the loop's end
            run.finish(interrupted=True)
        terminalreporter.write_sep("=", "grounding summary")
        for line in report.summary_lines(run.summary, datasets=run.dataset_summaries(),
                                         detector_info=run.all_detector_info(),
                                         top_apps=run.settings.top_apps, verdicts=run.verdicts,
                                         partial=run.interrupted):
            failed = line.startswith("gate FAILED")
            terminalreporter.write_line(line, red=failed, bold=failed)
        for target, path in (("JSON report", run.settings.json_path),
                             ("predictions", run.settings.predictions_path)):
            if path is not None:
                terminalreporter.write_line(f"grounding {target}: {path}")

    def pytest_sessionfinish(self, session) -> None:
        run = self.run
        if run.records and run.summary is None:
            run.finish(interrupted=True)
        run.write_report()
        run.pool.close()


class Worker:
    """Hooks of an xdist worker: hand the loaded detectors' descriptions to the controller."""

    def __init__(self, config) -> None:
        self.config = config

    def pytest_sessionfinish(self, session) -> None:
        run = get_run(self.config)
        self.config.workeroutput["grounding_detectors"] = run.pool.info
        run.pool.close()


class XdistHooks:
    def __init__(self, config) -> None:
        self.config = config

    def pytest_testnodedown(self, node, error) -> None:
        info = getattr(node, "workeroutput", {}).get("grounding_detectors") or {}
        get_run(self.config).detector_info.update(info)
