"""Prompt builders: a preset's prompt and an instruction in, chat messages out.

Messages use transformers' chat-template form (`{"type": "image"}` marks where the image goes);
`openai_messages` turns them into the chat-completions form with the image as a data URL."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# The maintainers' ScreenSpot-Pro prompt (bytedance/UI-TARS issues #182, #215; README_v1).
UITARS_POINT = (
    "Output only the coordinate of one point in your response. What element matches the following task: {instruction}"
)
# GROUNDING_DOUBAO of bytedance/UI-TARS codes/ui_tars/prompt.py, the grounding form of the 1.5
# computer-use prompts (the doubled '' is the source's; Phi-Ground's copy drops it).
UITARS_COMPUTER_USE = (
    "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform "
    "the next action to complete the task. \n\n## Output Format\n\nAction: ...\n\n\n## Action Space\n"
    "click(point='<point>x1 y1</point>'')\n\n## User Instruction\n{instruction}"
)

# Qwen2.5-VL's computer_use tool (QwenLM/Qwen2.5-VL cookbooks/utils/agent_function_call.py), in
# Qwen-Agent's function-calling system prompt (nous_fncall_prompt.py: the default system text, two
# newlines, the tool json.dumps'ed). The tool's text is read from the ScreenSpot-Pro harness's copy
# (likaixin2000/ScreenSpot-Pro-GUI-Grounding@bd8bbbb models/qwen2_5vl.py), which writes the same
# JSON with raw newlines and three newlines before "# Tools". The screen size is the resized image's.
_QWEN25_ACTIONS = (
    ("key", "Performs key down presses on the arguments passed in order, then performs key releases in reverse order."),
    ("type", "Type a string of text on the keyboard."),
    ("mouse_move", "Move the cursor to a specified (x, y) pixel coordinate on the screen."),
    ("left_click", "Click the left mouse button."),
    ("left_click_drag", "Click and drag the cursor to a specified (x, y) pixel coordinate on the screen."),
    ("right_click", "Click the right mouse button."),
    ("middle_click", "Click the middle mouse button."),
    ("double_click", "Double-click the left mouse button."),
    ("scroll", "Performs a scroll of the mouse scroll wheel."),
    ("wait", "Wait specified seconds for the change to happen."),
    ("terminate", "Terminate the current task and report its completion status."),
)
QWEN25_TOOL = {
    "type": "function",
    "function": {
        "name_for_human": "computer_use",
        "name": "computer_use",
        "description": "Use a mouse and keyboard to interact with a computer, and take screenshots.\n"
        "* This is an interface to a desktop GUI. You do not have access to a terminal or applications menu. "
        "You must click on desktop icons to start applications.\n"
        "* Some applications may take time to start or process actions, so you may need to wait and take "
        "successive screenshots to see the results of your actions. E.g. if you click on Firefox and a window "
        "doesn't open, try wait and taking another screenshot.\n"
        "* The screen's resolution is {width}x{height}.\n"
        "* Whenever you intend to move the cursor to click on an element like an icon, you should consult a "
        "screenshot to determine the coordinates of the element before moving the cursor.\n"
        "* If you tried clicking on a program or link but it failed to load, even after waiting, try adjusting "
        "your cursor position so that the tip of the cursor visually falls on the element that you want to click.\n"
        "* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of the element. "
        "Don't click boxes on their edges unless asked.",
        "parameters": {
            "properties": {
                "action": {
                    "description": "The action to perform. The available actions are:\n"
                    + "\n".join(f"* `{name}`: {text}" for name, text in _QWEN25_ACTIONS),
                    "enum": [name for name, _ in _QWEN25_ACTIONS],
                    "type": "string",
                },
                "keys": {"description": "Required only by `action=key`.", "type": "array"},
                "text": {"description": "Required only by `action=type`.", "type": "string"},
                "coordinate": {
                    "description": "(x, y): The x (pixels from the left edge) and y (pixels from the top edge) "
                    "coordinates to move the mouse to. Required only by `action=mouse_move` and "
                    "`action=left_click_drag`.",
                    "type": "array",
                },
                "pixels": {
                    "description": "The amount of scrolling to perform. Positive values scroll up, negative values "
                    "scroll down. Required only by `action=scroll`.",
                    "type": "number",
                },
                "time": {"description": "The seconds to wait. Required only by `action=wait`.", "type": "number"},
                "status": {
                    "description": "The status of the task. Required only by `action=terminate`.",
                    "type": "string",
                    "enum": ["success", "failure"],
                },
            },
            "required": ["action"],
            "type": "object",
        },
        "args_format": "Format the arguments as a JSON object.",
    },
}
TOOLS_HEADER = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)
TOOLS_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)
QWEN25_SYSTEM = "You are a helpful assistant.\n\n" + TOOLS_HEADER + json.dumps(QWEN25_TOOL) + TOOLS_FOOTER

# GUI-Owl-1.5's grounding system prompt (X-PLUG/MobileAgent Mobile-Agent-v3.5/grounding_and_kb/
# eval_grounding_benchmarks.py): the tool JSON written with raw newlines, a 1000x1000 screen.
OWL15_TOOL = (
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse to interact with a '
    "computer.\n* The screen's resolution is 1000x1000.\n* Make sure to click any buttons, links, icons, etc with "
    "the cursor tip in the center of the element. Don't click boxes on their edges unless asked.\n* don't use any "
    "other computer use tool like type, key, scroll, left_click_drag and so on.\n* you can only use the left_click "
    "and mouse_move action to interact with the computer. if you can't find the element, you should terminate the "
    'task and report the failure.", "parameters": {"properties": {"action": {"description": "The action to '
    "perform. The available actions are:\n* `mouse_move`: Move the cursor to a specified (x, y) pixel coordinate "
    "on the screen.\n* `left_click`: Click the left mouse button with coordinate (x, y) pixel coordinate on the "
    'screen.", "enum": ["mouse_move", "left_click"], "type": "string"}, "coordinate": {"description": "(x, y): '
    "The x (pixels from the left edge) and y (pixels from the top edge) coordinates to move the mouse to. Required "
    'only by `action=mouse_move` and `action=left_click`.", "type": "array"}}, "required": ["action"], '
    '"type": "object"}}}'
)
OWL15_SYSTEM = TOOLS_HEADER + OWL15_TOOL + TOOLS_FOOTER
OWL15_INFEASIBLE = (
    "\nAdditionally, if you think the task is infeasible (e.g., the task is not related to the image), return "
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}\n</tool_call>'
)

QWEN3_POINT = (
    "Output the center point of the position corresponding to the instruction: {instruction}. The output should "
    "just be the coordinates of a point, in the format [x,y]. Additionally, if you think the task is infeasible "
    "(e.g., the task is not related to the image), the output should be [-1,-1]."
)
OS_ATLAS_7B = (
    'In this UI screenshot, what is the position of the element corresponding to the command "{instruction}" '
    "(with bbox)?"
)
UGROUND = (
    "\nYour task is to help the user identify the precise coordinates (x, y) of a specific area/element/object on "
    "the screen based on a description.\n\n- Your response should aim to point to the center or a representative "
    "point within the described area/element/object as accurately as possible.\n- If the description is unclear "
    "or ambiguous, infer the most relevant area or element based on its likely context or purpose.\n- Your answer "
    "should be a single string (x, y) corresponding to the point of the interest.\n\nDescription: {instruction}"
    "\n\nAnswer:"
)
GTA1_SYSTEM = (
    "You are an expert UI element locator. Given a GUI image and a user's element description, provide the "
    "coordinates of the specified element as a single (x,y) point. The image resolution is height {height} and "
    "width {width}. For elements with area, return the center point.\n\nOutput the coordinate pair exactly:\n(x,y)"
)
PYAUTOGUI_SYSTEM = (
    "You are a GUI agent. You are given a task and a screenshot of the screen. You need to perform a series of "
    "pyautogui actions to complete the task."
)
UI_VENUS_GROUND = (
    "Outline the position corresponding to the instruction: {instruction}. The output should be only [x1,y1,x2,y2]."
)
UI_VENUS_15 = (
    "Output the center point of the position corresponding to the following instruction: \n{instruction}. \n\n"
    "The output should just be the coordinates of a point, in the format [x,y]. Additionally, if the task is "
    "infeasible (e.g., the task is not related to the image), the output should be [-1,-1]."
)
HOLO15 = (
    "Localize an element on the GUI image according to the provided target and output a click position.\n"
    "          * Only output the click position, do not output any other text.\n"
    "          * The click position should be in the format 'Click(x, y)' with x: num pixels from the left edge "
    "and y: num pixels from the top edge\n          Your target is:\n{instruction}"
)
SHOWUI_LEAD = (
    "Based on the screenshot of the page, I give a text description and you give its corresponding location. The "
    "coordinate represents a clickable location [x, y] for an element, which is a relative coordinate on the "
    "screenshot, scaled from 0 to 1."
)
SEECLICK = (
    'In this UI screenshot, what is the position of the element corresponding to the command "{instruction}" '
    "(with point)?"
)
ARIA_UI = (
    "Given a GUI image, what are the relative (0-1000) pixel point coordinates for the element corresponding to "
    "the following instruction or description: {instruction}"
)
GPT_SYSTEM = (
    "You are an expert in using electronic devices and interacting with graphic interfaces. You should not call "
    "any external tools."
)
GPT_USER = (
    "You are asked to find the bounding box of an UI element in the given screenshot corresponding to a given "
    "instruction.\nDon't output any analysis. Output your result in the format of [[x0,y0,x1,y1]], with x and y "
    "ranging from 0 to 1.The instruction is:\n{instruction}\n"
)
GEMINI_POINT_LEAD = (
    "You are an expert UI element locator. Given a GUI image and a user's element description, provide your "
    "reasoning process first, finally provide the coordinates of the specified element as a single point. For "
    "elements with area, return the center point.\n\nGive your reasoning process first, then output the "
    "coordinate pair ranging from 0 to 1000 exactly in format:\n(x,y)"
)
GEMINI_POINT_USER = "The user's element description is: {instruction}"
# Ours (no harness has a Gemini box_2d grounding prompt): the output form of Google's bounding-box
# detection page (box_2d = [y_min, x_min, y_max, x_max], 0-1000).
GEMINI_BOX = (
    "Detect the UI element that matches the following description and return its bounding box as JSON "
    '{"box_2d": [y_min, x_min, y_max, x_max]} with coordinates normalized to 0-1000. Description: {instruction}'
)
# Ours (no harness has a Claude preset): Anthropic's vision-coordinates guidance asks for absolute
# pixels of the image Claude sees (0-1000 "does not work well"); the image is sent at that size.
CLAUDE = (
    "The screenshot is {width}x{height} pixels. Find the UI element that matches this description: "
    "{instruction}\nAnswer with the pixel coordinates of its center only, in the format (x, y)."
)


PARTS = ("image", "text", "lead")


def check_order(order: str) -> None:
    """`order`: the user turn's parts, `,` between parts of one message, `|` between messages:
    `image,text` (image first), `text,image`, `lead,image,text` (ShowUI), `lead|text|image`."""
    messages = [m.split(",") for m in order.split("|")]
    parts = [p.strip() for m in messages for p in m]
    if sorted(p for p in parts if p != "lead") != ["image", "text"] or parts.count("lead") > 1:
        raise ValueError(f"prompt order {order!r}: image and text once each, lead at most once (e.g. image,text)")


@dataclass(frozen=True)
class Prompt:
    """`user` holds `{instruction}` (and may hold `{width}`, `{height}`: the size of the image the
    model is given); so may `system`, None = no system turn (the chat template may add its
    default, as Qwen's does). `order` places image, text and `lead` (a fixed text) in the user
    turn(s). `strip` characters are removed from the end of the instruction (UI-Venus-1.5: ".")."""

    user: str
    system: str | None = None
    order: str = "image,text"
    lead: str | None = None
    strip: str = ""

    def __post_init__(self) -> None:
        check_order(self.order)
        if "lead" in self.order and self.lead is None:
            raise ValueError(f"prompt order {self.order!r} has a lead part but the prompt has no lead text")

    @property
    def image_first(self) -> bool:
        return self.order.replace("lead", "").lstrip(",|").startswith("image")

    def text(self, instruction: str, size: tuple[int, int] | None = None) -> str:
        return _fill(self.user, instruction.rstrip(self.strip) if self.strip else instruction, size)

    def system_text(self, size: tuple[int, int] | None = None) -> str | None:
        return None if self.system is None else _fill(self.system, "", size)

    def messages(self, instruction: str, size: tuple[int, int] | None = None) -> list[dict[str, Any]]:
        """Chat messages for an image of `size` (width, height) as the model is given it."""
        parts: dict[str, dict[str, Any]] = {
            "image": {"type": "image"},
            "text": {"type": "text", "text": self.text(instruction, size)},
            "lead": {"type": "text", "text": self.lead or ""},
        }
        messages: list[dict[str, Any]] = []
        system = self.system_text(size)
        if system is not None:
            messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
        for message in self.order.split("|"):
            content = [dict(parts[name.strip()]) for name in message.split(",")]
            messages.append({"role": "user", "content": content})
        return messages


def _fill(template: str, instruction: str, size: tuple[int, int] | None) -> str:
    # str.replace, not format: prompts hold literal braces (JSON tool schemas)
    text = template.replace("{instruction}", instruction)
    if size is not None:
        text = text.replace("{width}", str(size[0])).replace("{height}", str(size[1]))
    return text


def openai_messages(messages: list[dict[str, Any]], image_url: str) -> list[dict[str, Any]]:
    """Chat-completions messages: the image part becomes an `image_url` (a data URL)."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message["content"]:
            if part["type"] == "image":
                parts.append({"type": "image_url", "image_url": {"url": image_url}})
            else:
                parts.append(dict(part))
        if message["role"] == "system" and all(p["type"] == "text" for p in parts):
            converted.append({"role": "system", "content": "".join(p["text"] for p in parts)})
        else:
            converted.append({"role": message["role"], "content": parts})
    return converted


# -- The 2026 model families (issue 28), each copied from the source its preset cites (library.py) --

# MAI-UI (Tongyi-MAI/MAI-UI@4dd07b9 evaluation/grounding/eval_server.py SYSTEM_PROMPT, the script behind
# the README's evaluation table; models/MAI_UI.py has the same text). The double space after
# "instructions," and the trailing "## Input instruction\n" are the source's. src/prompt.py's agent copy
# (MAI_MOBILE_SYS_PROMPT_GROUNDING) ends at "</answer>" (.strip()'ed); Phi-Ground's CUActSpot copy drops
# the double space and the last heading.
MAI_UI_SYSTEM = (
    "You are a GUI grounding agent. \n## Task\nGiven a screenshot and the user's grounding instruction. Your task "
    "is to accurately locate a UI element based on the user's instructions.\nFirst, you should carefully examine "
    "the screenshot and analyze the user's instructions,  translate the user's instruction into a effective "
    "reasoning process, and then provide the final coordinate.\n## Output Format\nReturn a json object with a "
    "reasoning process in <grounding_think></grounding_think> tags, a [x,y] format coordinate within "
    '<answer></answer> XML tags:\n<grounding_think>...</grounding_think>\n<answer>\n{"coordinate": [x,y]}\n'
    "</answer>\n## Input instruction\n"
)
MAI_UI_USER = "{instruction}\n"  # the instruction and a newline, before the image

# EvoCUA S2 (meituan/EvoCUA@4a0ad5f mm_agents/evocua/prompts.py, evocua_agent.py _predict_s2 with
# coordinate_type=relative: "The screen's resolution is 1000x1000"; the tool JSON json.dumps'ed).
_EVOCUA_ACTIONS = (
    "\n* `key`: Performs key down presses on the arguments passed in order, then performs key releases in reverse "
    "order.\n* `key_down`: Press and HOLD the specified key(s) down in order (no release). Use this for stateful "
    "holds like holding Shift while clicking.\n* `key_up`: Release the specified key(s) in reverse order.\n"
    "* `type`: Type a string of text on the keyboard.\n* `mouse_move`: Move the cursor to a specified (x, y) pixel "
    "coordinate on the screen.\n* `left_click`: Click the left mouse button at a specified (x, y) pixel coordinate "
    "on the screen.\n* `left_click_drag`: Click and drag the cursor to a specified (x, y) pixel coordinate on the "
    "screen.\n* `right_click`: Click the right mouse button at a specified (x, y) pixel coordinate on the screen.\n"
    "* `middle_click`: Click the middle mouse button at a specified (x, y) pixel coordinate on the screen.\n"
    "* `double_click`: Double-click the left mouse button at a specified (x, y) pixel coordinate on the screen.\n"
    "* `triple_click`: Triple-click the left mouse button at a specified (x, y) pixel coordinate on the screen.\n"
    "* `scroll`: Performs a scroll of the mouse scroll wheel.\n* `hscroll`: Performs a horizontal scroll (mapped "
    "to regular scroll).\n* `wait`: Wait specified seconds for the change to happen.\n* `terminate`: Terminate the "
    "current task and report its completion status.\n* `answer`: Answer a question.\n"
)
_EVOCUA_DESCRIPTION = (
    "Use a mouse and keyboard to interact with a computer, and take screenshots.\n* This is an interface to a "
    "desktop GUI. You must click on desktop icons to start applications.\n* Some applications may take time to "
    "start or process actions, so you may need to wait and take successive screenshots to see the results of your "
    "actions. E.g. if you click on Firefox and a window doesn't open, try wait and taking another screenshot.\n"
    "* The screen's resolution is 1000x1000.\n* Whenever you intend to move the cursor to click on an element like "
    "an icon, you should consult a screenshot to determine the coordinates of the element before moving the "
    "cursor.\n* If you tried clicking on a program or link but it failed to load even after waiting, try adjusting "
    "your cursor position so that the tip of the cursor visually falls on the element that you want to click.\n"
    "* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of the element. Don't "
    "click boxes on their edges unless asked."
)
EVOCUA_TOOL = {
    "type": "function",
    "function": {
        "name_for_human": "computer_use",
        "name": "computer_use",
        "description": _EVOCUA_DESCRIPTION,
        "parameters": {
            "properties": {
                "action": {
                    "description": _EVOCUA_ACTIONS,
                    "enum": [
                        "key",
                        "type",
                        "mouse_move",
                        "left_click",
                        "left_click_drag",
                        "right_click",
                        "middle_click",
                        "double_click",
                        "triple_click",
                        "scroll",
                        "wait",
                        "terminate",
                        "key_down",
                        "key_up",
                    ],
                    "type": "string",
                },
                "keys": {"description": "Required only by `action=key`.", "type": "array"},
                "text": {"description": "Required only by `action=type`.", "type": "string"},
                "coordinate": {"description": "The x,y coordinates for mouse actions.", "type": "array"},
                "pixels": {"description": "The amount of scrolling.", "type": "number"},
                "time": {"description": "The seconds to wait.", "type": "number"},
                "status": {"description": "The status of the task.", "type": "string", "enum": ["success", "failure"]},
            },
            "required": ["action"],
            "type": "object",
        },
        "args_format": "Format the arguments as a JSON object.",
    },
}
EVOCUA_SYSTEM = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function "
    "signatures within <tools></tools> XML tags:\n<tools>\n" + json.dumps(EVOCUA_TOOL) + "\n</tools>\n\nFor each "
    "function call, return a json object with function name and arguments within <tool_call></tool_call> XML "
    'tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\n# Response '
    "format\n\nResponse format for every step:\n1) Action: a short imperative describing what to do in the UI.\n"
    '2) A single <tool_call>...</tool_call> block containing only the JSON: {"name": <function-name>, "arguments": '
    "<args-json-object>}.\n\nRules:\n- Output exactly in the order: Action, <tool_call>.\n- Be brief: one sentence "
    "for Action.\n- Do not output anything else outside those parts.\n- If finishing, use action=terminate in the "
    "tool call."
)
# The first step's user text (no history); the leading newline is the agent's f-string's.
EVOCUA_USER = (
    "\nPlease generate the next move according to the UI screenshot, instruction and previous actions.\n\n"
    "Instruction: {instruction}\n\nPrevious actions:\nNone"
)

