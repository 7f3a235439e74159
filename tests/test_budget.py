"""--grounding-budget: a served run stops sending once its budget is spent (the requests counted at
the loopback model), the rest of the items are not run (never errors or misses), the report is
partial and says which budget ended it, and --grounding-resume continues it."""

import json

import pytest
from paced_server import paced_server

from helpers import XDIST, read_json

pytest.importorskip("httpx")

from pytest_grounding.core.budget import Budget, Meter, parse_budget
from pytest_grounding.datasets.synth import default_dataset_dir

SUITE = (
    "def test_grounding(grounding_sample, grounding_detector, grounding_check):\n"
    "    grounding_check(grounding_sample, grounding_detector)\n"
)
LIMIT = 12


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n")
    return pytester


@pytest.fixture
def paced():
    model, server = paced_server(latency=0.05)
    yield model, server
    server.close()


def run(suite, server, tmp_path, *args, name="r", concurrency=8, frame_check="off"):
    report, predictions = tmp_path / f"{name}.json", tmp_path / "p.jsonl"
    result = suite.runpytest(
        f"--dataset=pointerbench:{default_dataset_dir()}",
        f"--grounding-limit={LIMIT}",
        "--detector",
        f"openai:base_url={server.url},model=paced,preset=uitars-1.5-point,retries=0,concurrency={concurrency}",
        f"--grounding-frame-check={frame_check}",  # off: the stub counts only the samples' requests
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *args,
    )
    return result, read_json(report)


# -- the parser and the meter -----------------------------------------------------------------------


def test_parse_budget_any_subset():
    assert parse_budget("requests=5", "--x") == Budget(requests=5)
    assert parse_budget("seconds=1.5,cost=0.2,tokens=100", "--x") == Budget(tokens=100, seconds=1.5, cost=0.2)
    assert parse_budget("", "--x") is None


@pytest.mark.parametrize(
    "bad", ["requests", "requests=0", "requests=2.5", "apples=3", "seconds=x", "tokens=1,tokens=2"]
)
def test_parse_budget_refuses(bad):
    with pytest.raises(ValueError, match="--grounding-budget"):
        parse_budget(bad, "--grounding-budget")


def test_shares_add_up_to_the_whole():
    whole = Budget(requests=7, tokens=10, seconds=3.0, cost=1.0)
    parts = [whole.share(i, 3) for i in range(3)]
    assert sum(p.requests for p in parts) == 7 and sum(p.tokens for p in parts) == 10
    assert all(p.seconds == 3.0 for p in parts) and sum(p.cost for p in parts) == pytest.approx(1.0)


def test_meter_refuses_past_each_budget():
    now = [0.0]
    meter = Meter(Budget(requests=2, seconds=10), clock=lambda: now[0])
    assert meter.admit() and meter.admit() and not meter.admit()
    assert meter.ended == "requests"
    timed = Meter(Budget(seconds=10), clock=lambda: now[0])
    assert timed.admit()
    now[0] = 10.0
    assert not timed.admit() and timed.ended == "seconds"
    tokens = Meter(Budget(tokens=100))
    tokens.spend({"total_tokens": 105}, None)
    assert not tokens.admit() and tokens.ended == "tokens"
    assert Budget(requests=1000000, seconds=0.5).describe() == "requests=1000000,seconds=0.5"


# -- runs -------------------------------------------------------------------------------------------


def check_schema(document):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads(files("pytest_grounding").joinpath("schema/report.schema.json").read_text())
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)] == []


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@XDIST
def test_a_request_budget_sends_no_more_and_leaves_the_rest_not_run(suite, paced, tmp_path, workers):
    model, server = paced
    result, document = run(suite, server, tmp_path, "--grounding-budget=requests=5", *workers)
    assert len(model.chats) + server.probes <= 5  # counted where they arrive: the probe's completion too
    assert server.probes >= 1 and document["budget"]["startup_requests"] == server.probes
    assert len(document["samples"]) == len(model.chats) >= (5 - server.probes - 1 if workers else 5 - server.probes)
    assert all(record["outcome"] != "error" for record in document["samples"])
    assert len(document["not_run"]) == LIMIT - len(document["samples"])
    assert document["partial"] is True
    budget = document["budget"]
    assert budget["limits"] == {"requests": 5} and budget["ended"] == "requests=5"
    assert budget["spent"]["requests"] == len(model.chats) + server.probes
    assert budget["per_worker"] is bool(workers)
    check_schema(document)
    result.stdout.fnmatch_lines(
        ["grounding budget: requests=5*", "*not run: * of 12 samples (the budget requests=5 was spent)*"]
    )


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@XDIST
def test_the_frame_checks_requests_are_the_budgets_too(suite, paced, tmp_path, workers):
    """Every chat request the model gets counts: the frame check's 12 calibration screens are taken
    off the budget before the samples' share; a budget too small for both skips the check, saying so."""
    model, server = paced
    result, document = run(suite, server, tmp_path, "--grounding-budget=requests=30", *workers, frame_check="warn")
    assert 12 < len(model.chats) + server.probes <= 30, result.stdout.str()[-2000:]
    assert sum("Click the red square." in text for text in model.chats) == 12
    budget = document["budget"]
    assert budget["startup_requests"] == 12 + server.probes and budget["spent"]["requests"] <= 30
    assert len(document["samples"]) == len(model.chats) - 12
    assert len(document["samples"]) + len(document.get("not_run", [])) == LIMIT
    check_schema(document)
    model.reset()
    server.probes = 0
    result, document = run(suite, server, tmp_path, "--grounding-budget=requests=20", *workers, frame_check="warn")
    assert len(model.chats) + server.probes <= 20
    assert not any("Click the red square." in text for text in model.chats)
    assert "frame check" in result.stdout.str() and "too few for its 12 calibration requests" in result.stdout.str()


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_a_seconds_budget_stops_a_slow_run_and_resume_continues_it(suite, tmp_path):
    model, server = paced_server(latency=0.4)
    try:
        _, document = run(suite, server, tmp_path, "--grounding-budget=seconds=0.5", concurrency=1)
        first = len(model.chats)
        assert 1 <= first < LIMIT
        assert document["budget"]["ended"] == "seconds=0.5" and document["partial"] is True
        assert len(document["not_run"]) == LIMIT - first
        model.latency = 0.0
        _, whole = run(suite, server, tmp_path, "--grounding-resume", name="resumed", concurrency=1)
        assert len(model.chats) == LIMIT  # the rest only: nobody pays twice
        assert whole["partial"] is False and not whole["not_run"] and len(whole["samples"]) == LIMIT
        assert "budget" not in whole
    finally:
        server.close()


