"""The `openai` detector against a small OpenAI-compatible server the test starts on 127.0.0.1:
right answers, 5xx then success, a timeout, garbage, a refused connection; what the server
received (model, key, image, prompt, decoding) and that the key is in no output."""

import json
import socket
import threading
import time

import numpy as np
import pytest

from helpers import (
    FIXTURES,
    NO_FRAME_CHECK,
    SERIAL,
    XDIST,
    LoopbackServer,
    decode_data_url,
    make_project,
    read_json,
    read_jsonl,
)

pytest.importorskip("ui_tars")

from pytest_grounding.detectors.served import OpenAIDetector, ServerError, public_url, split_urls

MINI = str(FIXTURES / "mini")
# these models count their requests: no frame check (its 12 requests; tests/test_frame_check.py tests it)
FEW = ["-k", "m01 or m02 or m03", "--grounding-frame-check=off"]
KEY = "sk-test-Zq81-NEVER-PRINT"
COLOURS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (40, 70, 220)}
PROMPT = "Output only the coordinate of one point in your response. What element matches the following task: "


class FakeModel:
    """Answers like UI-TARS-1.5: the centre of the named colour, in pixels of the image it received.
    `script` overrides answers in order: an int is an HTTP status, a str the raw body, a float a delay."""

    def __init__(self, answer="({x},{y})"):
        self.answer = answer
        self.script = []
        self.requests = []
        self.lock = threading.Lock()
        self.slow_word = None

    def reply(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length)) if length else None
        with self.lock:
            self.requests.append({"path": handler.path, "headers": dict(handler.headers), "body": body})
            listing = handler.path.endswith("/models")  # the start-up check and the model lookup: no script step
            step = self.script.pop(0) if self.script and not listing else None
        if listing:
            return 200, {"object": "list", "data": [{"id": "tiny-uitars", "object": "model"}]}
        if isinstance(step, int):
            return step, {"error": {"message": "overloaded"}}
        if isinstance(step, str):
            return 200, step
        text = body["messages"][-1]["content"][1]["text"]
        if self.slow_word and self.slow_word in text:
            time.sleep(3)
        url = body["messages"][-1]["content"][0]["image_url"]["url"]
        pixels = np.asarray(decode_data_url(url)).astype(int)
        word = next(c for c in COLOURS if c in text.lower())
        ys, xs = np.nonzero(np.all(np.abs(pixels - COLOURS[word]) < 40, axis=-1))
        answer = self.answer.format(x=round(float(xs.mean())), y=round(float(ys.mean())))
        return 200, {
            "id": "c1",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 200, "completion_tokens": 7, "total_tokens": 207},
        }


def Server(model):
    return LoopbackServer(model.reply)


@pytest.fixture
def model():
    return FakeModel()


@pytest.fixture
def server(model):
    running = Server(model)
    yield running
    running.close()


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.setenv("GROUNDING_TEST_KEY", KEY)
    make_project(pytester, ini=NO_FRAME_CHECK)  # these servers count requests and script answers
    return pytester


def run(suite, tmp_path, spec, *args):
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = suite.runpytest(
        f"--dataset={MINI}",
        "--detector",
        spec,
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *FEW,
        *args,
    )
    return result, {r["id"]: r for r in read_json(report)["samples"]}, report, predictions


