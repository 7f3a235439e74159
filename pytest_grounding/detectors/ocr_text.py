"""The `ocr` detector's reading of RapidOCR's output, pure: lines, their words and runs of words as
candidates to match (`screen_texts`), word groups put back on their lines (`words_by_line`), the text
under a click point (`text_at`) and the screen's texts as elements (`listed_texts`). No OCR engine,
no I/O: `ocr_engine` runs RapidOCR, `ocr` holds the detector."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.types import Box
from .textmatch import MAX_LABEL_WORDS, Label

Quad = Sequence[Sequence[float]]


@dataclass(frozen=True)
class ScreenText:
    """A text read on the screen: a whole OCR line, one word of it, or a run of its words."""

    text: str
    box: Box
    confidence: float
    kind: str  # line | word | span
    line_words: int = 1  # words in the OCR line it was read in


@dataclass(frozen=True)
class ParsedScreen:
    texts: tuple[ScreenText, ...]
    labels: tuple[Label, ...]
    ocr_seconds: float


def quad_box(quad: Quad) -> Box:
    xs = [float(p[0]) for p in quad]
    ys = [float(p[1]) for p in quad]
    return Box(min(xs), min(ys), max(xs), max(ys))


def _union(boxes: Sequence[Box]) -> Box:
    return Box(min(b.x1 for b in boxes), min(b.y1 for b in boxes), max(b.x2 for b in boxes), max(b.y2 for b in boxes))


def screen_texts(
    lines: Sequence[tuple[str, Quad, float]],
    words: Sequence[Sequence[tuple[str, float, Quad]]],
    max_span_words: int = 3,
) -> tuple[ScreenText, ...]:
    """Candidates from OCR output: every line; for a line of several words, each word and, in
    lines of labels (menus, toolbars: at most MAX_LABEL_WORDS words), each run of
    2..max_span_words words ("Save As" inside "File Save As Print"). `words[i]` holds line i's
    words (empty when RapidOCR gave none)."""
    texts: list[ScreenText] = []
    for (line_text, quad, confidence), line_words in zip(lines, words, strict=True):
        count = max(1, len(line_words))
        texts.append(ScreenText(line_text.strip(), quad_box(quad), float(confidence), "line", count))
        if count < 2:
            continue
        word_boxes = [quad_box(q) for _, _, q in line_words]
        for (word, word_conf, _), box in zip(line_words, word_boxes, strict=True):
            texts.append(ScreenText(word, box, float(word_conf), "word", count))
        if count > MAX_LABEL_WORDS:
            continue
        for size in range(2, min(max_span_words, count - 1) + 1):
            for start in range(count - size + 1):
                run = line_words[start : start + size]
                texts.append(
                    ScreenText(
                        " ".join(w for w, _, _ in run),
                        _union(word_boxes[start : start + size]),
                        min(float(c) for _, c, _ in run),
                        "span",
                        count,
                    )
                )
    return tuple(t for t in texts if t.text)


def words_by_line(
    line_texts: Sequence[str], word_groups: Sequence[Sequence[tuple[str, float, Quad]]]
) -> list[Sequence[tuple[str, float, Quad]]]:
    """RapidOCR drops the word groups of some lines (and then its groups no longer line up with
    its lines): give each line the next group whose words spell it, or none."""

    def letters(text: str) -> str:
        return "".join(text.split())

    aligned: list[Sequence[tuple[str, float, Quad]]] = []
    position = 0
    for line in line_texts:
        group = word_groups[position] if position < len(word_groups) else ()
        if group and letters("".join(w for w, _, _ in group)) == letters(line):
            aligned.append(group)
            position += 1
        else:
            aligned.append(())
    return aligned


LABEL_LINE_WORDS = 3  # a run of more words under the click is running text: answer the word
NEAR_TEXT_PX = 16.0  # a click this close to a text (padding around a label) still means that text
ITEM_GAP = 0.6  # a gap between words wider than this share of the line height separates two items


def text_at(texts: Sequence[ScreenText], point: tuple[float, float], near: float = NEAR_TEXT_PX) -> ScreenText | None:
    """The element-at-click answer from text alone. The OCR line under the point (else the
    nearest within `near` px) is cut into items where its words are far apart (a menu bar reads as
    one line "File Edit View"); the item nearest the point is the answer, unless it is running
    text (more than LABEL_LINE_WORDS words), where the word under the point is."""
    lines = _lines_with_words(texts)
    if not lines:
        return None
    distance = [line.box.distance_to(point) for line, _ in lines]
    best = min(range(len(lines)), key=lambda i: (distance[i], lines[i][0].box.area))
    if distance[best] > near:
        return None
    line, words = lines[best]
    if not words:
        return line
    items = line_items(line, words)
    item = min(items, key=lambda run: _union([w.box for w in run]).distance_to(point))
    if len(item) > LABEL_LINE_WORDS:
        item = [min(item, key=lambda w: w.box.distance_to(point))]
    if len(item) == 1:
        return item[0]
    if len(item) == len(words):
        return line
    return ScreenText(
        " ".join(w.text for w in item),
        _union([w.box for w in item]),
        min(w.confidence for w in item),
        "span",
        line.line_words,
    )


def line_items(line: ScreenText, words: Sequence[ScreenText]) -> list[list[ScreenText]]:
    """A line's words (left to right) cut where they are far apart: "File Edit View" is three items."""
    items: list[list[ScreenText]] = [[words[0]]]
    for word in words[1:]:
        if word.box.x1 - items[-1][-1].box.x2 > ITEM_GAP * line.box.height:
            items.append([])
        items[-1].append(word)
    return items


def listed_texts(texts: Sequence[ScreenText]) -> list[tuple[str, Box]]:
    """The screen's texts as elements to annotate: each line cut into items (`line_items`), items of
    more than MAX_LABEL_WORDS words (running text, not something to click) left out."""
    out: list[tuple[str, Box]] = []
    for line, words in _lines_with_words(texts):
        if not words:
            if len(line.text.split()) <= MAX_LABEL_WORDS:
                out.append((line.text, line.box))
            continue
        for item in line_items(line, words):
            if len(item) <= MAX_LABEL_WORDS:
                out.append((" ".join(w.text for w in item), _union([w.box for w in item])))
    return out


def _lines_with_words(texts: Sequence[ScreenText]) -> list[tuple[ScreenText, list[ScreenText]]]:
    """Each line with its words left to right (`screen_texts` lists a line's words after it)."""
    lines: list[tuple[ScreenText, list[ScreenText]]] = []
    for text in texts:
        if text.kind == "line":
            lines.append((text, []))
        elif text.kind == "word" and lines:
            lines[-1][1].append(text)
    for _, words in lines:
        words.sort(key=lambda w: w.box.x1)
    return lines
