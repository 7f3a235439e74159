"""Model-driven grounding (issue 39): reading a model's turn and writing the next one. An answer's
action (a crop or terminate tool call, native or as `<tool_call>` text, or an answer in the preset's
own form), the tools offered, and the messages that follow a crop or a click. Pure."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core import safejson

if TYPE_CHECKING:
    from .agent_parts import Budget, Reply, View

CROP_TOOL = "crop"
MAX_CALL_CHARS = 64 * 1024  # a crop call is a few dozen characters; its arguments are read through the bounded reader
TERMINATE_TOOL = "terminate"
# Appended to the first user message: the tool is described in `tools`, the model is told it may use it.
HINT = (
    "You may call the `crop` tool to look at a region of the image more closely before you answer "
    "(at most {crops} crops in all, {per_turn} per turn). When you are sure, answer as asked."
)
RECLICK_TEXT = (
    "The cursor is drawn at your click on the screen above. If it is on the element, call `terminate`; "
    "otherwise answer with the corrected click on this image."
)
CROP_TEXT = "Image {view}: the region {box} of image {source}, enlarged. Answer in this image's coordinates."


@dataclass(frozen=True)
class Action:
    """What an answer asks for: `crop` (boxes in model values, each on a view), `answer` (a click,
    a refusal or nothing: the preset reads it), `terminate`, or `invalid` (and why)."""

    kind: str
    boxes: tuple[tuple[tuple[float, float, float, float], int | None], ...] = ()
    problem: str | None = None
    calls: tuple[Mapping[str, Any], ...] = ()  # the tool calls, echoed in the conversation


# -- reading an answer ------------------------------------------------------------------------------

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"


def _tagged_calls(text: str) -> list[str]:
    """The `{...}` between each `<tool_call>` and the next `</tool_call>`: one pass over the text
    (a regex's lazy `.*?` rescans the rest from every unclosed tag: quadratic on `<tool_call>{` x N)."""
    found, start = [], 0
    while (opened := text.find(_OPEN, start)) >= 0:
        closed = text.find(_CLOSE, opened + len(_OPEN))
        if closed < 0:
            break  # no closing tag after this one: none after a later one either
        opened = text.rfind(_OPEN, opened, closed)  # the opening nearest its close (`<tool_call>` x N first)
        inner = text[opened + len(_OPEN) : closed].strip()
        if inner.startswith("{") and inner.endswith("}"):
            found.append(inner)
        start = closed + len(_CLOSE)
    return found


def text_tool_calls(text: str | None) -> tuple[dict[str, Any], ...]:
    """`<tool_call>{"name": "crop", "arguments": {...}}</tool_call>` in the text (Qwen's template
    in-process, a server that does not parse tools): crop and terminate calls only (a preset's
    `computer_use` click is the preset's to read)."""
    calls = []
    for inner in _tagged_calls(text if isinstance(text, str) else ""):
        try:
            call = safejson.loads(inner, max_chars=MAX_CALL_CHARS)
        except ValueError:
            if f'"{CROP_TOOL}"' in inner:
                calls.append({"function": {"name": CROP_TOOL, "arguments": inner[:MAX_CALL_CHARS]}, "text": True})
            continue
        if isinstance(call, dict) and call.get("name") in (CROP_TOOL, TERMINATE_TOOL):
            calls.append({"function": {"name": call["name"], "arguments": call.get("arguments", {})}, "text": True})
    return tuple(calls)


def read_action(reply: Reply, shown: int) -> Action:
    """The action of an answer; `shown`: how many views exist (a crop's `image` must name one)."""
    calls = tuple(reply.tool_calls) or text_tool_calls(reply.text)
    if not calls:
        return Action("answer")
    boxes = []
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if name == TERMINATE_TOOL:
            return Action("terminate", calls=calls)
        if name != CROP_TOOL:
            return Action("invalid", problem=f"malformed tool call: unknown tool {str(name)[:40]!r}", calls=calls)
        assert isinstance(function, Mapping)
        parsed, problem = _crop_arguments(function.get("arguments"), shown)
        if parsed is None:
            return Action("invalid", problem=f"malformed tool call: {problem}", calls=calls)
        boxes.append(parsed)
    return Action("crop", boxes=tuple(boxes), calls=calls)


def _crop_arguments(arguments: Any, shown: int) -> tuple[Any, str | None]:
    if isinstance(arguments, str):
        try:
            arguments = safejson.loads(arguments, max_chars=MAX_CALL_CHARS)
        except ValueError:
            return None, f"arguments are not JSON: {arguments[:60]!r}"
    if not isinstance(arguments, Mapping):
        return None, "arguments are not an object"
    box = arguments.get("box")
    if not (isinstance(box, list) and len(box) == 4):
        return None, f"box {str(box)[:60]} is not [x1, y1, x2, y2]"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in box):
        return None, f"box {str(box)[:60]} is not four numbers"
    image = arguments.get("image")
    if image is not None and (isinstance(image, bool) or not isinstance(image, int) or not 0 <= image < shown):
        return None, f"image {str(image)[:20]} is not one shown (0 to {shown - 1})"
    return (tuple(float(v) for v in box), image), None


