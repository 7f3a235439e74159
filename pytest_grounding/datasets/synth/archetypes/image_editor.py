"""An image editor: tool options bar, toolbox with colour swatches, Swatches, History and Layers
panels, rulers around a poster on the canvas, document tabs; sometimes the Export As dialog."""

from __future__ import annotations

from ..draw.canvas import Rect
from ..draw.phrases import icon_spec, text_spec
from ..draw.themes import PALETTE, mix
from ..draw.typefaces import font
from ..draw.widgets import UI, Icon
from ._layout import Archetype, DialogSpec, quick_dialog, rng_names

LAYERS_IMG = (
    "Background",
    "Sky",
    "Hills",
    "Sun Glow",
    "Shadows",
    "Highlights",
    "Text Title",
    "Logo",
    "Vignette",
    "Color Fill 1",
    "Curves 1",
    "Layer 2",
    "Layer 3",
)
SWATCHES = (
    ("Crimson", (220, 20, 60)),
    ("Orange", (255, 140, 0)),
    ("Gold", (255, 200, 0)),
    ("Lime", (130, 210, 50)),
    ("Teal", (0, 140, 140)),
    ("Sky", (90, 170, 230)),
    ("Navy", (20, 40, 120)),
    ("Violet", (140, 80, 200)),
    ("Magenta", (220, 40, 180)),
    ("Coral", (255, 120, 100)),
    ("Olive", (128, 128, 0)),
    ("Slate", (100, 110, 130)),
)

EXPORT_DIALOG = DialogSpec(
    "Export As",
    (("File name", "poster_final_web"), ("Width", "1920 px")),
    ("Format", "PNG"),
    ("Embed color profile", "Include metadata", "Convert to sRGB"),
    ("Quality", ("Low", "Medium", "High")),
    ("Export", "Export Selection"),
)


