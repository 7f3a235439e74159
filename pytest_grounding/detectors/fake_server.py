"""A stand-in OpenAI-compatible server on the loopback, for dry runs, CI examples and the tests
(`python -m pytest_grounding fake-server`): `/v1/models` lists one model, `/v1/chat/completions`
answers every request with the centre of the image it was sent, written in a preset's answer form
and coordinate frame (so the `openai` detector reads it as that model's answer: the `center` floor
over HTTP). Optional delay, a share of HTTP 500s and a share of cut answers (finish_reason
`length`). With `frame=` (`fake-server --frame rel1000`) it plays a model with a frame error: it
finds the square of the colour a request names (the frame check's red square, the coloured squares
of fixtures/mini; the centre otherwise) by looking at the image, and writes every answer in that
frame, so the check before the run and the diagnosis after it both name the frame (issue 46's and
61's worked example). No model, no GPU, standard library,
Pillow and numpy only.

`reply(handler) -> (status, payload)` replaces the preset's answer (the tests' scripted servers);
the engine questions (`/version`, `/get_server_info`) are answered 404, as a plain OpenAI server
does, and the probe (served_checks.py) gets an empty completion unless `answer_probes=False`."""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import json
import random
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .served_engine import ENGINE_PATHS  # the engine record asks them at the server's root

PROBE_REPLY = {"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}
DEFAULT_PRESET = "uitars-1.5-point"

Reply = Callable[[BaseHTTPRequestHandler], tuple[int, Any]]


def _number(value: float) -> str:
    return str(int(round(value))) if abs(value - round(value)) < 1e-9 or abs(value) >= 10 else f"{value:.3f}"


def answer_text(extractors: tuple[str, ...] | list[str], x: float, y: float) -> str:
    """A point written as the preset's first extractor reads it (vlm/parse.py)."""
    a, b = _number(x), _number(y)
    forms = {
        "uitars_action": f"Action: click(start_box='({a},{b})')",
        "paren": f"({a},{b})",
        "paren_last": f"({a},{b})",
        "bracket": f"[{a}, {b}]",
        "tool_call": '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
        f'"coordinate": [{a}, {b}]}}}}\n</tool_call>',
        "pyautogui": f"pyautogui.click(x={a}, y={b})",
        "point_tag": f"<point>{a} {b}</point>",
        "json_xy": f'{{"x": {a}, "y": {b}}}',
        "box_2d": f'[{{"box_2d": [{a}, {b}, {a}, {b}]}}]',
        "point_2d": f'{{"point_2d": [{a}, {b}]}}',
        "answer_coordinate": f'<answer>{{"coordinate": [{a}, {b}]}}</answer>',
    }
    for name in extractors:
        if name in forms:
            return forms[name]
    return forms["paren"]


def centre_in_frame(transform: str, size: tuple[int, int]) -> tuple[float, float]:
    """The centre of an image of `size` (what the model was sent) in a transform's values."""
    return in_frame(transform, size, size[0] / 2, size[1] / 2)


def in_frame(transform: str, size: tuple[int, int], x: float, y: float) -> tuple[float, float]:
    """A point in pixels of the image sent, in a transform's values."""
    width, height = size
    for part in transform.split("+"):
        scale = {"rel1000": 1000.0, "rel999": 999.0, "rel1": 1.0}.get(part)
        if scale is not None:
            x, y = x / width * scale, y / height * scale
    if "yx_swap" in transform.split("+"):
        x, y = y, x
    return x, y


# `--frame`: the frames the stand-in can answer in (core/frames.py's names; `original-pixels` needs the
# screen's size before the preset resized it, which a server never sees)
ANSWER_FRAMES = "as-preset, rel1000, rel1, swapped, resized-by-server:max_pixels=N|long_edge=L|scale=S, offset:DX,DY"


def answer_frame(spec: str | None) -> Any:
    """The core/frames.py Frame a `--frame` names (None: the preset's own); ValueError for one the
    stand-in cannot answer in."""
    if spec is None:
        return None
    from ..core.frames import parse_frame

    frame = parse_frame(spec)
    if frame.name == "original-pixels":
        raise ValueError(f"--frame {spec}: a server never sees the original screen; one of {ANSWER_FRAMES}")
    return frame


def values_in(frame: Any, transform: str, size: tuple[int, int], x: float, y: float) -> tuple[float, float]:
    """A point in pixels of the image sent, as a model answering in `frame` writes it (None: the
    preset's own frame)."""
    name = "as-preset" if frame is None else frame.name
    params = dict(frame.params) if frame is not None else {}
    if name in ("rel1000", "rel1"):
        scale = 1000.0 if name == "rel1000" else 1.0
        return x / size[0] * scale, y / size[1] * scale
    if name == "resized-by-server":  # the "server" shrank the image, the model answered on the smaller one
        from ..core.frames import shrunk_by

        shrunk = shrunk_by(size, params)
        x, y = x * shrunk[0] / size[0], y * shrunk[1] / size[1]
    if name == "offset":  # in pixels of the image sent (near the screen's own for a light resize)
        x, y = x + params["dx"], y + params["dy"]
    vx, vy = in_frame(transform, size, x, y)
    return (vy, vx) if name == "swapped" else (vx, vy)


# The colours the stand-in can see: the frame check's red square, and fixtures/mini's squares.
SQUARE_COLOURS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (40, 70, 220)}
NAMED_SQUARE = re.compile(r"\b(" + "|".join(SQUARE_COLOURS) + r") square\b", re.IGNORECASE)


