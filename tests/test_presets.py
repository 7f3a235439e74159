"""The preset library: each preset's answers from its authors' examples mapped to pixels on a 1024x768
and a 5120x1440 screen (expected pixels worked out by hand below), its prompt byte-compared with
the text copied from the reference (tests/data/preset_prompts.json), and each preset end to end
through `openai` against a loopback server that checks what it received and answers in the
preset's own format."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import FIXTURES, SERIAL, LoopbackServer, decode_data_url, json_body, make_project, needs_openai, read_json
from pytest_grounding.detectors.vlm import (
    all_presets,
    answer_to_prediction,
    get_preset,
    presets_from_toml,
    resolve_preset,
)
from pytest_grounding.detectors.vlm.prompts import openai_messages

PROMPTS = json.loads((Path(__file__).parent / "data" / "preset_prompts.json").read_text(encoding="utf-8"))
SMALL, WIDE = (1024, 768), (5120, 1440)
SHIPPED = [
    "uitars-1.5-point",
    "uitars-1.5-computer-use",
    "uitars-1.0",
    "qwen2.5-vl",
    "qwen3-vl",
    "os-atlas-7b",
    "uground-v1",
    "gta1",
    "ui-venus-ground",
    "ui-venus-1.5",
    "gui-owl-1.5",
    "opencua",
    "holo1.5",
    "showui",
    "seeclick",
    "aria-ui",
    "gpt-box",
    "claude",
    "gemini-box2d",
    "gemini-point",
]

try:
    import ui_tars  # noqa: F401

    HAS_UI_TARS = True
except ImportError:
    HAS_UI_TARS = False


def needs_parser(name):
    """The UI-TARS presets read actions through the `ui-tars` package first (extra: uitars/openai)."""
    if "uitars_action" in get_preset(name).extractors and not HAS_UI_TARS:
        pytest.skip("the ui-tars package is not installed")


def decode(name, answer, screen):
    preset = get_preset(name)
    frame = preset.preprocess.frame(screen)
    return answer_to_prediction(
        answer, frame, extractors=preset.extractors, transform=preset.transform, refusal=preset.refusal
    )


def test_every_listed_preset_ships_with_a_source():
    assert set(SHIPPED) <= set(all_presets())
    for name in SHIPPED:
        preset = get_preset(name)
        assert preset.source and preset.family and preset.coordinates, name


# The frames, by hand. smart_resize factor 28 rounds each side to a multiple of 28: 1024x768 ->
# 1036x756 (37 x 27 tiles), 5120x1440 -> 5124x1428 (183 x 51). Factor 32 (Qwen3-VL) keeps both
# (1024 = 32*32, 768 = 24*32, 5120 = 160*32, 1440 = 45*32). Past max_pixels both sides shrink by
# sqrt(area / max) and floor to the factor; under min_pixels they grow and ceil.
FRAMES = {
    "uitars-1.5-point": ((1036, 756), (5124, 1428)),
    "uitars-1.0": ((1036, 756), (5124, 1428)),
    "qwen2.5-vl": ((1036, 756), (5124, 1428)),
    "qwen3-vl": ((1024, 768), (5120, 1440)),
    "gta1": ((1036, 756), (5124, 1428)),  # 5124*1428 = 7.3 MP is under 4096*2160 = 8.8 MP
    # 1036*756 = 0.78 MP < 2 MP: x sqrt(2e6 / 786432) = 1.5947 -> ceil(1633/28)*28 = 1652, ceil(1224.7/28)*28 = 1232;
    # 7.37 MP > 4.8 MP: / sqrt(7372800 / 4.8e6) = 1.2394 -> floor(4131/28)*28 = 4116, floor(1161.9/28)*28 = 1148
    "ui-venus-ground": ((1652, 1232), (4116, 1148)),
    "ui-venus-1.5": ((1024, 768), (5120, 1440)),
    "gui-owl-1.5": ((1024, 768), (5120, 1440)),  # 196*32*32 = 0.2 MP .. 9800*32*32 = 10 MP
    # 7.37 MP > 2560*1440: / sqrt(2) -> floor(3620.4/28)*28 = 3612, floor(1018.2/28)*28 = 1008
    "holo1.5": ((1036, 756), (3612, 1008)),
    # 7.37 MP > 1344*28*28 = 1.05 MP: / 2.6452 -> floor(1935.6/28)*28 = 1932, floor(544.4/28)*28 = 532
    "showui": ((1036, 756), (1932, 532)),
    "seeclick": ((448, 448), (448, 448)),
    "aria-ui": (SMALL, WIDE),
    "gpt-box": (SMALL, WIDE),
    # Claude: 1024x768 is under 1568 px and 1.15 MP; 5120x1440 x 1568/5120 = 0.30625 -> 1568x441
    "claude": ((1024, 768), (1568, 441)),
    "gemini-point": (SMALL, WIDE),
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_each_preset_gives_the_model_the_frame_worked_out_by_hand(name):
    preset = get_preset(name)
    assert (preset.preprocess.frame(SMALL).model, preset.preprocess.frame(WIDE).model) == FRAMES[name]


@pytest.mark.parametrize(
    "factor, low, high", [(28, 3136, 12845056), (28, 78400, 16384 * 28 * 28), (32, 65536, 16777216)]
)
def test_our_smart_resize_is_the_one_of_ui_tars_and_transformers(factor, low, high):
    from pytest_grounding.detectors.vlm.preprocess import smart_resize

    references = []
    try:
        from ui_tars.action_parser import smart_resize as ui_tars_resize

        references.append(ui_tars_resize)
    except ImportError:
        pass
    try:
        from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize as hf_resize

        references.append(hf_resize)
    except ImportError:
        pass
    if not references:
        pytest.skip("neither ui-tars nor transformers is installed")
    sizes = [(768, 1024), (1440, 5120), (120, 160), (2160, 3840), (1080, 1920), (901, 1601), (28, 5000), (7000, 7000)]
    for height, width in sizes:
        ours = smart_resize(height, width, factor, low, high)
        for reference in references:
            assert ours == tuple(reference(height, width, factor=factor, min_pixels=low, max_pixels=high)), (
                height,
                width,
            )


# (preset, the authors' answer, expected on 1024x768, expected on 5120x1440). Pixels of the resized
# image map back by W / W_model; 0-1000 by W / 1000; 0-1 by W; boxes by their centre.
CASES = [
    # UI-TARS-1.5 (README_coordinates.md): <point>197 525</point> in the 1036x756 / 5124x1428 frame
    ("uitars-1.5-point", "(197,525)", (197 * 1024 / 1036, 525 * 768 / 756), (197 * 5120 / 5124, 525 * 1440 / 1428)),
    (
        "uitars-1.5-point",
        "Action: click(point='<point>197 525</point>')",
        (197 * 1024 / 1036, 525 * 768 / 756),
        (197 * 5120 / 5124, 525 * 1440 / 1428),
    ),
    (
        "uitars-1.5-computer-use",
        "Action: click(point='<point>197 525</point>')",
        (197 * 1024 / 1036, 525 * 768 / 756),
        (197 * 5120 / 5124, 525 * 1440 / 1428),
    ),
    # UI-TARS 1.0 (README_v1): (235,512) of 1000; the agent form (607,647)
    ("uitars-1.0", "(235,512)", (240.64, 393.216), (1203.2, 737.28)),
    ("uitars-1.0", "click(start_box='<|box_start|>(607,647)<|box_end|>')", (621.568, 496.896), (3107.84, 931.68)),
    (
        "qwen2.5-vl",
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [512, 301]}}\n'
        "</tool_call>",
        (512 * 1024 / 1036, 301 * 768 / 756),
        (512 * 5120 / 5124, 301 * 1440 / 1428),
    ),
    ("qwen3-vl", "[500,250]", (512.0, 192.0), (2560.0, 360.0)),
    (
        "qwen3-vl",
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 250]}}\n'
        "</tool_call>",
        (512.0, 192.0),
        (2560.0, 360.0),
    ),
    # OS-Atlas README: <|box_start|>(576,12),(592,42)<|box_end|>, centre (584, 27) of 1000
    ("os-atlas-7b", "<|box_start|>(576,12),(592,42)<|box_end|>", (598.016, 20.736), (2990.08, 38.88)),
    ("uground-v1", "(235, 512)", (240.64, 393.216), (1203.2, 737.28)),
    ("gta1", "(512,301)", (512 * 1024 / 1036, 301 * 768 / 756), (512 * 5120 / 5124, 301 * 1440 / 1428)),
    # UI-Venus-Ground: a box in pixels of the 1652x1232 / 4116x1148 frame, centre (200, 300)
    (
        "ui-venus-ground",
        "[100,200,300,400]",
        (200 * 1024 / 1652, 300 * 768 / 1232),
        (200 * 5120 / 4116, 300 * 1440 / 1148),
    ),
    ("ui-venus-1.5", "[500,250]", (512.0, 192.0), (2560.0, 360.0)),
    (
        "gui-owl-1.5",
        '<tool_call>\n{"name":"computer_use","arguments":{"action":"left_click","coordinate":[500,250]}}</tool_call>',
        (512.0, 192.0),
        (2560.0, 360.0),
    ),
    # OpenCUA README: pyautogui.click(x=1443, y=343), pixels of the 1036x756 / 5124x1428 frame
    (
        "opencua",
        "pyautogui.click(x=1443, y=343)",
        (1443 * 1024 / 1036, 343 * 768 / 756),
        (1443 * 5120 / 5124, 343 * 1440 / 1428),
    ),
    (
        "holo1.5",
        '{"action": "click_absolute", "x": 512, "y": 301}',
        (512 * 1024 / 1036, 301 * 768 / 756),
        (512 * 5120 / 3612, 301 * 1440 / 1008),
    ),
    ("holo1.5", "Click(512, 301)", (512 * 1024 / 1036, 301 * 768 / 756), (512 * 5120 / 3612, 301 * 1440 / 1008)),
    ("showui", "[0.73, 0.21]", (747.52, 161.28), (3737.6, 302.4)),
    ("seeclick", "(0.49,0.40)", (501.76, 307.2), (2508.8, 576.0)),
    ("aria-ui", "(235, 512)", (240.64, 393.216), (1203.2, 737.28)),
    ("gpt-box", "[[0.1,0.2,0.3,0.4]]", (204.8, 230.4), (1024.0, 432.0)),
    ("gpt-box", "[[0.49,0.40]]", (501.76, 307.2), (2508.8, 576.0)),
    ("claude", "(512, 301)", (512.0, 301.0), (512 * 5120 / 1568, 301 * 1440 / 441)),
    # box_2d = [y_min, x_min, y_max, x_max]: x 200..400, y 100..300 of 1000 -> centre (300, 200)
    (
        "gemini-box2d",
        '```json\n[{"box_2d": [100, 200, 300, 400], "label": "OK"}]\n```',
        (307.2, 153.6),
        (1536.0, 288.0),
    ),
    ("gemini-point", "The icon (10,10) is a logo; the button is lower.\n(500,250)", (512.0, 192.0), (2560.0, 360.0)),
]


@pytest.mark.parametrize("name, answer, small, wide", CASES)
def test_authors_answers_land_where_their_code_puts_them(name, answer, small, wide):
    needs_parser(name)
    for screen, expected in ((SMALL, small), (WIDE, wide)):
        prediction = decode(name, answer, screen)
        assert prediction.click == pytest.approx(expected, abs=1e-6), (name, screen)


@pytest.mark.parametrize(
    "name, answer",
    [
        ("qwen3-vl", "[-1,-1]"),
        ("ui-venus-1.5", "[-1,-1]"),
        (
            "gui-owl-1.5",
            '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": '
            '"failure"}}\n</tool_call>',
        ),
        (
            "qwen2.5-vl",
            '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": '
            '"failure"}}\n</tool_call>',
        ),
    ],
)
def test_refusal_forms_are_no_answers_marked_as_refusals(name, answer):
    prediction = decode(name, answer, SMALL)
    assert prediction.point is None and prediction.box is None and prediction.meta["refusal"] is True


def test_a_refusal_form_the_preset_lacks_is_not_a_refusal():
    assert decode("uground-v1", "[-1,-1]", SMALL).meta.get("refusal") is None  # not its form: wrong format
    assert decode("holo1.5", "I cannot see it", SMALL).meta.get("refusal") is None


@pytest.mark.parametrize("name", sorted(n for n in PROMPTS if not n.startswith("_")))
def test_prompt_is_byte_for_byte_the_source_text(name):
    preset = get_preset(name)
    frame = preset.preprocess.frame(SMALL)
    expected = PROMPTS[name]
    messages = preset.prompt.messages("Click the red square", frame.model)
    system = [m for m in messages if m["role"] == "system"]
    assert (system[0]["content"][0]["text"] if system else None) == expected.get("system")
    texts = [part["text"] for m in messages if m["role"] == "user" for part in m["content"] if part["type"] == "text"]
    assert texts == ([expected["lead"]] if "lead" in expected else []) + [expected["user"]]


def test_ui_venus_1_5_strips_the_trailing_full_stop():
    text = get_preset("ui-venus-1.5").prompt.text("Click the red square.")
    assert "instruction: \nClick the red square. \n\n" in text


# ---------------------------------------------------------------------------------------------------------------
# End to end through `openai`: a loopback server finds the red square in the image it received and
# answers in the preset's format and coordinate system (of that image); it records what it got.
ANSWERS = {
    "uitars-1.5-point": ("({x},{y})", "abs"),
    "uitars-1.5-computer-use": ("Action: click(point='<point>{x} {y}</point>')", "abs"),
    "uitars-1.0": ("click(start_box='<|box_start|>({x},{y})<|box_end|>')", "rel1000"),
    "qwen2.5-vl": (
        '<tool_call>\n{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [{x}, {y}]}}}}\n'
        "</tool_call>",
        "abs",
    ),
    "qwen3-vl": ("[{x},{y}]", "rel1000"),
    "os-atlas-7b": ("<|box_start|>({x1},{y1}),({x2},{y2})<|box_end|>", "rel1000"),
    "uground-v1": ("({x}, {y})", "rel1000"),
    "gta1": ("({x},{y})", "abs"),
    "ui-venus-ground": ("[{x1},{y1},{x2},{y2}]", "abs"),
    "ui-venus-1.5": ("[{x},{y}]", "rel1000"),
    "gui-owl-1.5": (
        '<tool_call>\n{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [{x}, {y}]}}}}\n'
        "</tool_call>",
        "rel1000",
    ),
    "opencua": ("pyautogui.click(x={x}, y={y})", "abs"),
    "holo1.5": ('{{"action": "click_absolute", "x": {x}, "y": {y}}}', "abs"),
    "showui": ("[{x}, {y}]", "rel1"),
    "seeclick": ("({x},{y})", "rel1"),
    "aria-ui": ("({x}, {y})", "rel1000"),
    "gpt-box": ("[[{x1},{y1},{x2},{y2}]]", "rel1"),
    "claude": ("({x}, {y})", "abs"),
    "gemini-box2d": ('{{"box_2d": [{y1}, {x1}, {y2}, {x2}], "label": "red square"}}', "rel1000"),
    "gemini-point": ("Reasoning: the logo (3,4) is not it.\n({x},{y})", "rel1000"),
}
RED = (220, 30, 30)
COLOURS = {"red": RED, "green": (30, 170, 60), "blue": (40, 70, 220)}  # the mini fixture's squares


class PresetServer:
    """Answers every chat with ANSWERS[preset] for the red region of the image it received."""

    def __init__(self):
        self.preset = None
        self.requests = []
        server = self

        def reply(handler):
            body = json_body(handler)
            server.requests.append(body)
            return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": server.answer(body)}}]}

        self.loopback = LoopbackServer(reply)
        self.url = self.loopback.url

    def answer(self, body):
        image = next(
            part["image_url"]["url"]
            for m in body["messages"]
            if isinstance(m["content"], list)
            for part in m["content"]
            if part["type"] == "image_url"
        )
        pixels = np.asarray(decode_data_url(image)).astype(int)
        height, width = pixels.shape[:2]
        texts = [
            p["text"] for m in body["messages"] if isinstance(m["content"], list) for p in m["content"] if "text" in p
        ]
        word = next(c for c in COLOURS if any(c in t.lower() for t in texts))
        ys, xs = np.nonzero(np.all(np.abs(pixels - COLOURS[word]) < 40, axis=-1))
        template, system = ANSWERS[self.preset]
        scale = {"abs": (1, 1), "rel1000": (1000 / width, 1000 / height), "rel1": (1 / width, 1 / height)}[system]
        digits = 4 if system == "rel1" else 0

        def value(v, axis):
            number = round(float(v) * scale[axis], digits)
            return f"{number:g}" if digits else str(int(number))

        x, y = xs.mean(), ys.mean()
        return template.format(
            x=value(x, 0),
            y=value(y, 1),
            x1=value(xs.min(), 0),
            y1=value(ys.min(), 1),
            x2=value(xs.max(), 0),
            y2=value(ys.max(), 1),
        )


@pytest.fixture(scope="module")
def preset_server():
    server = PresetServer()
    yield server
    server.loopback.close()


def screen(size, box):
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).rectangle(box, fill=RED)
    return image


# The decoding each preset must send, from its source (the table in docs/presets.md).
SENT_DECODING = {
    "uitars-1.0": {"max_tokens": 128, "temperature": 0.0, "frequency_penalty": 1.0},
    "qwen2.5-vl": {"max_tokens": 100, "temperature": 0.0},
    "qwen3-vl": {"max_tokens": 512, "temperature": 0.0},
    "os-atlas-7b": {"max_tokens": 128, "temperature": 0.0, "skip_special_tokens": False},
    "gta1": {"max_tokens": 32, "temperature": 0.0},
    "gui-owl-1.5": {"max_tokens": 2048, "temperature": 0.01, "top_p": 0.01, "top_k": 1},
    "holo1.5": {"max_tokens": 32, "temperature": 0.0},
    "aria-ui": {"max_tokens": 50, "temperature": 0.0, "top_k": 1, "stop": ["<|im_end|>"]},
    "gpt-box": {"max_tokens": 2048, "temperature": 0.0},
    "gemini-point": {"max_tokens": 32768, "temperature": 0.0},
}
DECODING_KEYS = ("max_tokens", "temperature", "top_p", "top_k", "frequency_penalty", "stop", "skip_special_tokens")


# Every preset on 1024x768; on 5120x1440 those whose preprocessing shrinks it (a 7 MP PNG costs seconds to
# send, and the frames of the others are checked above) and qwen2.5-vl, whose prompt holds the size.
WIDE_E2E = ("qwen2.5-vl", "ui-venus-ground", "holo1.5", "showui", "seeclick", "claude")
E2E = [(name, SMALL, (590, 400, 629, 419)) for name in SHIPPED] + [
    (name, WIDE, (4000, 1200, 4059, 1219)) for name in WIDE_E2E
]


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@pytest.mark.parametrize("name, size, box", E2E)
def test_each_preset_end_to_end_through_openai(name, size, box, preset_server):
    needs_parser(name)
    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors.served import OpenAIDetector

    preset = get_preset(name)
    preset_server.preset = name
    preset_server.requests.clear()
    detector = OpenAIDetector(base_url=preset_server.url, model="m", preset=name, retries=0)
    prediction = detector.predict(Query(screen(size, box), "Click the red square"))
    (body,) = preset_server.requests
    # what it received: the image at the preset's size, in the preset's order, the prompt, the decoding
    frame = preset.preprocess.frame(size)
    images = [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]]
    (image,) = [p for p in images if p["type"] == "image_url"]
    assert decode_data_url(image["image_url"]["url"]).size == frame.model
    expected = openai_messages(preset.prompt.messages("Click the red square", frame.model), image["image_url"]["url"])
    assert body["messages"] == expected
    shape = [
        [p["type"] for p in m["content"]] if isinstance(m["content"], list) else m["role"] for m in body["messages"]
    ]
    order = [[{"image": "image_url"}.get(p, "text") for p in m.split(",")] for m in preset.prompt.order.split("|")]
    assert shape == (["system"] if preset.prompt.system else []) + order
    if name in PROMPTS and size == SMALL:
        assert [p["text"] for p in images if p["type"] == "text"][-1] == PROMPTS[name]["user"]
    sent = {k: body[k] for k in DECODING_KEYS if k in body}
    assert sent == SENT_DECODING.get(name, {"max_tokens": preset.decoding.max_new_tokens, "temperature": 0.0})
    # and its answer, in the preset's format, lands on the square (within the rounding of its grid)
    x1, y1, x2, y2 = box
    tolerance = 2 + size[0] / 1000 if ANSWERS[name][1] == "rel1000" else 3 * frame.scale[0]
    assert prediction.click == pytest.approx(((x1 + x2) / 2, (y1 + y2) / 2), abs=tolerance), prediction.raw


def test_project_presets_from_toml_and_bad_files_named(tmp_path):
    good = tmp_path / "presets.toml"
    good.write_text(
        """
[presets.venus-small]
base = "ui-venus-1.5"
preprocess = { max_pixels = 1000000 }
decoding = { max_new_tokens = 64 }

[presets.mine]
family = "My model"
source = "our lab"
prompt = "Point at {instruction}, answer (x, y) in 0-1000."
preprocess = { kind = "resize", width = 800, height = 600 }
extractors = ["paren"]
transform = "rel1000"
refusal = "minus_one"
"""
    )
    small, mine = presets_from_toml(good)
    assert small.name == "venus-small" and small.preprocess.max_pixels == 1000000 and small.preprocess.factor == 32
    assert small.decoding.max_new_tokens == 64 and small.prompt == get_preset("ui-venus-1.5").prompt
    assert mine.preprocess.frame(SMALL).model == (800, 600) and mine.origin == str(good)
    frame = mine.preprocess.frame(SMALL)
    found = answer_to_prediction("(500, 250)", frame, extractors=mine.extractors, transform=mine.transform)
    assert found.point == pytest.approx((512.0, 192.0))
    bad = tmp_path / "bad.toml"
    for text, message in [
        ("[presets.x]\nbase = 'qwen3-vl'\ntransfrom = 'abs'\n", "unknown key"),
        ("[presets.x]\nbase = 'qwen3-vl'\ntransform = 'rel100'\n", "unknown transform"),
        ("[presets.x]\nprompt = '{instruction}'\n", "needs base"),
        ("[presets.x]\nbase = 'qwen3-vl'\ndecoding = { temp = 0 }\n", "unknown decoding"),
        ("[presets\n", "presets file"),
    ]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=message) as info:
            presets_from_toml(bad)
        assert str(bad) in str(info.value)
    with pytest.raises(ValueError, match=r"no-such\.toml"):
        presets_from_toml(tmp_path / "no-such.toml")


def test_every_part_is_overridable_by_an_option():
    preset = resolve_preset(
        "gemini-box2d",
        preprocess="fit",
        max_edge=800,
        order="text,image",
        system="Be brief.",
        transform="rel1000",
        extractors="bracket",
        refusal="minus_one+terminate",
        stop="</answer>;<|im_end|>",
        top_k=5,
        skip_special_tokens="false",
    )
    assert preset.preprocess.frame(WIDE).model == (800, 225)
    assert preset.prompt.order == "text,image" and preset.prompt.system == "Be brief."
    assert (
        preset.transform == "rel1000" and preset.extractors == ("bracket",) and preset.refusal == "minus_one+terminate"
    )
    assert preset.decoding.stop == ("</answer>", "<|im_end|>") and preset.decoding.top_k == 5
    assert preset.decoding.skip_special_tokens is False


MINI = str(FIXTURES / "mini")


@pytest.fixture
def suite(pytester):
    make_project(pytester)
    return pytester


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.skipif(
    importlib.util.find_spec("ui_tars") is None, reason="the openai detector needs its extra (ui-tars) in a run"
)
def test_a_conftest_preset_and_a_toml_preset_run_and_are_recorded(suite, preset_server, workers, tmp_path):
    suite.makeconftest(
        """
def pytest_grounding_register_presets(registry):
    registry.register("owl-small", base="gui-owl-1.5", max_pixels=500000)
"""
    )
    toml = tmp_path / "p.toml"
    toml.write_text("[presets.qwen3-small]\nbase = 'qwen3-vl'\ndecoding = { max_new_tokens = 20 }\n")
    preset_server.preset = "gui-owl-1.5"  # both answer tool calls in 0-1000
    report = tmp_path / "r.json"
    spec = f"openai:base_url={preset_server.url},model=m,preset=owl-small"
    spec2 = f"openai:base_url={preset_server.url},model=m,preset=qwen3-small"  # reads tool calls too
    result = suite.runpytest(
        f"--dataset={MINI}",
        "--detector",
        spec,
        "--detector",
        spec2,
        "--grounding-presets",
        str(toml),
        "--grounding-json",
        str(report),
        "-k",
        "m01 or m02 or m03",
        *workers,
    )
    assert result.ret == 0, result.stdout.str()
    document = read_json(report)
    assert [r["outcome"] for r in document["samples"]] == ["hit"] * 6
    info = document["run"]["detectors"][spec]["preset"]
    assert info["name"] == "owl-small" and info["preprocess"]["max_pixels"] == 500000 and info["origin"] == "conftest"
    assert info["transform"] == "rel1000" and info["decoding"]["top_k"] == 1
    assert info["coordinates"] == "0-1000 of the image"
    info2 = document["run"]["detectors"][spec2]["preset"]
    assert info2["name"] == "qwen3-small" and info2["decoding"]["max_new_tokens"] == 20 and info2["origin"] == str(toml)
    result.stdout.fnmatch_lines(
        [
            "*preset owl-small, smart_resize factor 32, min_pixels 200704, max_pixels 500000*",
            "*preset qwen3-small, smart_resize factor 32, min_pixels 65536, max_pixels 16777216, greedy, 20 tokens*",
        ]
    )


def test_a_conftest_preset_on_an_unknown_base_is_a_usage_error(suite):
    suite.makeconftest(
        """
def pytest_grounding_register_presets(registry):
    registry.register("mine", base="qwen3-lv")
"""
    )
    result = suite.runpytest(f"--dataset={MINI}")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*unknown preset 'qwen3-lv'*qwen3-vl*"])


def test_a_bad_presets_file_is_a_usage_error_naming_it(suite, tmp_path):
    toml = tmp_path / "broken.toml"
    toml.write_text("[presets.x]\nbase = 'qwen3-vl'\ntransform = 'rel100'\n")
    result = suite.runpytest(f"--dataset={MINI}", "--grounding-presets", str(toml))
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*--grounding-presets: presets file *broken.toml, [[]presets.x[]]: unknown transform*"]
    )


def test_presets_command_lists_name_family_coordinates_source(tmp_path, capsys):
    from pytest_grounding.cli.main import main

    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    for name in SHIPPED:
        assert f"\n{name} " in out
    assert "0-1000 of the image, y first" in out and "source: docs.cloud.google.com" in out
    assert main(["presets", "--show", "gta1"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["prompt"]["system"].startswith("You are an expert UI element locator.")
    assert main(["presets", "--show", "gta2"]) == 2
    assert "gta1" in capsys.readouterr().err


def test_a_canvas_preset_maps_through_the_content_ratio():
    """Phi-Ground's preprocessing (a project's preset: the model is not served here): shrink to fit
    1008x672, paste top-left on white, answer 0-1000 of the canvas."""
    from PIL import Image

    from pytest_grounding.detectors.vlm import Decoding, Preset, Prompt
    from pytest_grounding.detectors.vlm.preprocess import Canvas

    phi = Preset(
        "phi", "Phi-Ground", Prompt("{instruction}", order="text,image"), Canvas(1008, 672), ("point_tag",), "rel1000"
    )
    # 1024x768: ratio min(1008/1024, 672/768) = 0.875 -> content 896x672; <point>500, 200</point> is (504, 134.4)
    # of the canvas, / 0.875 -> (576, 153.6)
    frame = phi.preprocess.frame(SMALL)
    assert frame.model == (1008, 672) and frame.content == (896, 672)
    found = answer_to_prediction("<point>500, 200</point>", frame, extractors=phi.extractors, transform=phi.transform)
    assert found.point == pytest.approx((576.0, 153.6))
    # 5120x1440: ratio 1008/5120 = 0.196875 -> content 1008x283 (1440 * 0.196875 = 283.5, floored)
    frame = phi.preprocess.frame(WIDE)
    assert frame.content == (1008, 283)
    found = answer_to_prediction("<point>500, 200</point>", frame, extractors=phi.extractors, transform=phi.transform)
    assert found.point == pytest.approx((504 * 5120 / 1008, 134.4 * 1440 / 283))
    image, _ = phi.preprocess.apply(Image.new("RGB", SMALL, "black"))
    assert (
        image.size == (1008, 672)
        and image.getpixel((895, 671)) == (0, 0, 0)
        and image.getpixel((900, 10)) == (255, 255, 255)
    )
    assert Decoding().greedy


def test_rel999_and_chained_transforms():
    from pytest_grounding.detectors.vlm.parse import to_pixels
    from pytest_grounding.detectors.vlm.preprocess import Frame

    frame = Frame(original=(1998, 999), model=(1998, 999))
    assert to_pixels(999, 333, frame, "rel999") == pytest.approx((1998.0, 333.0))  # MAI-UI as Phi-Ground reads it
    assert to_pixels(333, 999, frame, "yx_swap+rel999") == pytest.approx((1998.0, 333.0))


def test_presets_command_reads_a_toml_file(tmp_path, capsys):
    from pytest_grounding.cli.main import main
    from pytest_grounding.detectors.vlm.presets import unregister_project_presets

    toml = tmp_path / "p.toml"
    toml.write_text("[presets.venus-small]\nbase = 'ui-venus-1.5'\npreprocess = { max_pixels = 1000000 }\n")
    try:
        assert main(["presets", "--toml", str(toml)]) == 0
        out = capsys.readouterr().out
        assert "venus-small" in out and f"[{toml}]" in out
    finally:
        unregister_project_presets()
    toml.write_text("[presets.x]\nbase = 'nope'\n")
    assert main(["presets", "--toml", str(toml)]) == 2
    assert str(toml) in capsys.readouterr().err
