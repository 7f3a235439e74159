"""The vendored DejaVu fonts, and only those: text renders the same on every machine."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PIL import ImageFont

FONT_DIR = Path(__file__).resolve().parent / "fonts"
FONT_FILES = {
    "sans": "DejaVuSans.ttf",
    "bold": "DejaVuSans-Bold.ttf",
    "mono": "DejaVuSansMono.ttf",
    "cond": "DejaVuSansCondensed.ttf",
}


@cache
def font(family: str, size: int) -> ImageFont.FreeTypeFont:
    # BASIC layout: the same glyph placement whether or not libraqm is installed.
    return ImageFont.truetype(str(FONT_DIR / FONT_FILES[family]), size, layout_engine=ImageFont.Layout.BASIC)
