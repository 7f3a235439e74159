"""A loopback model that SEES the screenshot (issue 46's tests): it finds the square of the colour
the instruction names in the image it receives and answers its centre in a frame chosen per
server, never reading any ground truth. The frames:

- `right`: pixels of the image received (as the default preset, uitars-1.5-point, decodes);
- `rel1000`: thousandths of the image; `swapped`: (y, x) pixels;
- `shrunk`: the "server" first shrinks the image to a pixel budget (Qwen's resize, computed here
  with the preset module's own smart_resize), and the model answers in pixels of that;
- `near`: a few pixels outside the square's edge, on a side that changes with the square's place;
- `wrong`: the centre of a square of another colour when the screen has one (else the named one);
- `garbage`: no coordinates at all."""

import functools
import threading
import time

import numpy as np
from PIL import Image

from helpers import LoopbackServer, decode_data_url, json_body
from pytest_grounding.detectors.vlm.preprocess import smart_resize

COLOURS = {"red": (220, 30, 30), "blue": (40, 70, 220), "green": (30, 170, 60)}
SHRINK_BUDGET = 256 * 28 * 28
NEAR_PX = 5
CALIBRATION = "Click the red square."


def squares(pixels):
    """Colour -> (x1, y1, x2, y2) of its pixels, for each colour present. Only the saturated pixels
    are compared with each colour (the screens are grey but for the squares): a whole 1600x900
    screen compared three times took 0.27 s a request, most of a frame check's time in the tests."""
    pixels = np.asarray(pixels, dtype=np.uint8)
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]  # per channel: numpy's reduction over 3 is slow
    spread = np.maximum(np.maximum(r, g), b) - np.minimum(np.minimum(r, g), b)  # uint8: max >= min
    ys, xs = np.nonzero(spread > 50)  # each colour's spread is 140 or more; within 40 of it, over 60
    coloured = pixels[ys, xs].astype(np.int16)
    found = {}
    for name, rgb in COLOURS.items():
        near = np.all(np.abs(coloured - np.array(rgb, dtype=np.int16)) < 40, axis=-1)
        if near.any():
            x, y = xs[near], ys[near]
            found[name] = (int(x.min()), int(y.min()), int(x.max()) + 1, int(y.max()) + 1)
    return found


def answer_text(mode, instruction, image):
    if mode == "garbage":
        return "I would rather not say."
    if mode == "shrunk":
        height, width = smart_resize(image.height, image.width, 28, 4 * 28 * 28, SHRINK_BUDGET)
        image = image.resize((width, height), Image.BICUBIC)
    pixels = np.asarray(image.convert("RGB"))
    found = squares(pixels)
    asked = next((c for c in COLOURS if c in instruction.lower()), "red")
    if asked not in found:
        return "(1,1)"
    if mode == "wrong":
        asked = next((c for c in found if c != asked), asked)
    x1, y1, x2, y2 = found[asked]
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    w, h = image.size
    if mode == "near":  # just outside, right or below by where the square lies
        if (x1 // 8 + y1 // 8) % 2:
            cx = x2 + NEAR_PX
        else:
            cy = y2 + NEAR_PX
    if mode == "rel1000":
        return f"({round(cx / w * 1000)},{round(cy / h * 1000)})"
    if mode == "swapped":
        return f"({round(cy)},{round(cx)})"
    return f"({round(cx)},{round(cy)})"


@functools.lru_cache(maxsize=64)
def seen(mode, instruction, url):
    """`answer_text` of an image sent as a data URL, once per image and question: every frame check
    sends the same 12 calibration screens, and decoding them was most of the stand-in's time."""
    return answer_text(mode, instruction, decode_data_url(url))


class SeeingModel:
    """The server: `url`, the instructions it was asked (`asked`), `close()`. `calibration_delay`: each
    calibration request is answered that many seconds after it came; `calibration_after`: and not
    before that many dataset requests were answered, the dataset's later ones not before the 12
    calibration requests were (each wait at most 30 s); `sample_delay`: the dataset's requests are
    answered one at a time, each that long. `times`: (calibration?, came, answered) per request, wall
    clock."""

    def __init__(self, mode, calibration_delay=0.0, sample_delay=0.0, calibration_after=0):
        self.mode = mode
        self.asked = []
        self.bodies = []  # every request's body as received (the batch tests compare them with the file's)
        self.times = []
        lock, one_at_a_time = threading.Lock(), threading.Lock()
        answered = threading.Condition()

        def reply(handler):
            if handler.command != "POST":
                return 404, {"error": "not here"}
            came = time.time()
            body = json_body(handler)
            content = body["messages"][-1]["content"]
            texts = [part["text"] for part in content if part.get("type") == "text"]
            urls = [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]
            instruction = " ".join(texts)
            with lock:
                self.asked.append(instruction)
                self.bodies.append(body)
            calibration = CALIBRATION in instruction
            if calibration:
                time.sleep(calibration_delay)
                with answered:
                    answered.wait_for(lambda: self.samples_answered() >= calibration_after, timeout=30)
            else:
                with lock:
                    order = sum(CALIBRATION not in text for text in self.asked)
                if calibration_after and order > calibration_after:
                    with answered:
                        answered.wait_for(lambda: self.calibrations_answered() >= 12, timeout=30)
                with one_at_a_time:
                    time.sleep(sample_delay)
            text = seen(self.mode, instruction, urls[0]) if urls else ""
            with lock:
                self.times.append((calibration, came, time.time()))
            with answered:
                answered.notify_all()
            return 200, {
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            }

        self.server = LoopbackServer(reply)
        self.url = self.server.url

    def samples_answered(self):
        return sum(not calibration for calibration, _, _ in self.times)

    def calibrations_answered(self):
        return sum(calibration for calibration, _, _ in self.times)

    def calibration_requests(self):
        return sum(CALIBRATION in text for text in self.asked)

    def dataset_requests(self):
        return sum(CALIBRATION not in text for text in self.asked)

    def close(self):
        self.server.close()
