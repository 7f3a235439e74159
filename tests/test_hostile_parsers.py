"""Hostile inputs (issue 52; docs/security.md says what each class guarantees). Model text: every parser runs in
linear time on its input, and whatever a model puts in an agent's answer ends the episode with an end, in
bounded bodies.
"""

import json

import pytest

from helpers import FIXTURES

PRO, MINI = str(FIXTURES / "screenspot-pro"), str(FIXTURES / "mini")


# --- every parser of model text runs in linear time on its input ------------------------------------------------

MB = 1 << 20
# Shapes that made a regex rescan the rest of the text from each position: unclosed tags, runs of
# letters or digits before a `click(`, openings with no close, separators with nothing after them.
HOSTILE_UNITS = (
    "<tool_call>{", "<answer>{", "<answer>", "(1,", "((", "(1", "[1,", "click(x=", "<point>1 ", '"x":1,',
    '"box_2d":[1,', "a(", "abc", "1", " \t", "{", '"action" :', "Action: click(start_box='(", "<|box_start|>(",
    '"coordinate":[1,', "x(a=", "Click", "pyautogui.", "</tool_call>", '{"point_2d":[1,', '"point_2d": [',
)  # fmt: skip


EXTRACTOR_NAMES = ("answer_coordinate", "box_2d", "bracket", "json_xy", "paren", "paren_last", "point_2d", "point_tag",
                   "pyautogui", "tool_call", "uitars_action")  # fmt: skip


def _hostile(unit, size=MB):
    return unit * (size // len(unit))


def _timed(function, text, limit=4.0):
    import time

    started = time.perf_counter()
    function(text)
    took = time.perf_counter() - started
    assert took < limit, f"{took:.1f} s on {len(text):,} characters"


@pytest.mark.parametrize("name", EXTRACTOR_NAMES)
def test_every_extractor_reads_a_hostile_megabyte_in_linear_time(name):
    from pytest_grounding.detectors.vlm.parse import EXTRACTORS

    if name == "uitars_action":
        pytest.importorskip("ui_tars")  # the openai extra: UI-TARS's own parser

    assert set(EXTRACTORS) == set(EXTRACTOR_NAMES)  # a new extractor is tested here too

    for unit in HOSTILE_UNITS:
        _timed(EXTRACTORS[name], _hostile(unit, MB // 4))
    _timed(EXTRACTORS[name], "".join(_hostile(unit, MB // len(HOSTILE_UNITS)) for unit in HOSTILE_UNITS))


def test_every_presets_parser_reads_a_hostile_megabyte_in_linear_time():
    pytest.importorskip("ui_tars")  # the openai extra: the UI-TARS presets read through its parser
    from pytest_grounding.detectors.vlm.preprocess import Frame
    from pytest_grounding.detectors.vlm.presets import all_presets

    frame = Frame((1000, 800), (1000, 800))
    mixed = "".join(_hostile(unit, MB // len(HOSTILE_UNITS)) for unit in HOSTILE_UNITS)
    for preset in all_presets().values():
        _timed(lambda text, preset=preset: preset.parse(text, frame, {}), mixed)
    for unit in ("<answer>{", "abc", "1", "<tool_call>{"):
        for preset in all_presets().values():
            _timed(lambda text, preset=preset: preset.parse(text, frame, {}), _hostile(unit, MB // 4), limit=2.0)


@pytest.mark.parametrize("unit", ["<tool_call>{", "<tool_call>", '<tool_call>{"name": "crop", "arguments": {', "{["])
def test_the_agents_tool_call_parser_reads_a_hostile_megabyte_in_linear_time(unit):
    from pytest_grounding.detectors.strategies.screenseeker import parse_verdict
    from pytest_grounding.detectors.vlm.agent_turns import text_tool_calls

    _timed(text_tool_calls, _hostile(unit))
    _timed(parse_verdict, _hostile(unit))
    deep = "<tool_call>" + '{"name": "crop", "arguments": ' + "[" * 50_000 + "}</tool_call>"
    assert text_tool_calls(deep)[0]["function"]["name"] == "crop"  # read as a malformed crop, never a RecursionError
    closed = '<tool_call>{"name": "crop", "arguments": {"box": [1, 2, 3, 4]}}</tool_call>'
    assert text_tool_calls(_hostile(unit, MB // 2) + closed) != ()


# --- an agent's turns: whatever a model puts in its answer ends the episode with an end, in bounded bodies -------


def test_later_turns_echo_a_tool_call_without_what_the_model_added():
    from pytest_grounding.detectors.vlm.agent_parts import Reply
    from pytest_grounding.detectors.vlm.agent_turns import assistant_message, read_action

    junk = "x" * (4 << 20)
    for arguments in ({"box": [1, 2, 30, 40], "junk": junk}, json.dumps({"box": [1, 2, 30, 40], "junk": junk[:1000]})):
        call = {"id": "c1", "type": "function", "function": {"name": "crop", "arguments": arguments}, "extra": junk}
        reply = Reply(text="t", tool_calls=(call,), prompt_tokens=1, completion_tokens=1, latency_ms=1.0)
        action = read_action(reply, 1)
        assert action.kind == "crop"
        echoed = json.dumps(assistant_message(reply, action))
        assert len(echoed) < 1000 and "[1, 2, 30, 40]" in echoed and "junk" not in echoed


@pytest.mark.parametrize(
    "content",
    [[{"type": "text", "text": 5}], [{"type": "text", "text": {"a": 1}}, {"type": "text", "text": "(1,2)"}], [None, 3]],
)
def test_content_parts_that_are_no_text_are_no_answer_never_a_crash(content):
    from pytest_grounding.detectors.http import completion_content

    assert isinstance(completion_content({"choices": [{"message": {"content": content}}]}), str)


@pytest.mark.parametrize(
    "arguments",
    ["[" * 5000, '{"box": [1e999, 2, 3, 4]}', '{"box": [' + "9" * 400 + ", 2, 3, 4]}", 7, None, ["box"]],
)
def test_hostile_crop_arguments_are_an_invalid_action_never_an_exception(arguments):
    from pytest_grounding.detectors.vlm.agent_parts import Reply
    from pytest_grounding.detectors.vlm.agent_turns import read_action

    call = {"id": "c", "function": {"name": "crop", "arguments": arguments}}
    reply = Reply(text=None, tool_calls=(call,), prompt_tokens=1, completion_tokens=1, latency_ms=1.0)
    assert read_action(reply, 1).kind == "invalid"
