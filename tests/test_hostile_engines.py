"""Hostile inputs (issue 52; docs/security.md says what each class guarantees). The vllm detector's own settings
and files, and a tracker's time, are bounded.
"""

import pytest

from helpers import FIXTURES, read_json
from hostile import OkModel

PRO, MINI = str(FIXTURES / "screenspot-pro"), str(FIXTURES / "mini")


# --- the vllm detector's own settings and files ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["-1", "0", "nan", "1e9", "soon"])
def test_a_start_timeout_no_server_can_have_is_refused(project, tmp_path, value):
    result = project.runpytest("--dataset", MINI, "--detector", f"vllm:model={tmp_path},start_timeout={value}")
    assert result.ret == 4
    assert "start_timeout" in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize(
    ("option", "named"),
    [
        ("preset=nope", "unknown preset 'nope'"),
        ("preset=uitars-1.5-point,timeout=0", "timeout=0"),
        ("preset=uitars-1.5-point,timeout=-3", "timeout=-3"),
        ("preset=uitars-1.5-point,retries=-1", "retries=-1"),
        ("preset=uitars-1.5-point,backoff=-2", "backoff=-2"),
        ("preset=uitars-1.5-point,temperature=warm", "temperature='warm'"),
        ("preset=uitars-1.5-point,top_k=many", "top_k='many'"),
    ],
)
def test_a_served_spec_the_detector_cannot_take_is_one_usage_error_before_any_request(project, option, named):
    pytest.importorskip("httpx")
    model = OkModel()
    try:
        result = project.runpytest("--dataset", MINI, "--detector", f"openai:base_url={model.url},model=m,{option}")
        said = result.stdout.str() + result.stderr.str()
        assert result.ret == 4, said
        assert named in said and "INTERNALERROR" not in said and "Traceback" not in said
        assert model.chats == 0
    finally:
        model.server.close()


@pytest.mark.parametrize("detector", ["llamacpp:model=x.gguf,preset=nope", "vllm:model=x,preset=nope"])
def test_an_unknown_preset_of_a_started_server_is_one_usage_error(project, detector):
    pytest.importorskip("httpx")  # the openai extra: without it the detector's own message comes first
    result = project.runpytest("--dataset", MINI, "--detector", detector)
    said = result.stdout.str() + result.stderr.str()
    assert result.ret == 4 and "unknown preset 'nope'" in said and "INTERNALERROR" not in said


