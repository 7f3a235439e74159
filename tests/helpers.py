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
# Each scenario serially and under xdist; the xdist twin is slow (the fast tier keeps the serial run).
XDIST = pytest.mark.parametrize(
    "workers", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.slow)]
)
SUITE = REPO / "suites" / "test_grounding.py"


def make_project(pytester, conftest=None, ini=""):
    """A pytester folder that runs the benchmark suite as a user's project does: the suite file, an
    optional conftest (test detectors, formats, presets) and an ini without the cache provider."""
    if conftest is not None:
        pytester.makeconftest(conftest)
    pytester.makepyfile(test_suite=SUITE.read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n" + ini)
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


class LoopbackServer(FakeServer):
    """An OpenAI-compatible stand-in on 127.0.0.1 (the package's, detectors/fake_server.py, which
    `python -m pytest_grounding fake-server` serves): `reply(handler)` returns (status, payload)
    for each GET or POST (payload: a JSON-able object, or a str sent as it is). `url` ends in /v1.
    The served detectors' probe (served_checks.py) is answered with an empty completion and never
    reaches `reply`, unless `answer_probes=False` (the probe's own tests)."""

    def __init__(self, reply, answer_probes=True):
        super().__init__(reply, answer_probes=answer_probes)