# GroundNext (ServiceNow/GroundCUA@81136d4 eval/prompts.py GroundCUAPrompt, after its str.format: the
# doubled braces become single ones; the screen size is the smart_resize'd image's). Its tool JSON is
# not balanced ("required" sits inside "properties", one closing brace short): the source's, kept.
GROUNDNEXT_SYSTEM = (
    "You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse and keyboard to interact '
    "with a computer, and take screenshots.\n* This is an interface to a desktop GUI. You do not have access to a "
    "terminal or applications menu. You must click on desktop icons to start applications.\n* Some applications "
    "may take time to start or process actions, so you may need to wait and take successive screenshots to see the "
    "results of your actions. E.g. if you click on Firefox and a window doesn't open, try wait and taking another "
    "screenshot.\n* The screen's resolution is {width}x{height}.\n* Whenever you intend to move the cursor to click "
    "on an element like an icon, you should consult a screenshot to determine the coordinates of the element "
    "before moving the cursor.\n* If you tried clicking on a program or link but it failed to load, even after "
    "waiting, try adjusting your cursor position so that the tip of the cursor visually falls on the element that "
    "you want to click.\n* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of "
    'the element. Don\'t click boxes on their edges unless asked.", "parameters": {"properties": {"action": '
    '{"description": "The action to perform. The available actions are:\n* `key`: Performs key down presses on the '
    "arguments passed in order, then performs key releases in reverse order.\n* `type`: Type a string of text on "
    "the keyboard.\n* `mouse_move`: Move the cursor to a specified (x, y) pixel coordinate on the screen.\n"
    "* `left_click`: Click the left mouse button.\n* `left_click_drag`: Click and drag the cursor to a specified "
    "(x, y) pixel coordinate on the screen.\n* `right_click`: Click the right mouse button.\n* `middle_click`: "
    "Click the middle mouse button.\n* `double_click`: Double-click the left mouse button.\n* `scroll`: Performs a "
    "scroll of the mouse scroll wheel.\n* `wait`: Wait specified seconds for the change to happen.\n* `terminate`: "
    'Terminate the current task and report its completion status.", "enum": ["key", "type", "mouse_move", '
    '"left_click", "left_click_drag", "right_click", "middle_click", "double_click", "scroll", "wait", '
    '"terminate"], "type": "string"}, "keys": {"description": "Required only by `action=key`.", "type": "array"}, '
    '"text": {"description": "Required only by `action=type`.", "type": "string"}, "coordinate": {"description": '
    '"(x, y): The x (distance from the left edge) and y (distance from the top edge) coordinates to move the mouse '
    'to. Required only by `action=mouse_move` and `action=left_click_drag`.", "type": "array"}, "pixels": '
    '{"description": "The amount of scrolling to perform. Positive values scroll up, negative values scroll down. '
    'Required only by `action=scroll`.", "type": "number"}, "time": {"description": "The seconds to wait. Required '
    'only by `action=wait`.", "type": "number"}, "status": {"description": "The status of the task. Required only '
    'by `action=terminate`.", "type": "string", "enum": ["success", "failure"]}, "required": ["action"], "type": '
    '"object"}}\n</tools>\n\nFor each function call, return a json object with function name and arguments '
    'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
    "<args-json-object>}\n</tool_call>\n"
)

