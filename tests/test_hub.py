"""Models by hub id (detectors/hub.py) and detectors that cannot be built (detectors/preflight.py):
tiny random checkpoints placed in a temporary hub cache laid out as huggingface_hub lays it out,
read with HF_HUB_OFFLINE=1; each missing piece is one message and a non-zero exit, not an error
per item."""

import socket
import subprocess
import sys
import time

import pytest

from helpers import FIXTURES, REPO, SERIAL, XDIST, read_json

pytest.importorskip("ui_tars")
pytest.importorskip("torch")
pytest.importorskip("transformers")
hf = pytest.importorskip("huggingface_hub")

from pytest_grounding.detectors.hub import (  # noqa: E402
    ModelUnavailable,
    cached_models,
    is_hub_id,
    place_in_cache,
    resolve_checkpoint,
)

UITARS_ID = "ByteDance-Seed/UI-TARS-1.5-7B"
QWEN3_ID = "tiny-org/Tiny-Qwen3-VL"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
COMMIT3 = "fedcba9876543210fedcba9876543210fedcba98"
MINI = str(FIXTURES / "mini")


@pytest.fixture(scope="session")
def tiny_folders(tmp_path_factory):
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    return {
        "qwen2_5_vl": build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny25")),
        "qwen3_vl": build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny3"), family="qwen3_vl"),
    }


@pytest.fixture(scope="session")
def hub_cache(tmp_path_factory, tiny_folders):
    """A hub cache holding the tiny Qwen2.5-VL as UI-TARS-1.5-7B and the tiny Qwen3-VL as org/name."""
    cache = tmp_path_factory.mktemp("hub")
    place_in_cache(tiny_folders["qwen2_5_vl"], UITARS_ID, cache, COMMIT)
    place_in_cache(tiny_folders["qwen3_vl"], QWEN3_ID, cache, COMMIT3)
    return cache


