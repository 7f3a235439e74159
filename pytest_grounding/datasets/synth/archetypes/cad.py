"""CAD: a ribbon, a floor plan on a gridded model space with view cube and navigation bar, layout
tabs, the command line, a Properties palette; sometimes the Plot dialog."""

from __future__ import annotations

import random

from ..draw.canvas import Rect, text_width
from ..draw.phrases import icon_spec, other_spec, text_spec
from ..draw.themes import RGB, mix, text_on
from ..draw.widgets import UI, Icon
from ._layout import Archetype, DialogSpec, quick_dialog, rng_names

ROOMS = (
    "LIVING",
    "KITCHEN",
    "BED 1",
    "BED 2",
    "BATH",
    "OFFICE",
    "STORAGE",
    "HALL",
    "DINING",
    "UTILITY",
    "LOBBY",
    "MEETING",
    "WC",
    "PLANT",
    "ARCHIVE",
    "LAB",
)

Tool = tuple[str, str, str | None]  # icon, label, concept
RIBBON_GROUPS: tuple[tuple[str, tuple[Tool, ...]], ...] = (
    (
        "Draw",
        (
            ("line_tool", "Line", "line"),
            ("polygon_tool", "Polyline", None),
            ("circle_tool", "Circle", "circle"),
            ("arc_tool", "Arc", "arc"),
            ("rect_tool", "Rectangle", "rectangle"),
        ),
    ),
    (
        "Modify",
        (
            ("move", "Move", "move"),
            ("rotate", "Rotate", "rotate"),
            ("crop", "Trim", None),
            ("mirror", "Mirror", "mirror"),
            ("copy", "Copy", "copy"),
            ("zoom_fit", "Scale", None),
        ),
    ),
    ("Annotation", (("text_tool", "Text", None), ("ruler", "Dimension", "measure"), ("table", "Table", None))),
    ("Layers", (("layers", "Layer Properties", None), ("eye_off", "Isolate", None))),
    ("Utilities", (("ruler", "Measure", None), ("pointer", "Select All", None))),
)

PLOT_DIALOG = DialogSpec(
    "Plot - Model",
    (("Printer/plotter", "DWG To PDF.pc3"), ("Number of copies", "1")),
    ("Paper size", "ISO A3"),
    ("Plot in background", "Plot object lineweights", "Plot with plot styles"),
    ("Orientation", ("Portrait", "Landscape", "Upside-down")),
    ("Plot", "Plot Preview"),
)


# ---- the drawing ---------------------------------------------------------------------------------


def split_rooms(rng: random.Random, r: Rect, depth: int, minimum: int) -> list[Rect]:
    """Binary space partition of a floor into rooms."""
    if depth == 0 or (r.w < 2 * minimum and r.h < 2 * minimum):
        return [r]
    vertical = r.w >= r.h if r.w >= 2 * minimum and r.h >= 2 * minimum else r.w >= 2 * minimum
    if vertical:
        cut = r.x1 + max(minimum, min(r.w - minimum, int(r.w * rng.uniform(0.35, 0.65))))
        return split_rooms(rng, Rect(r.x1, r.y1, cut, r.y2), depth - 1, minimum) + split_rooms(
            rng, Rect(cut, r.y1, r.x2, r.y2), depth - 1, minimum
        )
    cut = r.y1 + max(minimum, min(r.h - minimum, int(r.h * rng.uniform(0.35, 0.65))))
    return split_rooms(rng, Rect(r.x1, r.y1, r.x2, cut), depth - 1, minimum) + split_rooms(
        rng, Rect(r.x1, cut, r.x2, r.y2), depth - 1, minimum
    )


