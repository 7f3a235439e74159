"""The prefetch pipeline with a served detector against a paced loopback model: the same records
whatever the concurrency (serial and under xdist), requests only for the items that run, nothing
finished lost on an interruption, adaptive concurrency cut by 429s, batches for a batching detector."""

import pytest
from paced_server import paced_server

from helpers import XDIST, assert_counts, read_json, read_jsonl

pytest.importorskip("httpx")

from pytest_grounding.datasets.synth import default_dataset_dir
from pytest_grounding.detectors.http import ConcurrencySetting, Limiter
from pytest_grounding.plugin.pipeline import AHEAD

SUITE = (
    "def test_grounding(grounding_sample, grounding_detector, grounding_check):\n"
    "    grounding_check(grounding_sample, grounding_detector)\n"
)


@pytest.fixture(scope="module")
def synthetic():
    return f"pointerbench:{default_dataset_dir()}"


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n")
    return pytester


@pytest.fixture
def paced():
    model, server = paced_server(latency=0.1)
    yield model, server
    server.close()


def run(suite, synthetic, spec, tmp_path, *args, name="r"):
    report, predictions = tmp_path / f"{name}.json", tmp_path / f"{name}.jsonl"
    runner = suite.runpytest_subprocess if name == "c" else suite.runpytest  # Ctrl-C: its own process
    result = runner(
        f"--dataset={synthetic}",
        "--detector",
        spec,
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *args,
    )
    document = read_json(report) if report.exists() else {"samples": []}
    return result, document, predictions


def answers(document):
    return {r["uid"]: (r["outcome"], r.get("point"), r.get("raw")) for r in document["samples"]}


@pytest.mark.slow
@XDIST
def test_concurrency_1_and_32_give_the_same_records(suite, synthetic, paced, workers, tmp_path):
    model, server = paced
    base = f"openai:base_url={server.url},model=paced,retries=0"
    one, doc_one, _ = run(
        suite, synthetic, base + ",concurrency=1", tmp_path, "--grounding-limit=16", *workers, name="a"
    )
    assert model.peak <= (2 if workers else 1)  # one in flight per process
    model.peak = 0
    many, doc_many, _ = run(
        suite, synthetic, base + ",concurrency=32", tmp_path, "--grounding-limit=16", *workers, name="b"
    )
    assert one.ret == many.ret == 1  # the paced model's answers miss: failed items, the same ones
    assert len(answers(doc_one)) == 16 and answers(doc_one) == answers(doc_many)
    assert all(outcome != "error" for outcome, _, _ in answers(doc_many).values())
    (block_one,), (block_many,) = doc_one["summary"].values(), doc_many["summary"].values()
    assert block_one["accuracy"] == block_many["accuracy"] and block_one["hits"] == block_many["hits"]
    assert model.peak >= 4  # really in flight together
    (info,) = doc_many["run"]["detectors"].values()
    served = info["served"]
    assert served["requests"] == 16 and served["concurrency_reached"] >= 2
    screens = {r["image"] for r in doc_many["samples"]}
    encoded = served["screens_encoded"]  # one encoding per screen and process (xdist: a screen may span two)
    assert encoded == len(screens) < 16 if not workers else len(screens) <= encoded < 16
    assert info["throughput"]["samples"] == 16 and info["throughput"]["samples_per_s"] > 0
    many.stdout.fnmatch_lines(["*served: * requests in flight reached*16 requests, 0 retries*"])


@pytest.mark.slow
@XDIST
def test_requests_only_for_the_items_that_run(suite, synthetic, paced, workers, tmp_path):
    model, server = paced
    spec = f"openai:base_url={server.url},model=paced,retries=0,concurrency=8"
    uids = [s.uid for s in __import__("pytest_grounding.datasets", fromlist=["x"]).load_dataset(synthetic).samples]
    chosen = uids[1:20:3]  # -k selects 7 of the first 20
    result, document, _ = run(
        suite, synthetic, spec, tmp_path, "--grounding-limit=20", "-k", " or ".join(chosen), *workers, name="k"
    )
    assert_counts(result, missed=len(chosen), deselected=0 if workers else 20 - len(chosen))  # xdist: none counted
    assert len(model.chats) == len(chosen) == len(document["samples"])
    # resume: 10 done, then 20 asked for: 10 more requests, not 20
    model.chats.clear()
    run(suite, synthetic, spec, tmp_path, "--grounding-limit=10", *workers, name="p")
    assert len(model.chats) == 10
    (tmp_path / "p.jsonl").rename(tmp_path / "q.jsonl")
    model.chats.clear()
    result, document, predictions = run(
        suite, synthetic, spec, tmp_path, "--grounding-limit=20", "--grounding-resume", *workers, name="q"
    )
    assert len(model.chats) == 10 and len(read_jsonl(predictions)) == 20
    assert_counts(result, missed=10, deselected=0 if workers else 10)