def named_square(body: Any) -> tuple[float, float] | None:
    """The centre of the square of the colour the request names ("Click the red square.": the frame
    check's question, or a sample of fixtures/mini) in the image sent (its pixels), found by looking
    at the image, never at a label; None when no colour is named or the image has none of it."""
    text = json.dumps(body) if not isinstance(body, str) else body
    match = re.search(r"data:image/[a-z]+;base64,([A-Za-z0-9+/=]+)", text)
    named = NAMED_SQUARE.search(text)
    if named is None or match is None:
        return None
    return _square_in(named.group(1).lower(), match.group(1))


@functools.lru_cache(maxsize=32)  # every frame check sends the same calibration screens: decoded once
def _square_in(colour_name: str, payload: str) -> tuple[float, float] | None:
    import numpy as np
    from PIL import Image

    colour = SQUARE_COLOURS[colour_name]
    with contextlib.suppress(Exception), Image.open(io.BytesIO(base64.b64decode(payload))) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
        # per channel: numpy is slow reducing over an axis of 3
        near = [np.abs(pixels[..., channel] - colour[channel]) < 40 for channel in range(3)]
        ys, xs = np.nonzero(near[0] & near[1] & near[2])
        if xs.size:
            return (float(xs.min()) + float(xs.max()) + 1) / 2, (float(ys.min()) + float(ys.max()) + 1) / 2
    return None


calibration_square = named_square  # the frame check's question is one such request


def image_size(body: Any) -> tuple[int, int] | None:
    """The size of the first image in a chat request (a data URL), or None."""
    text = json.dumps(body) if not isinstance(body, str) else body
    match = re.search(r"data:image/[a-z]+;base64,([A-Za-z0-9+/=]+)", text)
    if match is None:
        return None
    from PIL import Image

    with contextlib.suppress(Exception), Image.open(io.BytesIO(base64.b64decode(match.group(1)))) as image:
        return image.size
    return None


def completion(content: str, model: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "fake-1",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": max(1, len(content) // 4), "total_tokens": 2},
    }


class FakeServer:
    """The stand-in, started on 127.0.0.1 (`port` 0: a free one); `url` ends in /v1."""

    def __init__(
        self,
        reply: Reply | None = None,
        *,
        answer_probes: bool = True,
        preset: str = DEFAULT_PRESET,
        model: str | None = None,
        delay: float = 0.0,
        errors: float = 0.0,
        cut: float = 0.0,
        port: int = 0,
        seed: int = 0,
        frame: str | None = None,
    ) -> None:
        from .served_checks import PROBE_INSTRUCTION

        for name, share in (("errors", errors), ("cut", cut)):
            if not 0 <= share <= 1:  # NaN too
                raise ValueError(f"{name}={share:g}: a share between 0 and 1")
        if not 0 <= delay <= 3600:  # NaN too: it would drop every request
            raise ValueError(f"delay={delay:g}: seconds, between 0 and 3600")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port={port}: a port number between 0 (a free one) and 65535")
        self.frame = answer_frame(frame)  # before the port opens: a bad name is a clear error
        self.preset_name = preset
        self.model = model or f"fake/{preset}"  # a model id the detector's preset=auto matches
        self.delay, self.errors, self.cut = delay, errors, cut
        self.requests = 0
        self.probes = 0  # the served detectors' probe completions it answered itself
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._preset: Any = None
        if reply is None:
            from .vlm.presets import get_preset

            self._preset = get_preset(preset)  # an unknown name fails here, with "did you mean"
        answer = reply or self.answer
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                if answer_probes and self.path in ENGINE_PATHS:  # the engine record's questions
                    return self._send(404, {"detail": "Not Found"})
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    data = self.rfile.read(length)
                    self.rfile = io.BytesIO(data)  # the reply reads it again
                    if answer_probes and PROBE_INSTRUCTION.encode() in data:
                        with server._lock:
                            server.probes += 1
                        return self._send(200, PROBE_REPLY)
                status, payload = answer(self)
                self._send(status, payload)

            def _send(self, status: int, payload: Any) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (a timeout)
                    self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="fake-server")
        self.thread.start()

    def answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, Any]:
        """The preset's answer: /models lists the model; a chat gets the image's centre."""
        path = handler.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]}
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}"}}
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            body = json.loads(handler.rfile.read(length) or b"{}")
        except ValueError:
            return 400, {"error": {"message": "the body is no JSON"}}
        with self._lock:
            self.requests += 1
            fail, cut = self._random.random() < self.errors, self._random.random() < self.cut
        if self.delay:
            time.sleep(self.delay)
        if fail:
            return 500, {"error": {"message": "fake-server: an error, as asked (--errors)"}}
        size = image_size(body) or (1000, 1000)
        if self.frame is None:
            x, y = centre_in_frame(self._preset.transform, size)
        else:  # --frame: the named square found (the check's, a sample's), every answer written in that frame
            found = named_square(body) or (size[0] / 2, size[1] / 2)
            x, y = values_in(self.frame, self._preset.transform, size, *found)
        text = answer_text(self._preset.extractors, x, y)
        if cut:
            return 200, completion(text[: max(1, len(text) // 3)], self.model, finish="length")
        return 200, completion(text, self.model)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
