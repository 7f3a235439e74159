"""`python -m pytest_grounding review FILE`: the terminal UI, with prompt_toolkit.

prompt_toolkit rather than textual or rich: it reads single keys (arrows, Shift+arrows, Tab, Esc)
portably, edits a line of text with the usual keys, and runs inline below the scrolling output, so a
kitty or sixel image printed above the key prompt stays on screen. Every decision is saved at once
(document.save: atomic), so Ctrl-C or a killed terminal loses at most the key being pressed.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from ...core.safetext import terminal_line
from ...store.reports import write_atomic
from . import preview
from .boxedit import BoxEdit, clamp_box, default_box
from .document import CurationError, counts, load, save, status_of
from .review import Review, instruction_of

DECISION_KEYS = {
    "a": "accept",
    "r": "reject",
    "e": "edit box",
    "i": "edit instruction",
    "n": "add element",
    "s": "skip",
    "q": "quit",
}
HELP = "  ".join(f"[{key}] {what}" for key, what in DECISION_KEYS.items())
BOX_HELP = "Tab: next edge  arrows: move  Shift+arrows: x10  +/-: step  Enter: keep  Esc: cancel"
PREVIEW_NAME = ".review-preview.png"
NOT_A_TERMINAL = "run it in a terminal (nothing was decided; `validate` checks a file without one)"


def run_review(path: Path, mode: str = "auto", out: TextIO | None = None) -> int:
    """0 when the review ended (everything decided, or quit); 2 when the file cannot be reviewed."""
    out = out or sys.stdout
    try:
        document = load(path)
    except CurationError as exc:
        print(terminal_line(f"error: {exc}"), file=out)
        return 2
    if fill_sizes(document, path.parent, out):
        save(path, document)
    review = Review.start(document)
    if review.done:
        print(terminal_line(f"{path}: nothing left to review ({summary(document)})"), file=out)
        return 0
    if not sys.stdin.isatty():  # the keys are read from a terminal; without one, one line, not a traceback
        print(f"error: review reads keys from a terminal; standard input is not one: {NOT_A_TERMINAL}", file=sys.stderr)
        return 2
    attributes = preview.query_device_attributes() if mode == "auto" else None
    mode = preview.choose_mode(mode, os.environ, attributes)
    screens: dict[str, Any] = {}
    while not review.done:
        show(review, path, mode, screens, out)
        key = ask_key(f"{HELP}\n> ", set(DECISION_KEYS))
        if key == "q":
            break
        if key == "a":
            review.accept()
        elif key == "r":
            review.reject()
        elif key == "s":
            review.skip()
        elif key == "e":
            box = edit_box(review, out, on_change=live_preview(review, path, mode, screens))
            if box is None:
                continue
            review.set_box(box)
        elif key == "i":
            text = ask_text("instruction: ", instruction_of(review.element))
            if not text:
                continue
            review.set_instruction(text)
        elif key == "n" and not add_element(review, out, live_preview(review, path, mode, screens)):
            continue
        save(path, document)
        print(terminal_line(f"saved {path.name}: {DECISION_KEYS[key]}"), file=out)
    save(path, document)
    left = review.drafts_left()
    print(
        terminal_line(f"{path}: {summary(document)}" + (f"; {left} drafts left: run review again" if left else "")),
        file=out,
    )
    return 0


def summary(document: dict[str, Any]) -> str:
    return ", ".join(f"{count} {status}" for status, count in counts(document).items())


def fill_sizes(document: dict[str, Any], folder: Path, out: TextIO) -> bool:
    """Screens without width/height get them from their image header (boxes are fractions of it)."""
    from ...datasets.harness import header_size

    changed = False
    for sample in document["samples"]:
        if sample.get("width") and sample.get("height"):
            continue
        image, refused = screen_file(folder, sample["image"])
        if refused is not None:
            print(f"note: {terminal_line(refused)}: not read; its boxes cannot be edited", file=out)
            continue
        size = header_size(image)
        if size is None:
            name = terminal_line(sample["image"])
            print(terminal_line(f"note: {name}: cannot read the image; its boxes cannot be edited"), file=out)
            continue
        sample["width"], sample["height"] = size
        changed = True
    return changed


def screen_file(folder: Path, name: str) -> tuple[Path, str | None]:
    """The screen's file, and why it must not be read: an image is read only inside the folder
    under review (an absolute path, `..` or a symlink leading out of it is refused, as the
    loaders refuse it), so an annotations file cannot pull another file into the preview or
    into its own width and height."""
    from ...datasets._common import DatasetRoot
    from ...datasets.harness import image_path

    image = image_path(folder, name)
    return image, DatasetRoot(folder).problem(image, name)


def screen_of(review: Review, folder: Path, screens: dict[str, Any]) -> Any:
    from PIL import Image

    name = review.sample["image"]
    if name not in screens:
        screens.clear()  # one screen at a time in memory; elements come screen by screen
        file, refused = screen_file(folder, name)
        if refused is not None:
            screens[name] = f"not read: {refused}"
            return screens[name]
        try:
            with Image.open(file) as image:
                screens[name] = image.convert("RGB")
        except (OSError, ValueError) as exc:
            screens[name] = f"cannot read {name}: {type(exc).__name__}: {exc}"
    return screens[name]


def show(review: Review, path: Path, mode: str, screens: dict[str, Any], out: TextIO, box: Any = None) -> None:
    element, sample = review.element, review.sample
    number, total = review.position()
    box = box if box is not None else review.pixel_box()
    size = review.size()
    dims = f" {size[0]}x{size[1]}" if size else ""
    print("", file=out)
    print(
        terminal_line(
            f"[{number}/{total}] {sample['image']}{dims}, element {element.get('id')}: {status_of(element)}, "
            f"type {element.get('type') or 'other'}"
        ),
        file=out,
    )
    print(terminal_line(f"instruction: {instruction_of(element)!r}"), file=out)
    print("box: " + ("none" if box is None else "[" + ", ".join(f"{v:.0f}" for v in box) + "] px"), file=out)
    screen = screen_of(review, path.parent, screens)
    if isinstance(screen, str):
        print(f"image: {terminal_line(screen)}", file=out)
        return
    image = preview.render(screen, box, instruction_of(element))
    if mode == preview.KITTY:
        out.write(preview.kitty_sequence(preview.png_bytes(preview.fit(image))) + "\n")
    elif mode == preview.SIXEL:
        out.write(preview.sixel_sequence(preview.fit(image)) + "\n")
    else:
        print(terminal_line(f"preview: {write_preview(image, path)}"), file=out)
    out.flush()


def write_preview(image: Any, path: Path) -> Path:
    """The preview PNG beside the annotations, replaced whole (a viewer never reads half a file)."""
    target = path.parent / PREVIEW_NAME
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    write_atomic(target, buffer.getvalue())
    return target


def live_preview(review: Review, path: Path, mode: str, screens: dict[str, Any]) -> Any:
    """In file mode, a callback that redraws the preview PNG as the box moves (a viewer that reloads
    on change follows the edit); inline images are redrawn when the edit ends."""
    if mode != preview.FILE:
        return None
    screen = screen_of(review, path.parent, screens)
    if isinstance(screen, str):
        return None
    title = instruction_of(review.element)
    return lambda box: write_preview(preview.render(screen, box, title), path)


def edit_box(
    review: Review, out: TextIO, start: Any = None, on_change: Any = None
) -> tuple[float, float, float, float] | None:
    size = review.size()
    if size is None:
        print("this screen's size is unknown: its box cannot be edited", file=out)
        return None
    box = start or review.pixel_box() or default_box(*size)
    edit = BoxEdit(clamp_box(box, *size), *size)
    return run_box_editor(edit, on_change)


def add_element(review: Review, out: TextIO, on_change: Any = None) -> bool:
    size = review.size()
    if size is None:
        print("this screen's size is unknown: no element can be added", file=out)
        return False
    print("new element: place its box", file=out)
    box = run_box_editor(BoxEdit(default_box(*size), *size), on_change)
    if box is None:
        return False
    text = ask_text("instruction of the new element: ", "")
    if not text:
        print("no instruction: nothing added", file=out)
        return False
    review.add_element(box, text)
    return True


# --- prompt_toolkit ---------------------------------------------------------------------------------


def ask_key(message: str, keys: set[str]) -> str:
    """One key of `keys`; Ctrl-C and Ctrl-D mean quit."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    bindings = KeyBindings()
    for key in keys:
        bindings.add(key)(lambda event, key=key: event.app.exit(result=key))
    bindings.add("c-c")(lambda event: event.app.exit(result="q"))
    bindings.add("c-d")(lambda event: event.app.exit(result="q"))
    app: Application[str] = Application(
        layout=Layout(Window(FormattedTextControl(message), dont_extend_height=True)),
        key_bindings=bindings,
        full_screen=False,
    )
    return app.run()


