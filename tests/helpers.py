"""Shared constants, readers and a loopback HTTP server for the tests."""

import base64
import contextlib
import importlib.util
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytest_grounding.detectors.served_engine import ENGINE_PATHS  # asked at the server's root

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


def image_prompt_tokens(body, text_tokens=300, factor=28, keep=None):
    """Prompt tokens as a Qwen-VL server counts them: `text_tokens` and the received image's
    merged patches (`keep(size)`: the size the server resizes it to first, else as sent)."""
    content = body["messages"][-1]["content"]
    url = next(part["image_url"]["url"] for part in content if part["type"] == "image_url")
    width, height = decode_data_url(url).size
    if keep is not None:
        width, height = keep((width, height))
    return text_tokens + (width // factor) * (height // factor)


PROBE_REPLY = {"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}


class LoopbackServer:
    """An OpenAI-compatible stand-in on 127.0.0.1: `reply(handler)` returns (status, payload) for
    each GET or POST (payload: a JSON-able object, or a str sent as it is). `url` ends in /v1.
    The served detectors' probe (served_checks.py) is answered here with an empty completion and
    never reaches `reply`, unless `answer_probes=False` (the probe's own tests)."""

    def __init__(self, reply, answer_probes=True):
        from pytest_grounding.detectors.served_checks import PROBE_INSTRUCTION

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                if answer_probes and self.path in ENGINE_PATHS:  # the engine record's questions: not an OpenAI path
                    return self._send(404, {"detail": "Not Found"})
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    data = self.rfile.read(length)
                    self.rfile = io.BytesIO(data)  # `reply` reads it again
                    if answer_probes and PROBE_INSTRUCTION.encode() in data:
                        return self._send(200, PROBE_REPLY)
                status, payload = reply(self)
                self._send(status, payload)

            def _send(self, status, payload):
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (a timeout test)
                    self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
