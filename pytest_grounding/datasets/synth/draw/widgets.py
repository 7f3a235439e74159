"""The widgets of desktop software, drawn on a Canvas: window frames, menu bars, toolbars, tabs,
trees, property grids, fields, checkboxes, sliders, swatches, scrollbars, dialogs, status bars.

Each clickable thing is drawn inside `canvas.element(...)` with the phrases that ask for it, so its
box is measured from its pixels. Layout is in logical pixels times the screen's UI scale.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .canvas import Canvas, ElementSpec, Phrase, Rect, fit, text_width
from .icons import ICON_INFO
from .phrases import concept_phrases, icon_spec, other_spec, text_spec
from .themes import RGB, SEMANTIC_COLORS, Theme, mix, text_on
from .typefaces import font


@dataclass(frozen=True)
class Icon:
    kind: str
    concept: str | None = None
    pressed: bool = False


@dataclass(frozen=True)
class Label:
    text: str
    concept: str | None = None
    icon: str | None = None


@dataclass(frozen=True)
class Field:
    name: str
    value: str
    width: int


SEPARATOR = "|"
ToolItem = Icon | Label | Field | str


class UI:
    """Widget painter for one screen: canvas + theme + platform + UI scale + the screen's rng."""

    def __init__(self, canvas: Canvas, theme: Theme, platform: str, scale: float, rng: random.Random) -> None:
        self.c = canvas
        self.t = theme
        self.platform = platform
        self.scale = scale
        self.rng = rng
        family = "cond" if platform == "windows" else "sans"
        self.font = font(family, self.px(12))
        self.small = font(family, self.px(11))
        self.tiny = font("cond", self.px(10))
        self.bold = font("bold", self.px(12))
        self.mono = font("mono", self.px(12))
        self.colored_icons = rng.random() < 0.6

    def px(self, n: float) -> int:
        """Logical to screen pixels; anything non-zero stays at least one pixel."""
        return max(1, int(round(n * self.scale))) if n else 0

    def icon_color(self, kind: str) -> RGB:
        tint = ICON_INFO[kind].tint
        if tint and self.colored_icons:
            return SEMANTIC_COLORS[tint]
        return self.t.icon

    # ---- text ------------------------------------------------------------------------------------
    def label_rect(self, x: int, cy: int, s: str, f) -> Rect:
        """The declared rect of a string drawn with anchor "lm" at (x, cy): its ink box plus a pixel."""
        left, top, right, bottom = f.getbbox(s, anchor="lm")
        return Rect(x + int(left) - 1, cy + int(top) - 1, x + int(right) + 2, cy + int(bottom) + 2)

    def label(
        self,
        x: int,
        cy: int,
        s: str,
        spec: ElementSpec | None = None,
        f=None,
        color: RGB | None = None,
        ctx: str | None = None,
    ) -> int:
        """Draw a string (an element when `spec` is given); returns its advance width."""
        f = f or self.font
        color = color or self.t.text
        if spec is None:
            self.c.text(x, cy, s, f, color)
        else:
            with self.c.element(self.label_rect(x, cy, s, f), spec, ctx):
                self.c.text(x, cy, s, f, color)
        return text_width(f, s)

    # ---- window chrome ---------------------------------------------------------------------------
    def title_bar(self, r: Rect, title: str, app_icon: str) -> None:
        t, c = self.t, self.c
        c.rect(r, fill=t.titlebar)
        cy = r.cy
        if self.platform == "macos":
            for i, color in enumerate(((255, 95, 87), (254, 188, 46), (40, 200, 64))):
                d = self.px(12)
                x = r.x1 + self.px(9) + i * self.px(20)
                concept = ("close_window", "minimize", "maximize")[i]
                colour = ("red", "yellow", "green")[i]
                spec = ElementSpec(
                    "icon",
                    "window button",
                    (
                        Phrase(
                            f"Click the {colour} button at the top left of the window.",
                            "literal",
                            ("window button", concept, None),
                        ),
                        *concept_phrases(concept, None),
                    ),
                    (("concept", concept, None),),
                )
                with c.element(Rect(x, cy - d // 2, x + d, cy - d // 2 + d), spec):
                    c.ellipse(Rect(x, cy - d // 2, x + d, cy - d // 2 + d), fill=color)
            title = fit(self.bold, title, r.w // 2)
            self.label(r.cx - text_width(self.bold, title) // 2, cy, title, None, self.bold, t.title_text)
            return
        if self.platform == "windows":
            s = self.px(16)
            c.icon(app_icon, r.x1 + self.px(8), cy - s // 2, s, self.icon_color(app_icon))
            title = fit(self.font, title, r.w // 2)
            self.label(r.x1 + self.px(32), cy, title, None, self.font, t.title_text)
            bw = self.px(46)
            for i, (kind, concept) in enumerate(
                (("remove", "minimize"), ("rect_tool", "maximize"), ("close", "close_window"))
            ):
                x = r.x2 - (3 - i) * bw
                s = self.px(10)
                with c.element(
                    Rect(x + bw // 2 - s // 2, cy - s // 2, x + bw // 2 - s // 2 + s, cy - s // 2 + s),
                    icon_spec(kind, concept, role="window button"),
                ):
                    c.icon(kind, x + bw // 2 - s // 2, cy - s // 2, s, t.title_text)
            return
        # linux (GNOME-like header bar): centred bold title, round close button at the right
        title = fit(self.bold, title, r.w // 2)
        self.label(r.cx - text_width(self.bold, title) // 2, cy, title, None, self.bold, t.title_text)
        d = self.px(22)
        for i, (kind, concept) in enumerate(
            (("remove", "minimize"), ("rect_tool", "maximize"), ("close", "close_window"))
        ):
            x = r.x2 - self.px(10) - (3 - i) * (d + self.px(8)) + self.px(8)
            box = Rect(x, cy - d // 2, x + d, cy - d // 2 + d)
            with c.element(box, icon_spec(kind, concept, role="window button")):
                c.ellipse(box, fill=mix(t.titlebar, t.text, 0.12))
                s = self.px(10)
                c.icon(kind, box.cx - s // 2, box.cy - s // 2, s, t.title_text)

    def menu_bar(
        self, r: Rect, items: Sequence[str], bold_first: bool = False, fill: RGB | None = None
    ) -> dict[str, int]:
        """Closed menus; returns where each drawn title starts, for dropping one down."""
        self.c.rect(r, fill=fill or self.t.menubar)
        x = r.x1 + self.px(8)
        positions: dict[str, int] = {}
        for i, item in enumerate(items):
            f = self.bold if (bold_first and i == 0) else self.font
            w = text_width(f, item)
            if x + w > r.x2 - self.px(8):
                break
            self.label(x, r.cy, item, text_spec(item, "menu"), f)
            positions[item] = x
            x += w + self.px(14)
        return positions

    # ---- toolbars --------------------------------------------------------------------------------
    def toolbar(
        self,
        r: Rect,
        items: Sequence[ToolItem],
        ctx: str = "toolbar",
        icon: int = 16,
        fill: RGB | None = None,
        gap: int = 6,
    ) -> int:
        """Items left to right until the strip is full; returns the x where they end."""
        t, c = self.t, self.c
        if fill is not None:
            c.rect(r, fill=fill)
        bg = fill or t.toolbar
        s = self.px(icon)
        x = r.x1 + self.px(6)
        for item in items:
            if x >= r.x2 - self.px(8):
                break
            if item == SEPARATOR:
                c.vline(x + self.px(3), r.y1 + self.px(5), r.y2 - self.px(5), t.border)
                x += self.px(8)
                continue
            if isinstance(item, Icon):
                if x + s > r.x2 - self.px(4):
                    break
                y = r.cy - s // 2
                pad = self.px(3)
                box = Rect(x - pad, y - pad, x + s + pad, y + s + pad) if item.pressed else Rect(x, y, x + s, y + s)
                with c.element(box, icon_spec(item.kind, item.concept, ctx)):
                    if item.pressed:
                        c.rect(box, fill=mix(bg, t.accent, 0.35), radius=self.px(3))
                    c.icon(item.kind, x, y, s, self.icon_color(item.kind))
                x += s + self.px(gap) + (pad if item.pressed else 0)
            elif isinstance(item, Label):
                x = self.text_button(x, r, item, ctx)
            elif isinstance(item, Field):
                w = self.px(item.width)
                if x + w > r.x2 - self.px(4):
                    break
                h = min(r.h - self.px(6), self.px(22))
                self.field(Rect(x, r.cy - h // 2, x + w, r.cy - h // 2 + h), item.name, item.value)
                x += w + self.px(8)
        return x

    def text_button(self, x: int, r: Rect, item: Label, ctx: str) -> int:
        """A flat toolbar button with a label (and maybe an icon); returns the next x."""
        t, c = self.t, self.c
        s = self.px(14)
        w = text_width(self.font, item.text) + (s + self.px(5) if item.icon else 0)
        if x + w + self.px(12) > r.x2:
            return r.x2
        h = min(r.h - self.px(6), self.px(24))
        box = Rect(x, r.cy - h // 2, x + w + self.px(12), r.cy - h // 2 + h)
        with c.element(box, text_spec(item.text, "toolbar button", ctx, item.concept), ctx):
            c.rect(box, fill=mix(t.toolbar, t.button, 0.5), outline=t.button_border, radius=self.px(3))
            tx = box.x1 + self.px(6)
            if item.icon:
                c.icon(item.icon, tx, box.cy - s // 2, s, self.icon_color(item.icon))
                tx += s + self.px(5)
            c.text(tx, box.cy, item.text, self.font, t.text)
        return box.x2 + self.px(6)

    def vertical_toolbar(
        self, r: Rect, items: Sequence[ToolItem], ctx: str, icon: int = 18, active: int = 0, columns: int = 1
    ) -> None:
        t, c = self.t, self.c
        s = self.px(icon)
        step = s + self.px(10)
        col_w = r.w // columns
        index = 0
        y = r.y1 + self.px(6)
        for item in items:
            if not isinstance(item, Icon):
                continue
            col = index % columns
            if col == 0 and index:
                y += step
            if y + step > r.y2:
                break
            x = r.x1 + col * col_w + (col_w - s) // 2
            pad = self.px(4)
            selected = index == active
            box = (
                Rect(x - pad, y - pad + self.px(5), x + s + pad, y + s + pad + self.px(5))
                if selected
                else Rect(x, y + self.px(5), x + s, y + s + self.px(5))
            )
            with c.element(box, icon_spec(item.kind, item.concept, ctx, role="tool")):
                if selected:
                    c.rect(box, fill=mix(t.panel, t.accent, 0.45), radius=self.px(3))
                c.icon(item.kind, x, y + self.px(5), s, t.icon if not selected else t.accent_text)
            index += 1

    # ---- tabs, headers ---------------------------------------------------------------------------
    def tabs(
        self,
        r: Rect,
        labels: Sequence[str],
        active: int,
        ctx: str,
        closable: bool = False,
        strip: RGB | None = None,
        active_fill: RGB | None = None,
        f=None,
    ) -> int:
        t, c = self.t, self.c
        f = f or self.font
        strip = strip or t.header
        active_fill = active_fill or t.content
        c.rect(r, fill=strip)
        x = r.x1
        for i, name in enumerate(labels):
            close = self.px(16) if closable and i == active else 0
            w = text_width(f, name) + self.px(24) + close
            if x + w > r.x2:
                break
            box = Rect(x, r.y1, x + w, r.y2)
            selected = i == active
            fill = active_fill if selected else strip
            if selected:
                with c.element(box, text_spec(name, "tab", ctx), ctx):
                    c.rect(box, fill=fill)
                    c.hline(box.x1, box.x2, box.y1, t.accent)
                    c.text(box.x1 + self.px(12), box.cy, name, f, t.text)
                    if close:
                        s = self.px(9)
                        c.icon("close", box.x2 - self.px(12) - s, box.cy - s // 2, s, t.text_dim)
            else:
                self.label(box.x1 + self.px(12), box.cy, name, text_spec(name, "tab", ctx), f, t.text_dim, ctx)
                c.vline(box.x2 - 1, box.y1 + self.px(6), box.y2 - self.px(6), t.border)
            x += w
        return x

    def panel_header(self, r: Rect, title: str, icons: Sequence[Icon], ctx: str) -> None:
        t, c = self.t, self.c
        c.rect(r, fill=t.header)
        self.label(
            r.x1 + self.px(8), r.cy, title.upper() if self.platform != "macos" else title, None, self.small, t.text_dim
        )
        s = self.px(14)
        x = r.x2 - self.px(8) - s
        for item in icons:
            with c.element(
                Rect(x, r.cy - s // 2, x + s, r.cy - s // 2 + s), icon_spec(item.kind, item.concept, ctx), ctx
            ):
                c.icon(item.kind, x, r.cy - s // 2, s, t.icon)
            x -= s + self.px(8)

    def status_bar(
        self,
        r: Rect,
        left: Sequence[str],
        right: Sequence[str],
        fill: RGB | None = None,
        color: RGB | None = None,
    ) -> None:
        t, c = self.t, self.c
        fill = fill or t.header
        color = color or text_on(fill)
        c.rect(r, fill=fill)
        x = r.x1 + self.px(10)
        for item in left:
            w = text_width(self.small, item)
            if x + w > r.cx - self.px(40):
                break
            self.label(x, r.cy, item, text_spec(item, "status item"), self.small, color)
            x += w + self.px(20)
        x = r.x2 - self.px(10)
        for item in right:
            w = text_width(self.small, item)
            if x - w < r.cx + self.px(40):
                break
            self.label(x - w, r.cy, item, text_spec(item, "status item"), self.small, color)
            x -= w + self.px(20)

    # ---- lists and trees -------------------------------------------------------------------------
    def tree(self, r: Rect, nodes: Sequence[tuple[int, str, str]], ctx: str, selected: int = -1, row: int = 22) -> None:
        """nodes: (depth, label, kind) with kind "folder", "open_folder" or an icon name for leaves."""
        t, c = self.t, self.c
        h = self.px(row)
        s = self.px(14)
        y = r.y1
        for i, (depth, name, kind) in enumerate(nodes):
            if y + h > r.y2:
                break
            x = r.x1 + self.px(8) + depth * self.px(14)
            cy = y + h // 2
            if i == selected:
                c.rect(Rect(r.x1, y, r.x2, y + h), fill=t.selection)
            if kind in ("folder", "open_folder"):
                chevron = self.px(8)
                c.polygon(_chevron(x, cy, chevron, down=kind == "open_folder"), fill=t.text_dim)
                icon = "folder"
            else:
                icon = kind
            x += self.px(12)
            name = fit(self.font, name, r.x2 - x - s - self.px(10))
            if not name:
                y += h
                continue
            w = s + self.px(6) + text_width(self.font, name)
            box = Rect(x, cy - s // 2 - 1, x + w, cy - s // 2 + s + 1)
            # The selected row is never asked for: clicking what is already selected is no task.
            with c.element(box, text_spec(name, "tree item", ctx, targetable=i != selected), ctx):
                c.icon(icon, x, cy - s // 2, s, self.icon_color(icon) if icon == "folder" else t.icon)
                c.text(x + s + self.px(6), cy, name, self.font, t.text)
            y += h

    def list_rows(
        self,
        r: Rect,
        rows: Sequence[tuple[str, str]],
        ctx: str,
        selected: int = -1,
        row: int = 26,
        role: str = "nav item",
    ) -> None:
        """Rows of (icon kind or "", label), e.g. a settings sidebar or a dashboard list."""
        t, c = self.t, self.c
        h = self.px(row)
        s = self.px(16)
        y = r.y1
        for i, (icon, name) in enumerate(rows):
            if y + h > r.y2:
                break
            cy = y + h // 2
            x = r.x1 + self.px(12)
            if i == selected:
                c.rect(
                    Rect(r.x1 + self.px(4), y + 1, r.x2 - self.px(4), y + h - 1), fill=t.selection, radius=self.px(4)
                )
            w = (s + self.px(10) if icon else 0) + text_width(self.font, name)
            box = Rect(x, cy - s // 2 - 1, x + w, cy - s // 2 + s + 1)
            with c.element(box, text_spec(name, role, ctx, targetable=i != selected), ctx):
                if icon:
                    c.icon(icon, x, cy - s // 2, s, t.icon)
                    x += s + self.px(10)
                c.text(x, cy, name, self.font, t.text)
            y += h

    # ---- form controls ---------------------------------------------------------------------------
    def field(self, r: Rect, name: str, value: str, placeholder: bool = False, f=None) -> None:
        t, c = self.t, self.c
        f = f or self.font
        spec = other_spec(
            "field",
            name,
            (f"Click in the {name} field.", f"Click the {name} input box."),
            (f"Edit the {name} value.",) if not placeholder else (f"Enter text in the {name} box.",),
        )
        with c.element(r, spec):
            c.rect(r, fill=t.field, outline=t.field_border, radius=self.px(2))
            text = fit(f, value, r.w - self.px(10))
            c.text(r.x1 + self.px(5), r.cy, text, f, t.text_dim if placeholder else t.text)

    def search_field(self, r: Rect, placeholder: str, name: str = "search") -> None:
        t, c = self.t, self.c
        s = self.px(13)
        spec = other_spec(
            "field", name, (f"Click the {name} box.", f"Click in the '{placeholder}' field."), ("Type a search term.",)
        )
        with c.element(r, spec):
            c.rect(r, fill=t.field, outline=t.field_border, radius=self.px(4))
            c.icon("search", r.x1 + self.px(6), r.cy - s // 2, s, t.text_dim)
            c.text(
                r.x1 + self.px(12) + s, r.cy, fit(self.font, placeholder, r.w - s - self.px(20)), self.font, t.text_dim
            )

    def dropdown(self, r: Rect, name: str, value: str) -> None:
        t, c = self.t, self.c
        spec = other_spec(
            "dropdown",
            name,
            (f"Open the {name} dropdown.", f"Click the {name} selector showing '{value}'."),
            (f"Change the {name} setting.",),
        )
        with c.element(r, spec):
            c.rect(r, fill=t.field, outline=t.field_border, radius=self.px(2))
            c.text(r.x1 + self.px(6), r.cy, fit(self.font, value, r.w - self.px(26)), self.font, t.text)
            c.polygon(_chevron(r.x2 - self.px(14), r.cy, self.px(8), down=True), fill=t.text_dim)

    def checkbox(self, x: int, cy: int, name: str, checked: bool, label: bool = True) -> int:
        """A check box and its label (the label is drawn, but the box is the target); returns the width."""
        t, c = self.t, self.c
        s = self.px(13)
        box = Rect(x, cy - s // 2, x + s, cy - s // 2 + s)
        verb = "Untick" if checked else "Tick"
        spec = other_spec(
            "checkbox",
            name,
            (f"{verb} the '{name}' checkbox.", f"Click the checkbox next to {name}."),
            (f"{'Disable' if checked else 'Enable'} {name.lower()}.",),
        )
        with c.element(box, spec):
            if checked:
                c.rect(box, fill=t.accent, radius=self.px(2))
                c.line(
                    [
                        (box.x1 + s * 0.22, box.cy),
                        (box.x1 + s * 0.42, box.y1 + s * 0.72),
                        (box.x1 + s * 0.8, box.y1 + s * 0.28),
                    ],
                    fill=t.accent_text,
                    width=self.px(2),
                )
            else:
                c.rect(box, fill=t.field, outline=t.field_border, radius=self.px(2))
        if not label:
            return s
        self.label(x + s + self.px(6), cy, name)
        return s + self.px(6) + text_width(self.font, name)

    def radio(self, x: int, cy: int, group: str, name: str, checked: bool) -> int:
        t, c = self.t, self.c
        s = self.px(13)
        box = Rect(x, cy - s // 2, x + s, cy - s // 2 + s)
        spec = other_spec(
            "radio button",
            f"{group}={name}",
            (f"Select the '{name}' option for {group}.", f"Click the radio button for {name}."),
        )
        with c.element(box, spec):
            c.ellipse(box, fill=t.field, outline=t.accent if checked else t.field_border, width=self.px(1))
            if checked:
                c.ellipse(box.inset(self.px(3)), fill=t.accent)
        self.label(x + s + self.px(6), cy, name)
        return s + self.px(6) + text_width(self.font, name)

    def toggle(self, x: int, cy: int, name: str, on: bool) -> None:
        t, c = self.t, self.c
        w, h = self.px(36), self.px(18)
        box = Rect(x, cy - h // 2, x + w, cy - h // 2 + h)
        spec = other_spec(
            "switch",
            name,
            (f"Click the {name} switch.", f"Flip the toggle for {name}."),
            (f"Turn {name.lower()} {'off' if on else 'on'}.",),
        )
        with c.element(box, spec):
            c.rect(box, fill=t.accent if on else mix(t.field, t.text_dim, 0.45), radius=h // 2)
            d = h - self.px(4)
            kx = box.x2 - self.px(2) - d if on else box.x1 + self.px(2)
            c.ellipse(Rect(kx, box.y1 + self.px(2), kx + d, box.y1 + self.px(2) + d), fill=(255, 255, 255))

    def slider(self, r: Rect, name: str, value: float) -> None:
        """A horizontal slider: the track is drawn, the handle is the target."""
        t, c = self.t, self.c
        c.rect(Rect(r.x1, r.cy - 1, r.x2, r.cy + 2), fill=mix(t.field_border, t.panel, 0.2))
        hx = r.x1 + int((r.w - self.px(10)) * value)
        c.rect(Rect(r.x1, r.cy - 1, hx, r.cy + 2), fill=t.accent)
        handle = Rect(hx, r.cy - self.px(7), hx + self.px(10), r.cy + self.px(7))
        spec = other_spec(
            "slider",
            name,
            (f"Drag the {name} slider handle.", f"Grab the handle of the {name} slider."),
            (f"Adjust the {name.lower()}.",),
        )
        with c.element(handle, spec):
            c.rect(handle, fill=mix(t.button, (255, 255, 255), 0.3), outline=t.button_border, radius=self.px(2))

    def swatch(self, r: Rect, name: str, color: RGB) -> None:
        t, c = self.t, self.c
        spec = other_spec(
            "swatch",
            name,
            (f"Click the {name} colour swatch.", f"Click the {name} colour box."),
            (f"Change the {name.lower()} colour.",),
        )
        with c.element(r, spec):
            c.rect(r, fill=color, outline=t.field_border)

    def button(
        self, r: Rect, text: str, concept: str | None = None, primary: bool = False, ctx: str | None = None
    ) -> None:
        t, c = self.t, self.c
        fill = t.accent if primary else t.button
        with c.element(r, text_spec(text, "button", ctx, concept), ctx):
            c.rect(r, fill=fill, outline=t.accent if primary else t.button_border, radius=self.px(3))
            c.text(r.cx - text_width(self.font, text) // 2, r.cy, text, self.font, t.accent_text if primary else t.text)

    def scrollbar(self, r: Rect, vertical: bool, start: float, length: float, ctx: str) -> None:
        t, c = self.t, self.c
        c.rect(r, fill=mix(t.panel, t.content, 0.5))
        spec = other_spec(
            "scrollbar",
            ctx,
            (
                f"Drag the {'vertical' if vertical else 'horizontal'} scrollbar of the {ctx}.",
                f"Grab the scroll thumb of the {ctx}.",
            ),
            (f"Scroll the {ctx} {'down' if vertical else 'sideways'}.",),
        )
        if vertical:
            span = r.h
            thumb = Rect(
                r.x1 + self.px(2), r.y1 + int(span * start), r.x2 - self.px(2), r.y1 + int(span * (start + length))
            )
        else:
            span = r.w
            thumb = Rect(
                r.x1 + int(span * start), r.y1 + self.px(2), r.x1 + int(span * (start + length)), r.y2 - self.px(2)
            )
        with c.element(thumb, spec):
            c.rect(thumb, fill=mix(t.panel, t.text_dim, 0.5), radius=self.px(3))

    def property_grid(self, r: Rect, rows: Sequence[tuple[str, str, Any]], row: int = 24) -> None:
        """rows: (name, kind, value) with kind "text", "check", "color", "choice" or "slider"."""
        t, c = self.t, self.c
        h = self.px(row)
        split = r.x1 + int(r.w * 0.42)
        y = r.y1
        for i, (name, kind, value) in enumerate(rows):
            if y + h > r.y2:
                break
            cy = y + h // 2
            if i % 2:
                c.rect(Rect(r.x1, y, r.x2, y + h), fill=mix(t.panel, t.header, 0.5))
            self.label(
                r.x1 + self.px(10), cy, fit(self.font, name, split - r.x1 - self.px(14)), None, self.font, t.text_dim
            )
            vr = Rect(split, cy - self.px(9), r.x2 - self.px(8), cy + self.px(9))
            if kind == "check":
                self.checkbox(split + self.px(2), cy, name, bool(value), label=False)
            elif kind == "color":
                self.swatch(Rect(split, cy - self.px(7), split + self.px(30), cy + self.px(7)), name, value)
                self.label(split + self.px(38), cy, "#{:02X}{:02X}{:02X}".format(*value), None, self.small, t.text_dim)
            elif kind == "choice":
                self.dropdown(vr, name, str(value))
            elif kind == "slider":
                self.slider(Rect(split, cy - self.px(8), r.x2 - self.px(44), cy + self.px(8)), name, float(value))
                self.label(r.x2 - self.px(38), cy, f"{int(float(value) * 100)}%", None, self.small, t.text_dim)
            else:
                self.field(vr, name, str(value))
            y += h

    # ---- overlays --------------------------------------------------------------------------------
    def dialog_frame(self, r: Rect, title: str) -> Rect:
        """A modal window with a shadow and a title bar; returns its content rect."""
        t, c = self.t, self.c
        shade = mix(t.desktop, (0, 0, 0), 0.6)
        c.rect(
            Rect(r.x1 + self.px(4), r.y1 + self.px(6), r.x2 + self.px(4), r.y2 + self.px(6)),
            fill=mix(t.content, shade, 0.35),
        )
        c.rect(r, fill=t.panel, outline=t.border)
        bar = r.top(self.px(30))
        c.rect(bar, fill=t.titlebar, outline=t.border)
        self.label(bar.x1 + self.px(10), bar.cy, title, None, self.bold, t.title_text)
        s = self.px(10)
        x = bar.x2 - self.px(14) - s
        with c.element(
            Rect(x, bar.cy - s // 2, x + s, bar.cy - s // 2 + s), icon_spec("close", None, f"{title} dialog")
        ):
            c.icon("close", x, bar.cy - s // 2, s, t.title_text)
        return r.below(self.px(30)).inset(self.px(12))

    def open_menu(
        self, x: int, y: int, menu: str, items: Sequence[tuple[str, str, str | None]], width: int = 220
    ) -> Rect:
        """A dropped-down menu under a menu title: items (label, shortcut, concept), "-" for a separator."""
        t, c = self.t, self.c
        h = self.px(24)
        total = sum(self.px(9) if label == "-" else h for label, _, _ in items) + self.px(8)
        r = Rect(x, y, x + self.px(width), y + total)
        c.rect(
            Rect(r.x1 + self.px(3), r.y1 + self.px(3), r.x2 + self.px(3), r.y2 + self.px(3)),
            fill=mix(t.content, (0, 0, 0), 0.25),
        )
        c.rect(r, fill=t.menubar if not t.dark else mix(t.panel, (255, 255, 255), 0.05), outline=t.border)
        cy = r.y1 + self.px(4)
        for label, shortcut, concept in items:
            if label == "-":
                c.hline(r.x1 + self.px(8), r.x2 - self.px(8), cy + self.px(4), t.border)
                cy += self.px(9)
                continue
            self.label(r.x1 + self.px(28), cy + h // 2, label, text_spec(label, "menu item", menu, concept), ctx=menu)
            if shortcut:
                self.label(
                    r.x2 - self.px(12) - text_width(self.small, shortcut),
                    cy + h // 2,
                    shortcut,
                    None,
                    self.small,
                    t.text_dim,
                )
            cy += h
        return r


def _chevron(x: int, cy: int, size: int, down: bool) -> list[tuple[float, float]]:
    half = size / 2
    if down:
        return [(x, cy - half / 2), (x + size, cy - half / 2), (x + half, cy + half / 2)]
    return [(x + half / 4, cy - half), (x + half / 4 + half, cy), (x + half / 4, cy + half)]
