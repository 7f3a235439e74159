"""The pytest plugin's entry point, kept thin: options, the hooks pytest calls, and the fixtures.
Each process's work is elsewhere: `controller.py` (the process that sees every result),
`worker.py` (an xdist worker), `wire.py` (what crosses between them), `items.py` (collection),
`fixtures.py` (one sample's check), `state.py` (the run's state in config.stash)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..analysis import baseline
from ..core.record import Outcome, Task
from ..core.safetext import terminal_text
from ..detectors import served_session
from ..evaluate.scoring import error_record
from . import baseline_hooks, hookspecs, perturb_state, pipeline, process_exit
from . import items as collection
from .controller import Controller, XdistHooks, distributed
from .fixtures import GroundingExpectedMiss, GroundingMiss, GroundingSampleError, grounding_check, grounding_detector
from .options import add_options
from .state import RUN_KEY, GroundingRun, SettingError, get_run, is_worker
from .wire import RECORD, WorkerInput, record_of
from .worker import Worker

__all__ = ["grounding_check", "grounding_detector"]  # fixtures: pytest finds them in this module

MISSED = "missed"  # the terminal's word for a miss: still a failed item, listed once, compactly


# -- set-up ---------------------------------------------------------------------------------------


def pytest_addhooks(pluginmanager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser) -> None:
    add_options(parser)


def pytest_configure(config) -> None:
    process_exit.session_opened()
    config.addinivalue_line(
        "markers",
        "grounding(dataset=None, detector=None): pin a suite's datasets and/or detectors in code (str or list of str)",
    )
    try:
        config.stash[RUN_KEY] = GroundingRun.create(config)
        perturb_state.configure(config, get_run(config).settings.perturb)
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    if is_worker(config):
        told = WorkerInput.received(config.workerinput)
        served_session.adopt(told.served)  # the controller's servers and probes
        get_run(config).done_keys = frozenset(told.done)
        if told.baseline is not None:  # the controller read and checked the baseline; workers judge with it
            get_run(config).expected = baseline.expectations_from(told.baseline)
            get_run(config).baseline_loaded = True
        config.pluginmanager.register(Worker(config), "grounding-worker")
    else:
        config.pluginmanager.register(Controller(config), "grounding-controller")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistHooks(config), "grounding-xdist")
    pipeline.register(config, get_run(config), worker=is_worker(config), distributed=distributed(config))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None:
        run.let_go_of_predictions()
    served_session.close()  # servers the harness started stop here: after Ctrl-C and INTERNALERROR too
    process_exit.session_closed(scored=run is not None and bool(run.records or run.pool.info))


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
            run.hold_predictions(config.invocation_params.args)  # before it is read to resume
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
    if settings.task == Task.LOCATE:
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
    if settings.shard is not None:
        lines.append(f"grounding shard: {settings.shard.label} ({settings.shard.source})")
    if settings.baseline_path is not None:
        lines.append(f"grounding baseline: {settings.baseline_path} ({baseline_hooks.mode(run)})")
    lines += [f"grounding note: {text}" for text in run.notes]
    return lines


# -- collection -----------------------------------------------------------------------------------


def pytest_generate_tests(metafunc) -> None:
    collection.parametrize(metafunc)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config):
    """`--dist loadgroup` sends all the samples of a screen to one worker, so a detector's per-screen
    cache (OCR, a parse) reads each screen once. Not the default: xdist's loadgroup scheduler puts
    an item whose worker crashed back in the queue, and a sample that kills its worker then kills
    every replacement until --max-worker-restart is spent. The default `load` hands out runs of
    consecutive items, and a screen's samples are consecutive, so most screens stay whole."""
    if is_worker(config) and WorkerInput.received(config.workerinput).loadgroup:
        config.option.loadgroup = True  # the worker's own command line may not say so
    return (yield)


@pytest.hookimpl(trylast=True)  # after xdist's own hook, which names the groups
def pytest_collection_modifyitems(session, config, items) -> None:
    """--dist loadgroup's screen groups named; --grounding-resume's samples deselected."""
    collection.deselect(config, items)


# -- reports --------------------------------------------------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    excinfo = call.excinfo
    if (
        excinfo is not None
        and excinfo.errisinstance((GroundingMiss, GroundingExpectedMiss))
        and not item.config.getoption("fulltrace")
    ):
        # A miss's report is its message alone; left whole, pytest walks every frame of the
        # traceback (a stat per frame) to find what to hide: a third of a served item's time.
        excinfo.traceback = excinfo.traceback[-1:]
    outcome = yield
    rep = outcome.get_result()
    if call.when == "teardown":
        # The teardown report's properties are what --junitxml writes: the flat ones, not the record
        # (read from the call report, and a dict's repr in the XML helps nobody).
        rep.user_properties = [p for p in rep.user_properties if p[0] != RECORD]
    if excinfo is not None and excinfo.errisinstance(GroundingSampleError):
        rep.longrepr = terminal_text(str(excinfo.value))
        params = collection.item_params(item)
        if call.when == "setup" and "grounding_sample" in params and record_of(rep) is None:
            # The detector did not load: the sample still counts, as an error.
            sample = params["grounding_sample"]
            run = get_run(item.config)
            record = error_record(
                sample,
                detector=params.get("grounding_detector_name", "?"),
                message=str(excinfo.value),
                task=run.settings.task,
                fingerprint=run.fingerprint_of(sample.dataset),
            )
            rep.user_properties.append((RECORD, record))


def pytest_report_teststatus(report, config):
    record = record_of(report)
    if record is None or not report.failed:
        return None
    if record.get("baseline") == baseline.REGRESSION and report.when == "call":
        return "failed", "F", "REGRESSION"
    if record["outcome"] == Outcome.ERROR and report.when in ("call", "???"):
        return "error", "E", "ERROR"
    if record["outcome"] in (Outcome.MISS, Outcome.WRONG_FORMAT) and report.when == "call":
        # Still a failed item (exit status, --lf, -x, junitxml all see a failure); the terminal
        # lists misses once, one line each, in the grounding summary instead of a block each.
        return MISSED, "F", "MISS"
    return None
