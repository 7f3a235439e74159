"""OmniParser's parsed screen and the choices made on it, pure: the icons merged with the OCR lines,
a matched text snapped to the control around (or beside) it, the element under a click point. The
geometry is in `_yolo`; no model, no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.types import Box, Point
from . import _yolo
from .textmatch import MAX_LABEL_WORDS, Label

# Instructions naming a control that sits beside its label rather than around it.
_TOGGLE_WORDS = re.compile(r"\b(check ?box(es)?|tick|untick|check|uncheck|radio|toggle|switch)\b", re.I)

BoxT = tuple[float, float, float, float]


@dataclass(frozen=True)
class OcrText:
    """An OCR text as this module uses it: what ScreenText gives, kept to the fields read here."""

    text: str
    box: BoxT
    kind: str  # line | word | span
    line_words: int = 1


@dataclass(frozen=True)
class ParsedElements:
    elements: tuple[_yolo.Element, ...]
    texts: tuple[OcrText, ...]  # every OCR candidate (lines, words, runs of words)
    labels: tuple[Label, ...]  # texts[i] prepared for matching
    icons_found: int  # icon boxes after NMS, before the merge
    icon_seconds: float
    ocr_seconds: float

    @property
    def icons(self) -> tuple[_yolo.Element, ...]:
        return tuple(e for e in self.elements if e.type == "icon")


def merge_elements(
    icon_boxes: Sequence[BoxT],
    icon_scores: Sequence[float],
    texts: Sequence[OcrText],
    iou: float = 0.7,
    inside: float = 0.8,
) -> list[_yolo.Element]:
    """OmniParser's merge with the OCR lines as its text boxes (OmniParser merges the boxes its OCR
    reads, lines or segments; words and runs of words stay candidates for matching only)."""
    lines = [(t.box, t.text) for t in texts if t.kind == "line"]
    return _yolo.merge(icon_boxes, lines, iou=iou, inside=inside, icon_scores=icon_scores)


def snap(
    text_box: BoxT, instruction: str, icons: Sequence[_yolo.Element], snap_area: float = 4.0, inside: float = 0.8
) -> tuple[BoxT, str]:
    """The box to answer for a matched text: the smallest icon around it (a label inside a button:
    the button), when that icon is at most `snap_area` times the text's area and the text sits in
    its middle (a sidebar row with an icon, then its label, is not a button); else, when the
    instruction names a toggle (checkbox, radio, switch...), the nearest small square icon on the
    same row just left or right of it; else the text's own box. Returns (box, how) with how in
    inside | beside | text."""
    text_area = _yolo.area(text_box)
    text_cx = (text_box[0] + text_box[2]) / 2.0
    around = [
        e
        for e in icons
        if _yolo.inside_share(text_box, e.box) > inside
        and _yolo.area(e.box) <= snap_area * max(text_area, 1.0)
        and abs((e.box[0] + e.box[2]) / 2.0 - text_cx) <= 0.25 * (e.box[2] - e.box[0])
    ]
    if around:
        return min(around, key=lambda e: _yolo.area(e.box)).box, "inside"
    if _TOGGLE_WORDS.search(instruction):
        height = text_box[3] - text_box[1]
        cy = (text_box[1] + text_box[3]) / 2.0
        best: tuple[float, BoxT] | None = None
        for e in icons:
            w, h = e.box[2] - e.box[0], e.box[3] - e.box[1]
            if not (0.6 <= w / max(h, 1e-6) <= 1.6 and 0.5 * height <= h <= 2.5 * height):
                continue
            if abs((e.box[1] + e.box[3]) / 2.0 - cy) > 0.5 * max(height, h):
                continue
            gap = text_box[0] - e.box[2] if e.box[2] <= (text_box[0] + text_box[2]) / 2 else e.box[0] - text_box[2]
            if -0.25 * height <= gap <= 2.0 * height and (best is None or gap < best[0]):
                best = (gap, e.box)
        if best is not None:
            return best[1], "beside"
    return text_box, "text"


def element_at(point: Point, parsed: ParsedElements, radius: float = 4.0) -> tuple[BoxT, str, str | None] | None:
    """The element under a click point: the smallest element containing it (edges included);
    for a text line of labels (a menu bar read as one line), the word under the point; else the
    nearest element within `radius` px. Returns (box, type, content) or None."""

    def contains(box: BoxT) -> bool:
        return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]

    under = [e for e in parsed.elements if contains(e.box)]
    if under:
        element = min(under, key=lambda e: _yolo.area(e.box))
        if element.type == "text":
            line = [t for t in parsed.texts if t.kind == "line" and t.box == element.box]
            if line and 1 < line[0].line_words <= MAX_LABEL_WORDS:
                words = [
                    t
                    for t in parsed.texts
                    if t.kind == "word" and contains(t.box) and _yolo.inside_share(t.box, element.box) > 0.8
                ]
                if words:
                    word = min(words, key=lambda t: _yolo.area(t.box))
                    return word.box, "text", word.text
        return element.box, element.type, element.content
    near = [(Box(*e.box).distance_to(point), i) for i, e in enumerate(parsed.elements)]
    near = [(d, i) for d, i in near if d <= radius]
    if not near:
        return None
    element = parsed.elements[min(near)[1]]
    return element.box, element.type, element.content