@pytest.mark.parametrize("blocker", ["file", "fifo"])
def test_an_unwritable_cache_folder_for_the_server_log_is_one_message(project, tmp_path, monkeypatch, blocker):
    import os

    from test_served_protocol import fake_vllm

    server = fake_vllm(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    if blocker == "file":
        (cache / "servers").write_text("a file where the folder should be")
    else:
        os.mkfifo(cache / "servers")
    monkeypatch.setenv("PYTEST_GROUNDING_CACHE", str(cache))
    result = project.runpytest(
        "--dataset", MINI, "--detector", f"vllm:model={tmp_path},server={server},preset=qwen2.5-vl", "-k", "m01"
    )
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "the server's log cannot be written" in text


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_two_endpoints_that_describe_themselves_alike_never_share_answers(project, tmp_path):
    pytest.importorskip("httpx")
    first, second = OkModel(), OkModel()
    try:
        cache = ["--grounding-cache", str(tmp_path / "cache"), "--dataset", MINI, "-k", "m01 or m02"]
        cache += ["--grounding-frame-check=off"]  # the model counts the samples' requests only
        project.runpytest("--detector", first.spec, *cache)
        report = tmp_path / "r.json"
        spec = second.spec.replace(second.url, second.url + "/")  # another server, another spelling
        project.runpytest("--detector", spec, *cache, "--grounding-json", str(report))
        assert first.chats == 2 and second.chats == 2
        assert not any(r.get("cached") for r in read_json(report)["samples"])
        project.runpytest("--detector", first.spec, *cache, "--grounding-json", str(report))
        assert first.chats == 2 and all(r.get("cached") for r in read_json(report)["samples"])
    finally:
        first.server.close()
        second.server.close()


# --- a tracker's time is bounded -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["mlflow", "wandb"])
def test_a_tracker_that_never_answers_is_one_note_in_bounded_time(monkeypatch, kind):
    import importlib.util
    import threading
    import time

    from pytest_grounding.render import trackers

    if importlib.util.find_spec(kind) is None:  # not importorskip: importing mlflow here breaks later pytester runs
        pytest.skip(f"needs the {kind} extra")
    release = threading.Event()

    def hangs(*args):
        release.wait(30)
        return ["never"]

    monkeypatch.setitem(trackers.LOGGERS, kind, hangs)
    monkeypatch.setattr(trackers, "TRACKER_TIMEOUT_S", 0.5)
    started = time.monotonic()
    target = trackers.parse_target(f"{kind}:somewhere" if kind == "mlflow" else f"{kind}:project", "test")
    notes = trackers.log_all({"summary": {}, "samples": []}, [target], [])
    release.set()
    assert time.monotonic() - started < 5
    assert len(notes) == 1 and "not logged: TimeoutError: no answer within 0.5 s" in notes[0]


# --- shared artifacts hold no absolute home path (issue 60) -----------------------------------------------------


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.parametrize("where", ["dataset in the home", "dataset and run folder in the home"])
def test_no_shared_artifact_holds_the_home_folder(tmp_path, monkeypatch, where):
    import shutil

    from hostile import run_suite
    from pytest_grounding.cli.main import main

    home = tmp_path / "home"
    data = home / "data" / "mini"
    shutil.copytree(MINI, data)  # its broken and missing images: error messages naming the files
    project = home / "project" if "run folder" in where else tmp_path / "elsewhere"
    out = project / "out"
    result = run_suite(
        project, f"--dataset={data}", "--detector", "center", "--detector", "random", f"--junitxml={out / 'junit.xml'}",
        f"--grounding-html={out / 'page.html'}", f"--grounding-json={out / 'r.json'}", env={"HOME": str(home)},
    )  # fmt: skip
    assert (out / "page.html").is_file(), result.stdout[-2000:] + result.stderr[-2000:]
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "--dataset", str(data), "--no-ocr", "--html", str(out / "audit.html")]) == 0
    assert main(["board", str(out), "--html", str(out / "board.html")]) == 0
    assert main(["report", str(out / "r.json"), "--html", str(out / "again.html")]) == 0
    shared = ["junit.xml", "page.html", "audit.html", "board.html", "again.html"]
    for name in shared:
        text = (out / name).read_text(encoding="utf-8")
        assert str(home) not in text, (name, text[text.index(str(home)) - 200 :][:400])
    assert "cannot identify image" in (out / "junit.xml").read_text()  # the messages are there, without the home
    assert "~/data/mini" in (out / "page.html").read_text() or "data/test/broken.png" in (out / "page.html").read_text()


@pytest.mark.parametrize(
    ("text", "shown"),
    [("/h/ann/x.png", "~/x.png"), ("--dataset=/h/ann/d", "--dataset=~/d"), ("'/h/ann/b.png'", "'~/b.png'"),
     ("/h/anna/x", "/h/anna/x"), ("/srv/h/ann/x", "/srv/h/ann/x"), ("/h/ann.bak/x", "/h/ann.bak/x"),
     ("at /h/ann", "at ~")],
)  # fmt: skip
def test_a_home_path_inside_text_is_written_from_the_tilde(text, shown):
    from pytest_grounding.core.paths import shown_text

    assert shown_text(text, "/h/ann") == shown and shown_text(text, "/") == text


