"""The pytest plugin's entry point, kept thin: options, the hooks pytest calls, and the fixtures.
Each process's work is elsewhere: `controller.py` (the process that sees every result),
`worker.py` (an xdist worker), `wire.py` (what crosses between them), `items.py` (collection),
`fixtures.py` (one sample's check), `sessions.py` (each process's part of the run: the plan,
the worker session, the controller session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..analysis import baseline
from ..core.record import Outcome, Task
from ..core.safetext import terminal_line, terminal_text
from ..datasets import gc_paused
from ..detectors import served_session
from ..render.baseline import mode as baseline_mode
from . import items as collection
from .common import hookspecs
from .common.halt import Halt
from .common.settings import SettingError, add_options
from .common.wire import RECORD, WorkerInput, record_of
from .compat import benchmark_compat, process_exit
from .controller.hooks import Controller, XdistHooks
from .fixtures import (
    GroundingExpectedMiss,
    GroundingMiss,
    GroundingSampleError,
    grounding_check,
    grounding_detector,
)
from .sessions import PLAN_KEY, distributed, is_worker, local_controller, local_worker, open_sessions, plan_of
from .worker import batch_hooks, budget_hooks, halt_hooks, prefetch
from .worker.hooks import Worker

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
        plan = open_sessions(config)
        batch_hooks.register(config, plan, local_worker(config), local_controller(config))
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    worker, controller = local_worker(config), local_controller(config)
    if is_worker(config):
        told = WorkerInput.received(config.workerinput)
        served_session.adopt(told.served)  # the controller's servers and probes
        assert worker is not None
        worker.done_keys = frozenset(told.done)
        worker.startup_requests = told.startup_requests  # spent of the budget before any worker
        worker.startup_seconds = told.startup_seconds
        worker.halt = Halt(told.halt)  # the controller's frame check, if still in flight: its stop
        if told.baseline is not None:  # the controller read and checked the baseline; workers judge with it
            worker.expect(baseline.expectations_from(told.baseline))
        config.pluginmanager.register(Worker(config, worker), "grounding-worker")
    else:
        assert controller is not None
        config.pluginmanager.register(Controller(config, controller, worker), "grounding-controller")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistHooks(config, controller), "grounding-xdist")
    if worker is not None:  # prefetching where predictions run; the only process keeps what an interruption left
        prefetch.register(config, worker, controller.keep_unscored if controller is not None else None)
        halt_hooks.register(config, worker)  # a frame check's stop, come while samples run
    elif controller is not None:  # an xdist controller keeps each worker's queue deep enough for its window
        from .controller.scheduling import SchedulerHooks

        config.pluginmanager.register(SchedulerHooks(config, controller.plan), "grounding-prefetch-scheduler")
    budget_hooks.register(config, worker)
    if not is_worker(config):
        benchmark_compat.register(config)  # its header line only where it measures for someone


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config) -> None:
    controller, worker = local_controller(config), local_worker(config)
    if controller is not None:
        controller.predictions.let_go()
        controller.startup.halt.close()
        controller.close_live()  # a run stopped before its first sample (a usage error) leaves no running page
    served_session.close()  # servers the harness started stop here: after Ctrl-C and INTERNALERROR too
    scored = bool(controller is not None and controller.records) or bool(worker is not None and worker.pool.loaded)
    process_exit.session_closed(scored=PLAN_KEY in config.stash and scored)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session) -> None:
    config = session.config
    writer = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:  # a preflight's progress (a server loading), on the controller's terminal
        if writer is not None and not is_worker(config):
            writer.write_line(terminal_line(line))

    def on_generate(folder: Path) -> None:
        say(f"grounding: generating the embedded synthetic benchmark into {folder} (first use; a few seconds)")

    controller = local_controller(config)
    if controller is not None:  # the running page from the start: before a model's server or weights load
        controller.begin_live()
    try:
        if controller is not None:
            controller.startup.check_run_settings(say, on_generate=on_generate)
            controller.prepare(config.invocation_params.args)
            worker = local_worker(config)
            if worker is not None:  # the only process: it predicts too
                worker.startup_requests = controller.startup.requests
                worker.startup_seconds = controller.startup.seconds
                worker.done_keys = controller.resumed.done_keys
                expected = controller.baseline.expectations()
                if expected is not None:
                    worker.expect(baseline.expectations_from(expected))
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config) -> list:
    plan = plan_of(config)
    controller = local_controller(config)
    settings = plan.settings
    datasets = ", ".join(settings.selection.dataset_specs) or "synthetic (embedded default)"
    note = "" if settings.selection.detector_source != "default" else " (default; --detector to choose)"
    labels = settings.selection.detector_labels
    named = [f"{labels[s]} = {s}" if s in labels else s for s in settings.selection.detector_specs]
    lines = [f"grounding: datasets {datasets}; detectors {', '.join(named)}{note}"]
    if settings.selection.task == Task.LOCATE:
        lines.append(
            f"grounding task: locate (element at the recorded click; hit at IoU >= {settings.scoring.iou_threshold:g})"
        )
    if settings.verdict.gates:
        lines.append(
            "grounding gates: "
            + ", ".join(f"{g.label} >= {g.threshold:.1%}" for g in settings.verdict.gates)
            + f"; misses reported as {settings.verdict.misses}"
        )
    resumed = len(controller.resumed.records) if controller is not None else 0
    if resumed:
        lines.append(
            f"grounding: resuming {settings.outputs.predictions_path}: {resumed} samples done before "
            "are kept and not run again"
        )
    if settings.selection.budget is not None:
        shared = " (under -n each worker may spend 1/N of requests, tokens and cost)" if distributed(config) else ""
        lines.append(f"grounding budget: {settings.selection.budget.describe()}{shared}")
    if settings.selection.shard is not None:
        lines.append(f"grounding {shard_line(plan)} ({settings.selection.shard.source})")
    if settings.verdict.baseline_path is not None:
        loaded = controller is not None and controller.baseline.loaded
        how = baseline_mode(
            update=settings.verdict.update_baseline,
            loaded=loaded,
            tolerances=settings.verdict.tolerances,
            max_slowdown=settings.verdict.max_slowdown,
        )
        lines.append(f"grounding baseline: {settings.verdict.baseline_path} ({how})")
    notes = controller.startup.notes if controller is not None else ()
    lines += [f"grounding note: {text}" for text in notes]
    return lines


def shard_line(plan) -> str:
    """`shard 1/2: 150 of 300 samples` (the samples this shard scores of the run's), or `shard
    1/2` where the controller does not hold the samples (a suite pins its datasets in code)."""
    from ..datasets import sharding

    shard = plan.settings.selection.shard
    samples = plan.samples_in_order()
    if not samples or shard.count > len(samples):
        return f"shard {shard.label}"
    return f"shard {shard.label}: {len(sharding.take(samples, shard))} of {len(samples)} samples"


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


@pytest.hookimpl(hookwrapper=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """A grounding test function becomes one item per sample and detector (20,000 and more), each
    with its parameters, fixtures and marks: the cyclic garbage collector would walk the growing
    heap of samples and items again and again while they are made. Paused meanwhile, as the
    dataset loaders do (datasets.gc_paused); what is garbage then is collected after."""
    with gc_paused():
        yield


@pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: around the terminal's summary too
def pytest_sessionfinish(session):
    """The summary, the reports and other plugins' last work (imports among them) allocate while
    the run's samples, items and records are all alive: each full collection then walks all of
    them. Paused meanwhile; the end of the process collects once (process_exit)."""
    with gc_paused():
        yield


@pytest.hookimpl(trylast=True)  # after xdist's own hook, which names the groups
def pytest_collection_modifyitems(session, config, items) -> None:
    """--dist loadgroup's screen groups named; --grounding-resume's samples deselected."""
    if any("grounding_sample" in collection.item_params(item) for item in items):
        process_exit.items_made()  # --collect-only of grounding items ends as a run does
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
            detector = params.get("grounding_detector_name", "?")
            record = plan_of(item.config).error_record(params["grounding_sample"], detector, str(excinfo.value))
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
