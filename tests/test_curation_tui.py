"""`review` driven in a real terminal: tmux runs it, send-keys types, capture-pane reads the screen,
and the annotations file is checked after every step (it must hold each decision as soon as it is
shown as saved), then the process is killed mid-review and nothing decided may be lost."""

import importlib.util
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from helpers import REPO, SHARED_DATA, needs_shared
from pytest_grounding.datasets.validate import validate_path

pytestmark = [
    pytest.mark.desktop,  # an X11 app or a terminal driven from outside: slow, out of the fast tier
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(
        importlib.util.find_spec("prompt_toolkit") is None, reason="prompt_toolkit (the curation extra) is absent"
    ),
]

TIMEOUT = 30.0


class Terminal:
    """One tmux server of our own (its socket in tmp_path), one window running a command."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.socket = ""
        self.started = 0
        self.pane_pid: int | None = None

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], check=True, capture_output=True, text=True, timeout=10
        ).stdout

    def start(self, command: str) -> None:
        """A fresh server (its own socket) for each run: the one before is ended first."""
        self.close()
        self.started += 1
        self.socket = str(self.folder / f"tmux-{self.started}.sock")
        shell = f"{command}; echo REVIEW-EXIT=$?; sleep 600"
        env = f"PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color"
        out = self.tmux(
            "new-session",
            "-d",
            "-x",
            "150",
            "-y",
            "45",
            "-P",
            "-F",
            "#{pane_pid}",
            f"env {env} sh -c {shlex.quote(shell)}",
        )
        self.pane_pid = int(out.strip())

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def text(self, *keys: str) -> None:
        self.tmux("send-keys", "-l", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-S", "-1000")

    def mark(self) -> int:
        """Where the next output will start (the pane's trailing blank lines are not output)."""
        return len(self.screen().rstrip())

    def wait_for(self, text: str, after: int = 0) -> str:
        """The screen once `text` appears after its first `after` characters."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen[after:]:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{self.screen()}")

    def wait_prompt(self, text: str, after: int = 0) -> str:
        """The screen once `text` is shown and the key prompt under it is ready for keys."""
        screen = self.wait_for(text, after)
        return self.wait_for("[q] quit", screen.index(text, after))

    def review_pid(self) -> int:
        """The python process the pane's shell runs."""
        children = Path(f"/proc/{self.pane_pid}/task/{self.pane_pid}/children").read_text().split()
        assert len(children) == 1, children
        return int(children[0])

    def close(self) -> None:
        if self.pane_pid is not None:
            subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    term.close()


def make_dataset(folder: Path) -> Path:
    image = Image.new("RGB", (200, 100), "white")
    draw = ImageDraw.Draw(image)
    for x in (20, 80, 140):
        draw.rectangle((x, 10, x + 40, 30), outline="black")
    image.save(folder / "screen.png")
    elements = [
        {"id": f"e{i}", "bbox": box, "text": text, "type": "text", "status": "draft"}
        for i, (box, text) in enumerate(
            [
                ([0.1, 0.1, 0.3, 0.3], "One"),
                ([0.4, 0.1, 0.6, 0.3], "Two"),
                ([0.7, 0.1, 0.9, 0.3], "Three"),
                ([0.1, 0.5, 0.3, 0.7], "Four"),
                ([0.4, 0.5, 0.6, 0.7], "Five"),
            ]
        )
    ]
    doc = {"version": "1.0", "dataset": "tui", "samples": [{"id": "s", "image": "screen.png", "elements": elements}]}
    path = folder / "annotations.json"
    path.write_text(json.dumps(doc))
    return path


def wait_file(path: Path, check, what: str) -> dict:
    """The file once `check(elements, document)` holds; it must parse at every read (atomic saves)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        doc = json.loads(path.read_text())
        elements = {e["id"]: e for e in doc["samples"][0]["elements"]}
        if check(elements, doc):
            return doc
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: the file holds {json.dumps(doc)}")
        time.sleep(0.05)


def statuses(elements) -> dict:
    return {k: e["status"] for k, e in elements.items()}


def test_review_in_a_terminal_saves_every_decision_resumes_and_survives_a_kill(terminal, tmp_path):
    path = make_dataset(tmp_path)
    command = f"{shlex.quote(sys.executable)} -m pytest_grounding review {shlex.quote(str(path))} --preview file"
    terminal.start(command)
    screen = terminal.wait_prompt("element e0: draft")
    assert "[1/5]" in screen and "box: [20, 10, 60, 30] px" in screen and "[a] accept" in screen
    preview = tmp_path / ".review-preview.png"
    assert f"preview: {preview}" in screen
    with Image.open(preview) as shown:
        assert shown.getpixel((18, 20)) == (230, 0, 60)  # the box drawn 2 px outside its left edge (crop at 0)
    doc = wait_file(path, lambda e, d: d["samples"][0].get("width") == 200, "the screen's size filled in")

    # accept
    mark = terminal.mark()
    terminal.keys("a")
    terminal.wait_prompt("element e1: draft", mark)
    wait_file(path, lambda e, d: e["e0"]["status"] == "accepted" and e["e1"]["status"] == "draft", "e0 accepted")

    # edit a box: Tab twice picks the right edge, Right twice and Shift+Right once move it 12 px
    mark = terminal.mark()
    terminal.keys("e")
    terminal.wait_for("moving: left", mark)
    terminal.keys("Tab", "Tab")
    terminal.wait_for("moving: right", mark)
    terminal.keys("Right", "Right", "S-Right")
    terminal.wait_for("box [80, 10, 132, 30] px (52x20), moving: right", mark)
    deadline = time.monotonic() + TIMEOUT
    while True:  # the preview PNG follows the edit before it is kept
        with Image.open(preview) as shown:
            if shown.getpixel((133, 20)) == (230, 0, 60) and shown.getpixel((123, 20)) != (230, 0, 60):
                break
        assert time.monotonic() < deadline, "the preview never showed the moved edge"
        time.sleep(0.05)
    terminal.keys("Enter")
    terminal.wait_for("saved annotations.json: edit box", mark)
    doc = wait_file(path, lambda e, d: e["e1"]["bbox"] == [0.4, 0.1, 0.66, 0.3], "e1's box edited")
    assert doc["samples"][0]["elements"][1]["status"] == "draft"  # an edit is not yet an acceptance
    terminal.wait_prompt("box: [80, 10, 132, 30] px", mark)  # shown again with its new box
    mark = terminal.mark()
    terminal.keys("a")
    wait_file(path, lambda e, d: e["e1"]["status"] == "accepted", "e1 accepted")

    # edit the instruction, then reject
    terminal.wait_prompt("element e2: draft", mark)
    terminal.keys("i")
    terminal.wait_for("instruction: Three", mark)
    terminal.keys("C-u")
    terminal.text("Open the third panel")
    terminal.keys("Enter")
    wait_file(path, lambda e, d: e["e2"].get("instruction") == "Open the third panel", "e2's instruction")
    terminal.wait_prompt("instruction: 'Open the third panel'", mark)
    mark = terminal.mark()
    terminal.keys("r")
    doc = wait_file(path, lambda e, d: e["e2"]["status"] == "rejected", "e2 rejected")

    # quit, then resume where it stopped
    terminal.wait_prompt("element e3: draft", mark)
    mark = terminal.mark()
    terminal.keys("q")
    screen = terminal.wait_for("REVIEW-EXIT=0", mark)
    assert "2 accepted, 1 rejected" in screen and "2 drafts left" in screen
    doc = json.loads(path.read_text())
    assert doc["review"] == {"at": "s/e3"}
    assert statuses({e["id"]: e for e in doc["samples"][0]["elements"]}) == {
        "e0": "accepted",
        "e1": "accepted",
        "e2": "rejected",
        "e3": "draft",
        "e4": "draft",
    }
    terminal.start(command)
    screen = terminal.wait_prompt("element e3: draft")
    assert "[4/5]" in screen and "element e0" not in screen

    # accept one more, then kill the process outright: every decision shown as saved is in the file
    terminal.keys("a")
    terminal.wait_prompt("element e4: draft")
    wait_file(path, lambda e, d: e["e3"]["status"] == "accepted", "e3 accepted")
    os.kill(terminal.review_pid(), 9)
    terminal.wait_for("REVIEW-EXIT=137")
    doc = json.loads(path.read_text())
    assert statuses({e["id"]: e for e in doc["samples"][0]["elements"]}) == {
        "e0": "accepted",
        "e1": "accepted",
        "e2": "rejected",
        "e3": "accepted",
        "e4": "draft",
    }
    assert doc["samples"][0]["elements"][1]["bbox"] == [0.4, 0.1, 0.66, 0.3]
    assert doc["review"] == {"at": "s/e4"}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    # Ctrl-C quits cleanly; a finished review says there is nothing left
    terminal.start(command)
    terminal.wait_prompt("element e4: draft")
    terminal.keys("C-c")
    terminal.wait_for("REVIEW-EXIT=0")
    terminal.start(command)
    terminal.wait_prompt("element e4: draft")
    terminal.keys("a")
    screen = terminal.wait_for("REVIEW-EXIT=0")
    assert "4 accepted, 1 rejected" in screen
    terminal.start(command)
    assert "nothing left to review" in terminal.wait_for("REVIEW-EXIT=0")


def test_add_an_element_in_the_terminal(terminal, tmp_path):
    path = make_dataset(tmp_path)
    terminal.start(f"{shlex.quote(sys.executable)} -m pytest_grounding review {shlex.quote(str(path))} --preview file")
    terminal.wait_prompt("element e0: draft")
    terminal.keys("n")
    terminal.wait_for("box [95, 45, 105, 55] px (10x10), moving: left")  # a small box mid-screen
    terminal.keys("Tab", "Tab", "Tab", "Tab", "Right", "Right")  # the whole box, 2 px right
    terminal.wait_for("box [97, 45, 107, 55] px")
    terminal.keys("Enter")
    terminal.wait_for("instruction of the new element:")
    terminal.text("Close the dialog")
    terminal.keys("Enter")
    doc = wait_file(path, lambda e, d: "added5" in e, "the added element")
    added = doc["samples"][0]["elements"][-1]
    assert added["instruction"] == "Close the dialog" and added["status"] == "accepted"
    assert added["bbox"] == [0.485, 0.45, 0.535, 0.55]
    assert doc["samples"][0]["elements"][0]["status"] == "draft"  # still on e0
    terminal.keys("q")
    terminal.wait_for("REVIEW-EXIT=0")


@needs_shared
def test_annotate_review_run_on_real_screens(terminal, tmp_path, project):
    """The README's flow on three screens of ../shared/data/screenagent-dev: OCR drafts, a review in
    the terminal (accept, fix a box, reject), then the suite on the result."""
    for module in ("rapidocr", "onnxruntime", "rapidfuzz"):
        pytest.importorskip(module)
    shots = tmp_path / "shots"
    shots.mkdir()
    for image in sorted((SHARED_DATA / "screenagent-dev" / "data" / "test").glob("*.jpg"))[:3]:
        shutil.copy(image, shots)
    out = tmp_path / "myapp" / "annotations.json"
    annotate = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_grounding",
            "annotate",
            str(shots),
            "--detector",
            "ocr:semantic=false",
            "--out",
            str(out),
        ],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert annotate.returncode == 0, annotate.stdout + annotate.stderr
    doc = json.loads(out.read_text())
    drafts = [e for s in doc["samples"] for e in s["elements"]]
    assert len(doc["samples"]) == 3 and len(drafts) > 30 and {e["status"] for e in drafts} == {"draft"}
    assert sum(e["text"] == "File" for e in drafts) >= 1  # menu items are read as their own elements

    terminal.start(f"{shlex.quote(sys.executable)} -m pytest_grounding review {shlex.quote(str(out))} --preview file")
    terminal.wait_prompt("element e0: draft")
    mark = terminal.mark()
    terminal.keys("r")  # the window title: not a target
    terminal.wait_prompt("element e1: draft", mark)
    mark = terminal.mark()
    terminal.keys("a")
    terminal.wait_prompt("element e2: draft", mark)
    terminal.keys("e", "S-Left")  # one edge 10 px wider
    terminal.wait_for("moving: left, step 1 px", mark)
    terminal.keys("Enter")
    terminal.wait_prompt("saved annotations.json: edit box", mark)
    mark = terminal.mark()
    terminal.keys("a")
    terminal.wait_prompt("element e3: draft", mark)
    terminal.keys("q")
    terminal.wait_for("REVIEW-EXIT=0")
    reviewed = json.loads(out.read_text())
    first = reviewed["samples"][0]["elements"]
    assert [e["status"] for e in first[:4]] == ["rejected", "accepted", "accepted", "draft"]
    assert first[2]["bbox"][0] == pytest.approx(doc["samples"][0]["elements"][2]["bbox"][0] - 10 / 1024, abs=1e-6)

    assert validate_path(str(out), out=io.StringIO()) == 0
    # In a process of its own: the OCR engine and its caches stay out of this worker's other tests.
    result = project.runpytest_subprocess(f"--dataset={out}", "--detector=ocr:semantic=false", "--grounding-limit=40")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("missed", 0) == 40, result.stdout.str()[-2000:]
    assert outcomes.get("passed", 0) > 20  # OCR finds most of its own texts again
