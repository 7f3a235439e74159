"""Prompt texts of the 2026 model families (issue 28), each copied from the source its preset cites
(library_2026.py). Kept apart from prompts.py so the shipped twenty stay as they were; the
builders (`Prompt`, `openai_messages`) are prompts.py's."""

from __future__ import annotations

import json

from .prompts import TOOLS_FOOTER, TOOLS_HEADER

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
