"""From a model's answer to a Prediction: an extractor finds the numbers (in the model's frame),
a transform maps them to pixels of the original image, a refusal form says "no such element".

Extractors and transforms are registered by name so presets compose them. An answer no extractor
understands is a wrong-format Prediction that keeps the raw text."""

from __future__ import annotations

import ast
import contextlib
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...core.types import Box, Prediction
from .preprocess import Frame


@dataclass(frozen=True)
class Extracted:
    """Two numbers (a point) or four (a box x1, y1, x2, y2), in the model's coordinates."""

    values: tuple[float, ...]
    shape: str  # which form of answer it was read from, for the record

    @property
    def is_box(self) -> bool:
        return len(self.values) == 4


Extractor = Callable[[str], Extracted | None]
Transform = Callable[[float, float, Frame], tuple[float, float]]

_NUM = r"-?\d+(?:\.\d+)?"
_PAIR = rf"\(\s*({_NUM})\s*,\s*({_NUM})\s*\)"
_QUAD = rf"\(\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*\)"
_BOX_TOKENS = re.compile(r"<\|box_(?:start|end)\|>")
_ACTION_CALL = re.compile(r"\b\w+\(\s*\w+\s*=")


def uitars_action(text: str) -> Extracted | None:
    """`Action: click(start_box='(x,y)')`, `click(point='<point>x y</point>')`, with or without the
    `Action:` prefix and the box tokens, a box in start_box: through the `ui-tars` package's
    parser. It asserts on a missing `Action:` and raises on what it cannot read: those are None."""
    from ui_tars.action_parser import parse_action_to_structure_output

    cleaned = _BOX_TOKENS.sub("", text).strip()
    if not _ACTION_CALL.search(cleaned):
        return None
    if "Action:" not in cleaned:
        cleaned = "Action: " + cleaned
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints what it cannot parse
            # model_type other than qwen25vl with factor 1: the numbers come back as written
            actions = parse_action_to_structure_output(cleaned, 1, 1000, 1000, model_type="qwen2vl")
    except Exception:  # AssertionError, ValueError, SyntaxError...: not an answer it understands
        return None
    for action in actions:
        box = action.get("action_inputs", {}).get("start_box")
        if not box:
            continue
        try:
            values = tuple(float(v) for v in ast.literal_eval(box))
        except (ValueError, SyntaxError, TypeError):
            return None
        if len(values) != 4:
            return None
        if values[:2] == values[2:]:  # the package writes a point as a zero-size box
            return Extracted(values[:2], "action point")
        return Extracted(values, "action box")
    return None


def paren(text: str) -> Extracted | None:
    """The first `(x,y)`, `(x1,y1,x2,y2)` or `(x1,y1),(x2,y2)` in the text."""
    text = _BOX_TOKENS.sub("", text)
    quad = re.search(_QUAD, text)
    two = re.search(rf"{_PAIR}\s*,\s*{_PAIR}", text)
    pair = re.search(_PAIR, text)
    found = [(m.start(), m, shape) for m, shape in ((quad, "box"), (two, "two points"), (pair, "point")) if m]
    if not found:
        return None
    # the earliest match; at the same place the longer form wins (listed first)
    _, match, shape = min(found, key=lambda item: item[0])
    values = tuple(float(v) for v in match.groups())
    return Extracted(values, "point" if len(values) == 2 else shape)


def bracket(text: str) -> Extracted | None:
    """The first `[x,y]` or `[x1,y1,x2,y2]` in the text."""
    match = re.search(rf"\[\s*({_NUM})\s*,\s*({_NUM})\s*(?:,\s*({_NUM})\s*,\s*({_NUM})\s*)?\]", text)
    if not match:
        return None
    values = tuple(float(v) for v in match.groups() if v is not None)
    return Extracted(values, "bracket box" if len(values) == 4 else "bracket point")


_JSON_COORDINATE = re.compile(
    rf'"coordinate"\s*:\s*\[\s*({_NUM})\s*,\s*({_NUM})\s*(?:,\s*({_NUM})\s*,\s*({_NUM})\s*)?\]'
)


