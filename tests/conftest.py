import contextlib
import functools
import importlib
import importlib.util
import os
import pkgutil
import sys
import sysconfig
from pathlib import Path

import numpy  # noqa: F401  (imported once here: pytester runs in-process and numpy cannot load twice)
import pytest
from _pytest import pytester as _pytester

import pytest_grounding
from helpers import FIXTURES, FOREIGN, make_project
from pytest_grounding.core.cache import cache_root
from pytest_grounding.render import run_folder

# The test modules' rewritten code is cached (pytest writes it beside them in __pycache__) even where
# the environment says not to write bytecode (PYTHONDONTWRITEBYTECODE, set in many container images,
# this project's machines included): rewriting the suite's asserts anew took 11 s of each process's
# 12 s of collection.
sys.dont_write_bytecode = False

# pytester's in-process runs restore sys.modules afterwards, so a module first imported inside one
# (the package's lazily imported modules, httpx) is imported anew by the next, and a thread or a
# cache of the earlier run can hold classes of another copy (an exception that no longer matches
# its `except`). Every module of the package, and the HTTP client, is imported once, here; so is
# hypothesis, whose pytest plugin imports it at every run's end (a tenth of the fast tier's time,
# imported anew in each in-process run).
for _module in pkgutil.walk_packages(pytest_grounding.__path__, "pytest_grounding."):
    if _module.name.startswith("pytest_grounding.inspect"):
        continue  # inspect_ai's task (2 s to import): only its own tests use it, and no run imports it
    with contextlib.suppress(ImportError):  # an extra this install lacks (the core-only CI run)
        importlib.import_module(_module.name)
for _name in ("httpx", "httpcore", "hypothesis"):
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name)
# What pytester's in-process runs import from the libraries (site-packages, the standard library,
# this package) stays imported after them: a heavy library imported first inside one run (the `ocr`
# engine's omegaconf, transformers' torch.distributed) would otherwise be imported anew by the next,
# beside the first copy's objects (a RecursionError, "Only a single TORCH_LIBRARY"). Which test first
# imports what depends on how xdist shares the tests, so every library is kept, not a list of them; a
# run's own modules (its conftest and test files, anywhere else) are still forgotten. pytester takes
# its snapshots in one private method (pytest 7-9); where it is gone, pytester's own snapshot is kept.
_LIBRARIES = tuple(
    str(Path(folder).resolve())
    for folder in {
        *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
        *pytest_grounding.__path__,
    }
)


@functools.cache
def _in_libraries(where: str) -> bool:  # cached: a snapshot's restore asks for every module
    return str(Path(where).resolve()).startswith(_LIBRARIES)


def _is_library(name: str) -> bool:
    module = sys.modules.get(name)
    where = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", None) or ()), None)
    return isinstance(where, str) and _in_libraries(where)


if hasattr(_pytester.Pytester, "_Pytester__take_sys_modules_snapshot"):
    _pytester.Pytester._Pytester__take_sys_modules_snapshot = lambda self: _pytester.SysModulesSnapshot(
        preserve=_is_library
    )

pytest_plugins = ["pytester"]

# The suite runs in fresh `python -m pytest` processes in many tests (exit codes, signals, a user's
# project): there, two plugins of this environment's other packages cost more than the run itself
# (anyio's imports trio at start-up, hypothesis's imports hypothesis at the end). pytester's own runs
# drop PYTEST_ADDOPTS (a project of make_project's names them in its ini); the processes the tests
# start themselves inherit this.
os.environ["PYTEST_ADDOPTS"] = f"{os.environ.get('PYTEST_ADDOPTS', '')} {FOREIGN}".strip()

# The tiers (markers registered in pyproject.toml, described in CONTRIBUTING.md): the fast tier
# (`pytest tests/ -m "not slow" -n 2`) is every test not marked `slow`; `slow` marks what it leaves
# out: the xdist twins (helpers.XDIST), the parity runs, the documented commands, real models on real
# screens, tiny checkpoints on torch, and any test that takes 1 s or more on a quiet machine. `engines`
# (the real serving engines), `browser` (headless chromium) and `desktop` (the X11/terminal drivers) name the
# tests that need a program outside Python; each of them is slow too (added here at collection).
TIER_MARKERS = ("engines", "browser", "desktop", "parity")

