import contextlib
import importlib
import importlib.util
import os
import pkgutil

import numpy  # noqa: F401  (imported once here: pytester runs in-process and numpy cannot load twice)
import pytest

import pytest_grounding
from helpers import FIXTURES, make_project
from pytest_grounding.render import run_folder

# pytester's in-process runs restore sys.modules afterwards, so a module first imported inside one
# (the package's lazily imported modules, httpx) is imported anew by the next, and a thread or a
# cache of the earlier run can hold classes of another copy (an exception that no longer matches
# its `except`). Every module of the package, and the HTTP client, is imported once, here.
for _module in pkgutil.walk_packages(pytest_grounding.__path__, "pytest_grounding."):
    with contextlib.suppress(ImportError):  # an extra this install lacks (the core-only CI run)
        importlib.import_module(_module.name)
for _name in ("httpx", "httpcore"):
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name)

pytest_plugins = ["pytester"]

# The fast tier (`pytest tests/ -m "not slow" -n 2`) leaves out what is marked slow on the tests
# themselves: every scenario's xdist twin (helpers.XDIST), the documented commands, real models on
# real screens, tiny checkpoints on torch, the terminal/X11 drivers, and any test that takes 10 s or
# more. In the fast tier such an unmarked test fails, naming itself, so a slow test never rejoins it.
# The limit is for an idle machine: on a loaded one (more runnable processes than cores) it grows by
# the load's ratio, so another job on the machine does not fail a test.
FAST_TIER_LIMIT_S = 10.0


def _fast_tier_limit() -> float:
    import os

    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        load = 1.0
    return FAST_TIER_LIMIT_S * max(1.0, load)


def _fast_tier(config) -> bool:
    return "not slow" in (config.getoption("markexpr", "") or "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (
        call.when == "call"
        and report.passed
        and call.duration >= FAST_TIER_LIMIT_S
        and _fast_tier(item.config)
        and item.get_closest_marker("slow") is None
        and call.duration >= (limit := _fast_tier_limit())
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} took {call.duration:.1f} s in the fast tier (limit {limit:.0f} s at this load): "
            "mark it @pytest.mark.slow"
        )


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
