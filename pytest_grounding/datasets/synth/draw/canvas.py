"""A drawing surface that records, for every element drawn as a unit, the exact pixels it drew.

Ground truth comes from pixels, not from layout: the canvas snapshots an element's region before
and after drawing it and takes the box of the pixels that changed. When the screen is finished it
checks that nothing drawn later changed any pixel inside that box (no hidden or overdrawn target).

Box convention: x1, y1 = first drawn column and row; x2, y2 = last drawn column and row + 1
(half-open pixel spans, as `Box.width` counts pixels). With edges-included containment a click
on any drawn pixel, whether read as the pixel's index or anywhere inside its square, is inside.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .icons import icon_mask
from .themes import RGB

# Pixels around an element's declared rect that are compared too: drawing that reaches the edge of
# this margin means the widget drew outside its rect, a bug the canvas refuses to hide.
GUARD = 3


@dataclass(frozen=True)
class Rect:
    """Half-open pixel rectangle: x1 <= x < x2, y1 <= y < y2."""

    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def w(self) -> int:
        return self.x2 - self.x1

    @property
    def h(self) -> int:
        return self.y2 - self.y1

    @property
    def cx(self) -> int:
        return (self.x1 + self.x2) // 2

    @property
    def cy(self) -> int:
        return (self.y1 + self.y2) // 2

    def inset(self, dx: int, dy: int | None = None) -> Rect:
        dy = dx if dy is None else dy
        return Rect(self.x1 + dx, self.y1 + dy, self.x2 - dx, self.y2 - dy)

    def top(self, h: int) -> Rect:
        return Rect(self.x1, self.y1, self.x2, min(self.y2, self.y1 + h))

    def bottom(self, h: int) -> Rect:
        return Rect(self.x1, max(self.y1, self.y2 - h), self.x2, self.y2)

    def left(self, w: int) -> Rect:
        return Rect(self.x1, self.y1, min(self.x2, self.x1 + w), self.y2)

    def right(self, w: int) -> Rect:
        return Rect(max(self.x1, self.x2 - w), self.y1, self.x2, self.y2)

    def below(self, h: int) -> Rect:
        """What remains under a top strip of height h."""
        return Rect(self.x1, min(self.y2, self.y1 + h), self.x2, self.y2)

    def above(self, h: int) -> Rect:
        return Rect(self.x1, self.y1, self.x2, max(self.y1, self.y2 - h))

    def after(self, w: int) -> Rect:
        """What remains right of a left strip of width w."""
        return Rect(min(self.x2, self.x1 + w), self.y1, self.x2, self.y2)

    def before(self, w: int) -> Rect:
        return Rect(self.x1, self.y1, max(self.x1, self.x2 - w), self.y2)


# (namespace, name, context): what a phrase refers to, e.g. ("text", "save as", "File").
Key = tuple[str, str, str | None]


@dataclass(frozen=True)
class Phrase:
    """One way to ask for an element. `key` names what the phrase relies on being unique on the
    screen: ("text", "save as", None), ("icon", "record", "toolbar"), ("concept", "mute", "Vocals");
    a phrase is used only when exactly one thing on the screen answers to its key."""

    text: str
    form: str  # "literal" | "functional"
    key: Key


@dataclass(frozen=True)
class ElementSpec:
    element_type: str  # icon | text | other
    role: str  # "toolbar button", "menu", "tab", "checkbox", ...
    phrases: tuple[Phrase, ...]
    keys: tuple[Key, ...] = ()  # extra keys this element answers to (its concept), for uniqueness
    targetable: bool = True


@dataclass(frozen=True)
class Recorded:
    key: int  # draw order: stable for a given screen seed
    spec: ElementSpec
    box: tuple[int, int, int, int] | None  # tight box of changed pixels, half-open; None if nothing visible
    patch: np.ndarray | None = field(default=None, repr=False)  # pixels of the box right after drawing
    inside: bool = True  # the declared rect lies wholly inside the image
    visible: bool = False  # set by Canvas.finish: nothing later changed a pixel of the box


class Canvas:
    """Drawing primitives over one RGB image, plus the element recorder."""

    def __init__(self, size: tuple[int, int], background: RGB, skip: Sequence[int] = ()) -> None:
        self.width, self.height = size
        self.image = Image.new("RGB", size, background)
        self.draw = ImageDraw.Draw(self.image)
        self.elements: list[Recorded] = []
        self.texts: list[tuple[str, str | None]] = []  # every string drawn, with its element's context
        self.icons: list[tuple[str, str | None]] = []  # every icon drawn, with its element's context
        self._skip = frozenset(skip)
        self._context: str | None = None
        self._open = False

    # ---- element recording -----------------------------------------------------------------------
    @contextmanager
    def element(self, rect: Rect, spec: ElementSpec, context: str | None = None) -> Iterator[None]:
        """Draw one element inside `rect`; its tight box is recorded when the block ends.
        Elements do not nest: a composite widget (button = frame + icon + label) is one element."""
        if self._open:
            raise RuntimeError("canvas elements do not nest")
        key = len(self.elements)
        region = Rect(
            max(0, rect.x1 - GUARD),
            max(0, rect.y1 - GUARD),
            min(self.width, rect.x2 + GUARD),
            min(self.height, rect.y2 + GUARD),
        )
        if region.w <= 0 or region.h <= 0:
            raise RuntimeError(f"{spec.role} declared an empty or off-screen rect {rect}")
        before = self._pixels(region)
        diverted = key in self._skip
        if diverted:  # test hook: draw this element somewhere else, so the screen is rendered without it
            main = (self.image, self.draw)
            self.image = self.image.copy()
            self.draw = ImageDraw.Draw(self.image)
        self._open, self._context = True, context
        try:
            yield
        finally:
            self._open, self._context = False, None
            if diverted:
                self.image, self.draw = main
        after = self._pixels(region)
        inside = rect.x1 >= 0 and rect.y1 >= 0 and rect.x2 <= self.width and rect.y2 <= self.height
        self.elements.append(self._measure(key, spec, rect, region, before, after, inside))

    def _measure(
        self, key: int, spec: ElementSpec, rect: Rect, region: Rect, before: np.ndarray, after: np.ndarray, inside: bool
    ) -> Recorded:
        changed = np.any(before != after, axis=2)
        cols = np.flatnonzero(changed.any(axis=0))
        if cols.size == 0:
            return Recorded(key, spec, None, None, inside)
        rows = np.flatnonzero(changed.any(axis=1))
        x1, x2, y1, y2 = int(cols[0]), int(cols[-1]) + 1, int(rows[0]), int(rows[-1]) + 1
        touches_guard = (
            (x1 == 0 and region.x1 > 0)
            or (y1 == 0 and region.y1 > 0)
            or (x2 == region.w and region.x2 < self.width)
            or (y2 == region.h and region.y2 < self.height)
        )
        if touches_guard:
            raise RuntimeError(f"{spec.role} {spec.phrases[:1]} drew outside its declared rect {rect}")
        patch = after[y1:y2, x1:x2].copy()
        box = (region.x1 + x1, region.y1 + y1, region.x1 + x2, region.y1 + y2)
        return Recorded(key, spec, box, patch, inside)

    def finish(self) -> None:
        """Mark each element visible iff its box still holds exactly what it drew."""
        final = np.asarray(self.image)
        self.elements = [
            replace(
                rec,
                visible=rec.box is not None
                and rec.patch is not None
                and bool(np.array_equal(final[rec.box[1] : rec.box[3], rec.box[0] : rec.box[2]], rec.patch)),
            )
            for rec in self.elements
        ]

    def _pixels(self, r: Rect) -> np.ndarray:
        return np.asarray(self.image.crop((r.x1, r.y1, r.x2, r.y2)))

    # ---- primitives ------------------------------------------------------------------------------
    def rect(
        self, r: Rect, fill: RGB | None = None, outline: RGB | None = None, width: int = 1, radius: int = 0
    ) -> None:
        if r.w <= 0 or r.h <= 0:
            return
        box = (r.x1, r.y1, r.x2 - 1, r.y2 - 1)
        if radius > 0:
            self.draw.rounded_rectangle(box, radius=radius, fill=fill, outline=outline, width=width)
        else:
            self.draw.rectangle(box, fill=fill, outline=outline, width=width)

    def line(self, points: Sequence[tuple[float, float]], fill: RGB, width: int = 1) -> None:
        self.draw.line([tuple(p) for p in points], fill=fill, width=width)

    def hline(self, x1: int, x2: int, y: int, fill: RGB) -> None:
        self.draw.line([(x1, y), (x2 - 1, y)], fill=fill, width=1)

    def vline(self, x: int, y1: int, y2: int, fill: RGB) -> None:
        self.draw.line([(x, y1), (x, y2 - 1)], fill=fill, width=1)

    def ellipse(self, r: Rect, fill: RGB | None = None, outline: RGB | None = None, width: int = 1) -> None:
        self.draw.ellipse((r.x1, r.y1, r.x2 - 1, r.y2 - 1), fill=fill, outline=outline, width=width)

    def arc(self, r: Rect, start: float, end: float, fill: RGB, width: int = 1) -> None:
        self.draw.arc((r.x1, r.y1, r.x2 - 1, r.y2 - 1), start, end, fill=fill, width=width)

    def polygon(
        self, points: Sequence[tuple[float, float]], fill: RGB | None = None, outline: RGB | None = None
    ) -> None:
        self.draw.polygon([tuple(p) for p in points], fill=fill, outline=outline)

    def text(self, x: int, y: int, s: str, f: ImageFont.FreeTypeFont, fill: RGB, anchor: str = "lm") -> None:
        """Draw a string; `anchor` as Pillow's (default: left edge, vertical middle at y)."""
        if not s:
            return
        self.texts.append((s.lower(), self._context))
        self.draw.text((x, y), s, font=f, fill=fill, anchor=anchor)

    def icon(self, kind: str, x: int, y: int, size: int, color: RGB) -> None:
        self.icons.append((kind, self._context))
        self.image.paste(color, (x, y, x + size, y + size), icon_mask(kind, size))


def text_width(f: ImageFont.FreeTypeFont, s: str) -> int:
    return int(round(f.getlength(s)))


def fit(f: ImageFont.FreeTypeFont, s: str, width: int) -> str:
    """`s`, cut with an ellipsis so that it fits `width` pixels ("" when nothing fits)."""
    if f.getlength(s) <= width:
        return s
    for end in range(len(s) - 1, 0, -1):
        cut = s[:end].rstrip() + "…"
        if f.getlength(cut) <= width:
            return cut
    return ""
