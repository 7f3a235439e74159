"""The `omniparser` detector's optional selector: a chat model behind an OpenAI-compatible endpoint
that picks an element id from OmniParser's numbered list and the screenshot with the boxes drawn
(its set-of-marks picture). The prompt and the reading of the answer are pure; the request is the
only I/O, and the API key is read from the environment at each call, never stored."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.redact import register_env
from . import _yolo

SELECTOR_KEY_ENV = "PYTEST_GROUNDING_SELECTOR_API_KEY"
_ELEMENT_ID = re.compile(r"\b(?:id|box|element)?\s*#?\s*(\d+)\b", re.I)


def element_listing(elements: Sequence[_yolo.Element]) -> str:
    """The numbered element list the selector reads, OmniParser's way ("ID 3, icon: Save As")."""
    return "\n".join(f"ID {i}, {e.type}: {e.content or '(no text)'}" for i, e in enumerate(elements))


def selector_prompt(instruction: str, elements: Sequence[_yolo.Element]) -> str:
    return (
        "The screenshot shows numbered boxes around the elements of a screen, listed here:\n"
        f"{element_listing(elements)}\n\nWhich element should be clicked to do this: {instruction}\n"
        "Answer with the element's ID number only."
    )


def parse_element_id(answer: str, count: int) -> int | None:
    """The first number in the answer that is a valid element id, or None (wrong format)."""
    for match in _ELEMENT_ID.finditer(answer or ""):
        value = int(match.group(1))
        if 0 <= value < count:
            return value
    return None


def draw_elements(image: Any, elements: Sequence[_yolo.Element]) -> Any:
    """The screenshot with each element's box and id drawn (OmniParser's set-of-marks picture)."""
    from PIL import ImageDraw

    marked = image.convert("RGB").copy()
    draw = ImageDraw.Draw(marked)
    for i, e in enumerate(elements):
        colour = (230, 40, 40) if e.type == "icon" else (40, 90, 230)
        draw.rectangle(e.box, outline=colour, width=2)
        draw.text((e.box[0] + 2, max(0.0, e.box[1] - 11)), str(i), fill=colour)
    return marked


@dataclass(frozen=True)
class Selector:
    """A chat model behind an OpenAI-compatible endpoint picking an element id. The API key is read
    from the environment variable `key_env` at each call, never stored, printed or written."""

    base_url: str
    model: str
    key_env: str = SELECTOR_KEY_ENV
    timeout: float = 120.0

    def request(self, instruction: str, elements: Sequence[_yolo.Element], image: Any) -> dict[str, Any]:
        import base64
        import io

        buffer = io.BytesIO()
        draw_elements(image, elements).save(buffer, format="PNG")
        picture = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
        return {
            "model": self.model,
            "temperature": 0,
            "max_tokens": 16,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": selector_prompt(instruction, elements)},
                        {"type": "image_url", "image_url": {"url": picture}},
                    ],
                }
            ],
        }

    def answer(self, instruction: str, elements: Sequence[_yolo.Element], image: Any) -> str:
        import json
        import urllib.request

        from ..core import safejson
        from .http import read_bounded, url_opener

        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env)
        if key:
            register_env(self.key_env)  # a server that echoes the header back: masked in every output
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps(self.request(instruction, elements, image)).encode()
        url = self.base_url.rstrip("/") + "/chat/completions"
        with url_opener().open(urllib.request.Request(url, body, headers), timeout=self.timeout) as reply:
            document = safejson.loads(read_bounded(reply).decode("utf-8"))
        return str(document["choices"][0]["message"]["content"] or "")

    def describe(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "model": self.model,
            "key_env": self.key_env,
            "key_set": bool(os.environ.get(self.key_env)),
        }
