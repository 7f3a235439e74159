"""`python -m pytest_grounding record --out DIR`: record real clicks on an X11 desktop as a dataset.

On each left-button press a screenshot of the whole X screen is taken (mss) at once, before the
application redraws much; the click point, and the box of the X window under it, come from the X
server (python-xlib); the mouse hook is pynput's (the X RECORD extension). A label is then asked on
the terminal for each click in turn (an empty label drops the click). DIR gets `images/` and an
`annotations.json` in the harness schema, saved after every click.

The box: toolkits that give each widget its own X window (Tk, Motif, Xaw) report the widget's window,
which is the clicked element's box (`"box_source": "x11-window"`, status accepted). Toolkits that draw
their widgets inside one window (GTK 3+, Qt, browsers) only report the top-level window: then the box
is a square of `--box-size` px around the click (`"around-click"`, status draft, to be fixed in review).
"""

from __future__ import annotations

import queue
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ...core.safetext import terminal_line
from .document import ACCEPTED, DRAFT, load, new_document, save
from .review import DIGITS, to_normalized

WINDOW, AROUND = "x11-window", "around-click"
DEFAULT_BOX_SIZE = 40


@dataclass(frozen=True)
class Click:
    """One recorded click: the screenshot taken at it, the point and the box (root-window pixels)."""

    image: str  # path relative to the dataset folder
    width: int
    height: int
    point: tuple[float, float]
    box: tuple[float, float, float, float]
    box_source: str  # WINDOW | AROUND


def around(point: tuple[float, float], size: float, width: int, height: int) -> tuple[float, float, float, float]:
    """A square of `size` px centred on the point, shifted to fit the screen (the point stays inside)."""
    half = size / 2
    x1 = min(max(0.0, point[0] - half), max(0.0, width - size))
    y1 = min(max(0.0, point[1] - half), max(0.0, height - size))
    return (x1, y1, min(float(width), x1 + size), min(float(height), y1 + size))


def widget_box(chain: list[tuple[tuple[float, float, float, float], bool]], width: int, height: int) -> Any:
    """The clicked widget's box from the X windows under the pointer, outermost first, each as
    (box, is a top-level client: has WM_CLASS): the innermost window below a top-level that is
    neither as large as that top-level (Tk's content frame fills its wrapper) nor covers more than a
    quarter of the screen; else None (a toolkit that draws its widgets inside one window)."""
    from ...datasets.validate import OVERSIZED_SHARE

    top: tuple[float, float, float, float] | None = None
    found = None
    for box, top_level in chain:
        if top_level:
            top, found = box, None
        elif top is not None and box != top:
            found = box
    if found is None:
        return None
    x1, y1, x2, y2 = found
    if (x2 - x1) * (y2 - y1) > OVERSIZED_SHARE * width * height:
        return None
    return found


def add_click(document: dict[str, Any], click: Click, label: str) -> dict[str, Any]:
    """The click as a sample of the harness schema (pure: mutates and returns `document`)."""
    width, height = click.width, click.height
    element = {
        "id": "click",
        "bbox": to_normalized(click.box, width, height),
        "click_point": [round(click.point[0] / width, DIGITS), round(click.point[1] / height, DIGITS)],
        "instruction": " ".join(label.split()),
        "text": " ".join(label.split()),
        "type": "other",
        "status": ACCEPTED if click.box_source == WINDOW else DRAFT,
        "box_source": click.box_source,
        "source": "record",
    }
    document["samples"].append(
        {"id": Path(click.image).stem, "image": click.image, "width": width, "height": height, "elements": [element]}
    )
    return document


# --- X11 -----------------------------------------------------------------------------------------