# -- the tools and messages -------------------------------------------------------------------------


def tools(coordinates: str, reclick: bool) -> list[dict[str, Any]]:
    """The OpenAI-style function tools offered: crop, and terminate where re-clicks are on."""
    crop = {
        "type": "function",
        "function": {
            "name": CROP_TOOL,
            "description": "Crop a region of an image you were shown and see it enlarged.",
            "parameters": {
                "type": "object",
                "properties": {
                    "box": {
                        "type": "array",
                        "items": {"type": "number"},
                        "minItems": 4,
                        "maxItems": 4,
                        "description": f"[x1, y1, x2, y2] in {coordinates}, on the image just shown",
                    },
                    "image": {"type": "integer", "description": "which image (0: the screen); default the last"},
                },
                "required": ["box"],
            },
        },
    }
    out = [crop]
    if reclick:
        out.append(
            {
                "type": "function",
                "function": {
                    "name": TERMINATE_TOOL,
                    "description": "Keep the last click: the cursor is on the element.",
                    "parameters": {"type": "object", "properties": {}},
                },
            }
        )
    return out


def first_messages(messages: Sequence[Mapping[str, Any]], budget: Budget) -> list[dict[str, Any]]:
    """The preset's messages with the screen as view 0 and the hint after the last user text."""
    out = [
        {**m, "content": [dict(p, view=0) if p["type"] == "image" else dict(p) for p in m["content"]]} for m in messages
    ]
    hint = HINT.format(crops=budget.crops, per_turn=budget.crops_per_turn)
    if budget.crops:
        out[-1]["content"].append({"type": "text", "text": hint})
    return out


def assistant_message(reply: Reply, action: Action) -> dict[str, Any]:
    """The model's answer as the conversation's next message (tool calls echoed as sent)."""
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": reply.text or ""}]}
    native = [c for c in action.calls if not c.get("text")]
    if native:
        message["tool_calls"] = [_echoed(c) for c in native]
    return message


def _echoed(call: Mapping[str, Any]) -> dict[str, Any]:
    """A native tool call as the next turns send it back: its id, type, name and the arguments a
    crop reads (box, image), never what else the model put there (a megabyte of it would be sent
    again with every later turn)."""
    import json

    found = call.get("function")
    function: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = safejson.loads(arguments, max_chars=MAX_CALL_CHARS)
        except ValueError:
            arguments = {}
    kept = {k: arguments[k] for k in ("box", "image") if isinstance(arguments, Mapping) and k in arguments}
    echoed: dict[str, Any] = {k: str(call[k])[:200] for k in ("id", "type") if call.get(k) is not None}
    echoed["function"] = {"name": str(function.get("name"))[:64], "arguments": json.dumps(kept)[:MAX_CALL_CHARS]}
    return echoed


def after_crop(action: Action, new: Sequence[View]) -> list[dict[str, Any]]:
    """The messages after a crop: a `tool` message per native call, then the crops as a user message."""
    out: list[dict[str, Any]] = []
    texts = [CROP_TEXT.format(view=v.index, box=list(v.region), source=v.source) for v in new]
    for call, text in zip(action.calls, texts, strict=False):
        if not call.get("text") and call.get("id") is not None:
            out.append({"role": "tool", "tool_call_id": str(call["id"]), "content": [{"type": "text", "text": text}]})
    parts: list[dict[str, Any]] = []
    for view, text in zip(new, texts, strict=True):
        parts += [{"type": "text", "text": text}, {"type": "image", "view": view.index}]
    out.append({"role": "user", "content": parts})
    return out


def after_click(cursor: View) -> dict[str, Any]:
    """The re-click turn: the screen with the cursor drawn at the click."""
    return {
        "role": "user",
        "content": [{"type": "image", "view": cursor.index}, {"type": "text", "text": RECLICK_TEXT}],
    }