def test_a_budget_the_probe_spends_sends_no_sample(suite, paced, tmp_path):
    model, server = paced
    result, document = run(suite, server, tmp_path, "--grounding-budget=requests=1", frame_check="fail")
    assert server.probes == 1 and model.chats == []  # the probe's one completion, then nothing
    assert document["samples"] == [] and len(document["not_run"]) == LIMIT
    assert document["budget"]["spent"]["requests"] == 1 and document["budget"]["startup_requests"] == 1
    assert "too few for its 12 calibration requests" in result.stdout.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_bad_budget_is_one_usage_error(suite):
    result = suite.runpytest(f"--dataset=pointerbench:{default_dataset_dir()}", "--grounding-budget=requests=lots")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if "--grounding-budget" in line]
    assert len(errors) == 1 and "not a number" in errors[0]
    result = suite.runpytest(f"--dataset=pointerbench:{default_dataset_dir()}", "--grounding-budget=cost=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cost=X needs --grounding-price*"])


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_a_token_budget_ends_the_run_as_answers_come_back(suite, paced, tmp_path):
    model, server = paced  # each answer reports 105 tokens
    _, document = run(suite, server, tmp_path, "--grounding-budget=tokens=300", concurrency=1)
    # spent as answers come: the fourth sample is refused; what was in flight then (a window ahead) finishes
    assert 3 <= len(model.chats) <= 3 + 2 and len(document["samples"]) == len(model.chats)
    assert document["budget"]["ended"] == "tokens=300" and document["budget"]["spent"]["tokens"] >= 300
    assert len(document["not_run"]) == LIMIT - len(model.chats)


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@XDIST
@pytest.mark.parametrize(("seconds", "latency"), [(0.6, 2.5), (1.2, 4.0)])
def test_a_seconds_budget_bounds_the_frame_check_and_counts_its_time(suite, tmp_path, workers, seconds, latency):
    import time

    model, server = paced_server(latency=latency)
    try:
        started = time.monotonic()
        result, document = run(
            suite, server, tmp_path, f"--grounding-budget=seconds={seconds:g}", *workers, frame_check="warn"
        )
        took = time.monotonic() - started
    finally:
        server.close()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    (check,) = document["frame_check"].values()
    assert check["failed"] == 12 and "no answer within" in check["raw_answers"][0]  # cut at what the budget left
    # the check took the whole budget: no sample was sent, each is not run (never an error)
    assert document["samples"] == [] and len(document["not_run"]) == LIMIT and document["partial"] is True
    assert document["budget"]["ended"] == f"seconds={seconds:g}" and document["budget"]["spent"]["seconds"] >= seconds
    assert not [text for text in model.chats if "red square" not in text]
    assert took < latency + 10  # one calibration round at most, not 12 in a row (12 x latency)


class CountingEngine:
    """A vLLM stand-in whose usage counts the image's tokens: the screen check probes a second prompt."""

    def __init__(self):
        import threading

        self.chats, self.lock = 0, threading.Lock()

    def reply(self, handler):
        from helpers import image_prompt_tokens, json_body

        if handler.path == "/version":
            return 200, {"version": "0.32.0"}
        if handler.path.endswith("/models"):
            return 200, {"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 65536}]}
        if not handler.path.endswith("/chat/completions"):
            return 404, {"detail": "Not Found"}
        body = json_body(handler)
        with self.lock:
            self.chats += 1
        return 200, {
            "choices": [{"index": 0, "message": {"content": "(5,5)"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": image_prompt_tokens(body), "completion_tokens": 3},
        }


@XDIST
@pytest.mark.parametrize("presets", [("uitars-1.5-point",), ("uitars-1.5-point", "qwen2.5-vl")])
def test_a_request_budget_the_start_up_checks_spend_marks_every_sample_not_run(suite, tmp_path, workers, presets):
    from helpers import LoopbackServer

    engine = CountingEngine()
    server = LoopbackServer(engine.reply, answer_probes=False)
    report = tmp_path / "r.json"
    try:
        detectors = [arg for p in presets for arg in ("--detector", f"openai:base_url={server.url},model=m,preset={p}")]
        result = suite.runpytest(
            f"--dataset=pointerbench:{default_dataset_dir()}", f"--grounding-limit={LIMIT}", *detectors,
            "--grounding-budget=requests=1", "--grounding-json", str(report), *workers,
        )  # fmt: skip
    finally:
        server.close()
    assert result.ret != pytest.ExitCode.USAGE_ERROR, result.stderr.str()[-2000:]
    document = read_json(report)
    assert engine.chats == 1  # the first probe; the screen check's second prompt and the rest were not sent
    assert document["samples"] == [] and len(document["not_run"]) == LIMIT * len(presets)
    assert document["partial"] is True and document["budget"]["ended"] == "requests=1"
    assert "is spent by the checks before the run" in result.stdout.str()