class X11:
    """The X server's side: the screenshot (mss) and the windows under the pointer (python-xlib)."""

    def __init__(self) -> None:
        from Xlib import display

        self.display = display.Display()
        self.root = self.display.screen().root
        self.local = threading.local()

    def grab(self) -> Any:
        """The whole screen now, as a PIL image (one mss handle per thread: mss is not thread-safe)."""
        import mss
        from PIL import Image

        grabber = getattr(self.local, "mss", None)
        if grabber is None:
            grabber = self.local.mss = mss.mss()
        shot = grabber.grab(grabber.monitors[0])
        return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")

    def window_chain(self) -> list[tuple[tuple[float, float, float, float], bool]]:
        """The windows under the pointer, outermost first: (root-relative box, has WM_CLASS)."""
        chain = []
        window = self.root
        for _ in range(64):  # a deeper nesting is a loop, not a widget tree
            child = window.query_pointer().child
            if not child:
                break
            window = child
            geometry = window.get_geometry()
            origin = window.translate_coords(self.root, 0, 0)
            x, y = -origin.x, -origin.y
            top_level = window.get_wm_class() is not None
            chain.append(((float(x), float(y), float(x + geometry.width), float(y + geometry.height)), top_level))
        return chain


def count_from(folder: Path) -> Any:
    """Screenshot numbers after the highest already in `folder`: a second session never overwrites."""
    import itertools

    taken = [int(p.stem[6:]) for p in folder.glob("click-*.png") if p.stem[6:].isdigit()]
    return itertools.count(max(taken, default=0) + 1)


def run_record(
    out_dir: Path,
    count: int | None = None,
    box_size: float = DEFAULT_BOX_SIZE,
    out: TextIO | None = None,
    labels: TextIO | None = None,
) -> int:
    """Record until `count` labelled clicks, end of input on `labels` (stdin), or Ctrl-C. 0 recorded
    (or nothing clicked); 2 no X display or the libraries missing."""
    import os

    out, labels = out or sys.stdout, labels or sys.stdin
    if not os.environ.get("DISPLAY"):
        print("error: record needs an X11 display ($DISPLAY is not set); Wayland sessions need XWayland", file=out)
        return 2
    try:
        x11 = X11()
        from pynput import mouse
    except Exception as exc:  # ImportError, or Xlib's and pynput's own errors for an unusable display
        print(
            terminal_line(
                f"error: cannot record: {type(exc).__name__}: {exc} (pip install 'pytest-grounding[curation]')"
            ),
            file=out,
        )
        return 2
    path = out_dir / "annotations.json"
    document = load(path) if path.exists() else new_document(out_dir.name)
    (out_dir / "images").mkdir(parents=True, exist_ok=True)
    clicks: queue.Queue[Click] = queue.Queue()
    numbers = count_from(out_dir / "images")

    def on_click(x: float, y: float, button: Any, pressed: bool) -> None:
        if not pressed or button != mouse.Button.left:
            return
        screen = x11.grab()
        chain = x11.window_chain()
        name = f"images/click-{next(numbers):04d}.png"
        screen.save(out_dir / name)
        point = (float(x), float(y))
        box = widget_box(chain, *screen.size)
        source = WINDOW if box is not None else AROUND
        if box is None:
            box = around(point, box_size, *screen.size)
        clicks.put(Click(name, screen.width, screen.height, point, box, source))

    listener = mouse.Listener(on_click=on_click)
    listener.start()
    listener.wait()
    print(
        terminal_line(f"recording clicks on {os.environ['DISPLAY']} into {out_dir} (Ctrl-C or end of input stops)"),
        file=out,
    )
    out.flush()
    recorded = 0
    try:
        while count is None or recorded < count:
            click = clicks.get()
            print(f"click at ({click.point[0]:.0f}, {click.point[1]:.0f}), box {click.box_source}", file=out)
            print("label (Enter: drop this click): ", end="", file=out)
            out.flush()
            line = labels.readline()
            if not line:
                (out_dir / click.image).unlink(missing_ok=True)
                break
            if not line.strip():
                (out_dir / click.image).unlink(missing_ok=True)
                print("dropped", file=out)
                continue
            save(path, add_click(document, click, line.strip()))
            recorded += 1
            print(terminal_line(f"saved {click.image} as {line.strip()!r}"), file=out)
            out.flush()
    except KeyboardInterrupt:
        pass
    finally:
        listener.stop()
    save(path, document)
    print(terminal_line(f"wrote {path}: {len(document['samples'])} clicks"), file=out)
    return 0
