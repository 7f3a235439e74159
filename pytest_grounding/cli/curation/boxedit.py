"""Editing a box with keys (pure): Tab picks the edge (left, top, right, bottom, or the whole box),
arrows move it by the step, Shift+arrows by ten steps, + and - double and halve the step. The box
stays inside the image and at least one pixel wide and high."""

from __future__ import annotations

from dataclasses import dataclass, replace

EDGES = ("left", "top", "right", "bottom", "box")
ARROWS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}
BIG = 10
MAX_STEP = 64
MIN_SIDE = 1.0

PixelBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class BoxEdit:
    box: PixelBox  # x1, y1, x2, y2 in pixels of the image
    width: int
    height: int
    edge: str = "left"
    step: int = 1

    def key(self, name: str) -> BoxEdit:
        """The edit after one key (prompt_toolkit's key names: "tab", "left", "s-left", "+"...);
        a key that means nothing here leaves it unchanged."""
        if name in ("tab", "c-i"):
            return replace(self, edge=EDGES[(EDGES.index(self.edge) + 1) % len(EDGES)])
        if name == "s-tab":
            return replace(self, edge=EDGES[(EDGES.index(self.edge) - 1) % len(EDGES)])
        if name in ("+", "="):
            return replace(self, step=min(MAX_STEP, self.step * 2))
        if name in ("-", "_"):
            return replace(self, step=max(1, self.step // 2))
        big = name.startswith("s-")
        direction = ARROWS.get(name[2:] if big else name)
        if direction is None:
            return self
        amount = self.step * (BIG if big else 1)
        return self.move(direction[0] * amount, direction[1] * amount)

    def move(self, dx: float, dy: float) -> BoxEdit:
        x1, y1, x2, y2 = self.box
        w, h = float(self.width), float(self.height)
        if self.edge == "box":
            dx = min(max(dx, -x1), w - x2)
            dy = min(max(dy, -y1), h - y2)
            return replace(self, box=(x1 + dx, y1 + dy, x2 + dx, y2 + dy))
        if self.edge == "left":
            x1 = min(max(0.0, x1 + dx), x2 - MIN_SIDE)
        elif self.edge == "right":
            x2 = max(min(w, x2 + dx), x1 + MIN_SIDE)
        elif self.edge == "top":
            y1 = min(max(0.0, y1 + dy), y2 - MIN_SIDE)
        else:
            y2 = max(min(h, y2 + dy), y1 + MIN_SIDE)
        return replace(self, box=(x1, y1, x2, y2))

    def describe(self) -> str:
        x1, y1, x2, y2 = self.box
        size = f"({x2 - x1:g}x{y2 - y1:g})"
        return f"box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] px {size}, moving: {self.edge}, step {self.step} px"


def clamp_box(box: PixelBox, width: int, height: int) -> PixelBox:
    """A box made to fit the image (what an edit starts from when the parser's box spills over)."""
    x1, y1, x2, y2 = box
    x1, x2 = sorted((min(max(0.0, x1), width - MIN_SIDE), min(max(0.0, x2), float(width))))
    y1, y2 = sorted((min(max(0.0, y1), height - MIN_SIDE), min(max(0.0, y2), float(height))))
    return (x1, y1, max(x2, x1 + MIN_SIDE), max(y2, y1 + MIN_SIDE))


def default_box(width: int, height: int) -> PixelBox:
    """Where a new element's box starts: a small box in the middle of the screen."""
    side = max(MIN_SIDE, round(min(width, height) / 10))
    x1, y1 = round((width - side) / 2), round((height - side) / 2)
    return (float(x1), float(y1), float(x1 + side), float(y1 + side))
