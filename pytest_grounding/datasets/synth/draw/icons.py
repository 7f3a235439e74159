# mypy: disable-error-code="func-returns-value"
"""Icon glyphs with a meaning: record, play, save, folder, gear, zoom, undo, brush...

Each glyph is drawn on a 16-unit design grid at 4x the target size in 8-bit alpha, then averaged
down (box filter), so small icons are anti-aliased like real ones. Masks are cached per size.
Coordinates are literal decimals (no trigonometry at draw time), so every platform rasterises the
same polygons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw

from .typefaces import font

SUPERSAMPLE = 4
Pt = tuple[float, float]


class Pen:
    """Draws on the 16-unit grid of one icon, ink = 255, eraser = 0."""

    def __init__(self, size: int) -> None:
        self.px = size * SUPERSAMPLE
        self.unit = self.px / 16.0
        self.image = Image.new("L", (self.px, self.px), 0)
        self.draw = ImageDraw.Draw(self.image)

    def _p(self, pts: Sequence[Pt]) -> list:
        return [(x * self.unit, y * self.unit) for x, y in pts]

    def _w(self, w: float) -> int:
        return max(1, round(w * self.unit))

    def _box(self, x1: float, y1: float, x2: float, y2: float) -> list:
        return [x1 * self.unit, y1 * self.unit, x2 * self.unit, y2 * self.unit]

    def line(self, pts: Sequence[Pt], w: float = 1.5, ink: int = 255) -> None:
        self.draw.line(self._p(pts), fill=ink, width=self._w(w), joint="curve")

    def poly(self, pts: Sequence[Pt], ink: int = 255) -> None:
        self.draw.polygon(self._p(pts), fill=ink)

    def rect(self, x1: float, y1: float, x2: float, y2: float, w: float = 0, ink: int = 255, r: float = 0) -> None:
        box = self._box(x1, y1, x2, y2)
        if w:
            self.draw.rounded_rectangle(box, radius=r * self.unit, outline=ink, width=self._w(w))
        else:
            self.draw.rounded_rectangle(box, radius=r * self.unit, fill=ink)

    def ellipse(self, x1: float, y1: float, x2: float, y2: float, w: float = 0, ink: int = 255) -> None:
        if w:
            self.draw.ellipse(self._box(x1, y1, x2, y2), outline=ink, width=self._w(w))
        else:
            self.draw.ellipse(self._box(x1, y1, x2, y2), fill=ink)

    def arc(self, x1: float, y1: float, x2: float, y2: float, start: float, end: float, w: float = 1.5) -> None:
        self.draw.arc(self._box(x1, y1, x2, y2), start, end, fill=255, width=self._w(w))

    def pie(self, x1: float, y1: float, x2: float, y2: float, start: float, end: float, ink: int = 255) -> None:
        self.draw.pieslice(self._box(x1, y1, x2, y2), start, end, fill=ink)

    def glyph(self, ch: str, family: str = "bold", scale: float = 13.0, ink: int = 255) -> None:
        f = font(family, max(4, round(scale * self.unit)))
        self.draw.text((self.px / 2, self.px / 2), ch, font=f, fill=ink, anchor="mm")


def _magnifier(p: Pen) -> None:
    p.ellipse(1.5, 1.5, 11, 11, w=1.7)
    p.line([(9.8, 9.8), (14.5, 14.5)], w=2.4)


def _speaker(p: Pen) -> None:
    p.poly([(1.5, 6), (4.5, 6), (8.5, 2.5), (8.5, 13.5), (4.5, 10), (1.5, 10)])


def _star_points() -> Sequence[Pt]:
    return [
        (8, 1),
        (9.9, 5.9),
        (15, 6.2),
        (11, 9.4),
        (12.3, 14.5),
        (8, 11.6),
        (3.7, 14.5),
        (5, 9.4),
        (1, 6.2),
        (6.1, 5.9),
    ]


def _gear(p: Pen) -> None:
    # Eight trapezoid teeth around a disc (corners precomputed on the grid), a hole in the middle.
    p.poly(
        [
            (13.7, 6.47),
            (15.51, 6.81),
            (15.51, 9.19),
            (13.7, 9.53),
            (13.11, 10.95),
            (14.15, 12.47),
            (12.47, 14.15),
            (10.95, 13.11),
            (9.53, 13.7),
            (9.19, 15.51),
            (6.81, 15.51),
            (6.47, 13.7),
            (5.05, 13.11),
            (3.53, 14.15),
            (1.85, 12.47),
            (2.89, 10.95),
            (2.3, 9.53),
            (0.49, 9.19),
            (0.49, 6.81),
            (2.3, 6.47),
            (2.89, 5.05),
            (1.85, 3.53),
            (3.53, 1.85),
            (5.05, 2.89),
            (6.47, 2.3),
            (6.81, 0.49),
            (9.19, 0.49),
            (9.53, 2.3),
            (10.95, 2.89),
            (12.47, 1.85),
            (14.15, 3.53),
            (13.11, 5.05),
        ]
    )
    p.ellipse(2.1, 2.1, 13.9, 13.9)
    p.ellipse(5.4, 5.4, 10.6, 10.6, ink=0)


def _undo(p: Pen, mirror: bool = False) -> None:
    def m(pts: Sequence[Pt]) -> Sequence[Pt]:
        return [(16 - x, y) if mirror else (x, y) for x, y in pts]

    p.poly(m([(1.5, 6), (6, 2), (6, 10)]))
    p.line(m([(5.5, 6), (10, 6)]), w=1.8)
    if mirror:
        p.arc(2, 6, 10, 14, 90, 270, w=1.8)
    else:
        p.arc(6, 6, 14, 14, 270, 90, w=1.8)
    p.line(m([(10, 13.1), (5, 13.1)]), w=1.8)


def _refresh(p: Pen) -> None:
    p.arc(2, 2, 14, 14, 330, 250, w=1.7)
    p.poly([(7.5, 0.2), (11.5, 2.2), (7.5, 4.8)])


def _arrow_tray(p: Pen, up: bool) -> None:
    if up:
        p.line([(8, 11), (8, 4)], w=2)
        p.poly([(3.8, 6.5), (12.2, 6.5), (8, 1.5)])
    else:
        p.line([(8, 1.5), (8, 8)], w=2)
        p.poly([(3.8, 6.5), (12.2, 6.5), (8, 11.5)])
    p.line([(2, 10), (2, 14), (14, 14), (14, 10)], w=1.6)


# Most glyphs are lambdas that draw several strokes as the items of a tuple or list: what they
# return is thrown away (hence `object`, and the mypy comment at the top).
GLYPHS: dict[str, Callable[[Pen], object]] = {
    "record": lambda p: p.ellipse(2.5, 2.5, 13.5, 13.5),
    "play": lambda p: p.poly([(4, 2), (14, 8), (4, 14)]),
    "pause": lambda p: (p.rect(3.5, 2.5, 6.5, 13.5), p.rect(9.5, 2.5, 12.5, 13.5)),
    "stop": lambda p: p.rect(3, 3, 13, 13, r=0.6),
    "skip_back": lambda p: (p.rect(2.5, 3, 4.5, 13), p.poly([(13.5, 3), (5, 8), (13.5, 13)])),
    "skip_forward": lambda p: (p.rect(11.5, 3, 13.5, 13), p.poly([(2.5, 3), (11, 8), (2.5, 13)])),
    "rewind": lambda p: (p.poly([(8, 3.5), (1, 8), (8, 12.5)]), p.poly([(15, 3.5), (8, 8), (15, 12.5)])),
    "fast_forward": lambda p: (p.poly([(1, 3.5), (8, 8), (1, 12.5)]), p.poly([(8, 3.5), (15, 8), (8, 12.5)])),
    "loop": lambda p: (
        p.arc(1.5, 3, 14.5, 13, 200, 340, w=1.6),
        p.arc(1.5, 3, 14.5, 13, 20, 160, w=1.6),
        p.poly([(12, 1.5), (15.5, 5), (11, 6.5)]),
        p.poly([(4, 14.5), (0.5, 11), (5, 9.5)]),
    ),
    "metronome": lambda p: (
        p.line([(5.5, 2), (10.5, 2), (13.5, 14.5), (2.5, 14.5), (5.5, 2)], w=1.4),
        p.line([(8, 12), (12, 3.5)], w=1.4),
        p.rect(4, 11, 12, 12.2),
    ),
    "save": lambda p: (
        p.rect(1.5, 1.5, 14.5, 14.5, w=1.5, r=1),
        p.rect(4.5, 1.5, 11, 6),
        p.rect(8.6, 2.6, 10, 5, ink=0),
        p.rect(4, 9, 12, 14.5, w=1.3),
    ),
    "folder": lambda p: p.poly([(1, 3.5), (6, 3.5), (7.5, 5), (15, 5), (15, 13.5), (1, 13.5)]),
    "new_file": lambda p: (
        p.line([(10, 1.5), (3, 1.5), (3, 14.5), (13, 14.5), (13, 4.5), (10, 1.5)], w=1.4),
        p.line([(9.8, 1.8), (9.8, 4.8), (12.8, 4.8)], w=1.2),
    ),
    "search": _magnifier,
    "zoom_in": lambda p: (
        _magnifier(p),
        p.line([(3.8, 6.25), (8.7, 6.25)], w=1.4),
        p.line([(6.25, 3.8), (6.25, 8.7)], w=1.4),
    ),
    "zoom_out": lambda p: (_magnifier(p), p.line([(3.8, 6.25), (8.7, 6.25)], w=1.4)),
    "zoom_fit": lambda p: (
        p.line([(1.5, 5.5), (1.5, 1.5), (5.5, 1.5)], w=1.6),
        p.line([(10.5, 1.5), (14.5, 1.5), (14.5, 5.5)], w=1.6),
        p.line([(14.5, 10.5), (14.5, 14.5), (10.5, 14.5)], w=1.6),
        p.line([(5.5, 14.5), (1.5, 14.5), (1.5, 10.5)], w=1.6),
        p.rect(5, 5, 11, 11),
    ),
    "settings": _gear,
    "undo": _undo,
    "redo": lambda p: _undo(p, mirror=True),
    "brush": lambda p: (
        p.line([(14.5, 1.5), (8.5, 7.5)], w=2.2),
        p.poly([(7, 6.5), (9.5, 9), (7, 12.5), (1.5, 14.5), (3.5, 9)]),
    ),
    "pencil": lambda p: (
        p.poly([(11.5, 1.5), (14.5, 4.5), (5.5, 13.5), (2.5, 10.5)]),
        p.poly([(2, 11.5), (4.5, 14), (1, 15)]),
    ),
    "eraser": lambda p: (
        p.line([(9, 2), (14.5, 7.5), (8, 14), (2.5, 8.5), (9, 2)], w=1.4),
        p.poly([(5.7, 5.3), (11.2, 10.8), (8, 14), (2.5, 8.5)]),
        p.line([(8, 14.6), (15, 14.6)], w=1.2),
    ),
    "fill": lambda p: (
        p.line([(2.5, 7.5), (7.5, 2.5), (12.5, 7.5), (7.5, 12.5), (2.5, 7.5)], w=1.5),
        p.poly([(2.5, 7.5), (12.5, 7.5), (7.5, 12.5)]),
        p.ellipse(12, 9.5, 15, 14),
    ),
    "eyedropper": lambda p: (
        p.line([(3, 13), (10, 6)], w=2.2),
        p.ellipse(9.5, 1.5, 14.5, 6.5),
        p.line([(8.5, 4.5), (11.5, 7.5)], w=2.2),
    ),
    "crop": lambda p: (
        p.line([(4.5, 1), (4.5, 11.5), (15, 11.5)], w=1.8),
        p.line([(1, 4.5), (11.5, 4.5), (11.5, 15)], w=1.8),
    ),
    "move": lambda p: (
        p.line([(8, 2.5), (8, 13.5)], w=1.4),
        p.line([(2.5, 8), (13.5, 8)], w=1.4),
        p.poly([(8, 0.5), (10.5, 3.5), (5.5, 3.5)]),
        p.poly([(8, 15.5), (10.5, 12.5), (5.5, 12.5)]),
        p.poly([(0.5, 8), (3.5, 5.5), (3.5, 10.5)]),
        p.poly([(15.5, 8), (12.5, 5.5), (12.5, 10.5)]),
    ),
    "select_rect": lambda p: [
        p.rect(x, y, x + w, y + h)
        for x, y, w, h in (
            (1.5, 1.5, 3, 1.3),
            (6.5, 1.5, 3, 1.3),
            (11.5, 1.5, 3, 1.3),
            (1.5, 13.2, 3, 1.3),
            (6.5, 13.2, 3, 1.3),
            (11.5, 13.2, 3, 1.3),
            (1.5, 5.5, 1.3, 5),
            (13.2, 5.5, 1.3, 5),
        )
    ],
    "pointer": lambda p: p.poly([(3, 1), (3, 13.5), (6, 10.5), (8.5, 15), (10.5, 14), (8.2, 9.6), (12.5, 9.6)]),
    "text_tool": lambda p: p.poly(
        [(2.5, 2), (13.5, 2), (13.5, 5), (9.3, 5), (9.3, 14.5), (6.7, 14.5), (6.7, 5), (2.5, 5)]
    ),
    "eye": lambda p: (p.ellipse(0.8, 3.5, 15.2, 12.5, w=1.5), p.ellipse(5.3, 5.3, 10.7, 10.7)),
    "eye_off": lambda p: (
        p.ellipse(0.8, 3.5, 15.2, 12.5, w=1.5),
        p.ellipse(5.3, 5.3, 10.7, 10.7),
        p.line([(2, 14.5), (14, 1.5)], w=3, ink=0),
        p.line([(2, 14.5), (14, 1.5)], w=1.5),
    ),
    "lock": lambda p: (
        p.arc(4.5, 1.5, 11.5, 10, 180, 360, w=1.7),
        p.line([(4.5, 5.5), (4.5, 7.5)], w=1.7),
        p.line([(11.5, 5.5), (11.5, 7.5)], w=1.7),
        p.rect(2.5, 7, 13.5, 15, r=1),
    ),
    "trash": lambda p: (
        p.line([(1.5, 4), (14.5, 4)], w=1.5),
        p.rect(6, 1.5, 10, 4, w=1.3),
        p.line([(3.5, 5), (4.5, 14.5), (11.5, 14.5), (12.5, 5)], w=1.5),
        p.line([(6.5, 7), (6.5, 12.5)], w=1.1),
        p.line([(9.5, 7), (9.5, 12.5)], w=1.1),
    ),
    "add": lambda p: (p.line([(8, 2), (8, 14)], w=2), p.line([(2, 8), (14, 8)], w=2)),
    "remove": lambda p: p.line([(2, 8), (14, 8)], w=2),
    "close": lambda p: (p.line([(3, 3), (13, 13)], w=1.8), p.line([(13, 3), (3, 13)], w=1.8)),
    "refresh": _refresh,
    "export": lambda p: _arrow_tray(p, up=True),
    "import": lambda p: _arrow_tray(p, up=False),
    "filter": lambda p: p.poly([(1.5, 2), (14.5, 2), (9.5, 8), (9.5, 14.5), (6.5, 12.5), (6.5, 8)]),
    "sort": lambda p: (p.rect(1.5, 2.5, 14.5, 4.3), p.rect(1.5, 7.1, 11, 8.9), p.rect(1.5, 11.7, 7.5, 13.5)),
    "grid": lambda p: [p.rect(x, y, x + 3.6, y + 3.6) for y in (1.5, 6.2, 10.9) for x in (1.5, 6.2, 10.9)],
    "extensions": lambda p: (
        p.rect(1.5, 6.5, 6.5, 11.5),
        p.rect(1.5, 11.5 + 0.8, 6.5, 14.5 + 0.8),
        p.rect(7.5, 6.5, 12.5, 11.5),
        p.rect(9.5, 1, 14.5, 6),
    ),
    "layers": lambda p: (
        p.poly([(8, 1.5), (15, 5.5), (8, 9.5), (1, 5.5)]),
        p.line([(1, 9.3), (8, 13.3), (15, 9.3)], w=1.5),
    ),
    "home": lambda p: (
        p.poly([(8, 1.5), (15, 8), (13, 8), (13, 14.5), (3, 14.5), (3, 8), (1, 8)]),
        p.rect(6.5, 9.5, 9.5, 14.5, ink=0),
    ),
    "bell": lambda p: (
        p.poly([(8, 1.5), (11.5, 3.5), (12.5, 10), (14.5, 12), (1.5, 12), (3.5, 10), (4.5, 3.5)]),
        p.ellipse(6.2, 12.5, 9.8, 15.5),
    ),
    "user": lambda p: (p.ellipse(4.8, 1, 11.2, 7.4), p.pie(1.5, 8.8, 14.5, 21.8, 180, 360)),
    "bug": lambda p: (
        p.ellipse(4.5, 4.5, 11.5, 15),
        p.ellipse(5.8, 1.5, 10.2, 5.5),
        p.line([(1.5, 6), (4.8, 8)], w=1.2),
        p.line([(14.5, 6), (11.2, 8)], w=1.2),
        p.line([(1, 10.5), (4.5, 10.5)], w=1.2),
        p.line([(15, 10.5), (11.5, 10.5)], w=1.2),
        p.line([(1.5, 15), (5, 12.8)], w=1.2),
        p.line([(14.5, 15), (11, 12.8)], w=1.2),
    ),
    "terminal": lambda p: (
        p.rect(1, 2, 15, 14, w=1.3, r=1),
        p.line([(4, 5.5), (6.8, 8), (4, 10.5)], w=1.4),
        p.line([(8.3, 10.8), (12.3, 10.8)], w=1.4),
    ),
    "branch": lambda p: (
        p.ellipse(2.5, 1, 6.5, 5, w=1.3),
        p.ellipse(2.5, 11, 6.5, 15, w=1.3),
        p.ellipse(9.5, 3, 13.5, 7, w=1.3),
        p.line([(4.5, 5), (4.5, 11)], w=1.3),
        p.line([(11.5, 7), (11.5, 8.5), (4.5, 10.5)], w=1.3),
    ),
    "copy": lambda p: (
        p.rect(5, 5, 14.5, 14.5, w=1.4, r=1),
        p.line([(10.5, 3.5), (10.5, 1.5), (1.5, 1.5), (1.5, 10.5), (3.5, 10.5)], w=1.4),
    ),
    "cut": lambda p: (
        p.ellipse(1, 10, 6.5, 15.5, w=1.4),
        p.ellipse(9.5, 10, 15, 15.5, w=1.4),
        p.line([(5.3, 10.5), (11.5, 1)], w=1.4),
        p.line([(10.7, 10.5), (4.5, 1)], w=1.4),
    ),
    "paste": lambda p: (p.rect(2.5, 3, 13.5, 15, w=1.4, r=1), p.rect(5.5, 1.2, 10.5, 4.8)),
    "bar_chart": lambda p: (
        p.rect(2, 8, 5, 14),
        p.rect(6.5, 3, 9.5, 14),
        p.rect(11, 6, 14, 14),
        p.line([(1, 14.8), (15, 14.8)], w=1),
    ),
    "line_chart": lambda p: (
        p.line([(1.5, 1.5), (1.5, 14.5), (15, 14.5)], w=1.3),
        p.line([(3.5, 11.5), (6.5, 7), (9.5, 9.5), (14, 3)], w=1.6),
    ),
    "table": lambda p: (
        p.rect(1.5, 2, 14.5, 14, w=1.3),
        p.rect(1.5, 2, 14.5, 5.2),
        p.line([(1.5, 9.5), (14.5, 9.5)], w=1),
        p.line([(6, 2), (6, 14)], w=1),
        p.line([(10.3, 2), (10.3, 14)], w=1),
    ),
    "pin": lambda p: (p.ellipse(3, 1, 13, 11), p.poly([(4, 8), (12, 8), (8, 15.5)]), p.ellipse(6, 4, 10, 8, ink=0)),
    "ruler": lambda p: (
        p.rect(1, 4.5, 15, 11.5, w=1.3),
        p.line([(4, 4.5), (4, 8)], w=1),
        p.line([(7, 4.5), (7, 9.5)], w=1),
        p.line([(10, 4.5), (10, 8)], w=1),
        p.line([(13, 4.5), (13, 9.5)], w=1),
    ),
    "line_tool": lambda p: (
        p.line([(3.5, 12.5), (12.5, 3.5)], w=1.4),
        p.rect(1.5, 11, 5, 14.5),
        p.rect(11, 1.5, 14.5, 5),
    ),
    "circle_tool": lambda p: (p.ellipse(1.5, 1.5, 14.5, 14.5, w=1.5), p.ellipse(6.8, 6.8, 9.2, 9.2)),
    "rect_tool": lambda p: p.rect(1.5, 3, 14.5, 13, w=1.6),
    "polygon_tool": lambda p: p.line([(8, 1.5), (14.5, 6.3), (12, 14), (4, 14), (1.5, 6.3), (8, 1.5)], w=1.5),
    "arc_tool": lambda p: (
        p.arc(1.5, 3, 14.5, 22, 190, 350, w=1.6),
        p.rect(0.5, 11, 3.5, 14),
        p.rect(12.5, 11, 15.5, 14),
    ),
    "rotate": lambda p: (p.arc(2, 2, 14, 14, 0, 270, w=1.7), p.poly([(15.5, 5.5), (13.5, 9.5), (10.2, 5.8)])),
    "mirror": lambda p: (
        [p.rect(7.4, y, 8.6, y + 1.8) for y in (0.5, 3.7, 6.9, 10.1, 13.3)],
        p.poly([(6, 3), (6, 13), (1, 13)]),
        p.line([(10, 3), (10, 13), (15, 13), (10, 3)], w=1.2),
    ),
    "link": lambda p: (p.rect(0.8, 5, 9.2, 11, w=1.5, r=3), p.rect(6.8, 5, 15.2, 11, w=1.5, r=3)),
    "mic": lambda p: (
        p.rect(5.5, 1, 10.5, 10, r=2.5),
        p.arc(3, 4.5, 13, 12.5, 0, 180, w=1.3),
        p.line([(8, 12.5), (8, 15)], w=1.3),
        p.line([(5, 15), (11, 15)], w=1.3),
    ),
    "speaker": lambda p: (
        _speaker(p),
        p.arc(6.5, 4.5, 12, 11.5, 300, 60, w=1.3),
        p.arc(6.5, 1.5, 15, 14.5, 300, 60, w=1.3),
    ),
    "mute": lambda p: (_speaker(p), p.line([(10.5, 5.5), (15, 10.5)], w=1.4), p.line([(15, 5.5), (10.5, 10.5)], w=1.4)),
    "magnet": lambda p: (
        p.arc(2, 2, 14, 14, 0, 180, w=3.2),
        p.rect(2, 4, 5.2, 8.5),
        p.rect(10.8, 4, 14, 8.5),
        p.rect(2, 1, 5.2, 3.2),
        p.rect(10.8, 1, 14, 3.2),
    ),
    "globe": lambda p: (
        p.ellipse(1.5, 1.5, 14.5, 14.5, w=1.3),
        p.ellipse(5, 1.5, 11, 14.5, w=1.1),
        p.line([(1.5, 8), (14.5, 8)], w=1.1),
        p.line([(8, 1.5), (8, 14.5)], w=1.1),
    ),
    "database": lambda p: (
        p.ellipse(2, 1, 14, 5.5, w=1.3),
        p.line([(2, 3.2), (2, 12.8)], w=1.3),
        p.line([(14, 3.2), (14, 12.8)], w=1.3),
        p.arc(2, 10.5, 14, 15, 0, 180, w=1.3),
        p.arc(2, 6, 14, 10.5, 0, 180, w=1.1),
    ),
    "cloud": lambda p: (p.ellipse(1, 7, 7, 13), p.ellipse(4, 3, 12, 11), p.ellipse(9, 6, 15, 12), p.rect(4, 9, 12, 13)),
    "clock": lambda p: (p.ellipse(1.5, 1.5, 14.5, 14.5, w=1.4), p.line([(8, 4), (8, 8), (11, 10)], w=1.4)),
    "calendar": lambda p: (
        p.rect(1.5, 3, 14.5, 14.5, w=1.3),
        p.rect(1.5, 3, 14.5, 6.2),
        p.line([(5, 1), (5, 4)], w=1.3),
        p.line([(11, 1), (11, 4)], w=1.3),
        [p.rect(x, y, x + 2, y + 2) for y in (8, 11) for x in (4, 7, 10)],
    ),
    "star": lambda p: p.poly(_star_points()),
    "flag": lambda p: (
        p.line([(3, 1), (3, 15)], w=1.4),
        p.poly([(3.7, 1.5), (14, 1.5), (11.5, 5), (14, 8.5), (3.7, 8.5)]),
    ),
    "wifi": lambda p: (
        p.arc(0.5, 3, 15.5, 18, 225, 315, w=1.5),
        p.arc(3.3, 5.8, 12.7, 15.2, 225, 315, w=1.5),
        p.ellipse(6.5, 11, 9.5, 14),
    ),
    "bluetooth": lambda p: p.line([(4, 4.5), (11.5, 10.8), (8, 14), (8, 2), (11.5, 5.2), (4, 11.5)], w=1.4),
    "battery": lambda p: (p.rect(1, 4, 13.5, 12, w=1.3, r=1), p.rect(13.8, 6.2, 15.2, 9.8), p.rect(3, 6, 9, 10)),
    "power": lambda p: (p.arc(2, 2.5, 14, 14.5, 300, 240, w=1.6), p.line([(8, 1), (8, 7.5)], w=1.6)),
    "display": lambda p: (
        p.rect(1, 2, 15, 11.5, w=1.4, r=0.5),
        p.line([(8, 11.5), (8, 14)], w=1.4),
        p.line([(4.5, 14.5), (11.5, 14.5)], w=1.4),
    ),
    "keyboard": lambda p: (
        p.rect(0.8, 3.5, 15.2, 12.5, w=1.2, r=1),
        [p.rect(x, 5.6, x + 1.6, 7.2) for x in (2.7, 5.2, 7.7, 10.2, 12.2)],
        p.rect(4.5, 9.3, 11.5, 10.7),
    ),
    "help": lambda p: (p.ellipse(0.8, 0.8, 15.2, 15.2), p.glyph("?", scale=11, ink=0)),
    "info": lambda p: (p.ellipse(0.8, 0.8, 15.2, 15.2), p.glyph("i", scale=11, ink=0)),
    "warning": lambda p: (
        p.poly([(8, 1), (15.5, 14.5), (0.5, 14.5)]),
        p.rect(7.1, 5, 8.9, 10.5, ink=0),
        p.rect(7.1, 11.8, 8.9, 13.3, ink=0),
    ),
    "bold": lambda p: p.glyph("B", scale=14),
    "italic": lambda p: p.poly(
        [
            (6.5, 2),
            (12.5, 2),
            (12.2, 3.5),
            (10.4, 3.5),
            (8, 12.5),
            (9.8, 12.5),
            (9.5, 14),
            (3.5, 14),
            (3.8, 12.5),
            (5.6, 12.5),
            (8, 3.5),
            (6.2, 3.5),
        ]
    ),
    "underline": lambda p: (p.glyph("U", family="sans", scale=12.5), p.rect(3, 14, 13, 15.3)),
    "sum": lambda p: p.glyph("Σ", scale=15),
    "function": lambda p: p.glyph("ƒ", family="sans", scale=16),
    "percent": lambda p: p.glyph("%", scale=13),
    "align_left": lambda p: [p.rect(1.5, y, x2, y + 1.6) for y, x2 in ((2.5, 14.5), (6, 10), (9.5, 14.5), (13, 9))],
    "align_center": lambda p: [
        p.rect(x1, y, 16 - x1, y + 1.6) for y, x1 in ((2.5, 1.5), (6, 4), (9.5, 1.5), (13, 4.5))
    ],
    "align_right": lambda p: [p.rect(x1, y, 14.5, y + 1.6) for y, x1 in ((2.5, 1.5), (6, 6), (9.5, 1.5), (13, 7))],
    "wrap": lambda p: (
        p.rect(1.5, 2.5, 14.5, 4.1),
        p.line([(1.5, 8), (12, 8)], w=1.6),
        p.arc(9, 8, 15, 13.5, 270, 90, w=1.6),
        p.line([(12, 13.5), (8, 13.5)], w=1.6),
        p.poly([(7, 13.5), (9.5, 11.2), (9.5, 15.8)]),
    ),
    "merge": lambda p: (
        p.rect(1, 3, 15, 13, w=1.3),
        p.line([(3, 8), (13, 8)], w=1.3),
        p.poly([(2.5, 8), (5.5, 5.5), (5.5, 10.5)]),
        p.poly([(13.5, 8), (10.5, 5.5), (10.5, 10.5)]),
    ),
    "hamburger": lambda p: (p.rect(1.5, 3, 14.5, 4.6), p.rect(1.5, 7.2, 14.5, 8.8), p.rect(1.5, 11.4, 14.5, 13)),
    "more": lambda p: (p.ellipse(1.3, 6.5, 4.3, 9.5), p.ellipse(6.5, 6.5, 9.5, 9.5), p.ellipse(11.7, 6.5, 14.7, 9.5)),
    "split": lambda p: (p.rect(1.5, 2.5, 14.5, 13.5, w=1.3), p.line([(8, 2.5), (8, 13.5)], w=1.3)),
    "image": lambda p: (
        p.rect(1, 2.5, 15, 13.5, w=1.3),
        p.poly([(2.5, 12), (6.5, 6.5), (9.5, 10), (11, 8.5), (13.5, 12)]),
        p.ellipse(10, 4, 12.6, 6.6),
    ),
    "share": lambda p: (
        p.ellipse(10.5, 1, 14.5, 5),
        p.ellipse(1.5, 6, 5.5, 10),
        p.ellipse(10.5, 11, 14.5, 15),
        p.line([(4, 7.2), (11.5, 3.5)], w=1.2),
        p.line([(4, 8.8), (11.5, 12.5)], w=1.2),
    ),
    "node": lambda p: (p.poly([(8, 1), (12.5, 8), (9.5, 14), (6.5, 14), (3.5, 8)]), p.ellipse(6.9, 7, 9.1, 9.2, ink=0)),
    "snap_grid": lambda p: (
        [p.rect(x, y, x + 1.5, y + 1.5) for y in (1.5, 7.2, 13) for x in (1.5, 7.2, 13)],
        p.line([(2.2, 13.7), (13.7, 2.2)], w=1.4),
    ),
    "play_circle": lambda p: (p.ellipse(0.8, 0.8, 15.2, 15.2), p.poly([(6, 4.5), (11.5, 8), (6, 11.5)], ink=0)),
    "step_over": lambda p: (
        p.arc(2, 3, 14, 13, 180, 0, w=1.6),
        p.poly([(11, 6.5), (15.5, 6.5), (13.5, 10)]),
        p.ellipse(6, 11.5, 10, 15.5),
    ),
    "breakpoint": lambda p: p.ellipse(3.5, 3.5, 12.5, 12.5),
    "knob": lambda p: (p.ellipse(1.5, 1.5, 14.5, 14.5, w=1.3), p.line([(8, 8), (4.5, 3.5)], w=1.6)),
    "headphones": lambda p: (
        p.arc(2, 2, 14, 16, 180, 360, w=1.6),
        p.rect(1.5, 9, 4.5, 14.5, r=1),
        p.rect(11.5, 9, 14.5, 14.5, r=1),
    ),
    "waveform": lambda p: [
        p.rect(x, 8 - h, x + 1.2, 8 + h)
        for x, h in ((1, 1.5), (3, 4), (5, 6.5), (7, 3), (9, 5.5), (11, 2.5), (13, 4.5))
    ],
    "piano": lambda p: (
        p.rect(1, 2, 15, 14, w=1.2),
        [p.line([(x, 2), (x, 14)], w=1) for x in (4.5, 8, 11.5)],
        [p.rect(x, 2, x + 2, 9) for x in (3.5, 7, 10.5)],
    ),
}


@dataclass(frozen=True)
class IconInfo:
    description: str  # what a person would call it when pointing at it: "the magnifying glass icon"
    tint: str = ""  # a semantic colour (themes.SEMANTIC_COLORS) some apps draw it in


ICON_INFO: dict[str, IconInfo] = {
    "record": IconInfo("red circle (record)", "red"),
    "play": IconInfo("play triangle", "green"),
    "pause": IconInfo("pause"),
    "stop": IconInfo("square stop"),
    "skip_back": IconInfo("skip to start"),
    "skip_forward": IconInfo("skip to end"),
    "rewind": IconInfo("rewind"),
    "fast_forward": IconInfo("fast forward"),
    "loop": IconInfo("loop arrows"),
    "metronome": IconInfo("metronome"),
    "save": IconInfo("floppy disk", "blue"),
    "folder": IconInfo("folder", "yellow"),
    "new_file": IconInfo("blank page"),
    "search": IconInfo("magnifying glass"),
    "zoom_in": IconInfo("magnifier with a plus"),
    "zoom_out": IconInfo("magnifier with a minus"),
    "zoom_fit": IconInfo("zoom to fit (four corners)"),
    "settings": IconInfo("gear"),
    "undo": IconInfo("undo arrow"),
    "redo": IconInfo("redo arrow"),
    "brush": IconInfo("paintbrush"),
    "pencil": IconInfo("pencil"),
    "eraser": IconInfo("eraser"),
    "fill": IconInfo("paint bucket"),
    "eyedropper": IconInfo("eyedropper"),
    "crop": IconInfo("crop"),
    "move": IconInfo("four-way arrow (move)"),
    "select_rect": IconInfo("dashed rectangle (marquee)"),
    "pointer": IconInfo("arrow pointer"),
    "text_tool": IconInfo("letter T (text tool)"),
    "eye": IconInfo("eye"),
    "eye_off": IconInfo("crossed-out eye"),
    "lock": IconInfo("padlock"),
    "trash": IconInfo("trash can", "red"),
    "add": IconInfo("plus"),
    "remove": IconInfo("minus"),
    "close": IconInfo("X (close)"),
    "refresh": IconInfo("circular arrow (refresh)"),
    "export": IconInfo("arrow out of a tray (export)"),
    "import": IconInfo("arrow into a tray (import)"),
    "filter": IconInfo("funnel"),
    "sort": IconInfo("sort bars"),
    "grid": IconInfo("3x3 grid"),
    "extensions": IconInfo("blocks (extensions)"),
    "layers": IconInfo("stacked layers"),
    "home": IconInfo("house"),
    "bell": IconInfo("bell"),
    "user": IconInfo("person"),
    "bug": IconInfo("bug", "orange"),
    "terminal": IconInfo("terminal prompt"),
    "branch": IconInfo("branch"),
    "copy": IconInfo("two sheets (copy)"),
    "cut": IconInfo("scissors"),
    "paste": IconInfo("clipboard"),
    "bar_chart": IconInfo("bar chart"),
    "line_chart": IconInfo("line chart"),
    "table": IconInfo("table"),
    "pin": IconInfo("map pin", "red"),
    "ruler": IconInfo("ruler"),
    "line_tool": IconInfo("line segment"),
    "circle_tool": IconInfo("circle"),
    "rect_tool": IconInfo("rectangle"),
    "polygon_tool": IconInfo("pentagon"),
    "arc_tool": IconInfo("arc"),
    "rotate": IconInfo("rotate arrow"),
    "mirror": IconInfo("mirror (two triangles)"),
    "link": IconInfo("chain link"),
    "mic": IconInfo("microphone"),
    "speaker": IconInfo("speaker"),
    "mute": IconInfo("speaker with an X"),
    "magnet": IconInfo("magnet"),
    "globe": IconInfo("globe"),
    "database": IconInfo("database cylinder"),
    "cloud": IconInfo("cloud"),
    "clock": IconInfo("clock"),
    "calendar": IconInfo("calendar"),
    "star": IconInfo("star", "yellow"),
    "flag": IconInfo("flag"),
    "wifi": IconInfo("Wi-Fi"),
    "bluetooth": IconInfo("Bluetooth"),
    "battery": IconInfo("battery"),
    "power": IconInfo("power"),
    "display": IconInfo("monitor"),
    "keyboard": IconInfo("keyboard"),
    "help": IconInfo("question mark"),
    "info": IconInfo("letter i (info)", "blue"),
    "warning": IconInfo("warning triangle", "yellow"),
    "bold": IconInfo("bold B"),
    "italic": IconInfo("italic I"),
    "underline": IconInfo("underlined U"),
    "sum": IconInfo("sigma (sum)"),
    "function": IconInfo("fx (function)"),
    "percent": IconInfo("percent sign"),
    "align_left": IconInfo("align left"),
    "align_center": IconInfo("align center"),
    "align_right": IconInfo("align right"),
    "wrap": IconInfo("wrap text"),
    "merge": IconInfo("merge cells"),
    "hamburger": IconInfo("three lines (menu)"),
    "more": IconInfo("three dots"),
    "split": IconInfo("split view"),
    "image": IconInfo("picture"),
    "share": IconInfo("share"),
    "node": IconInfo("pen nib"),
    "snap_grid": IconInfo("snap to grid"),
    "play_circle": IconInfo("play in a circle", "green"),
    "step_over": IconInfo("step over arrow"),
    "breakpoint": IconInfo("red dot (breakpoint)", "red"),
    "knob": IconInfo("knob"),
    "headphones": IconInfo("headphones"),
    "waveform": IconInfo("waveform"),
    "piano": IconInfo("piano keys"),
}

assert set(ICON_INFO) == set(GLYPHS), sorted(set(ICON_INFO) ^ set(GLYPHS))


@lru_cache(maxsize=4096)
def icon_mask(kind: str, size: int) -> Image.Image:
    pen = Pen(size)
    GLYPHS[kind](pen)
    return pen.image.resize((size, size), Image.Resampling.BOX)
