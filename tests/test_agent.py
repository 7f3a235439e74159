"""The episode's pure logic (detectors/vlm/agent.py, agent_turns.py) with a scripted `ask`: crops of
crops on whole screen pixels, every budget, loops, invalid actions, refusals, re-clicks, traces."""

import json

import pytest

from pytest_grounding.detectors.vlm.agent import Budget, Reply, crop_region, run_episode, to_screen, view_of
from pytest_grounding.detectors.vlm.agent_turns import read_action, text_tool_calls, tools
from pytest_grounding.detectors.vlm.presets import resolve_preset

SIZES = ((1024, 768), (1920, 1080), (5120, 1440), (1080, 2400))


def crop(box, image=None, call_id="c"):
    arguments = {"box": list(box), **({} if image is None else {"image": image})}
    return {"id": call_id, "type": "function", "function": {"name": "crop", "arguments": json.dumps(arguments)}}


class Script:
    """An `ask` that answers from a list: a Reply, or a function of (messages, views) to one."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.seen = []

    def __call__(self, messages, offered, views):
        self.seen.append((json.loads(json.dumps(messages)), offered, views))
        answer = self.answers[min(len(self.seen) - 1, len(self.answers) - 1)]
        return answer(messages, views) if callable(answer) else answer


def calls(*boxes, tokens=(10, 2)):
    return Reply(None, tuple(crop(b, call_id=f"c{i}") for i, b in enumerate(boxes)), *tokens)


def text(answer, tokens=(10, 2)):
    return Reply(answer, (), *tokens)


PLAIN = resolve_preset("uitars-1.5-point", preprocess="none", transform="abs", extractors="paren", refusal="none")


@pytest.mark.parametrize("size", SIZES)
def test_crops_of_crops_are_whole_screen_pixels_and_the_click_maps_back(size):
    w, h = size
    a = (w // 4, h // 4, w // 4 + w // 2, h // 4 + h // 2)
    b = (7, 11, 7 + w // 8, 11 + h // 8)  # on crop a, in its pixels
    script = Script(calls(a), calls(b), text("(3, 5)"))
    episode = run_episode(PLAIN, "x", size, Budget(), script)
    second = (a[0] + b[0], a[1] + b[1], a[0] + b[2], a[1] + b[3])
    assert [v.region for v in episode.views] == [(0, 0, w, h), a, second]
    assert episode.point == (second[0] + 3, second[1] + 5)
    assert episode.end == "click" and episode.crops == 2
    assert [t.shown for t in episode.turns] == [((0, 0, w, h),), (a,), (second,)]


@pytest.mark.parametrize("size", SIZES)
def test_a_resized_view_maps_a_box_to_the_pixels_that_cover_it(size):
    preset = resolve_preset("qwen2.5-vl")
    screen = view_of(0, (0, 0, *size), preset.preprocess.frame)
    mw, mh = screen.frame.model
    region, problem = crop_region(screen, (mw / 4, mh / 4, mw / 2, mh / 2), "abs")
    assert problem is None
    sx, sy = size[0] / mw, size[1] / mh
    # the box's corners in screen pixels, widened to whole pixels (recounted here from the frame)
    import math

    expected = (
        math.floor(round(mw / 4 * sx, 6)),
        math.floor(round(mh / 4 * sy, 6)),
        math.ceil(round(mw / 2 * sx, 6)),
        math.ceil(round(mh / 2 * sy, 6)),
    )
    assert region == expected
    inner = view_of(1, region, preset.preprocess.frame)
    x, y = to_screen(inner, inner.frame.model[0], inner.frame.model[1], "abs")
    assert (x, y) == pytest.approx((region[2], region[3]))


def test_a_box_partly_off_the_image_is_clipped_and_one_wholly_off_is_invalid():
    view = view_of(1, (100, 50, 300, 200), PLAIN.preprocess.frame)
    assert crop_region(view, (-20, -30, 50, 40), "abs") == ((100, 50, 150, 90), None)
    region, problem = crop_region(view, (250, 10, 400, 40), "abs")
    assert region is None and "outside image 1" in problem
    region, problem = crop_region(view, (10, 10, 10, 40), "abs")
    assert region is None and "zero size" in problem


@pytest.mark.parametrize(
    ("budget", "answers", "end", "turns"),
    [
        (Budget(turns=2), [calls((0, 0, 500, 500)), calls((0, 0, 100, 100))], "budget_turns", 2),
        (Budget(crops=1), [calls((0, 0, 500, 500)), calls((0, 0, 100, 100))], "budget_crops", 2),
        (Budget(crops_per_turn=1), [calls((0, 0, 500, 500), (10, 10, 50, 50))], "budget_crops_per_turn", 1),
        (Budget(tokens=30), [calls((0, 0, 500, 500), tokens=(20, 5)), calls((0, 0, 9, 9))], "budget_tokens", 2),
        (Budget(crops=0), [calls((0, 0, 500, 500))], "budget_crops", 1),
    ],
)
def test_each_budget_ends_the_episode_with_its_own_end(budget, answers, end, turns):
    script = Script(*answers, text("(1, 1)"))
    episode = run_episode(PLAIN, "x", (1920, 1080), budget, script)
    assert (episode.end, len(episode.turns), episode.point) == (end, turns, None)
    assert len(script.seen) == turns and episode.problem


def test_a_crop_shown_before_is_a_loop_the_screen_included():
    first = run_episode(PLAIN, "x", (800, 600), Budget(), Script(calls((0, 0, 400, 300)), calls((0, 0, 400, 300))))
    assert first.end == "loop"  # the second asks the whole of the first crop again
    screen = run_episode(PLAIN, "x", (800, 600), Budget(), Script(calls((0, 0, 800, 600))))
    assert screen.end == "loop" and len(screen.turns) == 1


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (Reply(None, ({"id": "a", "function": {"name": "crop", "arguments": "{box"}},)), "not JSON"),
        (Reply(None, ({"id": "a", "function": {"name": "crop", "arguments": {"box": [1, 2, 3]}}},)), "not [x1"),
        (Reply(None, ({"id": "a", "function": {"name": "crop", "arguments": {"box": [1, 2, "3", 4]}}},)), "numbers"),
        (Reply(None, ({"id": "a", "function": {"name": "zoom", "arguments": {}}},)), "unknown tool"),
        (Reply(None, (crop((1, 2, 3, 4), image=5),)), "not one shown"),
        (Reply(None, ({"id": "a", "function": "crop"},)), "unknown tool"),
    ],
)
def test_a_malformed_tool_call_is_an_invalid_action_never_a_crash(reply, problem):
    episode = run_episode(PLAIN, "x", (800, 600), Budget(), Script(reply))
    assert episode.end == "invalid_action" and problem in episode.problem
    assert episode.turns[0].action["kind"] == "invalid" and episode.point is None


def test_text_tool_calls_are_read_and_a_computer_use_click_is_left_to_the_preset():
    found = text_tool_calls('<tool_call>{"name": "crop", "arguments": {"box": [1, 2, 3, 4]}}</tool_call>')
    assert found[0]["function"]["arguments"] == {"box": [1, 2, 3, 4]}
    click = (
        '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [5, 6]}}</tool_call>'
    )
    assert text_tool_calls(click) == ()
    assert read_action(Reply(click), 1).kind == "answer"
    assert read_action(Reply('<tool_call>{"name": "crop", "arguments": {box}}</tool_call>'), 1).kind == "invalid"


def test_refusals_wrong_formats_and_terminate():
    refusing = resolve_preset("qwen2.5-vl", preprocess="none")
    said = run_episode(
        refusing, "x", (800, 600), Budget(), Script(text('{"action": "terminate", "status": "failure"}'))
    )
    assert said.end == "refusal" and said.point is None
    stop = Reply(None, ({"id": "t", "function": {"name": "terminate", "arguments": "{}"}},))
    assert run_episode(PLAIN, "x", (800, 600), Budget(), Script(stop)).end == "refusal"
    garbled = run_episode(PLAIN, "x", (800, 600), Budget(), Script(text("I cannot tell")))
    assert garbled.end == "wrong_format" and garbled.answer == "I cannot tell"


def test_re_clicks_show_the_cursor_and_end_on_a_confirmation():
    script = Script(text("(100, 100)"), text("(120, 100)"), text("(120, 100)"))
    episode = run_episode(PLAIN, "x", (800, 600), Budget(reclick=3), script)
    assert episode.end == "click" and episode.point == (120, 100) and len(episode.turns) == 3
    assert [v.cursor for v in episode.views] == [None, (100, 100), (120, 100)]
    assert script.seen[1][0][-1]["content"][0] == {"type": "image", "view": 1}
    assert [t["function"]["name"] for t in script.seen[0][1]] == ["crop", "terminate"]
    kept = run_episode(PLAIN, "x", (800, 600), Budget(reclick=1), Script(text("(7, 9)"), text("garbled")))
    assert (kept.end, kept.point) == ("click", (7, 9))


def test_the_conversation_carries_each_crop_once_with_a_tool_message_per_call():
    script = Script(calls((0, 0, 400, 300), (400, 300, 800, 600)), text("(1, 2)"))
    episode = run_episode(PLAIN, "find it", (800, 600), Budget(), script)
    messages = script.seen[1][0]
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "tool", "user"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["c0", "c1"]
    images = [p["view"] for m in messages for p in m["content"] if p["type"] == "image"]
    assert images == [0, 1, 2]
    assert episode.point == (401, 302)  # on the latest image: the second crop
    assert "crop" in messages[0]["content"][-1]["text"]  # the hint


def test_the_tool_offers_a_box_in_the_preset_s_coordinates():
    crop_tool = tools("0-1000 of the image", reclick=False)
    assert len(crop_tool) == 1
    box = crop_tool[0]["function"]["parameters"]["properties"]["box"]
    assert box["minItems"] == box["maxItems"] == 4 and "0-1000 of the image" in box["description"]


@pytest.mark.parametrize("bad", [{"turns": 0}, {"crops_per_turn": 0}, {"tokens": -1}, {"crops": True}])
def test_a_budget_below_its_least_is_refused(bad):
    with pytest.raises(ValueError, match="agent budget"):
        Budget(**bad)


def test_the_budget_from_command_line_text():
    assert Budget.from_options(turns="6", crops=None, reclick="1") == Budget(turns=6, reclick=1)
    with pytest.raises(ValueError, match="not an integer"):
        Budget.from_options(tokens="lots")


def test_the_last_click_carries_its_numbers_and_its_view_for_the_frame_fit():
    """Issue 46: an episode's click on a crop names the crop, so a frame decodes the numbers on it."""
    from pytest_grounding.core import frames
    from pytest_grounding.detectors.vlm.agent import prediction_of

    a = (200, 100, 600, 300)
    episode = run_episode(PLAIN, "x", (800, 600), Budget(), Script(calls(a), text("(100, 50)")))
    meta = dict(prediction_of(episode, "crop", {}).meta)
    assert episode.point == (300.0, 150.0)
    assert (meta["model_coordinates"], meta["model_image"], meta["model_view"]) == ([100.0, 50.0], [400, 200], list(a))
    record = {"target": [0, 0, 1, 1], "image_size": [800, 600], "point": list(episode.point), "meta": meta}
    answer = frames.answer_of(record)
    assert frames.Frame("as-preset").decode(answer) == (300.0, 150.0)
    assert frames.Frame("rel1000").decode(answer) == (200 + 40.0, 100 + 10.0)  # thousandths of the crop
    assert frames.Frame("swapped").decode(answer) == (200 + 50.0, 100 + 100.0)
    on_screen = run_episode(PLAIN, "x", (800, 600), Budget(), Script(text("(100, 50)")))
    meta = dict(prediction_of(on_screen, "crop", {}).meta)
    assert meta["model_image"] == [800, 600] and "model_view" not in meta
    refused = run_episode(PLAIN, "x", (800, 600), Budget(), Script(text("I cannot tell")))
    assert "model_coordinates" not in prediction_of(refused, "crop", {}).meta
