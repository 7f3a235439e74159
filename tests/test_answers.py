"""Answers where the engine put them (issue 56), against stand-ins that behave as the field saw
thinking models served: vLLM 0.3x puts a reasoning parser's text in `message.reasoning`, SGLang and
llama.cpp in `message.reasoning_content`, and a truncated or skipped think sends the whole answer
there with `content` empty or null. By default those samples are `answer_in_reasoning` misses with
one terminal line naming the option; with `answer_from=reasoning-if-empty` they are read (hits)."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, XDIST, LoopbackServer, json_body, make_project, read_json, read_jsonl

pytest.importorskip("httpx")

from pytest_grounding.detectors.fake_server import answer_text, image_size, in_frame
from pytest_grounding.detectors.http import completion_answer
from pytest_grounding.detectors.vlm.presets import get_preset
from pytest_grounding.render.markdown import report_markdown

MINI = str(FIXTURES / "mini")
PRESET = "uitars-1.5-point"
# the mini set's targets (160x120 screens): the centre of each, by its instruction
TARGETS = {"red": (20, 20), "blue": (135, 95), "green": (120, 25)}


class Thinking:
    """A thinking model behind a reasoning parser: the click in `field`, `content` as given."""

    def __init__(self, field, content):
        self.field, self.content = field, content
        self.preset = get_preset(PRESET)

    def reply(self, handler):
        if handler.path.endswith("/models"):
            return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
        if not handler.path.endswith("/chat/completions"):
            return 404, {"detail": "Not Found"}
        body = json_body(handler)
        text = json.dumps(body)
        sent = image_size(body) or (160, 120)
        x, y = next((xy for word, xy in TARGETS.items() if f"the {word} square" in text), (80, 60))
        point = in_frame(self.preset.transform, sent, x * sent[0] / 160, y * sent[1] / 120)
        click = answer_text(self.preset.extractors, *point)
        message = {"role": "assistant", "content": self.content, self.field: f"The square is there. {click}"}
        return 200, {
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 400, "completion_tokens": 20},
        }


@pytest.fixture
def suite(pytester):
    make_project(pytester)
    return pytester


def run(suite, tmp_path, spec, *args):
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = suite.runpytest(
        f"--dataset={MINI}",
        "-k",
        "m01 or m02 or m03",
        "--detector",
        spec,
        "--grounding-frame-check=off",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *args,
    )
    return result, read_json(report), read_jsonl(predictions)


def test_the_answer_is_read_where_the_engine_put_it():
    plain = {"choices": [{"message": {"content": "(1,2)"}}]}
    assert completion_answer(plain).meta() == {} and completion_answer(plain).text == "(1,2)"
    vllm = {"choices": [{"message": {"content": "", "reasoning": "hm (3,4)"}}]}
    found = completion_answer(vllm)
    assert found.text == "" and found.meta() == {"reasoning_field": "reasoning", "reasoning_chars": 8}
    read = completion_answer(vllm, "reasoning-if-empty")
    assert read.text == "hm (3,4)" and read.meta()["answer_from"] == "reasoning"
    sglang = {"choices": [{"message": {"content": None, "reasoning_content": "(5,6)"}}]}
    assert completion_answer(sglang, "reasoning-if-empty").text == "(5,6)"
    # content present: never replaced, whatever the reasoning holds; a </think> left in it is told
    both = {"choices": [{"message": {"content": "x</think>(7,8)", "reasoning_content": "(5,6)"}}]}
    kept = completion_answer(both, "reasoning-if-empty")
    assert kept.text == "x</think>(7,8)" and kept.think_in_content and not kept.from_reasoning


@XDIST
@pytest.mark.parametrize(
    ("field", "content"), [("reasoning", ""), ("reasoning_content", None)], ids=["vllm", "sglang-null"]
)
def test_an_answer_in_the_reasoning_field_is_its_own_miss_and_read_on_request(suite, workers, tmp_path, field, content):
    engine = Thinking(field, content)
    server = LoopbackServer(engine.reply)
    spec = f"openai:preset={PRESET},base_url={server.url},model=m"
    try:
        result, document, records = run(suite, tmp_path, spec, *workers)
        read_result, read_document, read_records = run(
            suite, tmp_path / "read", spec + ",answer_from=reasoning-if-empty", *workers
        )
    finally:
        server.close()
    assert [r["outcome"] for r in records] == ["wrong_format"] * 3, result.stdout.str()[-3000:]
    assert {r["miss_kind"] for r in records} == {"answer_in_reasoning"}
    assert all(r["meta"]["reasoning_field"] == field and r["meta"]["reasoning_chars"] > 20 for r in records)
    (block,) = document["summary"].values()
    assert block["miss_analysis"]["kinds"]["answer_in_reasoning"] == 3
    assert block["reasoning"]["answer_in_reasoning"] == 3 and block["reasoning"]["from_reasoning"] == 0
    text = result.stdout.str()
    (line,) = [row for row in text.splitlines() if "answer_in_reasoning 3" in row and "reasoning field" in row]
    assert "answer_from=reasoning-if-empty" in line
    assert "answer_in_reasoning" in report_markdown(document)
    # read from the reasoning field on request: hits, and the report says how many came from there
    assert [r["outcome"] for r in read_records] == ["hit"] * 3, read_result.stdout.str()[-3000:]
    (read_block,) = read_document["summary"].values()
    assert read_block["reasoning"]["from_reasoning"] == 3 and read_block["reasoning"]["answer_in_reasoning"] == 0
    assert "answers read from it 3" in read_result.stdout.str()
    (info,) = read_document["run"]["detectors"].values()
    assert info["answer_from"] == "reasoning-if-empty"


def test_a_bad_answer_from_is_one_message(suite, tmp_path):
    server = LoopbackServer(Thinking("reasoning", "").reply)
    try:
        result = suite.runpytest(
            f"--dataset={MINI}", "--detector", f"openai:preset={PRESET},base_url={server.url},model=m,answer_from=thoughts"
        )
    finally:
        server.close()
    assert result.ret != 0 and "answer_from='thoughts': one of content, reasoning-if-empty" in (
        result.stdout.str() + result.stderr.str()
    )
