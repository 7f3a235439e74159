"""The images of a model-driven episode (issue 39), before the preset resizes them: a crop cut from
the screen (never from an earlier, resized crop), or the screen with the cursor drawn at a click."""

from __future__ import annotations

from typing import Any


def view_image(screen: Any, view: Any) -> Any:
    """View `view`'s image at the screen's own scale (the screen itself for view 0)."""
    if view.cursor is not None:
        return draw_cursor(screen, view.cursor)
    if view.index == 0:
        return screen
    return screen.crop(view.region)


def draw_cursor(screen: Any, point: tuple[float, float]) -> Any:
    """The screen with an arrow cursor's tip at `point` (black, white outline), as a desktop draws it."""
    from PIL import ImageDraw

    image = screen.convert("RGB")  # a copy: the shared screen is never drawn on
    x, y = point
    unit = max(1.0, min(image.size) / 600.0)
    arrow = [(0, 0), (0, 16), (4, 12), (7, 19), (10, 18), (7, 11), (12, 11)]
    ImageDraw.Draw(image).polygon(
        [(x + dx * unit, y + dy * unit) for dx, dy in arrow], fill=(0, 0, 0), outline=(255, 255, 255)
    )
    return image
