"""GIS: map and digitizing toolbars, a Layers panel and a data browser, a map with parks,
buildings, a river, roads, place names and pins, a scale bar and a north arrow, a status bar with
coordinate, scale and CRS; sometimes the Export Map dialog."""

from __future__ import annotations

from ..draw.canvas import Rect, fit, text_width
from ..draw.phrases import text_spec
from ..draw.themes import PALETTE, mix
from ..draw.widgets import SEPARATOR, UI, Icon, Label
from ._layout import Archetype, DialogSpec, quick_dialog, rng_names

LAYERS_GIS = (
    "Buildings",
    "Roads",
    "Rivers",
    "Parcels",
    "Land Use",
    "Contours 10m",
    "Bus Stops",
    "Parks",
    "Administrative Boundaries",
    "OpenStreetMap",
    "Satellite Imagery",
    "Flood Zones",
    "Wells",
)
PLACES = (
    "Riverside Park",
    "Old Town",
    "North Station",
    "Hill Farm",
    "Lake View",
    "Mill Lane",
    "Market Square",
    "Elm Street",
    "Harbour",
    "Castle Hill",
    "West End",
    "Greenfield",
)
# Unit vectors of the eight compass directions, in order around the circle (for convex blobs).
COMPASS = (
    (1.0, 0.0),
    (0.7071, 0.7071),
    (0.0, 1.0),
    (-0.7071, 0.7071),
    (-1.0, 0.0),
    (-0.7071, -0.7071),
    (0.0, -1.0),
    (0.7071, -0.7071),
)

EXPORT_DIALOG = DialogSpec(
    "Export Map",
    (("File name", "flood_risk_overview"), ("Resolution", "300 dpi")),
    ("Format", "PDF"),
    ("Append georeference", "Export RDF metadata", "Draw active decorations"),
    ("Extent", ("Canvas", "Layer", "Custom")),
    ("Export", "Export Selection"),
)


def toolbars(ui: UI, body: Rect) -> None:
    t, c, px = ui.t, ui.c, ui.px
    row1, row2 = body.top(px(32)), body.below(px(32)).top(px(32))
    c.rect(Rect(body.x1, body.y1, body.x2, body.y1 + px(64)), fill=t.toolbar)
    ui.toolbar(
        row1,
        [
            Icon("new_file", "new_file"),
            Icon("folder", "open"),
            Icon("save", "save"),
            SEPARATOR,
            Icon("move", None),
            Icon("zoom_in", "zoom_in"),
            Icon("zoom_out", "zoom_out"),
            Icon("zoom_fit", "zoom_fit"),
            Icon("refresh", "refresh"),
            SEPARATOR,
            Icon("info", "info"),
            Icon("ruler", "measure"),
            Icon("select_rect", "select_rect"),
            Icon("pointer", None),
            SEPARATOR,
            Icon("table", "table"),
            Icon("bar_chart", None),
            Icon("sum", None),
            SEPARATOR,
            Icon("help", "help"),
        ],
        "map toolbar",
        icon=18,
    )
    ui.toolbar(
        row2,
        [
            Icon("add", "add_layer"),
            Icon("globe", "basemap"),
            Icon("database", "database"),
            Icon("cloud", None),
            SEPARATOR,
            Icon("pencil", None),
            Icon("node", None),
            Icon("polygon_tool", "polygon"),
            Icon("pin", "placemark"),
            Icon("trash", "delete"),
            SEPARATOR,
            Label("Processing Toolbox", None),
            Label("Field Calculator", None),
            Label("Select by Expression", None),
            Label("Select by Location", None),
        ],
        "digitizing toolbar",
        icon=16,
    )


