"""--grounding-cache: the keys (every part that decides an answer), what is stored (complete answers
only), the file store under concurrent writers and damage, the in-process batch path, and served
runs against a loopback server: a rerun sends no request and gives the same records."""

import json
import multiprocessing
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import FIXTURES, NO_FRAME_CHECK, SERIAL, LoopbackServer, make_project, needs_openai, read_json
from pytest_grounding.analysis import cache_counts
from pytest_grounding.core.identity import split_label
from pytest_grounding.core.record import CACHE_META, CacheUse
from pytest_grounding.detectors import answer_cache
from pytest_grounding.detectors.served_engine import EngineInfo
from pytest_grounding.store.answers import FileAnswerStore

MINI = str(FIXTURES / "mini")
ANSWERS = {"red": "(42,42)", "blue": "(284,200)", "green": "(252,52)", "purple": "(10,10)"}
PLACEHOLDER = "pytest-grounding-image-abc"
IMAGE = {"source": "digest-1", "preprocess": {"kind": "smart_resize", "max_pixels": 100}, "size": [28, 28]}


def body(**changes):
    base = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": PLACEHOLDER}}, "hi"]}],
        "max_tokens": 64,
        "temperature": 0.0,
    }
    return {**base, **changes}


ENGINE = EngineInfo("vllm", "0.32.0")


def served(request=None, image=IMAGE, engine=ENGINE, preset="uitars-1.5-point", root=None):
    return answer_cache.served_key(request or body(), PLACEHOLDER, image, engine=engine, preset=preset, root=root)


# -- keys ------------------------------------------------------------------------------------------


def test_a_served_key_is_the_same_for_the_same_request_whatever_the_placeholder():
    other = json.loads(json.dumps(body()).replace(PLACEHOLDER, "pytest-grounding-image-xyz"))
    assert served() == served()
    assert (
        answer_cache.served_key(
            other,
            "pytest-grounding-image-xyz",
            dict(IMAGE),
            engine=EngineInfo("vllm", "0.32.0"),
            preset="uitars-1.5-point",
        )
        == served()
    )


@pytest.mark.parametrize(
    "changed",
    [
        {"request": body(model="m2")},
        {"request": body(messages=[{"role": "user", "content": "another prompt"}])},
        {"request": body(temperature=0.7)},
        {"request": body(top_p=0.9)},
        {"request": body(max_tokens=65)},
        {"request": body(stop=["</s>"])},
        {"request": body(seed=2)},
        {"image": {**IMAGE, "source": "digest-2"}},
        {"image": {**IMAGE, "preprocess": {"kind": "smart_resize", "max_pixels": 200}}},
        {"image": {**IMAGE, "size": [56, 28]}},
        {"engine": EngineInfo("vllm", "0.33.0")},
        {"engine": EngineInfo("sglang", "0.32.0")},
        {"preset": "qwen2.5-vl"},
        {"root": "/weights/other"},
    ],
    ids=lambda c: next(iter(c)) + ":" + str(next(iter(c.values())))[:40],
)
def test_every_part_of_a_served_request_is_in_its_key(changed):
    assert served(**changed) != served()


def test_every_part_of_an_in_process_request_is_in_its_key():
    from PIL import Image

    from pytest_grounding.detectors.vlm.presets import resolve_preset

    identity = {"kind": "in-process", "model": "org/m", "commit": "abc", "dtype": "float32", "device": "cpu"}
    preset = resolve_preset("qwen2.5-vl")
    image = Image.new("RGB", (56, 56), (1, 2, 3))
    key = answer_cache.inprocess_key(identity, preset, "prompt", image, None)
    assert key == answer_cache.inprocess_key(dict(identity), preset, "prompt", image.copy(), None)
    others = [
        answer_cache.inprocess_key({**identity, "commit": "def"}, preset, "prompt", image, None),
        answer_cache.inprocess_key({**identity, "dtype": "bfloat16"}, preset, "prompt", image, None),
        answer_cache.inprocess_key({**identity, "model": "org/n"}, preset, "prompt", image, None),
        answer_cache.inprocess_key(identity, resolve_preset("qwen2.5-vl", temperature=0.5), "prompt", image, None),
        answer_cache.inprocess_key(identity, resolve_preset("qwen2.5-vl", max_new_tokens=9), "prompt", image, None),
        answer_cache.inprocess_key(identity, resolve_preset("uitars-1.5-point"), "prompt", image, None),
        answer_cache.inprocess_key(identity, preset, "prompt!", image, None),
        answer_cache.inprocess_key(identity, preset, "prompt", Image.new("RGB", (56, 56), (1, 2, 4)), None),
        answer_cache.inprocess_key(identity, preset, "prompt", image, 2),
    ]
    assert len({key, *others}) == len(others) + 1