@pytest.fixture
def offline_env(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    for name in ("PYTEST_GROUNDING_UITARS_MODEL", "PYTEST_GROUNDING_QWENVL_MODEL", "PYTEST_GROUNDING_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def offline(monkeypatch, hub_cache, offline_env):
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    return hub_cache


@pytest.fixture
def empty_offline(monkeypatch, tmp_path, offline_env):
    empty = tmp_path / "empty-hub"
    empty.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(empty))
    return empty


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(test_suite=(REPO / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    return pytester


# -- the cache layout and the resolution --------------------------------------------------------


@pytest.mark.slow
def test_the_cache_is_laid_out_as_huggingface_hub_reads_it(hub_cache):
    snapshot = hf.snapshot_download(UITARS_ID, cache_dir=hub_cache, local_files_only=True)
    assert snapshot.endswith(f"models--ByteDance-Seed--UI-TARS-1.5-7B/snapshots/{COMMIT}")
    config = hf.try_to_load_from_cache(UITARS_ID, "config.json", cache_dir=hub_cache)
    assert isinstance(config, str) and config.startswith(snapshot)
    scanned = {repo.repo_id: repo for repo in hf.scan_cache_dir(hub_cache).repos}
    assert set(scanned) == {UITARS_ID, QWEN3_ID}
    assert [r.commit_hash for r in scanned[UITARS_ID].revisions] == [COMMIT]
    listed = {m.repo_id: m for m in cached_models(hub_cache)}
    assert listed[UITARS_ID].model_type == "qwen2_5_vl" and listed[UITARS_ID].complete
    assert listed[QWEN3_ID].model_type == "qwen3_vl" and listed[QWEN3_ID].refs == ("main",)


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_a_hub_id_resolves_to_its_snapshot_and_commit(offline):
    resolved = resolve_checkpoint(UITARS_ID, detector="uitars")
    assert resolved.commit == COMMIT and resolved.repo_id == UITARS_ID
    assert resolved.folder.name == COMMIT and resolved.label == f"{UITARS_ID}@0123456"
    by_commit = resolve_checkpoint(UITARS_ID, revision=COMMIT, detector="uitars")
    assert by_commit.folder == resolved.folder and by_commit.describe()["model_revision"] == COMMIT
    with pytest.raises(ModelUnavailable, match="not in the hub cache") as caught:
        resolve_checkpoint(UITARS_ID, revision="v2", detector="uitars")
    assert "hf download ByteDance-Seed/UI-TARS-1.5-7B --revision v2" in caught.value.fix


@pytest.mark.slow  # a tiny checkpoint on torch: the slow tier's (conftest's tiers)
def test_a_local_folder_stays_a_folder_and_a_broken_one_is_named(tmp_path, tiny_folders, offline):
    local = resolve_checkpoint(str(tiny_folders["qwen3_vl"]), detector="qwenvl")
    assert local.repo_id is None and local.folder == tiny_folders["qwen3_vl"].resolve()
    with pytest.raises(ModelUnavailable, match="no checkpoint folder"):
        resolve_checkpoint(str(tmp_path / "nowhere"), detector="qwenvl")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text("{}")
    (tmp_path / "half" / "model.safetensors.index.json").write_text('{"weight_map": {"a": "model-1.safetensors"}}')
    with pytest.raises(ModelUnavailable, match=r"lacks its weights \(model-1.safetensors\)"):
        resolve_checkpoint(str(tmp_path / "half"), detector="qwenvl")
    with pytest.raises(ModelUnavailable, match="revision=main applies to a hub id"):
        resolve_checkpoint(str(tiny_folders["qwen3_vl"]), revision="main", detector="qwenvl")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("org/name", True),
        ("Qwen/Qwen2.5-VL-7B-Instruct", True),
        ("./org/name", False),
        ("/abs/path", False),
        ("a/b/c", False),
        ("name", False),
        ("-x/y", False),
    ],
)
def test_what_reads_as_a_hub_id(text, expected):
    assert is_hub_id(text) is expected


class FakeHub:
    """A loopback stand-in for the hub's API and file server (what snapshot_download asks: the
    revision, the file tree, each file's HEAD and GET), holding one model repository, or none."""

    def __init__(self, repo_id=None, folder=None, commit=None):
        import hashlib
        import json
        import threading
        import urllib.parse
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        files = (
            {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
            if folder
            else {}
        )
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status, body=b"", headers=None, head=False):
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _serve(self, head=False):
                path = urllib.parse.urlsplit(self.path).path
                outer.requests.append((self.command, path))
                api = f"/api/models/{repo_id}"
                as_json = {"Content-Type": "application/json"}
                if repo_id and path.startswith(api + "/revision/"):
                    body = json.dumps({"id": repo_id, "sha": commit, "siblings": [{"rfilename": n} for n in files]})
                    return self._send(200, body.encode(), as_json, head)
                if repo_id and path.startswith(api + "/tree/"):
                    tree = [
                        {"type": "file", "path": n, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                        for n, b in files.items()
                    ]
                    return self._send(200, json.dumps(tree).encode(), as_json, head)
                prefix = f"/{repo_id}/resolve/"
                if repo_id and path.startswith(prefix) and path[len(prefix) :].split("/", 1)[1] in files:
                    body = files[path[len(prefix) :].split("/", 1)[1]]
                    etag = '"' + hashlib.sha1(body).hexdigest() + '"'
                    return self._send(200, body, {"X-Repo-Commit": commit, "ETag": etag}, head)
                return self._send(404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"}, head)

            def do_GET(self):
                self._serve()

            def do_HEAD(self):
                self._serve(head=True)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def online(monkeypatch):
    """Online for this test even where the session started offline (CI exports HF_HUB_OFFLINE=1):
    huggingface_hub reads the variable once, at import."""
    constants = pytest.importorskip("huggingface_hub.constants")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def test_an_unknown_hub_id_online_says_so(monkeypatch, tmp_path):
    hub = FakeHub()
    try:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        online(monkeypatch)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
        with pytest.raises(ModelUnavailable, match="no model nobody/no-such-model on the hub") as caught:
            resolve_checkpoint("nobody/no-such-model", detector="qwenvl")
        assert "check the id" in caught.value.fix
    finally:
        hub.close()


# -- by hub id through the plugin ----------------------------------------------------------------


@pytest.mark.slow
def test_the_cards_command_with_the_default_model_in_the_cache_scores_every_sample(suite, offline, tmp_path):
    report = tmp_path / "r.json"
    result = suite.runpytest(
        f"--dataset={MINI}",
        "--detector=uitars:max_new_tokens=4",
        "-n",
        "4",
        "--grounding-limit",
        "6",  # m01..m06: the fixture's m07 is a broken image on purpose
        "--grounding-json",
        str(report),
    )
    document = read_json(report)
    records = document["samples"]
    assert len(records) == 6 and result.ret == 1  # every sample scored; random weights: wrong formats
    assert {r["outcome"] for r in records} <= {"wrong_format", "miss", "hit"}
    assert not [r for r in records if r["outcome"] == "error"]
    (info,) = document["run"]["detectors"].values()
    assert info["model"] == UITARS_ID and info["model_commit"] == COMMIT and info["model_source"] == "hub"
    result.stdout.fnmatch_lines([f"*from {UITARS_ID}@0123456 on cpu*"])
    assert "ERROR" not in result.stdout.str()


@pytest.mark.slow
@SERIAL
def test_qwenvl_by_hub_id(suite, offline, tmp_path, workers):
    report = tmp_path / "r.json"
    spec = f"qwenvl:model={QWEN3_ID},max_new_tokens=4"
    result = suite.runpytest(
        f"--dataset={MINI}", "--detector", spec, "--grounding-limit", "2", "--grounding-json", str(report), *workers
    )
    document = read_json(report)
    assert [r["outcome"] for r in document["samples"]] == ["wrong_format"] * 2, result.stdout.str()[-2000:]
    info = document["run"]["detectors"][spec]
    assert info["model"] == QWEN3_ID and info["model_commit"] == COMMIT3 and info["model_type"] == "qwen3_vl"
    result.stdout.fnmatch_lines([f"*Qwen3VLForConditionalGeneration from {QWEN3_ID}@fedcba9 on cpu*"])


# -- cannot be built: one message --------------------------------------------------------------


@pytest.mark.slow
def test_the_cards_command_with_an_empty_cache_ends_with_one_message(empty_offline):
    """As a user types it, in a subprocess: `pytest suites/ --detector=uitars -n 4`."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/", "--detector=uitars", "-n", "4", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert elapsed < 60
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    output = (result.stdout + result.stderr).splitlines()
    naming = [line for line in output if UITARS_ID in line]
    assert len(naming) == 1, output
    (line,) = naming
    assert str(empty_offline) in line and "HF_HUB_OFFLINE=1" in line
    assert f"hf download {UITARS_ID}" in line and "model=" in line and "HF_HUB_CACHE" in line
    assert not any("ERROR at setup" in text or "INTERNALERROR" in text for text in output)
    assert len([text for text in output if text.strip()]) <= 3, output


def _closed_port_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


MISSING = {
    # case: (detector spec, a part of the one message)
    "uitars-weights": ("uitars", f"the weights of {UITARS_ID} are not in the hub cache"),
    "qwenvl-unnamed": ("qwenvl", "qwenvl needs a model"),
    "qwenvl-no-folder": ("qwenvl:model=/nowhere/checkpoint", "no checkpoint folder /nowhere/checkpoint"),
    "uitars-revision": (f"uitars:revision={'9' * 40}", f"the weights of {UITARS_ID}@{'9' * 40} are not"),
    "uitars-cuda": (f"uitars:model={QWEN3_ID},device=cuda", "device=cuda was asked, but torch sees no CUDA device"),
    "openai-down": ("openai:preset=uitars-1.5-point,model=x,base_url=CLOSED", "does not answer"),
    "omniparser-file": ("omniparser:model=/nowhere/icons.onnx", "no icon detector model file"),
    "ocr-extra": ("ocr", "needs the 'ocr' extra"),
}


@pytest.mark.slow  # a tiny checkpoint on torch: the slow tier's (conftest's tiers)
@SERIAL
@pytest.mark.parametrize("case", list(MISSING))
def test_a_detector_that_cannot_be_built_is_one_message(suite, offline, monkeypatch, case, workers):
    spec, message = MISSING[case]
    if case == "uitars-weights":
        monkeypatch.setenv("HF_HUB_CACHE", str(suite.path / "empty"))
    if case == "uitars-cuda":
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has CUDA")
    if case == "ocr-extra":
        import pytest_grounding.plugin.common.plan as session

        monkeypatch.setattr(session, "missing_extra", lambda extra: "rapidfuzz" if extra == "ocr" else None)
    spec = spec.replace("CLOSED", _closed_port_url())
    started = time.monotonic()
    result = suite.runpytest(f"--dataset={MINI}", "--detector", spec, *workers)
    assert time.monotonic() - started < 60
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.lines + result.stderr.lines
    assert len([line for line in output if message in line]) == 1, output
    (line,) = [line for line in output if message in line]
    assert "Fix:" in line or "pip install" in line
    assert not [line for line in output if "ERROR at setup" in line or "INTERNALERROR" in line]


REGISTERS_A_FAILING_DETECTOR = """
from pytest_grounding.detectors.hub import ModelUnavailable


def failing(**options):
    raise ModelUnavailable("failing: the weights are gone", "/weights", "put them back")


def pytest_grounding_register_detectors(registry):
    registry.register("failing", failing)
"""


@pytest.mark.slow
@XDIST
def test_a_load_failure_inside_a_worker_stops_the_run_with_that_message(suite, workers):
    suite.makeconftest(REGISTERS_A_FAILING_DETECTOR)
    result = suite.runpytest(f"--dataset={MINI}", "--detector", "failing", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.lines + result.stderr.lines
    found = [line for line in output if "the weights are gone" in line]
    assert len(found) == 1 and "(looked in /weights). Fix: put them back" in found[0], output
    assert not [line for line in output if "ERROR at setup" in line or "INTERNALERROR" in line]


# -- doctor ----------------------------------------------------------------------------------------


def _doctor(env_update, monkeypatch):
    from pytest_grounding.cli.main import main

    for key, value in env_update.items():
        monkeypatch.setenv(key, value)
    return main(["doctor"])


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_doctor_on_this_machine_says_what_is_missing(capsys, monkeypatch, empty_offline):
    import torch

    assert _doctor({}, monkeypatch) == 0
    out = capsys.readouterr().out
    if not torch.cuda.is_available():
        assert "no CUDA device" in out
    assert f"hub cache {empty_offline}: offline ($HF_HUB_OFFLINE=1)" in out and "0 model(s)" in out
    assert f"NO  uitars: needs the uitars extra and a model ({UITARS_ID} unless named)" in out
    assert f"fix: `hf download {UITARS_ID}`" in out
    assert "onnxruntime" in out and "really loads" in out and "CPUExecutionProvider" in out
    assert "--  qwenvl" in out and "ok  center, random" in out


@pytest.mark.slow  # a tiny checkpoint on torch: the slow tier's (conftest's tiers)
def test_doctor_with_a_hub_cache_holding_a_tiny_model(capsys, monkeypatch, offline):
    server = None
    from helpers import LoopbackServer

    def reply(handler):
        if handler.path == "/version":  # the engine record's question, answered as vLLM does
            return 200, {"version": "0.32.0"}
        return 200, {"data": [{"id": "served", "owned_by": "vllm", "max_model_len": 8192}]}

    server = LoopbackServer(reply, answer_probes=False)
    try:
        assert _doctor({"PYTEST_GROUNDING_OPENAI_BASE_URL": server.url}, monkeypatch) == 0
    finally:
        server.close()
    out = capsys.readouterr().out
    assert f"  {UITARS_ID} @0123456 (main): qwen2_5_vl, complete" in out
    assert f"  {QWEN3_ID} @fedcba9 (main): qwen3_vl, complete" in out
    assert "ok  uitars" in out and f"found, {UITARS_ID}@0123456" in out
    assert f"runnable in-process: {UITARS_ID}, {QWEN3_ID}" in out
    assert "ok  openai" in out and "answers /models: vLLM 0.32.0, context 8,192" in out
    assert "token" in out and "hf_" not in out


@pytest.mark.slow
def test_collect_only_lists_the_items_without_looking_for_the_weights(suite, empty_offline):
    result = suite.runpytest(f"--dataset={MINI}", "--detector=uitars", "--co", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*8 tests collected*"])


@pytest.mark.slow
@XDIST
def test_online_the_controller_downloads_the_default_model_once(
    suite, offline_env, monkeypatch, tmp_path, tiny_folders, workers
):
    hub = FakeHub(UITARS_ID, tiny_folders["qwen2_5_vl"], COMMIT)
    try:
        monkeypatch.delenv("HF_HUB_OFFLINE")
        monkeypatch.delenv("TRANSFORMERS_OFFLINE")
        online(monkeypatch)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
        report = tmp_path / "r.json"
        args = ["--detector=uitars:max_new_tokens=4", "--grounding-limit", "2", "--grounding-json", str(report)]
        result = suite.runpytest(f"--dataset={MINI}", *args, *workers)
        weights = [r for r in hub.requests if r == ("GET", f"/{UITARS_ID}/resolve/{COMMIT}/model.safetensors")]
        assert len(weights) == 1  # once, by the controller; the workers read the cache
        info = next(iter(read_json(report)["run"]["detectors"].values()))
        assert info["model"] == UITARS_ID and info["model_commit"] == COMMIT
        assert [r["outcome"] for r in read_json(report)["samples"]] == ["wrong_format"] * 2, result.stdout.str()
        assert (tmp_path / "cache" / "models--ByteDance-Seed--UI-TARS-1.5-7B" / "refs" / "main").read_text() == COMMIT
    finally:
        hub.close()
