"""System settings: a sidebar of pages with search, and the selected page's settings in rounded
groups (toggles, choices, sliders, buttons, checkboxes), one or two columns, Apply and Reset."""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..draw.canvas import Rect, text_width
from ..draw.typefaces import font
from ..draw.widgets import UI
from ._layout import Archetype

SETTINGS_PAGES = (
    ("wifi", "Wi-Fi"),
    ("bluetooth", "Bluetooth"),
    ("globe", "Network"),
    ("bell", "Notifications"),
    ("speaker", "Sound"),
    ("display", "Displays"),
    ("battery", "Battery"),
    ("keyboard", "Keyboard"),
    ("lock", "Privacy & Security"),
    ("user", "Users & Groups"),
    ("clock", "Date & Time"),
    ("settings", "General"),
    ("image", "Wallpaper"),
    ("power", "Power"),
)

Setting = tuple[str, ...]  # kind, name, then the value of a choice or the text of a button


def sidebar(ui: UI, side: Rect) -> str:
    """Search and the list of pages; returns the selected page."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(side, fill=t.panel)
    c.vline(side.x2 - 1, side.y1, side.y2, t.border)
    ui.search_field(
        Rect(side.x1 + px(12), side.y1 + px(12), side.x2 - px(12), side.y1 + px(40)),
        "Search settings",
        "settings search",
    )
    pages = list(SETTINGS_PAGES)
    selected = rng.randint(0, len(pages) - 1)
    ui.list_rows(side.below(px(52)), pages, "settings sidebar", selected=selected, row=32)
    return pages[selected][1]


def setting_groups(rng: random.Random) -> list[list[Setting]]:
    groups: list[list[Setting]] = [
        [
            ("toggle", "Automatic updates"),
            ("toggle", "Download over metered connections"),
            ("choice", "Update channel", "Stable"),
            ("button", "Software updates", "Check for Updates"),
        ],
        [
            ("slider", "Brightness"),
            ("toggle", "Night Light"),
            ("choice", "Resolution", rng.choice(("2560 x 1440", "1920 x 1080"))),
            ("choice", "Refresh rate", rng.choice(("60 Hz", "144 Hz"))),
            ("choice", "Scale", rng.choice(("100%", "125%", "150%"))),
        ],
        [
            ("slider", "Output volume"),
            ("choice", "Output device", rng.choice(("Speakers (Realtek)", "USB Headset"))),
            ("toggle", "Play sound on startup"),
            ("check", "Show volume in menu bar"),
        ],
        [
            ("toggle", "Do Not Disturb"),
            ("choice", "Show previews", "When unlocked"),
            ("check", "Allow notifications on lock screen"),
            ("button", "Per-app notifications", "Manage Apps..."),
        ],
        [
            ("choice", "Time zone", rng.choice(("Europe/Berlin", "America/New_York", "Asia/Tokyo"))),
            ("toggle", "Set time automatically"),
            ("check", "Show seconds"),
            ("button", "Time server", "Sync Now"),
        ],
    ]
    rng.shuffle(groups)
    return groups


def setting_row(ui: UI, g: Rect, cy: int, item: Setting) -> None:
    """One setting on the row centred at `cy` of the group `g`: its name left, its control right."""
    rng, px = ui.rng, ui.px
    kind, name = item[0], item[1]
    if kind != "check":
        ui.label(g.x1 + px(16), cy, name, None)
    if kind == "toggle":
        ui.toggle(g.x2 - px(56), cy, name, rng.random() < 0.5)
    elif kind == "choice":
        ui.dropdown(Rect(g.x2 - px(236), cy - px(13), g.x2 - px(16), cy + px(13)), name, item[2])
    elif kind == "slider":
        ui.slider(Rect(g.x2 - px(300), cy - px(8), g.x2 - px(20), cy + px(8)), name, rng.uniform(0.1, 0.95))
    elif kind == "button":
        w = text_width(ui.font, item[2]) + px(24)
        ui.button(Rect(g.x2 - px(16) - w, cy - px(13), g.x2 - px(16), cy + px(13)), item[2])
    else:
        ui.checkbox(g.x1 + px(16), cy, name, rng.random() < 0.5)


def group_cards(ui: UI, inner: Rect, width: int, groups: Sequence[Sequence[Setting]]) -> None:
    """The groups as cards of `width`, each in the shorter column, as many as fit."""
    t, c, px = ui.t, ui.c, ui.px
    y = inner.y1 + px(46)
    row_h = px(44)
    gap = px(40)
    columns = 2 if inner.w >= 2 * width + gap else 1  # wide screens lay the groups out in two columns
    tops = [y] * columns
    for group in groups:
        gh = row_h * len(group)
        column = min(range(columns), key=lambda k: tops[k])
        y = tops[column]
        if y + gh > inner.y2 - px(50):
            break
        gx = inner.x1 + column * (width + gap)
        g = Rect(gx, y, gx + width, y + gh)
        c.rect(g, fill=t.panel, outline=t.border, radius=px(8))
        for i, item in enumerate(group):
            cy = y + i * row_h + row_h // 2
            if i:
                c.hline(g.x1 + px(14), g.x2 - px(14), y + i * row_h, t.border)
            setting_row(ui, g, cy, item)
        tops[column] = y + gh + px(18)


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    side_w = px(rng.choice((240, 260, 280)))
    side, main = body.left(side_w), body.after(side_w)
    page = sidebar(ui, side)
    c.rect(main, fill=t.content)
    inner = main.inset(px(32), px(20))
    ui.label(inner.x1, inner.y1 + px(14), page, None, font("bold", px(20)))
    width = min(inner.w, px(760))
    group_cards(ui, inner, width, setting_groups(rng))
    bw = px(120)
    ui.button(Rect(inner.x1 + width - bw, inner.y2 - px(30), inner.x1 + width, inner.y2), "Apply", None, primary=True)
    ui.button(
        Rect(inner.x1 + width - 2 * bw - px(10), inner.y2 - px(30), inner.x1 + width - bw - px(10), inner.y2),
        "Reset to Defaults",
    )


ARCHETYPE = Archetype(
    "settings",
    "os",
    ("System Settings", "Control Center", "Preferences"),
    "settings",
    ("File", "Edit", "View", "Window", "Help"),
    0.4,
    ("Settings", "System Preferences"),
    compose,
)