def test_the_image_sent_is_named_by_its_screen_and_preprocessing():
    from pytest_grounding.detectors.vlm.preprocess import SmartResize

    resize = SmartResize(factor=28, min_pixels=3136, max_pixels=1_000_000)
    frame = resize.frame((1920, 1080))
    sent = answer_cache.sent_image("abc", resize, frame, True)
    assert sent["size"] == list(frame.model) and sent["preprocess"] == resize.describe()
    assert answer_cache.sent_image("abc", resize, frame, False)["size"] == [1920, 1080]  # the server resizes
    smaller = SmartResize(factor=28, min_pixels=3136, max_pixels=500_000)
    assert answer_cache.sent_image("abc", smaller, smaller.frame((1920, 1080)), True) != sent


# -- what is stored --------------------------------------------------------------------------------


def completion(content="(1,2)", finish="stop"):
    return {
        "id": "x",
        "created": 1,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3},
    }


class Sender:
    def __init__(self, document=None, error=None):
        self.document, self.error, self.calls = document, error, 0

    def __call__(self):
        self.calls += 1
        if self.error:
            raise self.error
        return SimpleNamespace(document=self.document, queue_ms=1.5, attempts=1)


def test_a_complete_answer_is_stored_and_then_sends_nothing(tmp_path):
    store = FileAnswerStore(tmp_path)
    first = Sender(completion())
    got = answer_cache.cached_completion(store, "k" * 64, first)
    assert (got.cache, first.calls, got.document["choices"][0]["message"]["content"]) == ("stored", 1, "(1,2)")
    again = Sender(completion("(9,9)"))
    hit = answer_cache.cached_completion(store, "k" * 64, again)
    assert (hit.cache, again.calls, hit.attempts) == ("hit", 0, 0)
    assert hit.document["choices"] == completion()["choices"] and hit.document["usage"] == completion()["usage"]
    assert "id" not in hit.document  # what varies run to run is not kept


@pytest.mark.parametrize(
    "sender",
    [
        Sender(error=RuntimeError("HTTP 500")),
        Sender(completion(finish="length")),
        Sender(completion(content=None)),
        Sender({"choices": []}),
    ],
    ids=["error", "cut", "no-text", "no-choice"],
)
def test_errors_and_cut_answers_are_never_stored(tmp_path, sender):
    store = FileAnswerStore(tmp_path)
    if sender.error:
        with pytest.raises(RuntimeError):
            answer_cache.cached_completion(store, "e" * 64, sender)
    else:
        assert answer_cache.cached_completion(store, "e" * 64, sender).cache is None
    assert store.get("e" * 64) is None and not list(tmp_path.rglob("*.json"))
    fresh = Sender(completion())
    assert answer_cache.cached_completion(store, "e" * 64, fresh).cache == "stored" and fresh.calls == 1


def test_without_a_store_every_request_is_sent(tmp_path):
    sender = Sender(completion())
    for _ in range(2):
        assert answer_cache.cached_completion(None, "k", sender).cache is None
    assert sender.calls == 2


# -- the store -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b"\xff\xfe\x00", b"[1, 2]", b'{"format": 1, "key": "other"}', b'{"format": 99}', b"[" * 5000],
    ids=["empty", "half", "binary", "list", "other-key", "format", "deep"],
)
def test_a_damaged_entry_is_a_miss_and_the_next_answer_replaces_it(tmp_path, damage):
    store = FileAnswerStore(tmp_path)
    key = "d" * 64
    store.path(key).parent.mkdir(parents=True)
    store.path(key).write_bytes(damage)
    assert store.get(key) is None
    sender = Sender(completion())
    assert answer_cache.cached_completion(store, key, sender).cache == "stored"
    assert store.get(key)["completion"]["choices"][0]["message"]["content"] == "(1,2)"