def tool_call(text: str) -> Extracted | None:
    """A computer_use tool call: `<tool_call>{"name": "computer_use", "arguments": {"action":
    "left_click", "coordinate": [x, y]}}</tool_call>` (Qwen2.5-VL, Qwen3-VL, GUI-Owl); the first
    `"coordinate": [...]` anywhere, so a truncated call or one without the tags still reads."""
    match = _JSON_COORDINATE.search(text)
    if not match:
        return None
    values = tuple(float(v) for v in match.groups() if v is not None)
    return Extracted(values, "tool_call box" if len(values) == 4 else "tool_call point")


# `click(` found as a literal: a `\w*click` prefix rescans a long run of letters or digits from
# every position in it (quadratic); `pyautogui.`, `double` and `right` before it change nothing read.
_PYAUTOGUI = re.compile(rf"click\(\s*x\s*=\s*({_NUM})\s*,\s*y\s*=\s*({_NUM})")


def pyautogui(text: str) -> Extracted | None:
    """`pyautogui.click(x=1443, y=343)` (OpenCUA, GTA1-7B/32B); also doubleClick, rightClick."""
    match = _PYAUTOGUI.search(text)
    return Extracted((float(match.group(1)), float(match.group(2))), "pyautogui") if match else None


_POINT_TAG = re.compile(rf"<point>\s*({_NUM})\s*[, ]\s*({_NUM})\s*</point>")


def point_tag(text: str) -> Extracted | None:
    """`<point>x y</point>` or `<point>x, y</point>` (UI-TARS-1.5 actions, Seed, Phi-Ground)."""
    match = _POINT_TAG.search(text)
    return Extracted((float(match.group(1)), float(match.group(2))), "point tag") if match else None


_JSON_XY = re.compile(rf"""["']x["']\s*:\s*({_NUM})\s*,\s*["']y["']\s*:\s*({_NUM})""")


def json_xy(text: str) -> Extracted | None:
    """`{"action": "click_absolute", "x": 512, "y": 301}` (Holo1.5), single or double quotes."""
    match = _JSON_XY.search(text)
    return Extracted((float(match.group(1)), float(match.group(2))), "json x y") if match else None


_BOX_2D = re.compile(rf'"?box_2d"?\s*:\s*\[\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*\]')


def box_2d(text: str) -> Extracted | None:
    """Gemini's native `"box_2d": [y_min, x_min, y_max, x_max]`, values kept in that (y-first)
    order: the `yx_swap` transform puts x first."""
    match = _BOX_2D.search(text)
    return Extracted(tuple(float(v) for v in match.groups()), "box_2d") if match else None


_POINT_2D = re.compile(rf'"?point_2d"?\s*:\s*\[\s*({_NUM})\s*,\s*({_NUM})\s*\]')


def point_2d(text: str) -> Extracted | None:
    """`{"point_2d": [x, y]}` (Qwen3's native grounding answer, 0-1000): the first one."""
    match = _POINT_2D.search(text)
    return Extracted((float(match.group(1)), float(match.group(2))), "point_2d") if match else None


def paren_last(text: str) -> Extracted | None:
    """The LAST `(x,y)`: models that reason first and answer at the end (ClawGUI's Gemini parser)."""
    matches = list(re.finditer(_PAIR, _BOX_TOKENS.sub("", text)))
    if not matches:
        return None
    return Extracted(tuple(float(v) for v in matches[-1].groups()), "last point")


def tagged(text: str, opening: str, closing: str) -> str | None:
    """The text between the first `opening` and the `closing` after it: found with str.find, one
    pass (a lazy `<answer>(.*?)</answer>` rescans the rest from every unclosed tag: quadratic)."""
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else text[start + len(opening) : end]


def answer_coordinate(text: str) -> Extracted | None:
    """MAI-UI: `<answer>{"coordinate": [x, y]}</answer>` after a `<grounding_think>` block; the
    coordinate inside the answer tags, so a pair the reasoning mentions is never read."""
    inside = tagged(text, "<answer>", "</answer>")
    found = tool_call(inside) if inside is not None else None
    return Extracted(found.values, "answer tag") if found else None


EXTRACTORS: dict[str, Extractor] = {
    "uitars_action": uitars_action,
    "paren": paren,
    "paren_last": paren_last,
    "bracket": bracket,
    "tool_call": tool_call,
    "pyautogui": pyautogui,
    "point_tag": point_tag,
    "json_xy": json_xy,
    "box_2d": box_2d,
    "point_2d": point_2d,
    "answer_coordinate": answer_coordinate,
}