# The fast tier's duration guard: an unmarked test that runs 1 s or more is listed at the end of
# the fast tier's run ("slow tests in the fast tier"), never failed: a timed test would turn CI red
# on a loaded machine. The limit is for an idle machine: on a loaded one (more runnable processes
# than cores) it grows by the load's ratio.
FAST_TIER_LIMIT_S = 1.0  # 2,100 tests in 2 minutes on 2 cores: a tenth of a second on average


def _fast_tier_limit() -> float:
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        load = 1.0
    return FAST_TIER_LIMIT_S * max(1.0, load)


def _fast_tier(config) -> bool:
    return "not slow" in (config.getoption("markexpr", "") or "")


def pytest_configure(config):
    if getattr(config.option, "dist", None) == "load":  # -n N: the tests' own sharing (ENGINES_GROUP)
        config.option.dist = "loadgroup"
    # pytest's check for exceptions raised in __del__ runs five full garbage collections when a session
    # ends: in these processes' heaps (torch, the package, thousands of tests' objects) that took seconds
    # at every xdist worker's end. One still finds what the session left behind.
    with contextlib.suppress(ImportError):
        from _pytest.unraisableexception import gc_collect_iterations_key

        config.stash[gc_collect_iterations_key] = 1


# How `-n 2` shares the tests (measured on the slow tier: 23.5 min with xdist's `load`, whose chunks of
# consecutive tests left one worker with the long ones and sent the real-engine tests to both workers,
# one waiting on the other's engine lock). The `engines` tests are one unit of work (`loadgroup`: one
# worker runs them in order, one server at a time, as their lock wants); the modules whose tests take
# longest come next, so that they start early; every other test goes to whichever worker is free.
ENGINES_GROUP = "engines"
LONG_FIRST = (  # longest first: each module's tests took tens of seconds to minutes on 2 cores
    "test_published_figures.py",
    "test_xdist_real_screens.py",
    "test_docs.py",
    "test_pointer_model.py",
    "test_ocr_plugin.py",
    "test_hub.py",
    "test_ocr.py",
    "test_served_pipeline.py",
)


def _run_order(item) -> int:
    if item.get_closest_marker("engines") is not None:
        return 0
    name = item.path.name
    return 1 + LONG_FIRST.index(name) if name in LONG_FIRST else 1 + len(LONG_FIRST)


@pytest.hookimpl(tryfirst=True)  # before -m deselects: `-m "not slow"` leaves these out; before xdist names the group
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("slow") is None and any(item.get_closest_marker(m) for m in TIER_MARKERS):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("engines") is not None:
            item.add_marker(pytest.mark.xdist_group(ENGINES_GROUP))
    items.sort(key=_run_order)  # stable: each module's own order is kept


_SLOW_IN_FAST_TIER: list[tuple[str, float, float]] = []


def pytest_runtest_logreport(report):
    # On the controller (xdist workers' reports included): the call phase of a passed, unmarked test.
    if (
        report.when == "call"
        and report.passed
        and report.duration >= FAST_TIER_LIMIT_S
        and "slow" not in report.keywords
    ):
        limit = _fast_tier_limit()
        if report.duration >= limit:
            _SLOW_IN_FAST_TIER.append((report.nodeid, report.duration, limit))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _fast_tier(config) or not _SLOW_IN_FAST_TIER:
        return
    terminalreporter.section("slow tests in the fast tier")
    for nodeid, took, limit in sorted(_SLOW_IN_FAST_TIER, key=lambda row: -row[1]):
        terminalreporter.write_line(f"{nodeid}: {took:.1f} s (limit {limit:.0f} s at this load): mark it slow?")


# Every run keeps its report (render/run_folder.py) in ./grounding-runs unless told otherwise: the
# runs this test session starts (in-process, and `pytest suites/` in a subprocess in the repository)
# keep nothing, so the suite leaves nothing behind and writes no page it does not look at. The run
# folder's own tests (test_run_folder.py) switch it back on.
os.environ[run_folder.ENV_RUNS_DIR] = "off"