def test_a_store_that_cannot_be_written_is_counted_never_raised(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder should be")
    store = FileAnswerStore(blocker)
    assert store.put("a" * 64, {"completion": completion()}) is False
    assert store.write_errors == 1 and store.get("a" * 64) is None
    # said in the record's meta, so the summary counts it (issue 52: write errors are never silent)
    assert answer_cache.cached_completion(store, "a" * 64, Sender(completion())).cache == answer_cache.NOT_STORED


def _writer(folder, worker, rounds, results):
    """One process: writes shared and own keys, and reads shared ones while others write them."""
    store = FileAnswerStore(Path(folder))
    torn = 0
    for n in range(rounds):
        shared = f"{n % 20:064x}"
        store.put(shared, {"completion": completion(content="x" * (1000 + n % 20))})
        store.put(f"f{worker:02d}{n:061x}", {"completion": completion(content=f"{worker}-{n}")})
        found = store.get(shared)
        if found is None or found["completion"]["choices"][0]["message"]["content"] != "x" * (1000 + n % 20):
            torn += 1
    results.put((worker, torn))


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_concurrent_writers_in_several_processes_never_corrupt_an_entry(tmp_path):
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_writer, args=(str(tmp_path), w, 150, results)) for w in range(4)]
    for process in workers:
        process.start()
    found = dict(results.get(timeout=120) for _ in workers)
    for process in workers:
        process.join(timeout=60)
    assert found == {w: 0 for w in range(4)}  # every read of a shared key saw a whole entry
    store = FileAnswerStore(tmp_path)
    entries = list((tmp_path / "answers").rglob("*.json"))
    assert len(entries) == 20 + 4 * 150
    for path in entries:
        assert store.get(path.stem) is not None, path
    assert not [p for p in (tmp_path / "answers").rglob("*") if p.is_file() and p.suffix != ".json"]  # no temporaries


# -- in-process: the batch path --------------------------------------------------------------------


class FakeModel:
    """What qwenvl_batch uses of the detector, with `generate` counted (no torch)."""

    name = "qwenvl"
    device = "cpu"
    dtype = "float32"
    attn = "sdpa"
    patch = 14
    batch_size = 4

    def __init__(self, store, max_new_tokens=32):
        from pytest_grounding.detectors.vlm.presets import resolve_preset

        self.preset = resolve_preset("qwen2.5-vl", max_new_tokens=max_new_tokens)
        self.source = SimpleNamespace(repo_id="org/tiny", folder=Path("/x"), commit="c0ffee")
        self.answer_cache = store

    def prompt_text(self, instruction, size=None):
        return f"<image {size}> {instruction}"


def test_in_process_answers_are_stored_and_generated_once(tmp_path, monkeypatch):
    from PIL import Image

    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors import qwenvl_batch

    calls = []

    def generate(detector, prepared):
        calls.append(len(prepared))
        tokens = {"cut": detector.preset.decoding.max_new_tokens}
        return [
            qwenvl_batch.Generated(
                answer=f"({len(p.text)}, 7)",
                prompt_tokens=5,
                new_tokens=tokens.get(p.text.split()[-1], 3),
                seen=p.frame.model,
            )
            for p in prepared
        ]

    monkeypatch.setattr(qwenvl_batch, "generate", generate)
    screen = Image.new("RGB", (300, 200), (9, 9, 9))
    queries = [Query(screen, "click a"), Query(screen, "click b"), Query(screen, "cut")]
    model = FakeModel(FileAnswerStore(tmp_path))
    first = qwenvl_batch.run(model, queries)
    assert calls == [3]
    assert [p.meta.get(CACHE_META) for p in first] == ["stored", "stored", None]  # a cut answer: not stored
    again = qwenvl_batch.run(model, queries)
    assert calls == [3, 1]  # only the cut one generated again
    assert [p.meta.get(CACHE_META) for p in again] == ["hit", "hit", None]
    assert [(p.click, p.raw) for p in again] == [(p.click, p.raw) for p in first]
    uncached = qwenvl_batch.run(FakeModel(None), queries)
    assert calls == [3, 1, 3] and all(CACHE_META not in p.meta for p in uncached)
    model.preset = FakeModel(None, max_new_tokens=33).preset  # another decoding: every key misses
    qwenvl_batch.run(model, queries)
    assert calls == [3, 1, 3, 3]


def test_cache_counts_come_from_the_records():
    records = [{"meta": {CACHE_META: use}} for use in ("hit", "hit", "stored", None)] + [{"meta": {}}, {}]
    assert cache_counts.counts(records) == {"hits": 2, "stored": 1, "asked": 4}
    assert cache_counts.counts([{"meta": {}}]) is None
    assert CacheUse.HIT == "hit"