@XDIST
def test_right_answers_are_hits_and_the_server_got_model_key_image_prompt(suite, server, model, workers, tmp_path):
    spec = f"openai:preset=uitars-1.5-point,base_url={server.url},model=tiny-uitars,api_key_env=GROUNDING_TEST_KEY"
    result, records, report, predictions = run(suite, tmp_path, spec, *workers)
    assert result.ret == 0, result.stdout.str()
    assert {i: r["outcome"] for i, r in records.items()} == {"m01": "hit", "m02": "hit", "m03": "hit"}
    # red square of m01 is [10,10,30,30] on 160x120; the server saw it at 336x252 and answered (42,42)
    assert records["m01"]["raw"] == "(42,42)" and records["m01"]["point"] == [20.0, 20.0]
    assert records["m01"]["meta"]["usage"] == {"prompt_tokens": 200, "completion_tokens": 7, "total_tokens": 207}
    chats = [r for r in model.requests if r["path"] == "/v1/chat/completions"]
    assert len(chats) == 3
    for chat in chats:
        body = chat["body"]
        assert chat["headers"]["Authorization"] == f"Bearer {KEY}"
        assert body["model"] == "tiny-uitars" and body["temperature"] == 0.0 and body["max_tokens"] == 128
        assert [m["role"] for m in body["messages"]] == ["user"]
        image, text = body["messages"][0]["content"]
        assert image["type"] == "image_url" and decode_data_url(image["image_url"]["url"]).size == (336, 252)
        assert text["type"] == "text" and text["text"].startswith(PROMPT)
    assert sorted(c["body"]["messages"][0]["content"][1]["text"][len(PROMPT) :] for c in chats) == [
        "Click the blue square",
        "Click the green square",
        "Click the red square",
    ]
    info = read_json(report)["run"]["detectors"][spec]
    assert info["model"] == "tiny-uitars" and info["base_urls"] == [server.url]
    assert info["api_key_env"] == "GROUNDING_TEST_KEY" and info["preset"]["name"] == "uitars-1.5-point"
    outputs = [result.stdout.str(), result.stderr.str(), report.read_text(), predictions.read_text()]
    assert not any(KEY in text for text in outputs)
    assert len(read_jsonl(predictions)) == 3


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_model_from_the_server_listing_and_round_robin_over_two_servers(suite, model, tmp_path):
    first, second = Server(model), Server(model)
    try:
        result, records, _report, _ = run(
            suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={first.url}|{second.url}"
        )
    finally:
        first.close()
        second.close()
    assert result.ret == 0
    assert all(r["outcome"] == "hit" for r in records.values())
    hosts = [r["headers"]["Host"] for r in model.requests]
    assert len(set(hosts)) == 2  # /models then three chats, alternating servers
    assert {r["body"]["model"] for r in model.requests if r["body"]} == {"tiny-uitars"}
    assert not any("Authorization" in r["headers"] for r in model.requests)


@SERIAL
def test_5xx_and_429_are_retried_then_succeed(suite, server, model, workers, tmp_path):
    model.script = [503, 429, 500]
    result, records, _, _ = run(
        suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m,backoff=0.01", *workers
    )
    assert result.ret == 0
    assert all(r["outcome"] == "hit" for r in records.values())
    assert len([r for r in model.requests if r["path"].endswith("/chat/completions")]) == 6


def test_5xx_after_the_retries_is_an_error_not_a_miss(suite, server, model, tmp_path):
    model.script = [502] * 10
    result, records, _, _ = run(
        suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m,retries=2,backoff=0.01"
    )
    assert result.ret == 1
    errors = [r for r in records.values() if r["outcome"] == "error"]
    assert errors and "HTTP 502" in errors[0]["error"] and "after 3 attempts" in errors[0]["error"]


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_a_timeout_is_an_error(suite, server, model, tmp_path):
    model.slow_word = "blue"
    result, records, _, _ = run(
        suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m,timeout=0.5"
    )
    assert result.ret == 1
    assert records["m02"]["outcome"] == "error" and "within 0.5 s" in records["m02"]["error"]
    assert records["m01"]["outcome"] == "hit" and records["m03"]["outcome"] == "hit"


def test_garbage_answer_is_wrong_format_and_garbage_body_an_error(suite, server, model, tmp_path):
    model.answer = "I would click on the {x}th pixel"
    model.script = [None, "<html>Bad gateway</html>"]
    result, records, _, _ = run(
        suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m,retries=0"
    )
    outcomes = sorted(r["outcome"] for r in records.values())
    assert outcomes == ["error", "wrong_format", "wrong_format"]
    wrong = next(r for r in records.values() if r["outcome"] == "wrong_format")
    assert wrong["raw"].startswith("I would click on the")
    error = next(r for r in records.values() if r["outcome"] == "error")
    assert "not JSON" in error["error"]
    result.stdout.fnmatch_lines(
        ["  m@127.0.0.1:* preset=uitars-1.5-point mini/m0*: wrong format for *; raw 'I would click on the*"]
    )