# Detectors for harness tests, registered through the plugin's own hook. `colour` is a real
# (if simple) detector: it finds the named colour's pixels; it never sees the target box.
PROJECT_CONFTEST = """
import time
import numpy as np
from pytest_grounding.core.types import Box, Prediction

COLOURS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (40, 70, 220)}


class Colour:
    name = "colour"

    def predict(self, query):
        word = next((c for c in COLOURS if c in query.instruction.lower()), None)
        if word is None:
            return Prediction.no_answer(raw="I see no such colour")
        pixels = np.asarray(query.image).astype(int)
        mask = np.all(np.abs(pixels - COLOURS[word]) < 12, axis=-1)
        ys, xs = np.nonzero(mask)
        return Prediction(box=Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1),
                          raw=word, meta={"pixels": np.int64(mask.sum())})

    def locate(self, query):
        # The element-at-click task: the extent of the colour under the point (the target box unseen).
        pixels = np.asarray(query.image).astype(int)
        x, y = (min(int(v), limit - 1) for v, limit in zip(query.point, (pixels.shape[1], pixels.shape[0])))
        if pixels[y, x].sum() > 700:  # white background: nothing there
            return Prediction.no_answer(raw="background")
        mask = np.all(np.abs(pixels - pixels[y, x]) < 12, axis=-1)
        ys, xs = np.nonzero(mask)
        return Prediction(box=Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1))


class Boom:
    name = "boom"

    def predict(self, query):
        if "green" in query.instruction:
            raise RuntimeError("model backend unavailable")
        return Colour().predict(query)


class Sleepy:
    name = "sleepy"

    def predict(self, query):
        if "blue" in query.instruction:
            time.sleep(30)
        return Colour().predict(query)


class Garbage:
    name = "garbage"

    def predict(self, query):
        return "click somewhere nice"


class Interrupting:
    name = "interrupting"
    calls = 0

    def predict(self, query):
        Interrupting.calls += 1
        if Interrupting.calls == 3:
            raise KeyboardInterrupt
        return Colour().predict(query)


def broken_factory():
    raise OSError("weights not found at /nowhere/model.onnx")


def pytest_grounding_register_detectors(registry):
    registry.register("colour", Colour)
    registry.register("boom", Boom)
    registry.register("sleepy", Sleepy)
    registry.register("garbage", Garbage)
    registry.register("interrupting", Interrupting)
    registry.register("broken", broken_factory)
"""


# The project's cache as this session found it, before any pytester moves HOME.
PROJECT_CACHE = cache_root()


@pytest.fixture(scope="session")
def shared_default_set():
    """The embedded synthetic default (300 screens), generated once for the test session (and kept
    for the next one) in the project's cache ($PYTEST_GROUNDING_CACHE, else ~/.cache/pytest-grounding,
    read before pytester moves HOME). xdist workers take a lock, so one draws it and the other waits;
    the package's own rename into place keeps a half-written set from ever being seen."""
    import fcntl

    from pytest_grounding.datasets.synth import default_dataset_dir

    root = PROJECT_CACHE
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".tests-synthetic.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return default_dataset_dir(root)


@pytest.fixture
def pytester(pytester, shared_default_set):
    """pytester with its HOME's project cache holding a link to the session's synthetic default: a
    run on the default set reads it instead of drawing 300 screens again (about 25 s). The rest of
    that cache stays the test's own; a test that sets $PYTEST_GROUNDING_CACHE (the first use,
    test_first_hour.py) gets its own folder and draws the set there."""
    cache = pytester.path / ".cache" / "pytest-grounding"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / shared_default_set.name).symlink_to(shared_default_set, target_is_directory=True)
    parseconfigure = pytester.parseconfigure

    def quick_parseconfigure(*args):
        # As pytester's own inline_run does: no five full garbage collections when the config ends
        # (pytest's unraisable-exception check; 1 to 4 s each in a heap holding torch).
        config = parseconfigure(*args)
        with contextlib.suppress(ImportError):
            from _pytest.unraisableexception import gc_collect_iterations_key

            config.stash[gc_collect_iterations_key] = 0
        return config

    pytester.parseconfigure = quick_parseconfigure  # type: ignore[method-assign]
    return pytester


@pytest.fixture
def project(pytester):
    """A pytester folder holding our suite and the test detectors."""
    make_project(pytester, conftest=PROJECT_CONFTEST)
    return pytester


@pytest.fixture
def configured(pytester):
    """configured(*args): a run's config with the plugin's plan and sessions open, no session run."""
    return pytester.parseconfigure


@pytest.fixture
def sessions(pytester):
    """The config of a `center` run on fixtures/mini, its run settings checked (datasets loaded)."""
    from pytest_grounding.plugin.sessions import startup_of

    config = pytester.parseconfigure(f"--dataset={FIXTURES / 'mini'}", "--detector=center")
    startup_of(config).check_run_settings(lambda line: None)
    return config