INTERRUPT = """
import os
import pytest

calls = []

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    calls.append(item.nodeid)
    if len(calls) == 6:
        raise KeyboardInterrupt
"""


@pytest.mark.slow
def test_ctrl_c_mid_flight_loses_no_finished_record(suite, synthetic, tmp_path):
    model, server = paced_server(latency=0.3)
    try:
        suite.makeconftest(INTERRUPT)
        spec = f"openai:base_url={server.url},model=paced,retries=0,concurrency=8"
        result, document, predictions = run(suite, synthetic, spec, tmp_path, "--grounding-limit=30", name="c")
        assert result.ret == 2  # interrupted
        lines = read_jsonl(predictions)
        sent = len(model.chats)
        # never more than two windows past the interrupted item (at most one in flight)
        assert 5 <= sent <= 6 + AHEAD * 8
        assert document["partial"] and len(document["samples"]) == 5
        assert {r["uid"] for r in document["samples"]} <= {r["uid"] for r in lines}  # no finished record lost
        assert len(lines) >= 5
        # what came back is kept: the resumed run asks only for the rest
        suite.makeconftest("")
        model.chats.clear()
        result, document, predictions = run(
            suite, synthetic, spec, tmp_path, "--grounding-limit=30", "--grounding-resume", name="c"
        )
        assert len(model.chats) == 30 - len(lines)
        assert len(read_jsonl(predictions)) == 30
    finally:
        server.close()


CRASH = """
import os
import pytest

calls = []

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    # the first worker at its third item dies (each gets at least three): whichever gets there
    calls.append(item.nodeid)
    if len(calls) == 3:
        try:
            os.close(os.open("crashed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        os._exit(3)
"""


@pytest.mark.slow
def test_a_worker_crash_mid_flight_loses_no_finished_record(suite, synthetic, paced, tmp_path):
    _model, server = paced
    suite.makeconftest(CRASH)
    spec = f"openai:base_url={server.url},model=paced,retries=0,concurrency=8"
    _, document, predictions = run(suite, synthetic, spec, tmp_path, "--grounding-limit=24", "-n", "2")
    records = document["samples"]
    assert len(records) == 24 and len({r["uid"] for r in records}) == 24  # every item once, none lost
    crashed = [r for r in records if r["outcome"] == "error"]
    assert len(crashed) == 1 and "crashed" in crashed[0]["error"]
    assert len(read_jsonl(predictions)) == 24


def test_the_limiter_grows_while_the_server_keeps_up_and_halves_on_overload():
    now = [0.0]
    limiter = Limiter(ConcurrencySetting.parse("auto", 16), clock=lambda: now[0])
    assert limiter.limit == 8
    for _ in range(40):  # demand beyond the limit, all answered: slow start up to the maximum
        for _ in range(limiter.limit):
            limiter.acquire()
        for _ in range(limiter.limit):
            limiter.release(seconds=0.1)
    assert limiter.limit == 16 == limiter.peak_limit
    limiter.acquire()
    limiter.acquire()
    limiter.release(overloaded=True, seconds=0.5)
    limiter.release(overloaded=True, seconds=0.5)  # the same burst: one cut, not two
    assert limiter.limit == 8 and limiter.cuts == 1
    now[0] += 1.0
    limiter.acquire()
    limiter.release(overloaded=True, seconds=0.5)
    assert limiter.limit == 4 and limiter.cuts == 2
    fixed = Limiter(ConcurrencySetting.parse("5"))
    fixed.acquire()
    fixed.release(overloaded=True)
    assert fixed.limit == 5
    with pytest.raises(ValueError, match="whole number or auto"):
        ConcurrencySetting.parse("many")