# Holo3 / Holo3.1 (H Company's docs, hub.hcompany.ai/element-localization): the pydantic schema of
# VisualLocalizerOutput as Python prints a dict (single quotes), then the target on its own line.
HOLO3_SCHEMA = (
    "{'properties': {'x': {'description': 'X coordinate as integer in [0, 1000]', 'maximum': 1000, 'minimum': 0, "
    "'title': 'X', 'type': 'integer'}, 'y': {'description': 'Y coordinate as integer in [0, 1000]', 'maximum': 1000, "
    "'minimum': 0, 'title': 'Y', 'type': 'integer'}}, 'required': ['x', 'y'], 'title': 'VisualLocalizerOutput', "
    "'type': 'object'}"
)
HOLO3 = (
    "Localize an element on the GUI image according to the provided target and output a click position.\n"
    " * You must output a valid JSON following the format: " + HOLO3_SCHEMA + "\n Your target is:\n{instruction}"
)
# Holo2's model card names its schema ClickCoordinates, with other descriptions; the wording around it
# is Holo3's (see the holo2 preset's notes).
HOLO2_SCHEMA = (
    "{'properties': {'x': {'description': 'The x coordinate, normalized between 0 and 1000.', 'maximum': 1000, "
    "'minimum': 0, 'title': 'X', 'type': 'integer'}, 'y': {'description': 'The y coordinate, normalized between 0 "
    "and 1000.', 'maximum': 1000, 'minimum': 0, 'title': 'Y', 'type': 'integer'}}, 'required': ['x', 'y'], "
    "'title': 'ClickCoordinates', 'type': 'object'}"
)
HOLO2 = (
    "Localize an element on the GUI image according to the provided target and output a click position.\n"
    " * You must output a valid JSON following the format: " + HOLO2_SCHEMA + "\n Your target is:\n{instruction}"
)

