"""Hostile inputs (issue 42 and 52; docs/security.md says what each class guarantees). Caches are untrusted
input: the hub cache (malformed configs and indexes, links out of it, absurd shapes), the answer cache
(regular files inside itself only, write errors counted), and `doctor` lists as runnable only what it found
complete.
"""

import json
import os
import time

import pytest

from helpers import FIXTURES, SERIAL, XDIST, read_json
from hostile import OkModel
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"


def _schema_problems(path):
    from pytest_grounding.store.reportcheck import problems

    return problems(read_json(path))


# -- the hub cache is untrusted ------------------------------------------------------------------------------


def hostile_cache(tmp_path, kind):
    hub = pytest.importorskip("pytest_grounding.detectors.hub")
    pytest.importorskip("huggingface_hub")
    source = tmp_path / f"src-{kind}"
    source.mkdir()
    config = {"model_type": "qwen2_5_vl", "num_hidden_layers": 2}
    weights = {"model.safetensors": b"weights"}
    if kind == "config a list":
        config = [1, 2, 3]
    elif kind == "config too deep":
        config = None
        (source / "config.json").write_text('{"a": ' * 3000 + "1" + "}" * 3000)
    elif kind == "layers 10^9":
        config = {"model_type": "qwen2_5_vl", "text_config": {"num_hidden_layers": 10**9}}
    elif kind == "mixed index":
        weights = {"model.safetensors.index.json": json.dumps({"weight_map": {"a": "x.safetensors", "b": 3, "c": []}})}
    if config is not None:
        (source / "config.json").write_text(json.dumps(config))
    for name, content in weights.items():
        (source / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    cache = tmp_path / f"cache-{kind}"
    snapshot = hub.place_in_cache(source, "org/model", cache, "0" * 40)
    if kind == "a ref that names no commit":
        (cache / "models--org--model" / "refs" / "main").write_text("../../../etc\n" * 3)
    if kind == "link out of the cache":
        outside = tmp_path / "outside.safetensors"
        outside.write_bytes(b"not the model's")
        (snapshot / "model.safetensors").unlink()
        (snapshot / "model.safetensors").symlink_to(outside)
    return hub, cache, snapshot


KINDS = ["config a list", "config too deep", "layers 10^9", "mixed index", "link out of the cache"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_hub_cache_is_named_never_a_crash(tmp_path, kind):
    hub, cache, snapshot = hostile_cache(tmp_path, kind)
    (model,) = hub.cached_models(cache)
    assert model.complete is False
    with pytest.raises(hub.ModelUnavailable):
        hub.check_folder(hub.ResolvedModel(snapshot, repo_id="org/model", commit=snapshot.name), "qwenvl")


@pytest.mark.parametrize("kind", [*KINDS, "a ref that names no commit"])
def test_doctor_reads_a_hostile_cache_without_a_traceback(tmp_path, monkeypatch, capsys, kind):
    _, cache, _ = hostile_cache(tmp_path, kind)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GROUNDING_BASE_URL", raising=False)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "org/model" in line)
    assert "complete" not in line.replace("incomplete", ""), line


# --- the answer cache reads regular files inside itself only, and says what it could not write ------------------


@pytest.fixture
def ok_model():
    model = OkModel()
    yield model
    model.server.close()


def _special(path, kind, outside):

    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-out":
        path.symlink_to(outside)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as file:
            file.truncate(64 << 20)  # sparse: 64 MiB of zeros


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out", "folder", "huge"])
def test_a_cache_entry_that_is_no_regular_file_inside_the_store_is_a_miss(tmp_path, kind):

    from pytest_grounding.store.answers import FileAnswerStore

    store = FileAnswerStore(tmp_path / "cache")
    key = "ab" + "0" * 62
    assert store.put(key, {"completion": {"x": 1}}) and store.get(key)["completion"] == {"x": 1}
    outside = tmp_path / "outside.json"
    outside.write_text(store.path(key).read_text())  # a whole, valid entry: still not read through a link
    _special(store.path(key), kind, outside)
    started = time.monotonic()
    assert store.get(key) is None
    assert time.monotonic() - started < 2


def test_a_cache_folder_linked_out_of_the_store_is_not_read(tmp_path):
    from pytest_grounding.store.answers import FileAnswerStore

    store, elsewhere = FileAnswerStore(tmp_path / "cache"), FileAnswerStore(tmp_path / "other")
    key = "cd" + "1" * 62
    elsewhere.put(key, {"completion": {"x": 1}})
    (tmp_path / "cache" / "answers").mkdir(parents=True)
    store.path(key).parent.symlink_to(elsewhere.path(key).parent)
    assert elsewhere.get(key) is not None and store.get(key) is None


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_run_over_a_cache_of_special_files_asks_the_model_again(project, tmp_path, ok_model, workers, kind):
    pytest.importorskip("httpx")
    cache = tmp_path / "cache"
    args = [
        "--dataset",
        str(MINI),
        "--detector",
        ok_model.spec,
        "--grounding-cache",
        str(cache),
        "-k",
        "m01 or m02 or m03",
    ]
    args += ["--grounding-frame-check=off"]  # the cache holds the samples' answers only
    project.runpytest(*args, *workers)
    asked = ok_model.chats
    entries = [p for p in (cache / "answers").rglob("*.json")]
    assert len(entries) == 3
    for path in entries:
        _special(path, kind, tmp_path)
    report = tmp_path / "r.json"
    project.runpytest(*args, "--grounding-json", str(report), *workers)
    assert ok_model.chats == 2 * asked
    assert not any(r.get("cached") for r in read_json(report)["samples"])


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@XDIST
def test_cache_write_errors_are_counted_and_an_unusable_folder_refused(project, tmp_path, ok_model, workers):
    pytest.importorskip("httpx")
    cache = tmp_path / "cache"
    (cache / "answers").mkdir(parents=True)
    for number in range(256):  # every entry folder a file: the store is checked, but no answer can be written
        (cache / "answers" / f"{number:02x}").write_text("")
    report = tmp_path / "r.json"
    args = ["--dataset", str(MINI), "--detector", ok_model.spec, "-k", "m01 or m02"]
    result = project.runpytest(*args, "--grounding-cache", str(cache), "--grounding-json", str(report), *workers)
    (block,) = read_json(report)["summary"].values()
    assert block["cache"]["not_stored"] == 2
    result.stdout.fnmatch_lines(["*cache: 2 answers could not be written*"])
    assert _schema_problems(report) == []
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    result = project.runpytest(*args, "--grounding-cache", str(blocked), *workers)
    assert result.ret == 4
    assert "--grounding-cache" in result.stderr.str() and "cannot be written" in result.stderr.str()


# --- doctor lists as runnable only what it found complete ------------------------------------------------------


@pytest.mark.parametrize("kind", ["link out of the cache", "mixed index", "weights deleted"])
def test_doctor_never_lists_an_incomplete_repo_as_runnable(tmp_path, monkeypatch, capsys, kind):

    _, cache, snapshot = hostile_cache(tmp_path, "link out of the cache" if kind == "weights deleted" else kind)
    if kind == "weights deleted":
        (snapshot / "model.safetensors").unlink()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("GROUNDING_BASE_URL", "PYTEST_GROUNDING_OPENAI_BASE_URL", "PYTEST_GROUNDING_QWENVL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    main(["doctor"])
    out = capsys.readouterr().out
    runnable = [line for line in out.splitlines() if "runnable in-process:" in line]
    assert runnable and all("org/model" not in line for line in runnable), runnable
