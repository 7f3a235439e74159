"""What every archetype module uses: the `Archetype` record, names drawn from a pool, the
vocabulary that more than one archetype shows, and an open modal dialog."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..draw.canvas import Rect, text_width
from ..draw.widgets import UI


@dataclass(frozen=True)
class Archetype:
    name: str
    category: str
    apps: tuple[str, ...]
    app_icon: str
    menus: tuple[str, ...]
    dark_bias: float  # probability of a dark theme
    documents: tuple[str, ...]  # what the window title names (file, project, page)
    compose: Callable[[UI, Rect, str, str], None]  # draws the window body: (ui, body, app, document)


def rng_names(rng: random.Random, pool: Sequence[str], k: int) -> list[str]:
    return rng.sample(list(pool), min(k, len(pool)))


# Files of a Python project: the IDE's explorer and tabs, the terminal's `ls -la`.
SOURCE_FILES = (
    "main.py",
    "config.py",
    "loader.py",
    "metrics.py",
    "plugin.py",
    "cli.py",
    "models.py",
    "utils.py",
    "schema.py",
    "report.py",
    "server.py",
    "cache.py",
    "parser.py",
    "settings.py",
    "conftest.py",
    "test_loader.py",
    "test_metrics.py",
    "README.md",
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "Dockerfile",
    "Makefile",
    ".gitignore",
    "setup.cfg",
    "index.rst",
)


# ---- modal dialog --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DialogSpec:
    title: str
    fields: tuple[tuple[str, str], ...]
    choice: tuple[str, str]
    options: tuple[str, ...]
    radio: tuple[str, tuple[str, ...]]
    actions: tuple[str, str]  # primary action and its near-namesake


def quick_dialog(ui: UI, body: Rect, spec: DialogSpec) -> None:
    """An open modal dialog, placed off-centre so its controls do not sit on the screen centre."""
    rng, px = ui.rng, ui.px
    w, h = px(rng.choice((400, 440, 480))), px(300)
    x = body.x1 + int((body.w - w) * rng.choice((0.15, 0.25, 0.7, 0.8)))
    y = body.y1 + int((body.h - h) * rng.choice((0.2, 0.3, 0.6)))
    inner = ui.dialog_frame(Rect(x, y, x + w, y + h), spec.title)
    ctx = f"{spec.title} dialog"
    row = px(30)
    cy = inner.y1 + px(10)
    label_w = px(130)
    for name, value in spec.fields:
        ui.label(inner.x1, cy, name + ":", None, ui.font, ui.t.text_dim)
        ui.field(Rect(inner.x1 + label_w, cy - px(11), inner.x2, cy + px(11)), name, value)
        cy += row
    ui.label(inner.x1, cy, spec.choice[0] + ":", None, ui.font, ui.t.text_dim)
    ui.dropdown(Rect(inner.x1 + label_w, cy - px(11), inner.x1 + label_w + px(170), cy + px(11)), *spec.choice)
    cy += row + px(4)
    for name in spec.options:
        ui.checkbox(inner.x1, cy, name, rng.random() < 0.5)
        cy += px(24)
    cy += px(4)
    group, choices = spec.radio
    x = inner.x1 + ui.label(inner.x1, cy, group + ":", None, ui.font, ui.t.text_dim) + px(12)
    for option in choices:
        x += ui.radio(x, cy, group, option, option == choices[1]) + px(16)
    bw, bh = px(84), px(26)
    by = inner.y2 - bh
    ui.button(Rect(inner.x2 - bw, by, inner.x2, by + bh), "Cancel", None, ctx=ctx)
    bx = inner.x2 - bw - px(8)
    for text in spec.actions:
        wide = max(bw, text_width(ui.font, text) + px(20))
        ui.button(Rect(bx - wide, by, bx, by + bh), text, None, primary=text == spec.actions[0], ctx=ctx)
        bx -= wide + px(8)