@SERIAL
def test_a_server_refusing_at_start_stops_the_run_with_one_message(suite, workers, tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = f"openai:preset=uitars-1.5-point,base_url=http://127.0.0.1:{port}/v1,model=m,retries=1,backoff=0.01"
    result = suite.runpytest(f"--dataset={MINI}", "--detector", spec, *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = [line for line in result.stderr.lines if f"http://127.0.0.1:{port}/v1 does not answer" in line]
    assert len(said) == 1 and "Fix: start the server" in said[0]
    assert "ERROR at setup" not in result.stdout.str()


def test_no_model_listed_and_missing_key_are_load_errors(server, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ValueError, match="NO_SUCH_KEY_VAR"):
        OpenAIDetector(base_url=server.url, model="m", api_key_env="NO_SUCH_KEY_VAR")
    with pytest.raises(ValueError, match="base_url"):
        OpenAIDetector()


def test_urls_are_split_on_bars_and_credentials_never_shown():
    assert split_urls("http://a:1/v1/ | https://b/v1") == ["http://a:1/v1", "https://b/v1"]
    assert public_url("http://user:secret@host:8000/v1") == "http://host:8000/v1"
    with pytest.raises(ValueError, match="not an http"):
        split_urls("127.0.0.1:8000")


def test_preset_overrides_reach_the_request(server, model):
    from PIL import Image

    from pytest_grounding.core.types import Query

    detector = OpenAIDetector(
        base_url=server.url, model="m", preset="uitars-1.0", max_new_tokens=16, system="Be brief."
    )
    body = detector.request_body(Query(Image.new("RGB", (1024, 768)), "Click the red square"))
    assert body["max_tokens"] == 16 and body["frequency_penalty"] == 1.0
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert decode_data_url(body["messages"][1]["content"][0]["image_url"]["url"]).size == (1036, 756)
    with pytest.raises(ServerError, match="HTTP 404"):
        model.script = [404]
        detector._request("/chat/completions", body)


def test_json_bytes_writes_what_json_dumps_writes():
    from pytest_grounding.detectors.http import json_bytes

    url = "data:image/png;base64," + "iVBORw0KGgo+/=" * 1000
    text = 'Click "Save as…"\n\tthen\\back é 中'
    body = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": text}],
            },
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]},
        ],
        "note": "a string that merely contains PLACEHOLDER is left alone",
    }
    with_placeholder = json.loads(json.dumps(body).replace(json.dumps(url), '"PLACEHOLDER"'))
    assert json_bytes(with_placeholder, {"PLACEHOLDER": url.encode()}) == json.dumps(body).encode()
    assert json_bytes(body) == json.dumps(body).encode()


def test_the_request_carries_the_bytes_json_would_write(server, model):
    from PIL import Image, ImageDraw

    from pytest_grounding.core.types import Query

    image = Image.new("RGB", (640, 480), "white")
    ImageDraw.Draw(image).rectangle((100, 100, 140, 130), fill=COLOURS["red"])
    detector = OpenAIDetector(base_url=server.url, model="m", preset="uitars-1.5-point")
    sent = []
    stream = detector.client._http.stream

    def spy(method, url, *, content=None, **rest):
        sent.append(content)
        return stream(method, url, content=content, **rest)

    detector.client._http.stream = spy
    query = Query(image, 'Click the "red" square, not the é one\n')
    prediction = detector.predict(query)
    assert prediction.click is not None and 100 <= prediction.click[0] <= 140
    body = detector.request_body(query)
    assert sent[-1] == json.dumps(body).encode()
    assert model.requests[-1]["body"] == body
    assert body["messages"][-1]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_the_client_imports_httpx_without_its_command_line():
    """httpx's command line (click, rich, pygments) is not imported by a run; `httpx.main` and an
    explicit `import httpx._main` still work."""
    pytest.importorskip("click")
    pytest.importorskip("rich")
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from pytest_grounding.detectors.http import HttpClient\n"
        "HttpClient(['http://127.0.0.1:9/v1'])\n"
        "loaded = sorted(m for m in ('httpx._main', 'click', 'rich') if m in sys.modules)\n"
        "import httpx, httpx._main\n"
        "print(loaded, callable(httpx.main), callable(httpx._main.main))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "True", "True"], out