@pytest.mark.slow
def test_a_429_storm_shrinks_concurrency(suite, synthetic, tmp_path):
    model, server = paced_server(latency=0.2, capacity=3, overload_status=429)
    try:
        spec = f"openai:base_url={server.url},model=paced,retries=10,backoff=0.02,concurrency=auto,max_concurrency=16"
        result, document, _ = run(suite, synthetic, spec, tmp_path, "--grounding-limit=24", name="s")
    finally:
        server.close()
    assert model.refused > 0
    assert all(r["outcome"] != "error" for r in document["samples"]) and len(document["samples"]) == 24
    (info,) = document["run"]["detectors"].values()
    served = info["served"]["processes"]["main"]
    assert served["cuts"] >= 1 and served["retries"] == model.refused and served["limit_now"] < 8
    result.stdout.fnmatch_lines([f"*served: *{model.refused} retries, {model.refused} overloads*"])


BATCHING = """
import hashlib
import json
import threading

from pytest_grounding.core.types import Prediction

LOG = "batches.jsonl"
lock = threading.Lock()


class Batching:
    # answers from the instruction and the image only (never the target), in batches
    name = "batching"

    def __init__(self, batch=1):
        self.batch_size = int(batch)

    def _answer(self, query):
        digest = hashlib.sha256((query.instruction + str(query.image.size)).encode()).digest()
        return Prediction(point=(digest[0] * 4.0, digest[1] * 4.0), raw=query.instruction[:20])

    def predict(self, query):
        return self.predict_batch([query])[0]

    def predict_batch(self, queries):
        with lock, open(LOG, "a") as log:
            log.write(json.dumps(len(queries)) + "\\n")
        return [self._answer(q) for q in queries]


def pytest_grounding_register_detectors(registry):
    registry.register("batching", Batching)
"""


@pytest.mark.slow
@XDIST
def test_a_batching_detector_gets_batches_and_the_same_answers(suite, synthetic, workers, tmp_path):
    suite.makeconftest(BATCHING)
    log = suite.path / "batches.jsonl"
    _, one, _ = run(suite, synthetic, "batching:batch=1", tmp_path, "--grounding-limit=18", *workers, name="a")
    assert set(read_jsonl(log)) == {1}
    log.unlink()
    _, four, _ = run(suite, synthetic, "batching:batch=4", tmp_path, "--grounding-limit=18", *workers, name="b")
    sizes = read_jsonl(log)
    assert sum(sizes) == 18 and max(sizes) == 4 and sizes.count(4) >= 3
    assert len(answers(one)) == 18 and answers(one) == answers(four)


def test_the_xdist_window_comes_from_the_spec_without_loading_the_detector():
    from pytest_grounding.detectors import builtin_registry
    from pytest_grounding.detectors.strategies import builtin_registry as strategies
    from pytest_grounding.plugin.scheduling import declared_window
    from pytest_grounding.plugin.specs import SpecBook

    def window(spec):
        return declared_window(spec, SpecBook(builtin_registry(), strategies()))

    assert window("openai:base_url=http://127.0.0.1:9/v1,concurrency=12") == 12
    assert window("openai:base_url=http://127.0.0.1:9/v1") == 32  # auto, its default maximum
    assert window("openai:base_url=http://127.0.0.1:9/v1,concurrency=auto,max_concurrency=50") == 50
    assert window("center") == 1


def test_an_xdist_chunk_ends_with_its_screen_and_grows_by_at_most_the_spill():
    from pytest_grounding.plugin.scheduling import SCREEN_SPILL, to_screen_end

    screens = ["a", "a", "a", "b", "b", "c", None, None, "d"]
    pending = list(range(len(screens)))
    assert to_screen_end(pending, 2, screens) == 3  # the rest of screen a
    assert to_screen_end(pending, 3, screens) == 3  # already at a screen's end
    assert to_screen_end(pending, 4, screens) == 5
    assert to_screen_end(pending, 7, screens) == 7  # unknown screens are never joined
    assert to_screen_end(pending, 0, screens) == 0 and to_screen_end(pending, 20, screens) == 9
    assert to_screen_end([4, 5, 3], 1, screens) == 1  # what is pending, in its order
    one_screen = ["s"] * 100
    assert to_screen_end(list(range(100)), 10, one_screen) == 10 + SCREEN_SPILL