def status_bar(ui: UI, status: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(status, fill=t.header)
    x = status.x1 + px(10)
    for name, value, w in (
        ("Coordinate", f"{rng.randint(400000, 700000)},{rng.randint(5000000, 5900000)}", 150),
        ("Scale", rng.choice(("1:25,000", "1:10,000", "1:50,000", "1:5,000")), 100),
        ("Magnifier", "100%", 60),
        ("Rotation", "0.0 °", 64),
    ):
        x += ui.label(x, status.cy, name, None, ui.small, t.text_dim) + px(6)
        if name == "Scale":
            ui.dropdown(Rect(x, status.y1 + px(3), x + px(w), status.y2 - px(3)), "scale", value)
        else:
            ui.field(Rect(x, status.y1 + px(3), x + px(w), status.y2 - px(3)), name, value, f=ui.small)
        x += px(w) + px(14)
    ui.checkbox(x, status.cy, "Render", True)
    epsg = rng.choice(("EPSG:3857", "EPSG:4326", "EPSG:25832", "EPSG:27700"))
    ui.label(
        status.x2 - px(16) - text_width(ui.small, epsg),
        status.cy,
        epsg,
        text_spec(epsg, "status item"),
        ui.small,
        t.text,
    )


def layers_panel(ui: UI, side: Rect, layers_r: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    ui.panel_header(
        layers_r.top(px(26)), "Layers", [Icon("filter", "filter"), Icon("add", None), Icon("eye", None)], "Layers panel"
    )
    y = layers_r.y1 + px(30)
    names = rng_names(rng, LAYERS_GIS, rng.randint(7, 10))
    for n, name in enumerate(names):
        if y + px(24) > layers_r.y2:
            break
        cy = y + px(12)
        ui.checkbox(side.x1 + px(10), cy, name, rng.random() < 0.8, label=False)
        sym = Rect(side.x1 + px(30), cy - px(6), side.x1 + px(42), cy + px(6))
        c.rect(sym, fill=PALETTE[n % len(PALETTE)], outline=t.border)
        ui.label(
            side.x1 + px(50),
            cy,
            fit(ui.font, name, side.w - px(60)),
            text_spec(name, "layer", "Layers panel"),
            ctx="Layers panel",
        )
        y += px(24)


def data_browser(ui: UI, browser: Rect) -> None:
    px = ui.px
    ui.panel_header(browser.top(px(26)), "Browser", [Icon("refresh", None), Icon("zoom_fit", None)], "Browser panel")
    ui.tree(
        browser.below(px(28)),
        [
            (0, "Favorites", "folder"),
            (0, "Spatial Bookmarks", "folder"),
            (0, "Home", "open_folder"),
            (1, "survey_2024.gpkg", "database"),
            (1, "parcels.shp", "polygon_tool"),
            (1, "dem_10m.tif", "image"),
            (0, "GeoPackage", "folder"),
            (0, "PostgreSQL", "folder"),
            (0, "XYZ Tiles", "folder"),
            (0, "WMS/WMTS", "folder"),
        ],
        "browser",
    )


def base_map(ui: UI, mapr: Rect) -> None:
    """Land, parks, buildings, a river and roads."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    land = (236, 233, 222) if not t.dark else (48, 52, 56)
    water = (170, 205, 235) if not t.dark else (34, 58, 84)
    park = (200, 226, 180) if not t.dark else (50, 72, 52)
    road = (255, 255, 255) if not t.dark else (110, 110, 104)
    c.rect(mapr, fill=land)
    for _ in range(rng.randint(2, 4)):
        x0, y0 = mapr.x1 + rng.randint(0, mapr.w), mapr.y1 + rng.randint(0, mapr.h)
        radius = rng.randint(60, 220)
        c.polygon(
            [
                (x0 + dx * radius * rng.uniform(0.6, 1.0), y0 + dy * radius * rng.uniform(0.6, 1.0))
                for dx, dy in COMPASS
            ],
            fill=park,
        )
    for _ in range(mapr.w * mapr.h // 9000):
        bx, by = mapr.x1 + rng.randint(10, mapr.w - 30), mapr.y1 + rng.randint(10, mapr.h - 30)
        c.rect(Rect(bx, by, bx + rng.randint(6, 20), by + rng.randint(6, 16)), fill=mix(land, (120, 100, 90), 0.35))
    rx = mapr.x1 + rng.randint(mapr.w // 6, mapr.w // 2)
    c.polygon(
        [
            (rx, mapr.y1),
            (rx + 60, mapr.y1),
            (rx + 140, mapr.y1 + mapr.h // 2),
            (rx + 90, mapr.y2),
            (rx + 30, mapr.y2),
            (rx + 80, mapr.y1 + mapr.h // 2),
        ],
        fill=water,
    )
    for _ in range(rng.randint(10, 16)):
        vertical = rng.random() < 0.5
        if vertical:
            x0 = mapr.x1 + rng.randint(0, mapr.w)
            c.line([(x0, mapr.y1), (x0 + rng.randint(-120, 120), mapr.y2)], road, px(rng.choice((3, 5))))
        else:
            y0 = mapr.y1 + rng.randint(0, mapr.h)
            c.line([(mapr.x1, y0), (mapr.x2, y0 + rng.randint(-100, 100))], road, px(rng.choice((3, 5))))


def map_annotations(ui: UI, mapr: Rect) -> None:
    """Place names, pins, the scale bar and the north arrow."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    label_color = (40, 40, 40) if not t.dark else (230, 230, 230)
    for place in rng_names(rng, PLACES, rng.randint(4, 7)):
        px_, py_ = mapr.x1 + rng.randint(40, max(41, mapr.w - 160)), mapr.y1 + rng.randint(30, max(31, mapr.h - 60))
        ui.label(px_, py_, place, text_spec(place, "label", "map", element_type="text"), ui.small, label_color, "map")
    for _ in range(rng.randint(3, 6)):
        s = px(18)
        mx, my = mapr.x1 + rng.randint(20, mapr.w - 40), mapr.y1 + rng.randint(20, mapr.h - 40)
        c.icon("pin", mx, my, s, (210, 60, 60))
    # scale bar and north arrow
    sb = Rect(mapr.x1 + px(20), mapr.y2 - px(34), mapr.x1 + px(170), mapr.y2 - px(26))
    c.rect(sb, fill=(255, 255, 255), outline=(30, 30, 30))
    c.rect(Rect(sb.x1, sb.y1, sb.x1 + sb.w // 2, sb.y2), fill=(30, 30, 30))
    c.text(sb.x1, sb.y1 - px(8), "0", ui.tiny, label_color)
    c.text(sb.x2 - px(20), sb.y1 - px(8), rng.choice(("500 m", "1 km", "2 km")), ui.tiny, label_color)
    nx, ny = mapr.x2 - px(40), mapr.y1 + px(20)
    c.polygon(
        [(nx, ny + px(30)), (nx + px(10), ny), (nx + px(20), ny + px(30)), (nx + px(10), ny + px(22))], fill=label_color
    )
    c.text(nx + px(6), ny + px(40), "N", ui.bold, label_color)


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    toolbars(ui, body)
    rest = body.below(px(64))
    status, rest = rest.bottom(px(26)), rest.above(px(26))
    status_bar(ui, status)
    side_w = px(rng.choice((240, 270, 300)))
    side, mapr = rest.left(side_w), rest.after(side_w)
    c.rect(side, fill=t.panel)
    c.vline(side.x2 - 1, side.y1, side.y2, t.border)
    layers_r = side.top(side.h // 2 + px(40))
    layers_panel(ui, side, layers_r)
    data_browser(ui, side.below(layers_r.h))
    base_map(ui, mapr)
    map_annotations(ui, mapr)
    if rng.random() < 0.2:
        quick_dialog(ui, body, EXPORT_DIALOG)


ARCHETYPE = Archetype(
    "gis",
    "scientific",
    ("TerraLens GIS", "MapSmith", "Geoscope Desktop"),
    "globe",
    (
        "Project",
        "Edit",
        "View",
        "Layer",
        "Settings",
        "Plugins",
        "Vector",
        "Raster",
        "Database",
        "Web",
        "Processing",
        "Help",
    ),
    0.3,
    ("Flood Risk Study", "Parcels 2024", "Transit Network", "Land Cover Survey"),
    compose,
)