class NamedWeights:
    """A server that names the weights it serves: vLLM (/v1/models `root`), llama-server (/props
    `model_path`), SGLang (/get_server_info `model_path`); a new one is the same model on another port."""

    def __init__(self, kind, weights):
        import threading

        from helpers import LoopbackServer

        self.chats, lock = 0, threading.Lock()

        def reply(handler):
            if handler.path.endswith("/models"):
                entry = {"id": "m", "owned_by": {"vllm": "vllm", "llamacpp": "llamacpp"}.get(kind, "sglang")}
                return 200, {"data": [{**entry, "root": weights} if kind == "vllm" else entry]}
            if handler.path == "/version" and kind == "vllm":
                return 200, {"version": "0.32.0"}
            if handler.path == "/props" and kind == "llamacpp":
                return 200, {"build_info": "b1", "model_path": weights, "default_generation_settings": {"n_ctx": 9000}}
            if handler.path == "/get_server_info" and kind == "sglang":
                return 200, {"version": "0.5.0", "model_path": weights}
            if not handler.path.endswith("/chat/completions"):
                return 404, {"detail": "Not Found"}
            with lock:
                self.chats += 1
            choice = {"index": 0, "message": {"content": "(60,40)"}, "finish_reason": "stop"}
            return 200, {"choices": [choice], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}

        self.server = LoopbackServer(reply, answer_probes=False)  # the engine's questions reach `reply`
        self.spec = (
            f"openai:base_url={self.server.url},model=m,"
            "preset=uitars-1.5-point,retries=0,probe=false,preprocess=none,transform=abs"
        )


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.parametrize("kind", ["vllm", "llamacpp", "sglang"])
def test_the_same_weights_restarted_on_another_port_answer_from_the_cache(project, tmp_path, kind):
    pytest.importorskip("httpx")
    weights = "/models/ui-tars-Q8_0.gguf" if kind == "llamacpp" else "ByteDance-Seed/UI-TARS-1.5-7B"
    first, again, other = NamedWeights(kind, weights), NamedWeights(kind, weights), NamedWeights(kind, weights + "-b")
    report = tmp_path / "r.json"
    cache = ["--grounding-cache", str(tmp_path / "cache"), "--dataset", MINI, "-k", "m01 or m02"]
    cache += ["--grounding-frame-check=off", "--grounding-json", str(report)]
    try:
        project.runpytest("--detector", first.spec, *cache)
        assert first.chats == 2
        project.runpytest("--detector", again.spec, *cache)  # a new pod, a new `vllm serve`: another port
        assert again.chats == 0 and all(r.get("cached") for r in read_json(report)["samples"])
        project.runpytest("--detector", other.spec, *cache)  # other weights behind the same name: asked
        assert other.chats == 2
    finally:
        for model in (first, again, other):
            model.server.close()


@pytest.mark.slow  # a fresh interpreter and the check's limit: several seconds
def test_a_calibration_request_past_the_checks_limit_never_holds_the_process_at_exit(tmp_path):
    """The frame check gives up on requests past its limit: the process that ran it exits at once,
    not when the slow server's answer (or the HTTP timeout) comes; the check says which timed out."""
    import subprocess
    import sys
    import threading

    from helpers import REPO, LoopbackServer

    released = threading.Event()

    def reply(handler):
        released.wait(60)  # holds every chat until the test ends
        return 200, {"choices": [{"index": 0, "message": {"content": "(1,1)"}, "finish_reason": "stop"}]}

    server = LoopbackServer(reply)
    code = (
        "import time\n"
        "from pytest_grounding.detectors.frame_check import run_check\n"
        "from pytest_grounding.detectors.served import OpenAIDetector\n"
        f"detector = OpenAIDetector(base_url={server.url!r}, model='m', preset='uitars-1.5-point',\n"
        "                          retries=0, probe=False)\n"
        "result = run_check('slow', detector, timeout_s=0.5)\n"
        "print(result.failed, result.answers[0])\n"
        "print('ended', flush=True)\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30)
    finally:
        released.set()
        server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    failed, first = done.stdout.splitlines()[0].split(" ", 1)
    assert int(failed) == 12 and "no answer within" in first and "--grounding-timeout" in first, done.stdout


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("threads", 10**400),
        ("threads", 2000),
        ("threads", -1),
        ("rec_streams", 10**9),
        ("det_side", 0),
        ("line_cache", -5),
    ],
)
def test_an_ocr_setting_no_machine_has_is_refused_before_any_engine_is_built(option, value):
    """A thread count of 10**400 started threads (or asked ONNX Runtime for them) until the run hung."""
    pytest.importorskip("rapidfuzz")  # the ocr extra (its text matching is imported with the engine's settings)
    from pytest_grounding.detectors.ocr_engine import EngineSettings

    with pytest.raises(ValueError, match=f"ocr: {option}="):
        EngineSettings(**{option: value}).resolved()
    assert EngineSettings(threads=2, rec_streams=4).resolved().threads == 2