def test_xdist_refills_keep_a_window_and_end_the_workers_together():
    from pytest_grounding.plugin.scheduling import refill

    assert refill(40, 32, 100, [40, 40]) == 0  # a window in flight and the running item: enough
    assert refill(33, 32, 100, [33, 60]) == 31  # refilled to two windows
    assert refill(0, 32, 1, [0, 5]) == 1  # a worker with nothing gets something while items are left
    assert refill(3, 32, 0, [3, 3]) == 0
    assert refill(20, 32, 30, [20, 40]) == 25  # to its even share of what is left, 45, not 64

    def tail(total: int) -> int:
        """Two workers taking an item each per step, refilled after each (as check_schedule is):
        how far apart their queues are when the last item is sent."""
        pending, queues = total - 74, [37, 37]  # LoadScheduling's first quarter, split
        while pending:
            for node in (0, 1):
                queues[node] -= 1
                sent = refill(queues[node], 32, pending, queues)
                queues[node] += sent
                pending -= sent
        return abs(queues[0] - queues[1])

    # a whole refill to one worker just before the end would leave it up to a window more
    assert max(tail(total) for total in range(200, 400, 7)) <= 2


@pytest.mark.slow
@XDIST
def test_one_encoding_per_screen_under_xdist(suite, synthetic, paced, workers, tmp_path):
    """With --dist load, the default set's 64 screens are each encoded by one worker only."""
    _, server = paced
    spec = f"openai:base_url={server.url},model=paced,retries=0,concurrency=8"
    _, report, _ = run(suite, synthetic, spec, tmp_path, *workers)
    served = next(iter(report["run"]["detectors"].values()))["served"]
    assert served["requests"] == 300 and served["screens_encoded"] == 64, served


@pytest.mark.slow
@XDIST
def test_x_stops_sending_and_keeps_finished_answers_for_resume(suite, synthetic, paced, workers, tmp_path):
    model, server = paced
    spec = f"openai:base_url={server.url},model=paced,retries=0,concurrency=8"
    result, document, predictions = run(suite, synthetic, spec, tmp_path, "--grounding-limit=40", "-x", *workers)
    assert result.ret in (1, 2) and document["partial"]  # xdist reports -x as interrupted
    scored = {r["uid"] for r in document["samples"]}
    kept = {r["uid"] for r in read_jsonl(predictions)}
    assert scored <= kept  # no finished record lost; answers back for items -x kept from running are kept too
    assert len(model.chats) < 40  # stopped sending
    model.chats.clear()
    run(suite, synthetic, spec, tmp_path, "--grounding-limit=40", "--grounding-resume", *workers)
    assert len(model.chats) == 40 - len(kept)  # nobody pays twice