# Transforms map values into pixels of the image the model was given; `Frame.to_original` then maps
# those to the original image (through a resize's scale or a canvas' content ratio). `a+b` chains.
def absolute(x: float, y: float, frame: Frame) -> tuple[float, float]:
    """Pixels of the image the model was given (Qwen2.5-VL, UI-TARS-1.5: x * W / W_sr after mapping)."""
    return x, y


def _relative(scale: float) -> Transform:
    def transform(x: float, y: float, frame: Frame) -> tuple[float, float]:
        return x / scale * frame.model[0], y / scale * frame.model[1]

    transform.__doc__ = f"0-{scale:g} of the image the model was given."
    return transform


def yx_swap(x: float, y: float, frame: Frame) -> tuple[float, float]:
    """The model writes y first (Gemini's box_2d)."""
    return y, x


TRANSFORMS: dict[str, Transform] = {
    "abs": absolute,
    "abs_smart_resize": absolute,  # issue 9's name for the same thing
    "rel1000": _relative(1000.0),
    "rel999": _relative(999.0),
    "rel1": _relative(1.0),
    "yx_swap": yx_swap,
}

_TERMINATE = re.compile(r'"action"\s*:\s*"terminate"')
_NULL = re.compile(r'^\s*(?:null|none)\s*$|"coordinate"\s*:\s*null', re.IGNORECASE)

# A refusal form: the answer that means "not on this screen" (issue 13's negative samples score it).
REFUSALS: dict[str, Callable[[str, Extracted | None], bool]] = {
    "minus_one": lambda text, found: found is not None and all(v == -1 for v in found.values),
    "terminate": lambda text, found: bool(_TERMINATE.search(text)),
    "null": lambda text, found: bool(_NULL.search(text)),
}


def split_transform(spec: str) -> tuple[str, ...]:
    return tuple(filter(None, (part.strip() for part in spec.split("+"))))


def check_parts(extractors: Sequence[str], transform: str, refusal: str | None) -> None:
    if not extractors:
        raise ValueError(f"no extractor given; known: {', '.join(EXTRACTORS)}")
    for name in extractors:
        if name not in EXTRACTORS:
            raise ValueError(f"unknown extractor {name!r}; known: {', '.join(EXTRACTORS)}")
    for name in split_transform(transform) or (transform,):
        if name not in TRANSFORMS:
            raise ValueError(f"unknown transform {name!r}; known: {', '.join(TRANSFORMS)} (chain with +)")
    for name in (refusal or "").split("+"):
        if name and name not in REFUSALS:
            raise ValueError(f"unknown refusal form {name!r}; known: {', '.join(REFUSALS)}")


def extract(text: str, extractors: Sequence[str]) -> Extracted | None:
    """The first extractor (in order) that reads the text."""
    for name in extractors:
        found = EXTRACTORS[name](text)
        if found is not None:
            return found
    return None


def to_pixels(x: float, y: float, frame: Frame, transform: str) -> tuple[float, float]:
    """Model values -> pixels of the original image, through the chained transforms."""
    for name in split_transform(transform):
        x, y = TRANSFORMS[name](x, y, frame)
    return frame.to_original(x, y)


def is_refusal(text: str, found: Extracted | None, refusal: str | None) -> bool:
    return any(REFUSALS[name](text, found) for name in (refusal or "").split("+") if name)


def answer_to_prediction(
    text: str | None,
    frame: Frame,
    *,
    extractors: Sequence[str],
    transform: str,
    refusal: str | None = None,
    meta: dict | None = None,
) -> Prediction:
    """The Prediction for a model's answer, in pixels of the original image. A refusal (the
    preset's refusal form) is a no-answer marked `refusal=True`; an answer no extractor reads is
    a wrong format that keeps the raw text."""
    meta = dict(meta or {})
    if not text:
        return Prediction.no_answer(raw=text, **meta)
    found = extract(text, extractors)
    if found is not None:
        meta.update(answer_shape=found.shape, model_coordinates=list(found.values))
    if is_refusal(text, found, refusal):
        return Prediction.refusal(raw=text, **meta)
    if found is None:
        return Prediction.no_answer(raw=text, **meta)
    if found.is_box:
        x1, y1 = to_pixels(found.values[0], found.values[1], frame, transform)
        x2, y2 = to_pixels(found.values[2], found.values[3], frame, transform)
        return Prediction(box=Box(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)), raw=text, meta=meta)
    return Prediction(point=to_pixels(found.values[0], found.values[1], frame, transform), raw=text, meta=meta)
