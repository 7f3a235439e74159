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
from pytest_grounding.detectors.served_checks import (
    FIT_SIZE,
    PROBE_SIZE,
    ServerCheck,
    fit_size,
    image_tokens,
    judge_screen,
)
from pytest_grounding.detectors.served_engine import EngineInfo
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


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
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
            f"--dataset={MINI}",
            "--detector",
            f"openai:preset={PRESET},base_url={server.url},model=m,answer_from=thoughts",
        )
    finally:
        server.close()
    assert result.ret != 0 and "answer_from='thoughts': one of content, reasoning-if-empty" in (
        result.stdout.str() + result.stderr.str()
    )


# -- the probe judges its evidence ----------------------------------------------------------------


class Gateway:
    """A server whose counts cannot be used: `prompt_tokens` 1 for every request (a gateway), or
    (`min_pixels`) a Qwen-VL server that keeps every image as sent but enlarges one below its
    processor's minimum (UI-TARS-1.5's 78,400 pixels), counting tokens as it does."""

    def __init__(self, min_pixels=None):
        self.min_pixels, self.samples = min_pixels, 0

    def reply(self, handler):
        from pytest_grounding.detectors.served_checks import PROBE_INSTRUCTION
        from pytest_grounding.detectors.vlm.preprocess import smart_resize

        if handler.path.endswith("/models"):
            return 200, {"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 32768}]}
        if not handler.path.endswith("/chat/completions"):
            return 404, {"detail": "Not Found"}
        body = json_body(handler)
        if PROBE_INSTRUCTION not in json.dumps(body):
            self.samples += 1
        if self.min_pixels is None:
            tokens = 1
        else:
            width, height = image_size(body)
            h, w = smart_resize(height, width, 28, self.min_pixels, 16384 * 28 * 28)
            tokens = 300 + (w // 28) * (h // 28)
        return 200, {
            "choices": [{"index": 0, "message": {"content": "(10,10)"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 3},
        }


def test_counts_that_cannot_be_true_and_an_enlarged_probe_are_told_apart_from_a_shrunk_screen():
    from pytest_grounding.detectors.vlm.preprocess import smart_resize
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    p = resolve_preset("qwen2.5-vl").preprocess

    def server(size, min_pixels=78_400, max_pixels=16384 * 784):  # what a Qwen processor counts for the frame sent
        w, h = p.frame(size).model
        h, w = smart_resize(h, w, 28, min_pixels, max_pixels)
        return 300 + (w // 28) * (h // 28)

    probe = image_tokens(p, PROBE_SIZE)
    # issue 56's case: vLLM with UI-TARS-1.5's min_pixels enlarges the 320x240 probe (99 -> 120 tokens), keeps 800x600
    check = ServerCheck(
        EngineInfo("vllm", "0.32.0"), prompt_tokens=server(PROBE_SIZE), probe_image_tokens=probe, probed=True
    )
    judged = judge_screen(check, p, (800, 600), server((800, 600)), server)
    assert judged.resized is None and "enlarged the 320x240 probe" in judged.note and "about 120" in judged.note
    assert fit_size(p, (800, 600)) == FIT_SIZE  # far enough from the screen's frame to tell
    # a screen the server really shrinks (max_pixels) still stops the run, told against the fitted probe
    small_max = 1_000_000
    shrinking = ServerCheck(EngineInfo("vllm"), prompt_tokens=server(PROBE_SIZE), probe_image_tokens=probe, probed=True)
    judged = judge_screen(
        shrinking,
        p,
        (3440, 1440),
        server((3440, 1440), max_pixels=small_max),
        lambda size: server(size, max_pixels=small_max),
    )
    assert judged.resized is not None and judged.resized.shrunk and not judged.note
    # a small screen the server enlarges is named as enlarged, not shrunk
    tiny = (200, 150)
    judged = judge_screen(check, p, tiny, server(tiny), server)
    assert judged.resized is not None and not judged.resized.shrunk
    # a gateway that reports 1 for every request: one note, no verdict, the fitting probe never sent
    sent = []
    gateway = ServerCheck(EngineInfo("unknown"), prompt_tokens=1, probe_image_tokens=probe, probed=True)
    judged = judge_screen(gateway, p, (3440, 1440), 1, lambda size: sent.append(1))
    assert judged.resized is None and "cannot be used" in judged.note and not sent
    # one count for two very different screens
    flat = ServerCheck(EngineInfo("unknown"), prompt_tokens=50, probe_image_tokens=probe, probed=True)
    assert "cannot be used" in judge_screen(flat, p, (3440, 1440), 50, lambda size: None).note


@pytest.mark.parametrize("family", ["qwen2.5-vl", "gta1-at-32"])
def test_under_a_small_pixel_budget_a_server_cap_below_it_is_told_from_an_enlarged_probe(family):
    """Issue 59's pointer model behind vLLM: with the preset's max_pixels at 100,000 the second probe
    (560x420) and the largest screen share a frame within the tolerance, so a server that caps every
    screen at half that (all three probes shrunk alike) read as 'the server enlarged the small probe';
    the second probe is now a screen of about half the largest one's frame."""
    from pytest_grounding.detectors.vlm.preprocess import smart_resize
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    p = resolve_preset("gta1", max_pixels=100_000, factor=32).preprocess if family == "gta1-at-32" else None
    p = p or resolve_preset("qwen2.5-vl", max_pixels=100_000).preprocess
    factor = p.factor

    def server(size, min_pixels=3136, max_pixels=100_000):
        w, h = p.frame(size).model
        h, w = smart_resize(h, w, factor, min_pixels, max_pixels)
        return 300 + (w // factor) * (h // factor)

    large = (1280, 720)
    assert fit_size(p, large) != FIT_SIZE  # 560x420's frame is as large as 1280x720's under this budget
    sent = []

    def fit(size, **limits):
        sent.append(size)
        return server(size, **limits)

    probe = image_tokens(p, PROBE_SIZE)
    # a server whose processor keeps half the budget: every probe shrunk to one size; the screen is shrunk
    capped = ServerCheck(EngineInfo("vllm"), prompt_tokens=server(PROBE_SIZE, max_pixels=50_000),
                         probe_image_tokens=probe, probed=True)  # fmt: skip
    judged = judge_screen(capped, p, large, server(large, max_pixels=50_000), lambda size: fit(size, max_pixels=50_000))
    assert judged.resized is not None and judged.resized.shrunk and not judged.note, judged
    assert sent == [fit_size(p, large)]
    # a server whose minimum is above the small probe's frame but below the screen's: the probe enlarged, the
    # screen kept as sent (a note, the run goes on)
    floor = 85_000
    floored = ServerCheck(EngineInfo("vllm"), prompt_tokens=server(PROBE_SIZE, min_pixels=floor),
                          probe_image_tokens=probe, probed=True)  # fmt: skip
    judged = judge_screen(floored, p, large, server(large, min_pixels=floor), lambda size: server(size))
    assert judged.resized is None, judged
    # a server that keeps everything: no verdict, no note
    kept = ServerCheck(EngineInfo("vllm"), prompt_tokens=server(PROBE_SIZE), probe_image_tokens=probe, probed=True)
    assert judge_screen(kept, p, large, server(large), server) == type(judged)()


def screens(folder, size, n=3):
    """A dataset of `n` blank screens of `size` in the mini set's layout, one target each."""
    from PIL import Image

    data = folder / "data" / "test"
    data.mkdir(parents=True)
    rows = []
    for i in range(n):
        Image.new("RGB", size, (200, 200, 200)).save(data / f"s{i}.png")
        box = [10 + 50 * i, 10, 40 + 50 * i, 40]
        rows.append({"file_name": f"s{i}.png", "id": f"b{i}", "instruction": f"Click box {i}", "bbox": box,
                     "point": [box[0] + 15, 25], "answer_type": "point", "element_type": "icon", "app": "A",
                     "app_category": "office", "platform": "linux", "image_size": list(size)})  # fmt: skip
    (data / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@XDIST
@pytest.mark.parametrize("kind", ["gateway", "min-pixels"])
def test_a_server_whose_counts_cannot_be_used_or_that_enlarges_the_probe_runs_to_the_end(
    suite, workers, tmp_path, kind
):
    engine = Gateway(None if kind == "gateway" else 78_400)
    server = LoopbackServer(engine.reply, answer_probes=False)
    try:
        result = suite.runpytest(
            f"--dataset={screens(tmp_path / 'screens', (800, 600))}",
            "--detector",
            f"openai:base_url={server.url},model=m,preset=qwen2.5-vl",
            "--grounding-frame-check=off",
            "--grounding-json",
            str(tmp_path / "r.json"),
            *workers,
        )
    finally:
        server.close()
    assert result.ret in (0, 1), result.stdout.str()[-3000:] + result.stderr.str()[-2000:]
    document = read_json(tmp_path / "r.json")
    assert len(document["samples"]) == 3 and engine.samples == 3
    assert not any(r["outcome"] == "error" for r in document["samples"])
    notes = json.dumps(document)
    if kind == "gateway":
        assert "prompt-token counts cannot be used" in notes
        assert result.stdout.str().count("cannot be used") >= 1
    else:
        assert "enlarged the 320x240 probe" in notes and "shrank" not in result.stderr.str()


# -- which format a model answers best ------------------------------------------------------------


class SharesOnly:
    """A model that answers in [0,1] shares whatever format it is asked for (kimi-k2.6's best)."""

    def __init__(self):
        self.asked = []

    def reply(self, handler):
        if handler.path.endswith("/models"):
            return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
        if not handler.path.endswith("/chat/completions"):
            return 404, {"detail": "Not Found"}
        text = json.dumps(json_body(handler))
        self.asked.append(text)
        x, y = next((xy for word, xy in TARGETS.items() if f"the {word} square" in text), (80, 60))
        content = f"The element is at ({x / 160:.3f}, {y / 120:.3f})."
        return 200, {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 400, "completion_tokens": 12},
        }


@XDIST
def test_the_format_axis_names_the_format_a_model_answers_best(suite, workers, tmp_path):
    engine = SharesOnly()
    server = LoopbackServer(engine.reply)
    try:
        result, document, records = run(
            suite,
            tmp_path,
            f"openai:preset={PRESET},base_url={server.url},model=m",
            "--grounding-perturb",
            "format",
            "--grounding-html",
            str(tmp_path / "r.html"),
            *workers,
        )
    finally:
        server.close()
    assert len(records) == 3 * 5, result.stdout.str()[-3000:]
    by_format = {}
    for r in records:
        by_format.setdefault(r.get("variant") or "preset", []).append(r["outcome"])
    assert by_format["fmt-rel1"] == ["hit"] * 3 and by_format["preset"].count("hit") == 0
    (block,) = document["summary"].values()
    found = block["formats"]
    assert found["best"] == "rel1" and found["own_format"] == "pixels"
    accuracy = {row["format"]: row["accuracy"] for row in found["formats"]}
    assert accuracy["rel1"] == 1.0 and all(v < 1.0 for k, v in accuracy.items() if k != "rel1")
    assert found["own_accuracy"] < 1.0 and found["spread_points"] > 0
    rel1 = next(row for row in found["formats"] if row["format"] == "rel1")
    assert rel1["delta"] == 1.0 and rel1["miss_to_hit"] == 3 and rel1["ci95"] is not None
    # each format asked as the docs say, each answer parsed in the format it was asked in
    assert sum('\\"point_2d\\": [x, y]' in text for text in engine.asked) == 3
    assert sum("between 0 and 1:" in text for text in engine.asked) == 3
    text = result.stdout.str()
    assert "best format: rel1" in text
    assert "best format: rel1" in report_markdown(document)
    assert "best format: rel1" in (tmp_path / "r.html").read_text()
    # the board names it too
    from pytest_grounding.analysis import board as board_mod
    from pytest_grounding.render.common import board as board_text

    built = board_mod.build(board_mod.runs_of(str(tmp_path / "r.json"), document))
    assert "best format: rel1" in "\n".join(board_text.text_lines(built))


def test_a_detector_that_cannot_be_asked_in_another_format_says_so_per_sample(suite, tmp_path):
    _result, _document, records = run(suite, tmp_path, "center", "--grounding-perturb", "format:rel1")
    variants = [r for r in records if r.get("variant")]
    assert len(variants) == 3 and {r["outcome"] for r in variants} == {"error"}
    assert "cannot be asked in another coordinate format" in variants[0]["error"]


# -- thinking on or off, and the reasoning parser the engine names --------------------------------


def test_a_preset_declares_thinking_and_the_request_carries_it_as_the_engines_take_it():
    from pytest_grounding.detectors.served import OpenAIDetector
    from pytest_grounding.detectors.served_engine import engine_from
    from pytest_grounding.detectors.vllm_server import reasoning_parser
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    assert resolve_preset("qwen2.5-vl").decoding.thinking is None
    off = resolve_preset("qwen2.5-vl", thinking="off").decoding
    assert off.chat_template_kwargs == (("enable_thinking", False),) and off.thinking is False
    assert "enable_thinking=False" in off.summary()
    kwargs = dict(resolve_preset("holo2", thinking="on").decoding.chat_template_kwargs)
    assert kwargs.get("thinking") is True and "enable_thinking" not in kwargs  # the preset's own key
    with pytest.raises(ValueError, match="thinking must be true or false"):
        resolve_preset("qwen2.5-vl", thinking="maybe")
    bodies = []

    def reply(handler):
        if handler.path.endswith("/models"):
            return 200, {"data": [{"id": "m"}]}
        bodies.append(json_body(handler))
        return 200, {"choices": [{"message": {"content": "(1,1)"}, "finish_reason": "stop"}]}

    server = LoopbackServer(reply)
    try:
        detector = OpenAIDetector(base_url=server.url, model="m", preset="qwen2.5-vl", thinking="off", probe=False)
        from PIL import Image

        from pytest_grounding.core.types import Query

        detector.predict(Query(Image.new("RGB", (64, 48)), "Click"))
        info = detector.describe()
        detector.close()
    finally:
        server.close()
    assert bodies[-1]["chat_template_kwargs"] == {"enable_thinking": False}
    assert info["thinking"] is False and info["preset"]["decoding"]["thinking"] is False
    # the engine record names the reasoning parser where the engine tells it (SGLang's server arguments)
    sglang = engine_from({"data": [{"id": "m"}]}, "m", server_info={"version": "0.5.4", "reasoning_parser": "qwen3"})
    assert sglang.settings["reasoning_parser"] == "qwen3" and "reasoning parser qwen3" in sglang.headline
    assert reasoning_parser("--max-model-len 4096 --reasoning-parser deepseek_r1") == "deepseek_r1"
    assert reasoning_parser("--reasoning-parser=qwen3") == "qwen3" and reasoning_parser("--dtype float32") is None