# -- served runs through the plugin ----------------------------------------------------------------


class Model:
    """A deterministic served model: each colour's answer; `failing` answers 500, `cutting` is cut
    at max_tokens. Counts the chat requests it answered (probes never reach it)."""

    def __init__(self):
        self.chats = []
        self.failing, self.cutting = set(), set()
        self.lock = threading.Lock()

    def reply(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        request = json.loads(handler.rfile.read(length)) if length else None
        if handler.path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm"}]}
        text = request["messages"][-1]["content"][1]["text"].lower()
        word = next(w for w in ANSWERS if w in text)
        with self.lock:
            self.chats.append(word)
        if word in self.failing:
            return 500, {"error": "down"}
        finish = "length" if word in self.cutting else "stop"
        choice = {"index": 0, "message": {"role": "assistant", "content": ANSWERS[word]}, "finish_reason": finish}
        return 200, {"id": "c", "object": "chat.completion", "choices": [choice], "usage": {"prompt_tokens": 7}}


@pytest.fixture
def model():
    found = Model()
    server = LoopbackServer(found.reply)
    found.url = server.url
    yield found
    server.close()


def run(pytester, model, tmp_path, name, workers, *extra):
    report = tmp_path / f"{name}.json"
    spec = f"openai:preset=uitars-1.5-point,base_url={model.url},model=m,retries=0" + "".join(f",{e}" for e in extra)
    result = pytester.runpytest(
        f"--dataset={MINI}",
        "--detector",
        spec,
        "--grounding-cache",
        str(tmp_path / "cache"),
        "--grounding-json",
        str(report),
        "--grounding-misses",
        "xfail",
        "--grounding-max-errors",
        "1",
        "-k",
        "not m07 and not m08",  # images that cannot be read: nothing to send
        "--grounding-frame-check=off",  # the model counts its requests (the ini is not found once cache/ exists)
        *workers,
    )
    assert result.ret in (0, 1) and report.is_file(), result.stdout.str()[-3000:]  # 1: an error item
    document = read_json(report)
    return result, document, document["summary"][split_label(spec)[0]]  # a label= is no part of the key


def same(record):
    """A record less what differs between a model's answer and the cache's (latency, the cache's words)."""
    meta = {k: v for k, v in record.get("meta", {}).items() if k not in (CACHE_META, "queue_ms", "http_attempts")}
    timing = ("latency_ms", "queue_ms", "cached", "meta")
    return {**{k: v for k, v in record.items() if k not in timing}, "meta": meta}


def check_schema(document):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads(files("pytest_grounding").joinpath("schema/report.schema.json").read_text())
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)] == []


def cached_rerun_scenario(pytester, model, tmp_path, workers):
    pytest.importorskip("ui_tars")
    make_project(pytester, ini=NO_FRAME_CHECK)  # the model counts its requests
    first, before, summary = run(pytester, model, tmp_path, "first", workers)
    asked = sorted(model.chats)
    sent = before["samples"]
    assert first.ret == 0 and len(asked) == len(sent) == 6
    assert summary["cache"] == {"hits": 0, "stored": 6, "asked": 6}
    first.stdout.fnmatch_lines(["*cache: 0 hits, 6 stored*"])
    assert not any(r.get("cached") for r in before["samples"])
    model.chats.clear()
    again, after, summary = run(pytester, model, tmp_path, "again", workers)
    assert model.chats == []  # no request sent
    assert summary["cache"] == {"hits": 6, "stored": 0, "asked": 0}
    again.stdout.fnmatch_lines(["*cache: 6 hits, 0 stored*"])
    assert [r["uid"] for r in after["samples"] if r.get("cached")] == [r["uid"] for r in sent]
    differ = [
        (a["uid"], k, a.get(k), b.get(k))
        for a, b in zip(map(same, after["samples"]), map(same, before["samples"]), strict=True)
        for k in a.keys() | b.keys()
        if a.get(k) != b.get(k)
    ]
    assert differ == []
    for key in ("accuracy", "hits", "misses", "wrong_format", "errors", "ci95"):
        assert summary[key] == before["summary"][next(iter(before["summary"]))][key]
    check_schema(after)
    # a changed prompt sends every request again, and stores those answers beside the old ones
    _, _, summary = run(pytester, model, tmp_path, "changed", workers, "prompt=Find: {instruction}")
    assert sorted(model.chats) == asked and summary["cache"] == {"hits": 0, "stored": 6, "asked": 6}


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@needs_openai
def test_a_cached_rerun_sends_no_request_and_gives_the_same_records(pytester, model, tmp_path):
    cached_rerun_scenario(pytester, model, tmp_path, [])


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
def test_a_label_added_to_the_spec_still_hits_the_cache(pytester, model, tmp_path):
    pytest.importorskip("ui_tars")
    make_project(pytester)
    run(pytester, model, tmp_path, "plain", [])
    asked = list(model.chats)
    _, _, summary = run(pytester, model, tmp_path, "labelled", [], "label=mine")
    assert model.chats == asked and summary["cache"] == {"hits": 6, "stored": 0, "asked": 0}
    assert summary["label"] == "mine"