def run_box_editor(edit: BoxEdit, on_change: Any = None) -> tuple[float, float, float, float] | None:
    """Move the box's edges with keys until Enter (the box) or Esc / Ctrl-C (None); `on_change(box)`
    after every key that moved it."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    state = {"edit": edit}
    bindings = KeyBindings()
    names = ["tab", "s-tab", "left", "right", "up", "down", "s-left", "s-right", "s-up", "s-down", "+", "=", "-", "_"]
    for name in names:

        @bindings.add(name)
        def _(event: Any, name: str = name) -> None:
            before = state["edit"].box
            state["edit"] = state["edit"].key(name)
            if on_change is not None and state["edit"].box != before:
                on_change(state["edit"].box)

    bindings.add("enter")(lambda event: event.app.exit(result=state["edit"].box))
    bindings.add("escape", eager=True)(lambda event: event.app.exit(result=None))
    bindings.add("c-c")(lambda event: event.app.exit(result=None))
    app: Application[Any] = Application(
        layout=Layout(
            Window(
                FormattedTextControl(lambda: f"{state['edit'].describe()}\n{BOX_HELP}"),
                dont_extend_height=True,
            )
        ),
        key_bindings=bindings,
        full_screen=False,
    )
    return app.run()


def ask_text(message: str, default: str) -> str:
    """A line of text (Enter keeps it); Ctrl-C, Ctrl-D or an empty line: '' (no change)."""
    from prompt_toolkit import prompt

    try:
        return " ".join(prompt(message, default=default).split())
    except (KeyboardInterrupt, EOFError):
        return ""