def options_bar(ui: UI, options: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(options, fill=t.toolbar)
    c.hline(options.x1, options.x2, options.y2 - 1, t.border)
    tool = rng.choice(("brush", "eraser", "pencil"))
    x = options.x1 + px(10)
    c.icon(tool, x, options.cy - px(9), px(18), t.icon)
    x += px(34)
    x += ui.label(x, options.cy, "Size:", None, ui.small, t.text_dim) + px(6)
    ui.field(Rect(x, options.cy - px(11), x + px(64), options.cy + px(11)), "brush size", f"{rng.randint(3, 200)} px")
    x += px(76)
    x += ui.label(x, options.cy, "Mode:", None, ui.small, t.text_dim) + px(6)
    ui.dropdown(
        Rect(x, options.cy - px(11), x + px(120), options.cy + px(11)),
        "brush mode",
        rng.choice(("Normal", "Multiply", "Screen")),
    )
    x += px(134)
    for name in ("Opacity", "Flow"):
        x += ui.label(x, options.cy, name + ":", None, ui.small, t.text_dim) + px(6)
        ui.slider(Rect(x, options.cy - px(8), x + px(110), options.cy + px(8)), name, rng.uniform(0.2, 1.0))
        x += px(124)
    ui.checkbox(x, options.cy, "Smoothing", rng.random() < 0.5)
    ui.toolbar(
        options.right(px(140)),
        [Icon("search", "search"), Icon("share", "share"), Icon("help", "help")],
        "options bar",
        icon=16,
    )


def status_bar(ui: UI, status: Rect) -> str:
    """The status bar; returns the zoom it shows."""
    rng = ui.rng
    zoom = rng.choice(("66.67%", "100%", "50%", "33.33%", "200%"))
    ui.status_bar(
        status,
        [zoom, f"Doc: {rng.randint(5, 90)}.{rng.randint(0, 9)}M/{rng.randint(91, 300)}.{rng.randint(0, 9)}M"],
        [f"{rng.choice((1920, 3000, 4096))} x {rng.choice((1080, 2000, 2731))} px", "RGB/8"],
    )
    return zoom


def toolbox(ui: UI, rest: Rect) -> Rect:
    """The toolbox with the foreground and background colours down the left; returns what is right of it."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    tools_w = px(rng.choice((40, 64)))
    tools, rest = rest.left(tools_w), rest.after(tools_w)
    c.rect(tools, fill=t.panel)
    ui.vertical_toolbar(
        tools.above(px(70)),
        [
            Icon(k, k)
            for k in (
                "move",
                "select_rect",
                "crop",
                "eyedropper",
                "brush",
                "pencil",
                "eraser",
                "fill",
                "text_tool",
                "pointer",
                "zoom_in",
            )
        ]
        + [Icon("hamburger", None)],
        "toolbox",
        icon=18,
        active=rng.randint(0, 7),
        columns=2 if tools_w > px(50) else 1,
    )
    fg, bgc = PALETTE[rng.randint(0, 9)], PALETTE[rng.randint(0, 9)]
    sw = tools.bottom(px(64))
    ui.swatch(Rect(sw.x1 + px(8), sw.y1 + px(20), sw.x1 + px(28), sw.y1 + px(40)), "background", bgc)
    ui.swatch(Rect(sw.x1 + px(6), sw.y1 + px(6), sw.x1 + px(24), sw.y1 + px(18)), "foreground", fg)
    return rest


def swatches_panel(ui: UI, color_r: Rect) -> None:
    t, px = ui.t, ui.px
    ui.tabs(
        color_r.top(px(26)), ["Color", "Swatches", "Gradients"], 1, "color panel", strip=t.header, active_fill=t.panel
    )
    sx, sy = color_r.x1 + px(10), color_r.y1 + px(36)
    cell = px(18)
    for i, (name, col) in enumerate(SWATCHES):
        ui.swatch(
            Rect(
                sx + (i % 6) * (cell + px(6)),
                sy + (i // 6) * (cell + px(6)),
                sx + (i % 6) * (cell + px(6)) + cell,
                sy + (i // 6) * (cell + px(6)) + cell,
            ),
            name,
            col,
        )


def history_panel(ui: UI, hist: Rect) -> None:
    rng, px = ui.rng, ui.px
    ui.panel_header(hist.top(px(24)), "History", [Icon("trash", None)], "History panel")
    steps = rng_names(
        rng,
        (
            "Open",
            "Brush Tool",
            "Eraser",
            "New Layer",
            "Levels",
            "Free Transform",
            "Gaussian Blur",
            "Crop",
            "Hue/Saturation",
            "Deselect",
        ),
        5,
    )
    ui.list_rows(
        hist.below(px(26)),
        [("", s) for s in steps],
        "History panel",
        selected=len(steps) - 1,
        row=22,
        role="list item",
    )


def layers_panel(ui: UI, layers_r: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    ui.tabs(
        layers_r.top(px(26)), ["Layers", "Channels", "Paths"], 0, "layers panel", strip=t.header, active_fill=t.panel
    )
    ui.dropdown(
        Rect(layers_r.x1 + px(8), layers_r.y1 + px(32), layers_r.x1 + px(130), layers_r.y1 + px(54)),
        "blend mode",
        rng.choice(("Normal", "Multiply", "Overlay", "Soft Light")),
    )
    ui.label(layers_r.x1 + px(142), layers_r.y1 + px(43), "Opacity:", None, ui.small, t.text_dim)
    ui.field(
        Rect(layers_r.x2 - px(70), layers_r.y1 + px(32), layers_r.x2 - px(8), layers_r.y1 + px(54)),
        "layer opacity",
        f"{rng.randint(20, 100)}%",
    )
    y = layers_r.y1 + px(62)
    foot = layers_r.bottom(px(30))
    layer_names = rng_names(rng, LAYERS_IMG, rng.randint(5, 9))
    selected = rng.randint(0, len(layer_names) - 1)
    for n, name in enumerate(layer_names):
        h = px(36)
        if y + h > foot.y1:
            break
        row = Rect(layers_r.x1, y, layers_r.x2, y + h)
        if n == selected:
            c.rect(row, fill=t.selection)
        visible = rng.random() < 0.85
        s = px(16)
        with c.element(
            Rect(row.x1 + px(8), row.cy - s // 2, row.x1 + px(8) + s, row.cy - s // 2 + s),
            icon_spec("eye" if visible else "eye_off", "visibility", name, role="layer toggle"),
        ):
            c.icon("eye" if visible else "eye_off", row.x1 + px(8), row.cy - s // 2, s, t.icon)
        thumb = Rect(row.x1 + px(32), row.y1 + px(4), row.x1 + px(68), row.y2 - px(4))
        c.rect(thumb, fill=PALETTE[(n * 3) % len(PALETTE)], outline=t.border)
        ui.label(
            row.x1 + px(76),
            row.cy,
            name,
            text_spec(name, "layer", "Layers panel", targetable=n != selected),
            ctx="Layers panel",
        )
        c.hline(row.x1, row.x2, row.y2 - 1, t.border)
        y += h
    c.rect(foot, fill=t.header)
    ui.toolbar(
        foot.right(px(200)),
        [
            Icon("link", None),
            Icon("function", None),
            Icon("image", None),
            Icon("folder", None),
            Icon("add", "add_layer"),
            Icon("trash", "delete"),
        ],
        "Layers panel",
        icon=15,
    )


def docked_panels(ui: UI, rest: Rect) -> Rect:
    """Swatches, History (on some screens) and Layers down the right; returns what is left of them."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    panels_w = px(rng.choice((260, 300)))
    panels, center = rest.right(panels_w), rest.before(panels_w)
    c.rect(panels, fill=t.panel)
    c.vline(panels.x1, panels.y1, panels.y2, t.border)
    swatches_panel(ui, panels.top(px(130)))
    layers_r = panels.below(px(130))
    history_h = px(150) if rng.random() < 0.5 else 0
    if history_h:
        hist, layers_r = layers_r.bottom(history_h), layers_r.above(history_h)
        history_panel(ui, hist)
    layers_panel(ui, layers_r)
    return center


def document(ui: UI, center: Rect, doc: str, zoom: str) -> Rect:
    """Document tabs and rulers around the pasteboard; returns the pasteboard."""
    t, c, px = ui.t, ui.c, ui.px
    doc_tabs = center.top(px(28))
    ui.tabs(
        doc_tabs, [f"{doc} @ {zoom} (RGB/8)", "logo_v2.png @ 100%", "texture_4k.tif"], 0, "document tabs", closable=True
    )
    area = center.below(px(28))
    ruler = px(18)
    c.rect(area.top(ruler), fill=t.header)
    c.rect(area.left(ruler), fill=t.header)
    for i, xx in enumerate(range(area.x1 + ruler, area.x2, px(50))):
        c.vline(xx, area.y1 + px(10), area.y1 + ruler, t.text_dim)
        c.text(xx + px(2), area.y1 + px(6), str(i * 100), ui.tiny, t.text_dim)
    for yy in range(area.y1 + ruler, area.y2, px(50)):
        c.hline(area.x1 + px(10), area.x1 + ruler, yy, t.text_dim)
    board = Rect(area.x1 + ruler, area.y1 + ruler, area.x2, area.y2)
    c.rect(board, fill=mix(t.content, (128, 128, 128), 0.4))
    return board


def artwork(ui: UI, board: Rect) -> None:
    """A poster on the pasteboard: sky, sun, hills and a title."""
    c, rng = ui.c, ui.rng
    art = board.inset(board.w // rng.choice((8, 10, 14)), board.h // rng.choice((8, 10, 14)))
    sky1, sky2 = PALETTE[rng.randint(0, 9)], (250, 230, 200)
    for yy in range(art.y1, art.y2, 4):
        c.rect(Rect(art.x1, yy, art.x2, min(art.y2, yy + 4)), fill=mix(sky1, sky2, (yy - art.y1) / max(1, art.h)))
    sun = rng.randint(art.w // 8, art.w // 5)
    c.ellipse(
        Rect(art.x1 + art.w // 2, art.y1 + art.h // 6, art.x1 + art.w // 2 + sun, art.y1 + art.h // 6 + sun),
        fill=(255, 220, 120),
    )
    for k, shade in enumerate(((90, 120, 90), (60, 90, 70), (40, 60, 50))):
        base = art.y1 + art.h // 2 + k * art.h // 8
        pts = (
            [(art.x1, art.y2)]
            + [(art.x1 + i * art.w // 6, base + rng.randint(-art.h // 8, art.h // 10)) for i in range(7)]
            + [(art.x2, art.y2)]
        )
        c.polygon(pts, fill=shade)
    title = rng.choice(("SUMMER FEST", "NORTHERN LIGHTS", "OPEN AIR 2024", "WILD COAST"))
    tf = font("bold", max(12, art.h // 10))
    c.text(art.x1 + art.w // 12, art.y1 + art.h // 8, title, tf, (255, 255, 255))


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    rng, px = ui.rng, ui.px
    options_bar(ui, body.top(px(36)))
    rest = body.below(px(36))
    status, rest = rest.bottom(px(24)), rest.above(px(24))
    zoom = status_bar(ui, status)
    rest = toolbox(ui, rest)
    center = docked_panels(ui, rest)
    artwork(ui, document(ui, center, doc, zoom))
    if rng.random() < 0.2:
        quick_dialog(ui, body, EXPORT_DIALOG)


ARCHETYPE = Archetype(
    "image_editor",
    "creative",
    ("Pixelry", "Lumina Photo", "Canvasia Pro"),
    "brush",
    ("File", "Edit", "Image", "Layer", "Type", "Select", "Filter", "3D", "View", "Window", "Help"),
    0.7,
    ("poster_final.psd", "banner_web.psd", "cover_art.psd", "product_shot.tif"),
    compose,
)