# The Qwen3-VL computer-use grounding prompt of the ScreenSpot-Pro harness (likaixin2000/
# ScreenSpot-Pro-GUI-Grounding models/qwen3vl.py@573b40e, models/qwen3_5.py@4a04544, the same bytes), which
# KV-Ground's own evaluation uses too (vocaela/kv-ground@04cf530 utils.py, .strip()'ed): a 1000x1000 screen,
# left_click only, the tool JSON with raw newlines and one closing brace short ("required" inside
# "properties", as GroundNext's). A third-party copy (models/zoom_consistency_router.py) escapes the newlines
# and balances the braces; the authors' text is kept.
QWEN3VL_GROUNDING_TOOL = (
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse to interact with a '
    "computer.\n* The screen's resolution is 1000x1000.\n* Make sure to click any buttons, links, icons, etc with "
    "the cursor tip in the center of the element. \n* You can only use the left_click action to interact with the "
    'computer.", "parameters": {"properties": {"action": {"description": "The action to perform. The available '
    'actions are:\n* `left_click`: Click the left mouse button with coordinate (x, y).", "enum": ["left_click"], '
    '"type": "string"}, "coordinate": {"description": "(x, y): The x (pixels from the left edge) and y (pixels '
    'from the top edge) coordinates to move the mouse to. Required only by `action=left_click`.", "type": "array"}, '
    '"required": ["action"], "type": "object"}}}'
)
QWEN3VL_GROUNDING_SYSTEM = (
    "You are a helpful assistant. The user will give you an instruction, and you MUST left click on the "
    "corresponding UI element via tool call. If you are not sure about where to click, guess a most likely one.\n\n"
    + TOOLS_HEADER
    + QWEN3VL_GROUNDING_TOOL
    + TOOLS_FOOTER
)