def floor_plan(ui: UI, view: Rect, bg: RGB, ink: RGB) -> None:
    """An architectural floor plan: walls, rooms with labels and areas, door swings, dimensions."""
    c, rng, px = ui.c, ui.rng, ui.px
    wall = mix(bg, ink, 0.9)
    dim_color = (90, 200, 220) if bg[0] < 100 else (0, 110, 160)
    label_color = (235, 200, 80) if bg[0] < 100 else (150, 90, 0)
    plan = Rect(view.x1 + view.w // 7, view.y1 + view.h // 6, view.x2 - view.w // 6, view.y2 - view.h // 7)
    mm_per_px = rng.choice((20, 25, 30))
    rooms = split_rooms(rng, plan, rng.randint(3, 4), px(110))
    names = rng_names(rng, ROOMS, len(rooms))
    for room in rooms:
        c.rect(room, outline=wall, width=px(3))
    c.rect(plan, outline=wall, width=px(6))
    for room, name in zip(rooms, names, strict=False):  # as many names as rooms
        # a door in the room's top wall, unless that is the outer wall
        if room.y1 > plan.y1 and room.w > px(90):
            d = px(28)
            dx = room.x1 + px(14)
            c.rect(Rect(dx, room.y1 - px(2), dx + d, room.y1 + px(2)), fill=bg)
            c.arc(Rect(dx - d, room.y1 - d, dx + d, room.y1 + d), 0, 90, dim_color)
            c.line([(dx, room.y1), (dx, room.y1 + d)], dim_color)
        area = f"{room.w * room.h * mm_per_px * mm_per_px / 1e6:.1f} m²"
        f = ui.small
        cy = room.cy - px(6)
        x = room.cx - text_width(f, name) // 2
        ui.label(x, cy, name, text_spec(name, "label", "floor plan"), f, label_color, "floor plan")
        c.text(room.cx - text_width(ui.tiny, area) // 2, cy + px(15), area, ui.tiny, mix(label_color, bg, 0.25))
        if rng.random() < 0.5 and room.w > px(140) and room.h > px(120):
            t_w = px(rng.choice((40, 60)))
            tx, ty = room.x2 - px(20) - t_w, room.y2 - px(20) - t_w
            c.rect(Rect(tx, ty, tx + t_w, ty + t_w // 2), outline=mix(bg, ink, 0.5))
    # overall dimensions above and left of the plan
    y = plan.y1 - px(28)
    c.line([(plan.x1, y), (plan.x2, y)], dim_color)
    for x in (plan.x1, plan.x2):
        c.line([(x, y - px(6)), (x, y + px(6))], dim_color)
    text = f"{plan.w * mm_per_px:,}".replace(",", " ")
    c.text(plan.cx - text_width(ui.small, text) // 2, y - px(9), text, ui.small, dim_color)
    x = plan.x1 - px(28)
    c.line([(x, plan.y1), (x, plan.y2)], dim_color)
    for yy in (plan.y1, plan.y2):
        c.line([(x - px(6), yy), (x + px(6), yy)], dim_color)
    text = f"{plan.h * mm_per_px:,}".replace(",", " ")
    c.text(x - px(6) - text_width(ui.small, text), plan.cy, text, ui.small, dim_color)


def model_space(ui: UI, view: Rect) -> tuple[RGB, RGB]:
    """The grid and the floor plan; returns the background and ink colours."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    bg = (33, 40, 48) if t.dark or rng.random() < 0.6 else (250, 250, 250)
    ink = text_on(bg)
    c.rect(view, fill=bg)
    step = px(rng.choice((20, 25, 40)))
    gridc = mix(bg, ink, 0.08)
    for gx in range(view.x1, view.x2, step):
        c.vline(gx, view.y1, view.y2, gridc)
    for gy in range(view.y1, view.y2, step):
        c.hline(view.x1, view.x2, gy, gridc)
    floor_plan(ui, view, bg, ink)
    return bg, ink


def view_controls(ui: UI, view: Rect, bg: RGB, ink: RGB) -> None:
    """View cube, UCS icon and navigation bar over the model space."""
    c, px = ui.c, ui.px
    cube = Rect(view.x2 - px(100), view.y1 + px(16), view.x2 - px(40), view.y1 + px(56))
    with c.element(
        cube,
        other_spec("view cube", "top", ("Click the TOP face of the view cube.",), ("Look at the model from above.",)),
    ):
        c.rect(cube, fill=mix(bg, ink, 0.25), outline=mix(bg, ink, 0.6))
        c.text(cube.cx - text_width(ui.small, "TOP") // 2, cube.cy, "TOP", ui.small, ink)
    ucs = (view.x1 + px(30), view.y2 - px(30))
    c.line([ucs, (ucs[0] + px(50), ucs[1])], (220, 80, 80), px(2))
    c.line([ucs, (ucs[0], ucs[1] - px(50))], (80, 200, 80), px(2))
    c.text(ucs[0] + px(54), ucs[1], "X", ui.small, (220, 80, 80))
    c.text(ucs[0] - px(4), ucs[1] - px(60), "Y", ui.small, (80, 200, 80))
    nav = Rect(view.x2 - px(40), view.y1 + px(80), view.x2 - px(8), view.y1 + px(240))
    c.rect(nav, fill=mix(bg, ink, 0.12), radius=px(4))
    ny = nav.y1 + px(8)
    for kind, concept in (
        ("move", None),
        ("zoom_in", "zoom_in"),
        ("zoom_out", "zoom_out"),
        ("zoom_fit", "zoom_fit"),
        ("rotate", None),
    ):
        s = px(16)
        with c.element(
            Rect(nav.cx - s // 2, ny, nav.cx - s // 2 + s, ny + s), icon_spec(kind, concept, "navigation bar")
        ):
            c.icon(kind, nav.cx - s // 2, ny, s, mix(bg, ink, 0.8))
        ny += px(30)


# ---- the chrome around it ------------------------------------------------------------------------


def ribbon_tools(ui: UI, ribbon: Rect, x: int, tools: tuple[Tool, ...], big: bool) -> int:
    """A ribbon group's tools from `x` on, large icons over labels (`big`) or in columns of three
    small rows; returns where the group ends."""
    t, c, px = ui.t, ui.c, ui.px
    gx = x
    for kind, label, concept in tools:
        if big:
            s = px(28)
            w = max(s, text_width(ui.small, label)) + px(10)
            if x + w > ribbon.x2:
                break
            box = Rect(x, ribbon.y1 + px(6), x + w, ribbon.y1 + px(58))
            with c.element(box, text_spec(label, "toolbar button", "ribbon", concept), "ribbon"):
                c.icon(kind, box.cx - s // 2, box.y1 + px(2), s, ui.icon_color(kind))
                c.text(box.cx - text_width(ui.small, label) // 2, box.y1 + px(42), label, ui.small, t.text)
            x += w + px(4)
        else:
            index = tools.index((kind, label, concept))
            col, rowi = divmod(index, 3)
            colw = px(34) + max(text_width(ui.small, lab) for _, lab, _ in tools[col * 3 : col * 3 + 3])
            bx = gx + sum(
                px(34) + max(text_width(ui.small, lab) for _, lab, _ in tools[k * 3 : k * 3 + 3]) for k in range(col)
            )
            cy = ribbon.y1 + px(14) + rowi * px(22)
            s = px(16)
            w = s + px(5) + text_width(ui.small, label)
            if bx + colw > ribbon.x2:
                break
            with c.element(
                Rect(bx, cy - s // 2 - 1, bx + w, cy - s // 2 + s + 1),
                text_spec(label, "toolbar button", "ribbon", concept),
                "ribbon",
            ):
                c.icon(kind, bx, cy - s // 2, s, ui.icon_color(kind))
                c.text(bx + s + px(5), cy, label, ui.small, t.text)
            x = max(x, bx + colw)
    return x


def ribbon_panel(ui: UI, ribbon: Rect) -> None:
    t, c, px = ui.t, ui.c, ui.px
    c.rect(ribbon, fill=t.panel)
    c.hline(ribbon.x1, ribbon.x2, ribbon.y2 - 1, t.border)
    x = ribbon.x1 + px(6)
    for gname, tools in RIBBON_GROUPS:
        gx = x
        x = ribbon_tools(ui, ribbon, x, tools, big=gname == "Draw")
        if x > ribbon.x2 - px(20):
            break
        c.text((gx + x) // 2 - text_width(ui.tiny, gname) // 2, ribbon.y2 - px(11), gname, ui.tiny, t.text_dim)
        c.vline(x + px(2), ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
        x += px(8)


def status_bar(ui: UI, status: Rect) -> None:
    rng = ui.rng
    toggles = ["MODEL", "GRID", "SNAP", "ORTHO", "POLAR", "OSNAP", "OTRACK", "LWT", "SNAP MODE"]
    coords = f"{rng.uniform(-500, 4000):.4f}, {rng.uniform(-200, 3000):.4f}, 0.0000"
    ui.status_bar(status, [coords, *toggles], ["Decimal", "1:1", "100%"])


def layout_tabs(ui: UI, tabs_bottom: Rect) -> None:
    t, c, px = ui.t, ui.c, ui.px
    x = ui.tabs(tabs_bottom.before(px(30)), ["Model", "Layout1", "Layout2", "Site Plan"], 0, "layout tabs")
    with c.element(
        Rect(x + px(6), tabs_bottom.cy - px(7), x + px(20), tabs_bottom.cy + px(7)),
        icon_spec("add", None, "layout tabs"),
    ):
        c.icon("add", x + px(6), tabs_bottom.cy - px(7), px(14), t.icon)


def command_line(ui: UI, command: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(command, fill=t.panel)
    history = [
        "Command: _LINE",
        "Specify first point:",
        f"Specify next point or [Undo]: @{rng.randint(10, 900)}<{rng.choice((0, 45, 90))}",
    ]
    for i, line in enumerate(history):
        c.text(command.x1 + px(10), command.y1 + px(10) + i * px(15), line, ui.mono if i else ui.small, t.text_dim)
    ui.field(
        Rect(command.x1 + px(6), command.y2 - px(22), command.x2 - px(6), command.y2 - px(2)),
        "command line",
        "Type a command",
        placeholder=True,
    )


def properties_palette(ui: UI, props: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(props, fill=t.panel)
    ui.panel_header(
        props.top(px(26)),
        "Properties",
        [Icon("close", "close_panel"), Icon("pointer", "pointer")],
        "Properties palette",
    )
    ui.dropdown(
        Rect(props.x1 + px(8), props.y1 + px(32), props.x2 - px(8), props.y1 + px(54)),
        "selection",
        rng.choice(("Circle (1)", "Line (3)", "All (12)", "Polyline (2)")),
    )
    ui.property_grid(
        props.below(px(62)),
        [
            ("Color", "choice", "ByLayer"),
            ("Layer", "choice", rng.choice(("0", "Walls", "Doors", "Dimensions"))),
            ("Linetype", "choice", "ByLayer"),
            ("Lineweight", "choice", "0.25 mm"),
            ("Transparency", "text", "ByLayer"),
            ("Thickness", "text", "0.0000"),
            ("Center X", "text", f"{rng.uniform(0, 900):.4f}"),
            ("Center Y", "text", f"{rng.uniform(0, 900):.4f}"),
            ("Radius", "text", f"{rng.uniform(5, 90):.4f}"),
            ("Area", "text", f"{rng.uniform(50, 9000):.4f}"),
            ("Annotative", "check", rng.random() < 0.5),
            ("Plot style", "choice", "ByColor"),
        ],
    )


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, rng, px = ui.t, ui.rng, ui.px
    tabs = body.top(px(28))
    ui.tabs(
        tabs,
        ["Home", "Insert", "Annotate", "Parametric", "View", "Manage", "Output", "Express Tools"],
        0,
        "ribbon",
        strip=t.toolbar,
        active_fill=t.panel,
    )
    ribbon_panel(ui, body.below(px(28)).top(px(96)))
    rest = body.below(px(124))
    status_bar(ui, rest.bottom(px(24)))
    rest = rest.above(px(24))
    layout_tabs(ui, rest.bottom(px(24)))
    rest = rest.above(px(24))
    command_line(ui, rest.bottom(px(80)))
    rest = rest.above(px(80))
    props_w = px(rng.choice((0, 250, 280)))
    view = rest
    if props_w:
        props, view = rest.right(props_w), rest.before(props_w)
        properties_palette(ui, props)
    bg, ink = model_space(ui, view)
    view_controls(ui, view, bg, ink)
    if rng.random() < 0.2:
        quick_dialog(ui, body, PLOT_DIALOG)


ARCHETYPE = Archetype(
    "cad",
    "cad",
    ("Draftline CAD", "Solidmark", "Planform 3D"),
    "line_tool",
    ("File", "Edit", "View", "Insert", "Format", "Tools", "Draw", "Dimension", "Modify", "Window", "Help"),
    0.5,
    ("Floor Plan Level 2.dwg", "Apartment B-104.dwg", "Site Office.dwg", "Clinic Wing East.dwg"),
    compose,
)
