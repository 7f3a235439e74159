"""Shared constants, readers and a loopback HTTP server for the tests."""

import base64
import importlib.util
import io
import json
from pathlib import Path

import pytest

from pytest_grounding.detectors.fake_server import ENGINE_PATHS, PROBE_REPLY, FakeServer  # noqa: F401

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SHARED_DATA = REPO.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"{SHARED_DATA} is not here (a user's machine)")

needs_openai = pytest.mark.skipif(
    importlib.util.find_spec("httpx") is None, reason="the openai extra (httpx) is not installed"
)
# Each scenario serially and under xdist, for the scenarios whose path distribution changes: the
# wire and the controller's aggregation, crashes and rescheduling, shards, resume, budgets shared
# among workers, baselines and served sessions sent to workers, prefetch. The xdist twin is slow (the
# fast tier keeps the serial run).
XDIST = pytest.mark.parametrize(
    "workers", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.slow)]
)
# The other scenarios run serially only (the same `workers` argument, so a scenario can move back to
# XDIST in one word); each feature family's whole document is compared serial against `-n 2` once,
# in tests/test_parity.py. A usage error raised before any worker starts needs no twin.
SERIAL = pytest.mark.parametrize("workers", [pytest.param([], id="serial")])
SUITE = REPO / "suites" / "test_grounding.py"


# For tests whose stand-in servers count requests or script their answers in order: the frame check's
# calibration requests before the run (issue 46) would change what they count. test_frame_check.py
# tests the check itself, and the other served tests keep it on (the default).
NO_FRAME_CHECK = "grounding_frame_check = off\n"


# Two plugins of this environment's other packages (anyio's imports trio at start-up, hypothesis's
# imports hypothesis at the end): a third of a fresh pytest process's start-up, in no test's interest.
FOREIGN = "-p no:anyio -p no:hypothesispytest"


def make_project(pytester, conftest=None, ini=""):
    """A pytester folder that runs the benchmark suite as a user's project does: the suite file, an
    optional conftest (test detectors, formats, presets) and an ini without the cache provider."""
    if conftest is not None:
        pytester.makeconftest(conftest)
    pytester.makepyfile(test_suite=SUITE.read_text())
    pytester.makeini(f"[pytest]\naddopts = -p no:cacheprovider {FOREIGN}\n" + ini)
    return pytester


def read_json(path):
    return json.loads(Path(path).read_text())


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def assert_counts(result, **expected):
    """Like pytester's assert_outcomes, knowing the plugin's `missed` (a miss: a failed item that
    the terminal counts under its own word)."""
    got = result.parseoutcomes()
    keys = {"passed", "failed", "missed", "errors", "xfailed", "skipped", "deselected"} | set(expected)
    assert {k: got.get(k, 0) for k in keys} == {k: expected.get(k, 0) for k in keys}, result.stdout.str()[-3000:]


def json_body(handler):
    """The JSON body of a request the loopback server received."""
    return json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))


def decode_data_url(url):
    """The image of a `data:image/png;base64,...` URL, as the served detectors send it."""
    from PIL import Image

    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")


def image_prompt_tokens(body, text_tokens=300, factor=28, keep=None):
    """Prompt tokens as a Qwen-VL server counts them: `text_tokens` and the received image's
    merged patches (`keep(size)`: the size the server resizes it to first, else as sent)."""
    content = body["messages"][-1]["content"]
    url = next(part["image_url"]["url"] for part in content if part["type"] == "image_url")
    width, height = decode_data_url(url).size
    if keep is not None:
        width, height = keep((width, height))
    return text_tokens + (width // factor) * (height // factor)


class LoopbackServer(FakeServer):
    """An OpenAI-compatible stand-in on 127.0.0.1 (the package's, detectors/fake_server.py, which
    `python -m pytest_grounding fake-server` serves): `reply(handler)` returns (status, payload)
    for each GET or POST (payload: a JSON-able object, or a str sent as it is). `url` ends in /v1.
    The served detectors' probe (served_checks.py) is answered with an empty completion and never
    reaches `reply`, unless `answer_probes=False` (the probe's own tests)."""

    def __init__(self, reply, answer_probes=True):
        super().__init__(reply, answer_probes=answer_probes)


def pointer_model(preset):
    """The tiny pointer model `bash ci/engines/install.sh pointer` trained for `preset` (ci/engines/
    train_pointer.py; its cache folder and stamp from `--stamp`), else a skip naming the command, a
    failure under CI=true (CI's engine install trains it)."""
    import os
    import subprocess
    import sys

    engines = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")
    script = REPO / "ci" / "engines" / "train_pointer.py"
    stamp = subprocess.run(
        [sys.executable, str(script), "--stamp", "--preset", preset], capture_output=True, text=True, check=True
    ).stdout.strip()
    folder = engines / stamp.split()[0]
    marked = folder / ".stamp"
    if marked.is_file() and marked.read_text(encoding="utf-8").strip() == stamp and (folder / "config.json").is_file():
        return folder
    message = f"no pointer model for {preset} ({stamp}) in {folder}: bash ci/engines/install.sh pointer"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def engine_script(stem, module=None):
    """ci/engines/STEM.py as a module named `module` (default STEM), loaded once: registered before
    it runs, since its dataclasses look their module up."""
    import sys

    name = module or stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "ci" / "engines" / f"{stem}.py")
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded
