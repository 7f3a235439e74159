"""The VLM parts with forced model answers: every UI-TARS answer shape, mapped back to pixels on a
1024x768 and a 5120x1440 screen (expected pixels computed by hand in the comments)."""

import pytest

pytest.importorskip("ui_tars")

from pytest_grounding.detectors.vlm import Frame, Prompt, answer_to_prediction, get_preset, resolve_preset
from pytest_grounding.detectors.vlm.prompts import openai_messages

POINT = resolve_preset("uitars-1.5-point")

# smart_resize(factor 28, min 100*28*28, max 16384*28*28):
#   1024x768: round(1024/28)=37 -> 1036, round(768/28)=27 -> 756 (783,216 px, within the budget)
#   5120x1440: round(5120/28)=183 -> 5124, round(1440/28)=51 -> 1428 (7,317,072 px, within the budget)
#   160x120: 19,200 px < 78,400: beta = sqrt(78400/19200) = 2.0207; ceil(120*2.0207/28)=9 -> 252,
#            ceil(160*2.0207/28)=12 -> 336
FRAMES = {(1024, 768): (1036, 756), (5120, 1440): (5124, 1428), (160, 120): (336, 252)}


@pytest.mark.parametrize("size", list(FRAMES))
def test_smart_resize_frame(size):
    assert POINT.preprocess.frame(size) == Frame(original=size, model=FRAMES[size])


def test_smart_resize_shrinks_past_max_pixels():
    # 8000x6000 = 48 M px: beta = sqrt(48e6 / 12,845,056) = 1.93307; floor(6000/1.93307/28)=110 -> 3080,
    # floor(8000/1.93307/28)=147 -> 4116
    assert POINT.preprocess.frame((8000, 6000)).model == (4116, 3080)


SHAPES_1024 = [
    # 235 * 1024/1036 = 232.2780, 512 * 768/756 = 520.1270
    ("(235,512)", "point"),
    ("(235, 512)", "point"),
    ("Action: click(start_box='(235,512)')", "action point"),
    ("click(start_box='<|box_start|>(235,512)<|box_end|>')", "action point"),
    ("Action: click(start_box='<|box_start|>(235,512)<|box_end|>')", "action point"),
    ("click(point='<point>235 512</point>')", "action point"),
    ("Thought: the search field is at the top.\nAction: click(point='<point>235 512</point>')", "action point"),
]


@pytest.mark.parametrize("answer, shape", SHAPES_1024)
def test_point_shapes_map_back_on_1024x768(answer, shape):
    prediction = answer_to_prediction(
        answer, POINT.preprocess.frame((1024, 768)), extractors=POINT.extractors, transform=POINT.transform
    )
    assert prediction.point == pytest.approx((232.2780, 520.1270), abs=1e-3)
    assert prediction.meta["answer_shape"] == shape
    assert prediction.raw == answer


@pytest.mark.parametrize(
    "answer, expected",
    [
        # 2562 * 5120/5124 = 2560.0, 714 * 1440/1428 = 720.0
        ("(2562,714)", (2560.0, 720.0)),
        # 1000 * 5120/5124 = 999.2194, 200 * 1440/1428 = 201.6807
        ("Action: click(start_box='(1000,200)')", (999.2194, 201.6807)),
        ("click(point='<point>5124 1428</point>')", (5120.0, 1440.0)),  # the far corner maps to the far corner
    ],
)
def test_point_shapes_map_back_on_5120x1440(answer, expected):
    prediction = answer_to_prediction(
        answer, POINT.preprocess.frame((5120, 1440)), extractors=POINT.extractors, transform=POINT.transform
    )
    assert prediction.point == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize(
    "answer, shape",
    [
        ("(100,200,300,400)", "box"),
        ("Action: click(start_box='(100,200,300,400)')", "action box"),
        ("<|box_start|>(100,200),(300,400)<|box_end|>", "two points"),
    ],
)
def test_box_answers_are_scored_by_their_centre(answer, shape):
    # x: 100*1024/1036 = 98.8417, 300*1024/1036 = 296.5251; y: 200*768/756 = 203.1746, 400*768/756 = 406.3492
    prediction = answer_to_prediction(
        answer, POINT.preprocess.frame((1024, 768)), extractors=POINT.extractors, transform=POINT.transform
    )
    assert prediction.point is None
    assert prediction.box.as_list() == pytest.approx([98.8417, 203.1746, 296.5251, 406.3492], abs=1e-3)
    assert prediction.click == pytest.approx((197.6834, 304.7619), abs=1e-3)
    assert prediction.meta["answer_shape"] == shape


@pytest.mark.parametrize(
    "answer",
    [
        "click(start_box='=')",
        "Action: click(start_box='=')",
        "I cannot find it.",
        "",
        None,
        "Action: finished()",
        "click(start_box='(12,')",
        "(x, y)",
        "Action: click(start_box='(1,2,3)')",
    ],
)
def test_anything_else_is_a_wrong_format_with_the_raw_answer_kept(answer):
    prediction = answer_to_prediction(
        answer, POINT.preprocess.frame((1024, 768)), extractors=POINT.extractors, transform=POINT.transform
    )
    assert prediction.click is None
    assert prediction.raw == answer


def test_our_composition_agrees_with_the_ui_tars_package():
    from ui_tars.action_parser import parse_action_to_structure_output

    for (width, height), answer in (
        ((1024, 768), "Action: click(start_box='(235,512)')"),
        ((5120, 1440), "Action: click(point='<point>1000 200</point>')"),
    ):
        action = parse_action_to_structure_output(answer, 28, height, width, model_type="qwen25vl")[0]
        fx, fy = eval(action["action_inputs"]["start_box"])[:2]  # normalized to the smart_resize'd image
        ours = answer_to_prediction(
            answer, POINT.preprocess.frame((width, height)), extractors=POINT.extractors, transform=POINT.transform
        )
        assert ours.point == pytest.approx((fx * width, fy * height))


def test_uitars_1_0_answers_0_to_1000():
    preset = get_preset("uitars-1.0")
    # 235/1000 * 1024 = 240.64, 512/1000 * 768 = 393.216; 500/1000 * 5120 = 2560, 500/1000 * 1440 = 720
    for size, answer, expected in (
        ((1024, 768), "(235,512)", (240.64, 393.216)),
        ((5120, 1440), "click(start_box='<|box_start|>(500,500)<|box_end|>')", (2560.0, 720.0)),
    ):
        prediction = answer_to_prediction(
            answer, preset.preprocess.frame(size), extractors=preset.extractors, transform=preset.transform
        )
        assert prediction.point == pytest.approx(expected)


def test_refusal_form_gives_a_no_answer_marked_as_refusal():
    preset = resolve_preset(extractors="bracket", refusal="minus_one")
    prediction = answer_to_prediction(
        "[-1,-1]",
        preset.preprocess.frame((1024, 768)),
        extractors=preset.extractors,
        transform=preset.transform,
        refusal=preset.refusal,
    )
    assert prediction.click is None and prediction.meta["refusal"] is True


def test_prompts_are_the_maintainers_text():
    assert POINT.prompt.text("open the File menu") == (
        "Output only the coordinate of one point in your response. What element matches the following task: "
        "open the File menu"
    )
    computer_use = get_preset("uitars-1.5-computer-use").prompt.text("open {the} File menu")
    assert computer_use.startswith(
        "You are a GUI agent. You are given a task and your action history, with "
        "screenshots. You need to perform the next action to complete the task. \n\n"
    )
    assert computer_use.endswith(  # GROUNDING_DOUBAO, its doubled '' kept
        "click(point='<point>x1 y1</point>'')\n\n## User Instruction\nopen {the} File menu"
    )
    assert POINT.prompt.messages("x")[0]["content"][0] == {"type": "image"}  # image first, no system turn
    assert len(POINT.prompt.messages("x")) == 1


def test_openai_messages_carry_the_image_as_data_url():
    messages = Prompt("find {instruction}", system="be brief", order="text,image").messages("OK")
    converted = openai_messages(messages, "data:image/png;base64,AAAA")
    assert converted == [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "find OK"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        },
    ]


def test_overrides_replace_one_part_each():
    preset = resolve_preset(
        "uitars-1.5-point",
        max_pixels=1000000,
        max_new_tokens=32,
        greedy="false",
        extractors="paren+bracket",
        transform="rel1000",
        prompt="Where is {instruction}?",
    )
    assert preset.preprocess.max_pixels == 1000000 and preset.preprocess.min_pixels == 100 * 28 * 28
    assert preset.decoding.max_new_tokens == 32 and preset.decoding.temperature == 1.0
    assert preset.extractors == ("paren", "bracket") and preset.transform == "rel1000"
    assert preset.prompt.text("OK") == "Where is OK?"
    assert get_preset("uitars-1.5-point").preprocess.max_pixels == 16384 * 28 * 28  # the registry is untouched


@pytest.mark.parametrize(
    "options, message",
    [
        ({"max_pixel": 5}, "unknown option"),
        ({"transform": "rel99"}, "unknown transform"),
        ({"transform": "yx_swap+rel10"}, "unknown transform"),
        ({"refusal": "minus_two"}, "unknown refusal"),
        ({"order": "image,image"}, "image and text once each"),
        ({"preprocess": "squash"}, "unknown preprocessing"),
        ({"extractors": "paren+json"}, "unknown extractor"),
        ({"greedy": "maybe"}, "true or false"),
    ],
)
def test_bad_overrides_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        resolve_preset(**options)


def test_unknown_preset_suggests_a_close_name():
    with pytest.raises(LookupError, match=r"uitars-1\.5-point"):
        resolve_preset("uitars-1.5-pont")
