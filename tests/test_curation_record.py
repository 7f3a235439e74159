"""`record` under Xvfb: a small Tk app, clicks synthesised with xdotool, labels typed on the
recorder's standard input; the dataset it writes passes `validate` and runs under the suite."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from helpers import REPO, assert_counts
from pytest_grounding.datasets.validate import validate_path

pytestmark = [
    pytest.mark.desktop,  # an X11 app or a terminal driven from outside: slow, out of the fast tier
    pytest.mark.skipif(
        shutil.which("Xvfb") is None or shutil.which("xdotool") is None,
        reason="Xvfb and xdotool are not installed (Debian: apt-get install xvfb xdotool)",
    ),
    pytest.mark.skipif(
        not all(importlib.util.find_spec(m) for m in ("mss", "pynput", "Xlib")),
        reason="the curation extra (mss, pynput, python-xlib) is absent",
    ),
    pytest.mark.skipif(importlib.util.find_spec("tkinter") is None, reason="tkinter is absent"),
]

TIMEOUT = 30.0

APP = """
import json, sys, tkinter as tk
root = tk.Tk()
root.title("rectest")
root.geometry("400x300+0+0")
button = tk.Button(root, text="Save file", width=12)
button.place(x=100, y=120)
def report():
    root.update_idletasks()
    box = [button.winfo_rootx(), button.winfo_rooty(), button.winfo_width(), button.winfo_height()]
    open(sys.argv[1], "w").write(json.dumps(box))
root.after(300, report)
root.mainloop()
"""


@pytest.fixture
def display(tmp_path):
    """An Xvfb server of our own (its number chosen by Xvfb itself) with the Tk app on it."""
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "800x600x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    env = {**os.environ, "DISPLAY": f":{number}"}
    (tmp_path / "app.py").write_text(APP)
    geometry = tmp_path / "button.json"
    app = subprocess.Popen([sys.executable, str(tmp_path / "app.py"), str(geometry)], env=env)
    deadline = time.monotonic() + TIMEOUT
    while not geometry.exists() or not geometry.read_text():
        assert time.monotonic() < deadline, "the Tk app never drew its button"
        time.sleep(0.05)
    try:
        yield env, json.loads(geometry.read_text())
    finally:
        app.kill()
        server.kill()
        app.wait()
        server.wait()


class Output:
    """A process's standard output read as it comes (the label prompt ends without a newline)."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.text = ""
        self.thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self.thread.start()

    def _read(self, process: subprocess.Popen) -> None:
        while True:
            char = process.stdout.read(1)
            if not char:
                return
            self.text += char

    def wait_for(self, text: str, count: int = 1) -> None:
        deadline = time.monotonic() + TIMEOUT
        while self.text.count(text) < count:
            assert time.monotonic() < deadline, f"{text!r} never came; the recorder wrote:\n{self.text}"
            time.sleep(0.05)


def click(env, x, y):
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=env, check=True, timeout=10)


def test_record_clicks_on_a_tk_app_makes_a_dataset_that_validates_and_runs(display, tmp_path, project):
    env, (bx, by, bw, bh) = display
    out = tmp_path / "recorded"
    recorder = subprocess.Popen(
        [sys.executable, "-m", "pytest_grounding", "record", "--out", str(out), "--count", "2"],
        env={**env, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output = Output(recorder)
    try:
        output.wait_for("recording clicks")
        click(env, bx + 20, by + 10)  # on the button
        output.wait_for("label (Enter: drop this click)")
        recorder.stdin.write("Save file\n")
        recorder.stdin.flush()
        output.wait_for("saved images/click-0001.png")
        click(env, 300, 250)  # on the window's empty background
        output.wait_for("label (Enter: drop this click)", 2)
        recorder.stdin.write("\n")  # an empty label drops the click
        recorder.stdin.flush()
        output.wait_for("dropped")
        click(env, 310, 260)
        output.wait_for("label (Enter: drop this click)", 3)
        recorder.stdin.write("Empty area\n")
        recorder.stdin.flush()
        assert recorder.wait(timeout=TIMEOUT) == 0, output.text
    finally:
        recorder.kill()
    doc = json.loads((out / "annotations.json").read_text())
    assert [s["image"] for s in doc["samples"]] == ["images/click-0001.png", "images/click-0003.png"]
    assert [s["id"] for s in doc["samples"]] == ["click-0001", "click-0003"]
    assert not (out / "images" / "click-0002.png").exists()  # the dropped click's screenshot is gone
    button, background = (s["elements"][0] for s in doc["samples"])
    assert button["instruction"] == "Save file" and button["box_source"] == "x11-window"
    assert button["status"] == "accepted"
    assert doc["samples"][0]["width"] == 800 and doc["samples"][0]["height"] == 600
    x1, y1, x2, y2 = (v * s for v, s in zip(button["bbox"], (800, 600, 800, 600), strict=False))
    assert (x1, y1, x2 - x1, y2 - y1) == pytest.approx((bx, by, bw, bh), abs=0.01)  # the button's own window
    point = [button["click_point"][0] * 800, button["click_point"][1] * 600]
    assert point == pytest.approx([bx + 20, by + 10], abs=0.01)
    assert background["box_source"] == "around-click" and background["status"] == "draft"
    assert [v * s for v, s in zip(background["bbox"], (800, 600, 800, 600), strict=False)] == pytest.approx(
        [290, 240, 330, 280]
    )
    from PIL import Image

    with Image.open(out / "images" / "click-0001.png") as shot:
        assert shot.size == (800, 600)
        inside = shot.getpixel((bx + 5, by + bh // 2))
        outside = shot.getpixel((bx - 30, by + bh // 2))
        assert inside != (0, 0, 0) and outside != (0, 0, 0)  # a real screenshot of the app, not a black frame

    assert validate_path(str(out)) == 0
    result = project.runpytest(f"--dataset={out}", "--detector=center")
    assert_counts(result, missed=2)  # the screen centre is on neither target
    assert "errors" not in result.parseoutcomes()