@needs_openai
@pytest.mark.slow
def test_a_cached_rerun_sends_no_request_and_gives_the_same_records_xdist(pytester, model, tmp_path):
    cached_rerun_scenario(pytester, model, tmp_path, ["-n", "2"])


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@SERIAL
def test_errors_and_cut_answers_are_asked_again_and_a_new_image_misses(pytester, model, tmp_path, workers):
    pytest.importorskip("ui_tars")
    make_project(pytester, ini=NO_FRAME_CHECK)  # the model counts its requests
    model.failing, model.cutting = {"green"}, {"purple"}
    _, before, summary = run(pytester, model, tmp_path, "first", workers)
    assert summary["cache"]["stored"] == 4  # red twice, blue twice; green failed, purple was cut
    cut = [r for r in before["samples"] if r.get("truncated")]
    assert [r["id"] for r in cut] == ["m06"]
    model.chats.clear()
    model.failing, model.cutting = set(), set()
    _, _, summary = run(pytester, model, tmp_path, "again", workers)
    assert sorted(model.chats) == ["green", "purple"] and summary["cache"] == {"hits": 4, "stored": 2, "asked": 2}
    model.chats.clear()
    _, _, summary = run(pytester, model, tmp_path, "resized", workers, "min_pixels=200704")  # a larger image sent
    assert len(model.chats) == 6 and summary["cache"]["hits"] == 0


# -- in-process through the plugin: a tiny random Qwen2.5-VL on torch ------------------------------


@pytest.mark.slow  # builds a tiny checkpoint and runs torch: about 20 s
def test_an_in_process_rerun_generates_nothing_and_cut_answers_are_never_stored(pytester, tmp_path, monkeypatch):
    pytest.importorskip("ui_tars")
    pytest.importorskip("torch")  # imported here, once: pytester's in-process runs cannot load it twice
    pytest.importorskip("transformers")
    from test_uitars import FORCING_CONFTEST

    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    model = build_tiny_qwen25vl(tmp_path / "tiny")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("FORCED_ANSWER", "Action: click(start_box='(42,42)')")
    log = tmp_path / "prompts.jsonl"
    monkeypatch.setenv("PROMPT_LOG", str(log))
    make_project(pytester, conftest=FORCING_CONFTEST, ini=NO_FRAME_CHECK)

    def run_with(spec, name):
        report = tmp_path / f"{name}.json"
        args = [f"--dataset={MINI}", "--detector", spec, "--grounding-cache", str(tmp_path / "cache")]
        result = pytester.runpytest(*args, "--grounding-json", str(report), "-k", "m01 or m02 or m03")
        assert report.is_file(), result.stdout.str()[-3000:]
        return result, read_json(report)

    spec = f"uitars_forced:model={model},max_new_tokens=40"
    _, first = run_with(spec, "first")
    assert len(log.read_text().splitlines()) == 3 and first["summary"][spec]["cache"]["stored"] == 3
    again_result, again = run_with(spec, "again")
    assert len(log.read_text().splitlines()) == 3  # nothing generated
    assert again["summary"][spec]["cache"] == {"hits": 3, "stored": 0, "asked": 0}
    assert [same(r) for r in again["samples"]] == [same(r) for r in first["samples"]]
    assert all(r["cached"] for r in again["samples"])
    again_result.stdout.fnmatch_lines(["*cache: 3 hits, 0 stored*"])
    # random weights run to max_new_tokens: each answer may be cut, none is stored
    _, garbage = run_with(f"uitars:model={model},max_new_tokens=6", "garbage")
    assert "cache" not in garbage["summary"][f"uitars:model={model},max_new_tokens=6"]
