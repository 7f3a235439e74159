"""A loopback model that follows a script of crops before it clicks (issue 39's check), for the
served detector's `agent=crop`.

The instruction names what the script needs: `target X Y screen W H script NAME`. Each request is
answered from the conversation it carries (stateless, so samples may run concurrently): the turn is
the number of assistant messages, view k is the k-th image. The script keeps its own account of
every view's screen region (its own crops, clipped by its own rule) and answers in the coordinates
of the image it was just shown, from that image's decoded size, so the harness's mapping is checked
against an independent recount: every image's size, and on unresized screens its pixels (the
screens encode each pixel's position in its colour), must be the region the script expects, or the
problem is noted in `problems`."""

import json
import re
import threading
import time

from helpers import LoopbackServer, decode_data_url

INSTRUCTION = re.compile(r"target (\d+) (\d+) screen (\d+) (\d+) script ([\w-]+)")


def pattern_screen(size):
    """A screen whose pixel (x, y) has colour (x % 256, y % 256, 16 * (x // 256) + y // 256)."""
    import numpy as np
    from PIL import Image

    width, height = size
    xs, ys = np.meshgrid(np.arange(width), np.arange(height))
    array = np.stack([xs % 256, ys % 256, 16 * (xs // 256) + ys // 256], axis=-1).astype("uint8")
    return Image.fromarray(array, "RGB")


def clip(region, within):
    x1, y1, x2, y2 = region
    a1, b1, a2, b2 = within
    return (max(x1, a1), max(y1, b1), min(x2, a2), min(y2, b2))


def around(x, y, width, height, within):
    """A width x height window around (x, y), slid inside `within` (whole pixels)."""
    a1, b1, a2, b2 = within
    width, height = min(width, a2 - a1), min(height, b2 - b1)
    x1 = min(max(x - width // 2, a1), a2 - width)
    y1 = min(max(y - height // 2, b1), b2 - height)
    return (x1, y1, x1 + width, y1 + height)


def plan(name, target, screen):
    """The script: a list of steps, each ("crop", [(screen region asked, region expected)], image)
    with image None for the latest, ("click", (x, y) in screen pixels), ("terminate",), ("raw", message)."""
    x, y = target
    w, h = screen
    whole = (0, 0, w, h)
    half = around(x, y, w // 2, h // 2, whole)
    quarter = around(x, y, w // 8, h // 8, half)
    if name == "nested":
        return [("crop", [(half, half)], None), ("crop", [(quarter, quarter)], None), ("click", target)]
    if name == "offedge":  # partly off the screen: the harness clips it to the image shown
        asked = (x - w, y - h, x + 40, y + 30)
        return [("crop", [(asked, clip(asked, whole))], None), ("click", target)]
    if name == "two-per-turn":  # two crops at once, the click on the second (the latest image)
        other = around(w - 1 - x, h - 1 - y, w // 4, h // 4, whole)
        return [("crop", [(other, other), (half, half)], None), ("click", target)]
    if name == "back-to-screen":  # a crop, then a crop asked on image 0 (the screen) again
        return [("crop", [(half, half)], None), ("crop", [(quarter, quarter)], 0), ("click", target)]
    if name == "refused":
        return [("crop", [(half, half)], None), ("terminate",)]
    if name == "over-budget":  # four crops in four turns: the default allows three
        boxes = [around(x, y, w // (2 * k), h // (2 * k), whole) for k in (1, 2, 3, 4)]
        return [("crop", [(b, b)], 0) for b in boxes] + [("click", target)]
    if name == "too-many-at-once":
        boxes = [around(x, y, w // k, h // k, whole) for k in (2, 3, 4)]
        return [("crop", [(b, b) for b in boxes], None), ("click", target)]
    if name == "loop":
        return [("crop", [(half, half)], None), ("crop", [(half, half)], 0), ("click", target)]
    if name == "reclick":  # 30 px off, then corrected on the screen with the cursor drawn
        return [("click", (x + 30 if x + 30 < w else x - 30, y)), ("click", target)]
    if name == "confirm":  # right at once, then kept with `terminate`
        return [("click", target), ("terminate",)]
    if name == "malformed":
        call = {"id": "bad", "type": "function", "function": {"name": "crop", "arguments": "{box: [1, 2"}}
        return [("raw", _calls(call))]
    if name == "outside":
        return [("raw", _calls(_call({"box": [w + 10, h + 10, w + 90, h + 90]})))]
    if name == "zero-size":
        return [("raw", _calls(_call({"box": [x, y, x, y + 20]})))]
    raise ValueError(name)


def _calls(*calls):
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def _call(arguments, name="crop", index=0):
    return {"id": f"call-{index}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class ScriptedAgent:
    """The loopback model; `chats` counts requests; `problems` lists every check that failed."""

    def __init__(self, unresized=True, relative=None, pause=0.0, check=True):
        self.unresized = unresized
        self.check = check  # False (benchmarks): images not decoded, sizes taken from the script's regions
        self.pause = pause  # seconds each answer takes: requests overlap
        self.in_flight = self.most_in_flight = 0
        self.relative = relative  # answers in 0-`relative` of the image (rel1000), else its pixels
        self.chats = 0
        self.problems = []
        self.lock = threading.Lock()
        self.server = LoopbackServer(self.reply)
        self.url = self.server.url

    def close(self):
        self.server.close()

    def problem(self, text):
        with self.lock:
            self.problems.append(text)

    def reply(self, handler):
        if handler.command == "GET":
            return 200, {"data": [{"id": "scripted"}]}
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        with self.lock:
            self.chats += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return self.answer(body)
        finally:
            time.sleep(self.pause)
            with self.lock:
                self.in_flight -= 1

    def answer(self, body):
        text = json.dumps(body["messages"])
        found = INSTRUCTION.search(text)
        if not found:
            return 200, _completion({"role": "assistant", "content": ""})
        x, y, w, h, name = found.groups()
        target, screen = (int(x), int(y)), (int(w), int(h))
        steps = plan(name, target, screen)
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        if not any(t["function"]["name"] == "crop" for t in body.get("tools", [])):
            self.problem(f"{name}: no crop tool offered")
        images = [
            part["image_url"]["url"]
            for m in body["messages"]
            if isinstance(m["content"], list)
            for part in m["content"]
            if part.get("type") == "image_url"
        ]
        regions = [(0, 0, *screen)]
        cursors = {}
        for step in steps[:turn]:
            if step[0] == "crop":
                regions += [expected for _, expected in step[1]]
            elif step[0] == "click":  # a re-click turn: the screen with the cursor at the click
                cursors[len(regions)] = step[1]
                regions.append((0, 0, *screen))
        if len(images) != len(regions):
            self.problem(f"{name} turn {turn + 1}: {len(images)} images, the script expects {len(regions)}")
            return 200, _completion({"role": "assistant", "content": "nothing"})
        if not self.check:
            sizes = [(r[2] - r[0], r[3] - r[1]) for r in regions]
            return self.step(name, steps, turn, regions, sizes, target)
        sizes = [decode_data_url(url).size for url in images]
        for k, (url, region) in enumerate(zip(images, regions, strict=True)):
            image = decode_data_url(url)
            if k in cursors:
                self.check_cursor(name, image, cursors[k])
            else:
                self.check_image(name, k, image, region)
        return self.step(name, steps, turn, regions, sizes, target)

    def step(self, name, steps, turn, regions, sizes, target):
        """The script's answer on this turn, in the coordinates of the image it names."""
        step = steps[min(turn, len(steps) - 1)]
        latest = len(regions) - 1
        if step[0] == "raw":
            return 200, _completion(step[1])
        if step[0] == "terminate":
            return 200, _completion({"role": "assistant", "content": None, "tool_calls": [_call({}, "terminate")]})
        if step[0] == "click":
            mx, my = to_model(step[1], regions[latest], sizes[latest], self.relative)
            return 200, _completion({"role": "assistant", "content": f"({mx!r}, {my!r})"})
        on = latest if step[2] is None else step[2]
        calls = []
        for index, (asked, _) in enumerate(step[1]):
            x1, y1 = to_model(asked[:2], regions[on], sizes[on], self.relative)
            x2, y2 = to_model(asked[2:], regions[on], sizes[on], self.relative)
            arguments = {"box": [x1, y1, x2, y2], **({} if step[2] is None else {"image": on})}
            calls.append(_call(arguments, index=index))
        return 200, _completion({"role": "assistant", "content": None, "tool_calls": calls})

    def check_cursor(self, name, image, click):
        if self.unresized and image.getpixel(click) == (
            click[0] % 256,
            click[1] % 256,
            16 * (click[0] // 256) + click[1] // 256,
        ):
            self.problem(f"{name}: no cursor drawn at {click}")

    def check_image(self, name, k, image, region):
        width, height = region[2] - region[0], region[3] - region[1]
        if not self.unresized:
            ratio = (image.size[0] / image.size[1]) / (width / height)
            if not 0.7 < ratio < 1.4:  # smart_resize rounds each side to a multiple of its factor
                self.problem(f"{name}: image {k} is {image.size}, region {region} has another shape")
            return
        if image.size != (width, height):
            self.problem(f"{name}: image {k} is {image.size}, the script expects region {region}")
            return
        for corner in ((0, 0), (width - 1, height - 1)):
            r, g, b = image.getpixel(corner)
            at = ((b // 16) * 256 + r, (b % 16) * 256 + g)
            if at != (region[0] + corner[0], region[1] + corner[1]):
                self.problem(f"{name}: image {k}'s pixel {corner} is screen {at}, the script expects region {region}")


def to_model(point, region, size, relative=None):
    """A screen point in the pixels of the image of `region` as it was sent (`size`), or in
    0-`relative` of that image."""
    x, y = point
    scale = (relative, relative) if relative else size
    return ((x - region[0]) * scale[0] / (region[2] - region[0]), (y - region[1]) * scale[1] / (region[3] - region[1]))


def _completion(message):
    return {
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
    }
