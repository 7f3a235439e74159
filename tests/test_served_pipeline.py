"""The prefetch pipeline with a served detector against a paced loopback model: the same records
whatever the concurrency (serial and under xdist), requests only for the items that run, nothing
finished lost on an interruption, adaptive concurrency cut by 429s, batches for a batching detector."""

import contextlib
import time

import pytest
from paced_server import paced_server

from helpers import XDIST, assert_counts, read_json, read_jsonl

pytest.importorskip("httpx")

from pytest_grounding.datasets.synth import default_dataset_dir
from pytest_grounding.detectors.http import ConcurrencySetting, Limiter
from pytest_grounding.plugin.worker.pipeline import AHEAD

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
        "--grounding-frame-check=off",  # the paced model counts the samples' requests only
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
    base = f"openai:preset=uitars-1.5-point,base_url={server.url},model=paced,retries=0"
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
    spec = f"openai:preset=uitars-1.5-point,base_url={server.url},model=paced,retries=0,concurrency=8"
    uids = [s.uid for s in __import__("pytest_grounding.datasets", fromlist=["x"]).load_dataset(synthetic).samples]
    chosen = uids[1:20:3]  # -k selects 7 of the first 20
    result, document, _ = run(
        suite, synthetic, spec, tmp_path, "--grounding-limit=20", "-k", " or ".join(chosen), *workers, name="k"
    )
    assert_counts(result, missed=len(chosen), deselected=0 if workers else 20 - len(chosen))  # xdist: none counted
    assert len(model.chats) == len(chosen) == len(document["samples"])
    # resume: 10 done, then 20 asked for: 10 more requests, not 20
    model.reset()
    run(suite, synthetic, spec, tmp_path, "--grounding-limit=10", *workers, name="p")
    assert len(model.chats) == 10
    (tmp_path / "p.jsonl").rename(tmp_path / "q.jsonl")
    model.reset()
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
        spec = f"openai:preset=uitars-1.5-point,base_url={server.url},model=paced,retries=0,concurrency=8"
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
        model.reset()
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
    spec = f"openai:preset=uitars-1.5-point,base_url={server.url},model=paced,retries=0,concurrency=8"
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
        spec = (
            f"openai:preset=uitars-1.5-point,base_url={server.url},model=paced,retries=10,backoff=0.02,"
            "concurrency=auto,max_concurrency=16"
        )
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


@pytest.mark.slow
@XDIST
def test_one_encoding_per_screen_under_xdist(suite, synthetic, paced, workers, tmp_path):
    """With --dist load, the default set's 64 screens are each encoded by one worker only."""
    _, server = paced
    spec = f"openai:preset=uitars-1.5-point,base_url={server.url},model=paced,retries=0,concurrency=8"
    _, report, _ = run(suite, synthetic, spec, tmp_path, *workers)
    served = next(iter(report["run"]["detectors"].values()))["served"]
    assert served["requests"] == 300 and served["screens_encoded"] == 64, served


@pytest.mark.slow
@XDIST
def test_x_stops_sending_and_keeps_finished_answers_for_resume(suite, synthetic, paced, workers, tmp_path):
    model, server = paced
    spec = f"openai:preset=uitars-1.5-point,base_url={server.url},model=paced,retries=0,concurrency=8"
    result, document, predictions = run(suite, synthetic, spec, tmp_path, "--grounding-limit=40", "-x", *workers)
    assert result.ret in (1, 2) and document["partial"]  # xdist reports -x as interrupted
    scored = {r["uid"] for r in document["samples"]}
    kept = {r["uid"] for r in read_jsonl(predictions)}
    assert scored <= kept  # no finished record lost; answers back for items -x kept from running are kept too
    assert len(model.chats) < 40  # stopped sending
    deadline = time.monotonic() + 10  # the requests -x left in flight are answered (and counted) first
    while model.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    model.reset()
    run(suite, synthetic, spec, tmp_path, "--grounding-limit=40", "--grounding-resume", *workers)
    assert len(model.chats) == 40 - len(kept)  # nobody pays twice


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


def test_a_yielding_thread_takes_a_screen_slot_only_when_nobody_else_waits():
    """The frame check's calibration screens (sent beside the first samples) never queue a sample's
    screen behind them: a released slot goes to the first thread that does not yield."""
    import threading
    import time

    from pytest_grounding.detectors.encoding import ScreenSlots

    slots = ScreenSlots(1)
    order, holding, release = [], threading.Event(), threading.Event()

    def hold():
        with slots.held():
            holding.set()
            release.wait(10)

    def prepare(name, yields):
        with slots.yielding() if yields else contextlib.nullcontext(), slots.held():
            order.append(name)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(10)
    threads = []
    for name, yields in (("check-1", True), ("check-2", True), ("sample-1", False), ("sample-2", False)):
        threads.append(threading.Thread(target=prepare, args=(name, yields)))
        threads[-1].start()
        time.sleep(0.05)  # each waits before the next comes
    release.set()
    for thread in (holder, *threads):
        thread.join(10)
    assert order == ["sample-1", "sample-2", "check-1", "check-2"]
    with slots.yielding(), slots.held():  # nobody waits: a yielding thread takes a free slot at once
        order.append("alone")


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
