"""What the reviewer sees of an element: the screen around its box with the box drawn, shown inline
by the kitty graphics protocol or as sixels where the terminal has them, else written to a PNG whose
path is printed. The drawing and the encodings are pure (a PIL image in, bytes or text out)."""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image

KITTY, SIXEL, FILE = "kitty", "sixel", "file"
MODES = ("auto", KITTY, SIXEL, FILE)
CONTEXT = 3.0  # the crop shows this many box sides of screen around the box
MIN_CROP = 400
MAX_INLINE = 640  # inline images are scaled to at most this many pixels wide
BOX_COLOUR = (230, 0, 60)


def render(screen: Image, box: tuple[float, float, float, float] | None, title: str = "") -> Image:
    """The part of the screen around the box, the box drawn in red two pixels outside it (so the
    edge pixels stay visible). No box: the whole screen."""
    from PIL import ImageDraw

    image = screen.convert("RGB")
    if box is None:
        return image
    # ordered and held just around the screen: a box a file gives (inverted, 1e308 wide) is drawn as far as it shows
    (x1, x2), (y1, y2) = (
        sorted(min(max(float(v), -8.0), size + 8.0) for v in pair)
        for pair, size in (((box[0], box[2]), image.width), ((box[1], box[3]), image.height))
    )
    half_w = max(MIN_CROP / 2, (x2 - x1) * CONTEXT / 2)
    half_h = max(MIN_CROP / 2, (y2 - y1) * CONTEXT / 2)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    left, top = max(0, int(cx - half_w)), max(0, int(cy - half_h))
    right, bottom = min(image.width, int(cx + half_w) + 1), min(image.height, int(cy + half_h) + 1)
    crop = image.crop((left, top, right, bottom))
    draw = ImageDraw.Draw(crop)
    draw.rectangle((x1 - left - 2, y1 - top - 2, x2 - left + 1, y2 - top + 1), outline=BOX_COLOUR, width=2)
    if title:
        draw.text((4, 2), title[:80], fill=BOX_COLOUR)
    return crop


def png_bytes(image: Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def fit(image: Image, width: int = MAX_INLINE) -> Image:
    if image.width <= width:
        return image
    return image.resize((width, max(1, round(image.height * width / image.width))))


def kitty_sequence(png: bytes, chunk: int = 4096) -> str:
    """The kitty graphics protocol: a PNG (f=100) transmitted and shown at the cursor (a=T), in
    base64 chunks of at most 4096 bytes, m=1 on all but the last."""
    data = base64.b64encode(png).decode("ascii")
    parts = [data[i : i + chunk] for i in range(0, len(data), chunk)] or [""]
    out = []
    for index, part in enumerate(parts):
        more = 1 if index < len(parts) - 1 else 0
        head = f"a=T,f=100,m={more}" if index == 0 else f"m={more}"
        out.append(f"\x1b_G{head};{part}\x1b\\")
    return "".join(out)


def sixel_sequence(image: Image, colours: int = 64) -> str:
    """DEC sixel graphics: the image quantised to a palette, six pixel rows per band, each colour's
    columns run-length encoded."""
    paletted = image.convert("RGB").quantize(colours)
    palette = paletted.getpalette() or []
    width, height = paletted.size
    data = paletted.tobytes()  # one palette index per pixel, row by row
    out = [f'\x1bP0;1;0q"1;1;{width};{height}']
    for index in sorted(set(data)):
        r, g, b = palette[index * 3 : index * 3 + 3]
        out.append(f"#{index};2;{r * 100 // 255};{g * 100 // 255};{b * 100 // 255}")
    for top in range(0, height, 6):
        band: dict[int, list[int]] = {}
        for bit, y in enumerate(range(top, min(top + 6, height))):
            row = data[y * width : (y + 1) * width]
            for x, colour in enumerate(row):
                bits = band.setdefault(colour, [0] * width)
                bits[x] |= 1 << bit
        for colour, bits in band.items():
            out.append(f"#{colour}{_runs(bits)}$")
        out.append("-")
    out.append("\x1b\\")
    return "".join(out)


def _runs(bits: list[int]) -> str:
    text, index = [], 0
    while index < len(bits):
        end = index
        while end < len(bits) and bits[end] == bits[index]:
            end += 1
        char, count = chr(63 + bits[index]), end - index
        text.append(f"!{count}{char}" if count > 3 else char * count)
        index = end
    return "".join(text)


def choose_mode(requested: str, env: Mapping[str, str], device_attributes: str | None) -> str:
    """How to show images, conservatively: kitty only where the terminal says it is kitty (or a
    terminal known to speak its protocol) and no multiplexer sits between; sixel only where the
    terminal's primary device attributes (the answer to ESC [ c) list 4; anything else a PNG file."""
    if requested != "auto":
        return requested
    multiplexed = bool(env.get("TMUX")) or env.get("TERM", "").startswith("screen")
    if not multiplexed and (
        env.get("KITTY_WINDOW_ID")
        or env.get("TERM") == "xterm-kitty"
        or env.get("TERM_PROGRAM") in ("ghostty", "WezTerm")
    ):
        return KITTY
    if device_attributes and "4" in device_attributes.strip("\x1b[?c").split(";")[1:]:
        return SIXEL
    return FILE


def query_device_attributes(timeout: float = 0.3) -> str | None:
    """The terminal's answer to ESC [ c, or None (not a terminal, no answer in time)."""
    import select
    import sys

    if os.name != "posix" or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    answer = b""
    try:
        tty.setraw(fd)
        os.write(sys.stdout.fileno(), b"\x1b[c")
        while select.select([fd], [], [], timeout)[0]:
            answer += os.read(fd, 64)
            if answer.endswith(b"c"):
                break
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    text = answer.decode("ascii", "replace")
    return text if text.startswith("\x1b[?") else None