def test_a_failing_query_in_a_prefetched_batch_loses_no_other_answer():
    """The pipeline's batch keeps each query's own outcome (detectors.batching.BatchError): one
    query that fails is that sample's error, the others keep their predictions."""
    import threading

    from pytest_grounding.core.types import Prediction
    from pytest_grounding.detectors.batching import BatchError
    from pytest_grounding.plugin.pipeline import BatchGroup

    class HalfBroken:
        batch_size = 3

        def predict(self, query):
            return self.predict_batch([query])[0]

        def predict_batch(self, queries):
            outcomes = [ValueError("no answer") if q == "bad" else Prediction(point=(1.0, 2.0)) for q in queries]
            if any(isinstance(o, Exception) for o in outcomes):
                raise BatchError(outcomes)
            return outcomes

    group = BatchGroup(HalfBroken(), [0, 1, 2], threading.Lock())
    results: dict[int, object] = {}

    def ask(index, query):
        try:
            results[index] = group.member(index).predict(query)
        except Exception as exc:
            results[index] = exc

    threads = [threading.Thread(target=ask, args=(i, q)) for i, q in enumerate(["a", "bad", "c"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert isinstance(results[1], ValueError)
    assert results[0] == results[2] == Prediction(point=(1.0, 2.0))
    assert group.sizes == [3]


def test_the_pipeline_threads_are_reused_grow_only_when_all_are_busy_and_end_on_close():
    """Evaluations run on a few reused daemon threads (not one new thread per item): as many as
    ever ran at once, so a job never waits for a thread; close() ends them after their jobs."""
    import threading

    from pytest_grounding.plugin.pipeline import Workers

    workers = Workers()
    release, ran = threading.Event(), []
    for i in range(3):  # three held at once: three threads
        workers.submit(lambda i=i: (release.wait(5), ran.append(i)))
    assert workers.count == 3
    release.set()
    deadline = threading.Event()
    while len(ran) < 3 and not deadline.wait(0.01):
        pass

    def all_idle():  # a thread counts itself idle just after its job: up to 5 s on a busy machine
        for _ in range(500):
            if workers.idle == 3:
                return
            deadline.wait(0.01)

    all_idle()
    for _ in range(20):  # one at a time afterwards: no new thread
        done = threading.Event()
        workers.submit(done.set)
        assert done.wait(5)
        all_idle()
    assert workers.count == 3
    names = {t.name for t in threading.enumerate() if t.name.startswith("grounding-prefetch-")}
    assert len(names) >= 3 and all(t.daemon for t in threading.enumerate() if t.name in names)
    workers.close()
    for thread in [t for t in threading.enumerate() if t.name in names]:
        thread.join(5)
        assert not thread.is_alive()


def test_screen_slots_let_only_the_cores_share_prepare_at_once_and_never_block_their_holder():
    import threading
    import time

    from pytest_grounding.detectors.encoding import ScreenSlots

    slots = ScreenSlots(2)
    lock, busy, most = threading.Lock(), [0], [0]

    def prepare():
        with slots.held(), slots.held():  # a preparation inside another: no second slot, no deadlock
            with lock:
                busy[0] += 1
                most[0] = max(most[0], busy[0])
            time.sleep(0.02)
            with lock:
                busy[0] -= 1

    threads = [threading.Thread(target=prepare) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert most[0] == 2 and busy[0] == 0


def test_waiting_for_a_screen_slot_is_reported_as_waiting(monkeypatch):
    """The seconds a sample waited for a place among the screens being prepared are queueing (taken
    out of the request's latency), as is waiting for another sample's encoding of its screen."""
    import threading

    from pytest_grounding.detectors import encoding

    slots = encoding.ScreenSlots(1)
    monkeypatch.setattr(encoding, "SCREEN_SLOTS", slots)
    holding, release = threading.Event(), threading.Event()

    def hold():
        with slots.held():
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(10)
    threading.Timer(0.2, release.set).start()
    value, waited = encoding.EncodingCache().get_timed("screen", lambda: "encoded")
    holder.join(10)
    assert value == "encoded" and waited >= 0.15


@pytest.mark.parametrize(("cores", "workers", "share"), [(2, 1, 2), (2, 2, 1), (2, 4, 1), (16, 4, 4), (1, 1, 1)])
def test_a_process_share_of_the_cores(cores, workers, share):
    from pytest_grounding.detectors.devices import cores_share

    assert cores_share(cores, workers) == share


def test_the_screen_reader_decodes_a_screen_once_until_its_file_changes(tmp_path):
    import os

    from PIL import Image

    from pytest_grounding.core.types import Box, Sample
    from pytest_grounding.detectors.encoding import file_digest, image_digest
    from pytest_grounding.evaluate.runner import read_image
    from pytest_grounding.plugin.screens import ScreenReader

    def sample(sid, image):
        return Sample(dataset="d", id=sid, uid=sid, image=image, instruction="OK", bbox=Box(0, 0, 4, 4))

    path = tmp_path / "screen.png"
    Image.new("RGB", (40, 30), "white").save(path)
    first, second = (sample(f"s{i}", path) for i in (1, 2))
    reader = ScreenReader()
    image, problem = reader.read(first)
    assert problem is None and reader.read(second)[0] is image  # one decoding for the screen's samples
    assert image_digest(image) == file_digest(path.read_bytes(), image)  # the file's: the pixels are not hashed
    # PIL copies `info` into crops, resizes and copies: each is hashed as the other pixels it is
    # (a zoom-in's crop once got the whole screen's encoding)
    crop, copy = image.crop((0, 0, 20, 15)), image.copy()
    copy.putpixel((0, 0), (1, 2, 3))
    assert len({image_digest(image), image_digest(crop), image_digest(copy)}) == 3
    Image.new("RGB", (40, 30), "black").save(path)
    os.utime(path, ns=(1, 1))  # a changed file is read again (modification time and size)
    again, _ = reader.read(second)
    assert again is not image and again.getpixel((0, 0)) == (0, 0, 0)
    missing = sample("m", tmp_path / "gone.png")
    assert reader.read(missing) == read_image(missing) == (None, f"image not found: {missing.image}")


SHARED_IMAGES = """
import json

from pytest_grounding.types import Prediction

SEEN = {}


class Recording:
    name = "recording"

    def predict(self, query):
        SEEN.setdefault(str(query.image.size), set()).add(id(query.image))
        return Prediction(point=(1.0, 1.0))


def pytest_grounding_register_detectors(registry):
    registry.register("recording", Recording)


def pytest_sessionfinish(session):
    with open("images.json", "w") as out:
        json.dump({size: len(ids) for size, ids in SEEN.items()}, out)
"""


def test_items_run_the_plain_way_share_their_screen_s_decoded_image(suite, synthetic, tmp_path):
    """A detector without prefetching gets one decoded image per screen for its samples (the plain
    path read every sample's screen from its file before)."""
    suite.makeconftest(SHARED_IMAGES)
    result, document, _ = run(suite, synthetic, "recording", tmp_path, "--grounding-limit=12")
    assert len(document["samples"]) == 12, result.stdout.str()[-2000:]
    seen = read_json(suite.path / "images.json")
    screens = {r["image"] for r in document["samples"]}
    assert sum(seen.values()) <= len(screens) < 12, seen


@pytest.mark.parametrize("layout", ["one served", "two served, one after the other", "served and batching, mixed"])
def test_planning_costs_the_windows_not_the_run_s_length(layout):
    """A fill looks at the items it may start, not at every item of the horizon: planning 1,200
    items asks for fewer than 12 lane lookups per item (before, a fill looked at up to 4,096 items
    several times per item: quadratic in the run's length), and every item is still started
    once, in order within its detector, never more than its windows allow."""
    import types

    from pytest_grounding.plugin.pipeline import Pipeline, serial_peek

    class Served:
        concurrency = 4

    class Batching:
        batch_size = 3

        def predict_batch(self, queries):  # never called: planning only
            raise AssertionError

    detectors = {"a": Served(), "b": Served() if layout.startswith("two") else Batching()}
    count = 1200
    if layout == "one served":
        specs = ["a"] * count
    elif layout.startswith("two"):
        specs = ["a"] * (count // 2) + ["b"] * (count // 2)
    else:
        specs = ["a" if i % 3 else "b" for i in range(count)]
    items = [
        types.SimpleNamespace(
            fixturenames=["grounding_check"],
            callspec=types.SimpleNamespace(params={"grounding_detector_name": spec, "grounding_sample": i}),
        )
        for i, spec in enumerate(specs)
    ]
    worker = types.SimpleNamespace(pool=types.SimpleNamespace(get=detectors.__getitem__), evaluator=None)
    pipeline = Pipeline(worker, items, serial_peek(count))
    started: list[int] = []
    most_ahead = 0

    def finish_at_once(slot, detector, group):  # stands in for the evaluation thread
        started.append(slot.index)
        lane = pipeline.lanes[slot.spec]
        with lane.counting:
            lane.running -= 1
        slot.done.set()

    pipeline._thread = finish_at_once
    lookups = 0
    find = pipeline._lane

    def counted(index):
        nonlocal lookups
        lookups += 1
        return find(index)

    pipeline._lane = counted
    for index, item in enumerate(items):
        pipeline.advance(item)
        most_ahead = max(most_ahead, max(started) - index)
        slot = pipeline.slots[index]
        assert pipeline.take(item, slot.sample, slot.detector, slot.spec) is None  # evaluation stubbed out
    assert lookups < 12 * count, lookups
    assert sorted(started) == list(range(count))
    for spec in detectors:
        mine = [i for i in started if specs[i] == spec]
        assert mine == sorted(mine)
    if layout == "one served":
        assert most_ahead <= 2 * Served.concurrency  # two windows ahead, as before
    assert pipeline.in_flight() == 0
