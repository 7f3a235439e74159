"""Screens of professional software: an IDE, a DAW, CAD, GIS, an image editor, a spreadsheet, an
analytics console, a terminal and system settings, each composed from widgets with content that
varies with the screen's rng (panel sizes, which panels are shown, names, data, open menus).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .canvas import Rect, fit, text_width
from .phrases import icon_spec, other_spec, text_spec
from .themes import PALETTE, RGB, mix, text_on
from .typefaces import font
from .widgets import SEPARATOR, UI, Field, Icon, Label

# ---- vocabulary ----------------------------------------------------------------------------------

PROJECT_DIRS = ("src", "tests", "docs", "scripts", "config", "assets", "migrations", "notebooks", "benchmarks", "tools")
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
IDENTS = (
    "records",
    "config",
    "sample",
    "result",
    "values",
    "index",
    "path",
    "scores",
    "batch",
    "loader",
    "report",
    "cache",
    "threshold",
    "image",
    "boxes",
    "point",
    "session",
    "metrics",
    "row",
    "payload",
    "count",
    "total",
)
FUNCS = (
    "load_config",
    "parse_rows",
    "compute_metrics",
    "write_report",
    "read_image",
    "normalize_box",
    "merge_results",
    "build_index",
    "fetch_batch",
    "validate_schema",
    "resolve_path",
    "score_sample",
    "flush_cache",
)
CLASSES = ("DatasetLoader", "ReportWriter", "MetricSet", "BoxIndex", "SessionCache", "SampleFilter")
MODULES = ("os", "json", "math", "pathlib", "typing", "dataclasses", "itertools", "logging", "numpy as np")

TRACKS = (
    "Kick",
    "Snare",
    "Hi-Hat",
    "Bass",
    "Synth Pad",
    "Lead Vocal",
    "Backing Vox",
    "Piano",
    "Strings",
    "Guitar L",
    "Guitar R",
    "FX Riser",
    "Organ",
    "Claps",
    "Sub Bass",
    "Arp",
)
SAMPLES = (
    "Kick 01.wav",
    "Kick 02.wav",
    "Snare Tight.wav",
    "Clap Room.wav",
    "HiHat Open.wav",
    "Bass Loop 92.wav",
    "Pad Warm.wav",
    "Vox Chop A.wav",
    "Vox Chop B.wav",
    "Riser 8 bars.wav",
)
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
SHEETS = ("Summary", "Q1", "Q2", "Q3", "Q4", "Data", "Pivot", "Forecast", "Notes")
ROW_LABELS = (
    "Revenue",
    "Cost of Sales",
    "Gross Margin",
    "Marketing",
    "Salaries",
    "Rent",
    "Travel",
    "Software",
    "Operating Income",
    "Tax",
    "Net Income",
    "Headcount",
    "Units Sold",
    "Returns",
    "Discounts",
)
NAV_ANALYTICS = (
    ("home", "Home"),
    ("grid", "Dashboards"),
    ("search", "Explore"),
    ("bell", "Alerting"),
    ("database", "Data sources"),
    ("table", "Tables"),
    ("user", "Users"),
    ("settings", "Administration"),
)
METRICS = (
    "Requests / s",
    "Error rate",
    "p95 latency",
    "Active users",
    "CPU usage",
    "Memory",
    "Queue depth",
    "Cache hit ratio",
    "Disk I/O",
    "Sessions",
)
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


@dataclass(frozen=True)
class Archetype:
    name: str
    category: str
    apps: Tuple[str, ...]
    app_icon: str
    menus: Tuple[str, ...]
    dark_bias: float  # probability of a dark theme
    documents: Tuple[str, ...]  # what the window title names (file, project, page)
    compose: Callable[[UI, Rect, str, str], None]


# ---- shared pieces -------------------------------------------------------------------------------


def rng_names(rng: random.Random, pool: Sequence[str], k: int) -> List[str]:
    return rng.sample(list(pool), min(k, len(pool)))


def code_lines(rng: random.Random, n: int) -> List[str]:
    out: List[str] = []
    imports = rng_names(rng, MODULES, rng.randint(2, 4))
    out += [f"import {m}" for m in imports] + [""]
    while len(out) < n:
        fn, a, b, v = rng.choice(FUNCS), rng.choice(IDENTS), rng.choice(IDENTS), rng.choice(IDENTS)
        block = rng.choice(
            (
                [
                    f"def {fn}({a}, {b}={rng.randint(1, 64)}):",
                    f'    """Return the {a} for one {b}."""',
                    f"    {v} = []",
                    f"    for item in {a}:",
                    f"        if item.{b} > {rng.randint(0, 9)}.{rng.randint(0, 9)}:",
                    f"            {v}.append(item)",
                    f"    return {v}",
                    "",
                ],
                [
                    f"class {rng.choice(CLASSES)}:",
                    f"    # keeps one {a} per {b}",
                    f"    def __init__(self, {a}):",
                    f"        self.{a} = {a}",
                    f"        self.{v} = {{}}",
                    "",
                    f"    def {fn}(self):",
                    f"        return len(self.{v})",
                    "",
                ],
                [
                    f"{v} = {fn}('{a}.json')",
                    f"if not {v}:",
                    f'    raise ValueError("no {a} in {b}")',
                    f"print(f'{{len({v})}} {a} loaded')  # {rng.randint(2, 99)} expected",
                    "",
                ],
            )
        )
        out += block
    return out[:n]


_TOKEN = re.compile(r"(#.*$|\"[^\"]*\"|'[^']*'|\b\d+(?:\.\d+)?\b|\b[A-Za-z_]\w*\b|\s+|.)")
_KEYWORDS = {"import", "from", "def", "class", "return", "for", "in", "if", "not", "raise", "self", "as", "None"}


def draw_code(ui: UI, r: Rect, lines: Sequence[str], first_line: int, current: int) -> None:
    t, c = ui.t, ui.c
    f = ui.mono
    cw = f.getlength("M")
    h = ui.px(18)
    gutter = ui.px(52)
    y = r.y1 + ui.px(4)
    for i, line in enumerate(lines):
        if y + h > r.y2:
            break
        cy = y + h // 2
        if i == current:
            c.rect(Rect(r.x1 + gutter, y, r.x2, y + h), fill=mix(t.content, t.text, 0.06))
        number = str(first_line + i)
        c.text(r.x1 + gutter - ui.px(12) - text_width(f, number), cy, number, f, t.text_dim)
        col = 0
        max_cols = int((r.w - gutter - ui.px(16)) / cw)
        for token in _TOKEN.findall(line):
            if col + len(token) > max_cols:
                break
            if not token.isspace():
                color = (
                    t.comment
                    if token.startswith("#")
                    else (
                        t.string
                        if token[0] in "\"'"
                        else (
                            t.number
                            if token[0].isdigit()
                            else (
                                t.keyword
                                if token in _KEYWORDS
                                else t.function if token in FUNCS or token in CLASSES else t.text
                            )
                        )
                    )
                )
                c.text(r.x1 + gutter + int(col * cw), cy, token, f, color)
            col += len(token)
        y += h


@dataclass(frozen=True)
class DialogSpec:
    title: str
    fields: Tuple[Tuple[str, str], ...]
    choice: Tuple[str, str]
    options: Tuple[str, ...]
    radio: Tuple[str, Tuple[str, ...]]
    actions: Tuple[str, str]  # primary action and its near-namesake


DIALOGS: Dict[str, DialogSpec] = {
    "find": DialogSpec(
        "Find and Replace",
        (("Find what", "threshold"), ("Replace with", "limit")),
        ("Search mode", "Regular expression"),
        ("Match case", "Whole word", "Search in selection"),
        ("Scope", ("File", "Folder", "Project")),
        ("Replace", "Replace All"),
    ),
    "export_audio": DialogSpec(
        "Export Audio",
        (("File name", "night_drive_master"), ("Folder", "~/Music/Bounces")),
        ("Format", "WAV 24-bit"),
        ("Normalize", "Include return tracks", "Open folder when done"),
        ("Sample rate", ("44.1 kHz", "48 kHz", "96 kHz")),
        ("Export", "Export Selection"),
    ),
    "plot": DialogSpec(
        "Plot - Model",
        (("Printer/plotter", "DWG To PDF.pc3"), ("Number of copies", "1")),
        ("Paper size", "ISO A3"),
        ("Plot in background", "Plot object lineweights", "Plot with plot styles"),
        ("Orientation", ("Portrait", "Landscape", "Upside-down")),
        ("Plot", "Plot Preview"),
    ),
    "export_map": DialogSpec(
        "Export Map",
        (("File name", "flood_risk_overview"), ("Resolution", "300 dpi")),
        ("Format", "PDF"),
        ("Append georeference", "Export RDF metadata", "Draw active decorations"),
        ("Extent", ("Canvas", "Layer", "Custom")),
        ("Export", "Export Selection"),
    ),
    "export_image": DialogSpec(
        "Export As",
        (("File name", "poster_final_web"), ("Width", "1920 px")),
        ("Format", "PNG"),
        ("Embed color profile", "Include metadata", "Convert to sRGB"),
        ("Quality", ("Low", "Medium", "High")),
        ("Export", "Export Selection"),
    ),
    "print": DialogSpec(
        "Print",
        (("Printer", "Office LaserJet"), ("Pages", "1-12")),
        ("Paper", "A4 portrait"),
        ("Print in grayscale", "Collate copies", "Print gridlines"),
        ("Scaling", ("None", "Fit width", "Fit page")),
        ("Print", "Print Preview"),
    ),
}


def quick_dialog(ui: UI, body: Rect, kind: str) -> None:
    """An open modal dialog, placed off-centre so its controls do not sit on the screen centre."""
    rng, px = ui.rng, ui.px
    spec = DIALOGS[kind]
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


# ---- IDE -----------------------------------------------------------------------------------------


def compose_ide(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    status, main = body.bottom(px(22)), body.above(px(22))
    branch = rng.choice(("main", "develop", "feature/export-cli", "fix/cache-race"))
    errors, warnings = rng.randint(0, 4), rng.randint(0, 9)
    ui.status_bar(
        status,
        [branch, f"{errors} errors", f"{warnings} warnings"],
        [
            f"Ln {rng.randint(1, 400)}, Col {rng.randint(1, 80)}",
            "Spaces: 4",
            "UTF-8",
            "LF",
            rng.choice(("Python 3.11.7", "Python 3.12.2", "TypeScript 5.4")),
        ],
        fill=t.accent,
        color=t.accent_text,
    )
    activity, rest = main.left(px(48)), main.after(px(48))
    c.rect(activity, fill=mix(t.panel, t.titlebar, 0.5))
    ui.vertical_toolbar(
        activity,
        [
            Icon("copy", "explorer"),
            Icon("search", "search"),
            Icon("branch", "source_control"),
            Icon("bug", "debug"),
            Icon("extensions", "extensions"),
        ],
        "activity bar",
        icon=22,
    )
    ui.vertical_toolbar(
        activity.bottom(px(80)),
        [Icon("user", "account"), Icon("settings", "settings")],
        "activity bar",
        icon=20,
        active=-1,
    )
    side_w = px(rng.choice((220, 250, 280)))
    side, editor = rest.left(side_w), rest.after(side_w)
    c.rect(side, fill=t.panel)
    ui.panel_header(
        side.top(px(30)), "Explorer", [Icon("refresh", "refresh"), Icon("new_file", "new_file")], "Explorer"
    )
    project = rng.choice(("grounding-bench", "api-server", "etl-pipeline", "vision-tools"))
    nodes = [(0, project, "open_folder")]
    for d in ["src"] + rng_names(rng, PROJECT_DIRS[1:], 5):
        if d == "src":
            nodes.append((1, d, "open_folder"))
            nodes += [(2, f, "new_file") for f in rng_names(rng, SOURCE_FILES[:13], rng.randint(4, 8))]
        else:
            nodes.append((1, d, "folder"))
    nodes += [(1, f, "new_file") for f in rng_names(rng, SOURCE_FILES[13:], rng.randint(3, 6))]
    ui.tree(side.below(px(34)), nodes, "file explorer", selected=rng.randint(2, 6))
    # bottom panel
    bottom_h = px(rng.choice((160, 200, 240)))
    panel, editor = editor.bottom(bottom_h), editor.above(bottom_h)
    c.rect(panel, fill=t.panel)
    c.hline(panel.x1, panel.x2, panel.y1, t.border)
    ui.tabs(
        panel.top(px(30)).inset(px(8), 0),
        ["Problems", "Output", "Debug Console", "Terminal", "Ports"],
        3,
        "bottom panel",
        strip=t.panel,
        active_fill=t.panel,
    )
    ui.toolbar(
        panel.top(px(30)).right(px(110)),
        [Icon("add", "terminal"), Icon("trash", "delete"), Icon("close", "close_panel")],
        "terminal panel",
        icon=14,
    )
    term = panel.below(px(32)).inset(px(16), px(4))
    lines = [
        "$ pytest tests/ -q -n 2",
        "........F......s........",
        "FAILED tests/test_metrics.py::test_macro - AssertionError",
        f"1 failed, {rng.randint(30, 90)} passed, 1 skipped in {rng.randint(1, 9)}.{rng.randint(10, 99)}s",
        "$ git status --short",
        " M src/loader.py",
        "?? src/cache.py",
        "$ ",
    ]
    y = term.y1 + px(8)
    for line in lines:
        if y + px(16) > term.y2:
            break
        c.text(term.x1, y, fit(ui.mono, line, term.w), ui.mono, t.text)
        y += px(17)
    # editor tabs + run buttons
    files = [doc] + [f for f in rng_names(rng, SOURCE_FILES[:13], rng.randint(3, 6)) if f != doc]
    tabs_r = editor.top(px(34))
    ui.tabs(tabs_r.before(px(110)), files, 0, "editor", closable=True)
    c.rect(tabs_r.right(px(110)), fill=t.header)
    ui.toolbar(
        tabs_r.right(px(110)),
        [Icon("play", "run"), Icon("split", "split"), Icon("more", None)],
        "editor toolbar",
        icon=16,
    )
    crumbs = editor.below(px(34)).top(px(22))
    c.rect(crumbs, fill=t.content)
    x = crumbs.x1 + px(12)
    for i, part in enumerate(("src", files[0], rng.choice(FUNCS))):
        if i:
            x += ui.label(x, crumbs.cy, ">", None, ui.small, t.text_dim) + px(6)
        x += ui.label(x, crumbs.cy, part, None, ui.small, t.text_dim) + px(6)
    code = editor.below(px(56))
    c.rect(code, fill=t.content)
    first = rng.randint(1, 200)
    n = code.h // px(18) + 1
    draw_code(ui, code.before(px(96)), code_lines(rng, n), first, rng.randint(3, max(4, n - 4)))
    minimap = code.right(px(96)).before(px(14))
    for i in range(0, minimap.h - px(4), px(3)):
        w = (i * 37 + first * 11) % (minimap.w - px(16)) + px(8)
        c.hline(minimap.x1 + px(6), minimap.x1 + px(6) + w, minimap.y1 + px(4) + i, mix(t.content, t.text_dim, 0.35))
    ui.scrollbar(code.right(px(14)), True, rng.uniform(0.05, 0.6), rng.uniform(0.12, 0.3), "editor")
    if rng.random() < 0.25:
        quick_dialog(ui, body, "find")


# ---- DAW -----------------------------------------------------------------------------------------


def compose_daw(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    transport = body.top(px(44))
    c.rect(transport, fill=t.toolbar)
    c.hline(transport.x1, transport.x2, transport.y2 - 1, t.border)
    items = [
        Icon("skip_back", "skip_back"),
        Icon("rewind", "rewind"),
        Icon("fast_forward", "fast_forward"),
        Icon("stop", "stop"),
        Icon("play", "play"),
        Icon("record", "record"),
        SEPARATOR,
        Icon("loop", "loop", pressed=rng.random() < 0.5),
        Icon("metronome", "metronome", pressed=rng.random() < 0.5),
        SEPARATOR,
        Field("tempo", f"{rng.choice((92, 110, 120, 124, 128, 140))}.00", 64),
        Field("time signature", "4/4", 44),
    ]
    x = ui.toolbar(transport, items, "transport bar", icon=18, gap=10)
    clock = f"{rng.randint(0, 3):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}"
    big = font("mono", px(20))
    c.rect(
        Rect(x + px(8), transport.y1 + px(6), x + px(8) + text_width(big, clock) + px(20), transport.y2 - px(6)),
        fill=t.content,
        radius=px(3),
    )
    c.text(x + px(18), transport.cy, clock, big, t.accent if not t.dark else (120, 220, 140))
    right = transport.right(px(330))
    ui.toolbar(
        right,
        [Label("Export", "export"), Label("Export Selection", None), Icon("settings", "settings")],
        "transport bar",
        icon=16,
    )
    rest = body.below(px(44))
    bottom_h = px(rng.choice((150, 180)))
    device, rest = rest.bottom(bottom_h), rest.above(bottom_h)
    browser_w = px(rng.choice((0, 200, 230)))
    if browser_w:
        browser, rest = rest.left(browser_w), rest.after(browser_w)
        c.rect(browser, fill=t.panel)
        ui.panel_header(browser.top(px(28)), "Browser", [Icon("search", "search")], "Browser")
        nodes = (
            [(0, "Drums", "open_folder")]
            + [(1, s, "waveform") for s in rng_names(rng, SAMPLES[:5], 4)]
            + [(0, "Loops", "open_folder")]
            + [(1, s, "waveform") for s in rng_names(rng, SAMPLES[5:], 4)]
            + [(0, "Presets", "folder"), (0, "Plug-ins", "folder")]
        )
        ui.tree(browser.below(px(30)), nodes, "browser", row=21)
        c.vline(browser.x2 - 1, browser.y1, browser.y2, t.border)
    head_w = px(230)
    heads, arrange = rest.left(head_w), rest.after(head_w)
    ruler = arrange.top(px(26))
    c.rect(heads.top(px(26)), fill=t.header)
    with c.element(
        Rect(heads.x2 - px(26), heads.y1 + px(5), heads.x2 - px(10), heads.y1 + px(21)),
        icon_spec("add", "add_track", "track list"),
    ):
        c.icon("add", heads.x2 - px(26), heads.y1 + px(5), px(16), t.icon)
    c.rect(ruler, fill=t.header)
    bar_w = px(rng.choice((48, 64, 80)))
    for i, x in enumerate(range(ruler.x1, ruler.x2 - px(20), bar_w)):
        c.vline(x, ruler.y1 + px(14), ruler.y2, t.text_dim)
        if i % 2 == 0:
            c.text(x + px(3), ruler.y1 + px(8), str(i + 1), ui.tiny, t.text_dim)
    lane_area = arrange.below(px(26))
    c.rect(lane_area, fill=t.content)
    for x in range(lane_area.x1, lane_area.x2, bar_w):
        c.vline(x, lane_area.y1, lane_area.y2, t.grid)
    track_h = px(rng.choice((48, 56, 64)))
    names = rng_names(rng, TRACKS, 12)
    y = heads.y1 + px(26)
    for n, name in enumerate(names):
        if y + track_h > heads.y2:
            break
        color = PALETTE[n % len(PALETTE)]
        row = Rect(heads.x1, y, heads.x2, y + track_h)
        c.rect(row, fill=t.panel)
        c.rect(row.left(px(5)), fill=color)
        c.hline(row.x1, row.x2, row.y2 - 1, t.border)
        ui.label(
            row.x1 + px(12),
            row.y1 + px(13),
            name,
            text_spec(name, "track name", "track list"),
            ui.font,
            t.text,
            "track list",
        )
        bx = row.x1 + px(12)
        for letter in ("M", "S"):
            box = Rect(bx, row.y2 - px(24), bx + px(20), row.y2 - px(6))
            spec = other_spec(
                "track button",
                f"{letter}@{name}",
                (f"Click the {letter} button of the {name} track.",),
                tuple(
                    p.replace("{ctx}", name)
                    for p in (
                        ("Mute the {ctx} track.", "Silence {ctx}.")
                        if letter == "M"
                        else ("Solo the {ctx} track.", "Listen to {ctx} alone.")
                    )
                ),
                element_type="icon",
            )
            with c.element(box, spec):
                on = rng.random() < 0.2
                c.rect(
                    box,
                    fill=(230, 190, 50) if on and letter == "S" else (90, 150, 230) if on else t.button,
                    outline=t.button_border,
                    radius=px(2),
                )
                c.text(
                    box.cx - text_width(ui.small, letter) // 2,
                    box.cy,
                    letter,
                    ui.small,
                    t.text if not on else (20, 20, 20),
                )
            bx += px(24)
        arm = Rect(bx, row.y2 - px(24), bx + px(20), row.y2 - px(6))
        with c.element(
            arm,
            other_spec(
                "track button",
                f"arm@{name}",
                (f"Click the record-arm button of the {name} track.",),
                (f"Arm the {name} track for recording.",),
                element_type="icon",
            ),
        ):
            c.rect(arm, fill=t.button, outline=t.button_border, radius=px(2))
            s = px(10)
            c.ellipse(
                Rect(arm.cx - s // 2, arm.cy - s // 2, arm.cx - s // 2 + s, arm.cy - s // 2 + s), fill=(200, 60, 60)
            )
        ui.slider(
            Rect(bx + px(32), row.y2 - px(22), row.x2 - px(40), row.y2 - px(8)), f"{name} volume", rng.uniform(0.3, 0.9)
        )
        c.icon("knob", row.x2 - px(30), row.y2 - px(24), px(18), t.icon)
        # clips on the lane
        lane = Rect(lane_area.x1, y, lane_area.x2, y + track_h)
        c.hline(lane.x1, lane.x2, lane.y2 - 1, t.grid)
        x = lane.x1 + bar_w * rng.randint(0, 2)
        take = 1
        while x < lane.x2 - bar_w * 2:
            length = bar_w * rng.choice((2, 4, 4, 8))
            clip = Rect(x + 1, lane.y1 + px(3), min(lane.x2 - px(4), x + length - 1), lane.y2 - px(4))
            label = f"{name} {take}"
            with c.element(clip, text_spec(label, "clip", "arrangement", element_type="other"), "arrangement"):
                c.rect(clip, fill=mix(color, t.content, 0.25), outline=color, radius=px(3))
                c.rect(clip.top(px(15)), fill=color, radius=px(3))
                c.text(clip.x1 + px(5), clip.y1 + px(8), fit(ui.tiny, label, clip.w - px(8)), ui.tiny, text_on(color))
                mid = (clip.y1 + px(15) + clip.y2) // 2
                amp = (clip.y2 - clip.y1 - px(20)) // 2
                for k in range(clip.x1 + px(3), clip.x2 - px(3), px(3)):
                    a = max(1, int(amp * (0.25 + 0.75 * (((k * 7919 + n * 104729) % 97) / 97.0))))
                    c.vline(k, mid - a, mid + a, mix(color, text_on(color), 0.35))
            take += 1
            x += length + bar_w * rng.choice((0, 0, 1, 2))
        y += track_h
    c.vline(heads.x2 - 1, heads.y1, heads.y2, t.border)
    playhead = lane_area.x1 + int(lane_area.w * rng.uniform(0.1, 0.45))
    c.vline(playhead, ruler.y1, lane_area.y2, (230, 70, 60))
    # device chain
    c.rect(device, fill=t.panel)
    c.hline(device.x1, device.x2, device.y1, t.border)
    x = device.x1 + px(10)
    for dev in rng_names(rng, ("EQ Eight", "Compressor", "Reverb", "Delay", "Saturator", "Limiter"), 4):
        w = px(rng.choice((220, 260, 300)))
        if x + w > device.x2 - px(10):
            break
        card = Rect(x, device.y1 + px(10), x + w, device.y2 - px(10))
        c.rect(card, fill=t.header, outline=t.border, radius=px(4))
        ui.label(card.x1 + px(10), card.y1 + px(13), dev, text_spec(dev, "label", None), ui.bold, t.text)
        kx = card.x1 + px(14)
        for knob in rng_names(rng, ("Freq", "Gain", "Q", "Attack", "Release", "Ratio", "Mix", "Decay", "Drive"), 3):
            s = px(30)
            spec = other_spec(
                "knob",
                f"{knob}@{dev}",
                (f"Turn the {knob} knob of the {dev}.",),
                (f"Adjust the {knob.lower()} of the {dev}.",),
            )
            with c.element(Rect(kx, card.y1 + px(34), kx + s, card.y1 + px(34) + s), spec):
                c.icon("knob", kx, card.y1 + px(34), s, t.icon)
            c.text(kx + s // 2 - text_width(ui.tiny, knob) // 2, card.y1 + px(76), knob, ui.tiny, t.text_dim)
            kx += px(66)
        x += w + px(10)
    if rng.random() < 0.2:
        quick_dialog(ui, body, "export_audio")


# ---- CAD -----------------------------------------------------------------------------------------

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


def split_rooms(rng: random.Random, r: Rect, depth: int, minimum: int) -> List[Rect]:
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
    for room, name in zip(rooms, names):
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


def compose_cad(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    tabs = body.top(px(28))
    ui.tabs(
        tabs,
        ["Home", "Insert", "Annotate", "Parametric", "View", "Manage", "Output", "Express Tools"],
        0,
        "ribbon",
        strip=t.toolbar,
        active_fill=t.panel,
    )
    ribbon = body.below(px(28)).top(px(96))
    c.rect(ribbon, fill=t.panel)
    c.hline(ribbon.x1, ribbon.x2, ribbon.y2 - 1, t.border)
    x = ribbon.x1 + px(6)
    groups = (
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
    for gname, tools in groups:
        gx = x
        big = gname == "Draw"
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
                    px(34) + max(text_width(ui.small, lab) for _, lab, _ in tools[k * 3 : k * 3 + 3])
                    for k in range(col)
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
        if x > ribbon.x2 - px(20):
            break
        c.text((gx + x) // 2 - text_width(ui.tiny, gname) // 2, ribbon.y2 - px(11), gname, ui.tiny, t.text_dim)
        c.vline(x + px(2), ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
        x += px(8)
    rest = body.below(px(124))
    status = rest.bottom(px(24))
    toggles = ["MODEL", "GRID", "SNAP", "ORTHO", "POLAR", "OSNAP", "OTRACK", "LWT", "SNAP MODE"]
    coords = f"{rng.uniform(-500, 4000):.4f}, {rng.uniform(-200, 3000):.4f}, 0.0000"
    ui.status_bar(status, [coords] + toggles, ["Decimal", "1:1", "100%"])
    rest = rest.above(px(24))
    tabs_bottom = rest.bottom(px(24))
    x = ui.tabs(tabs_bottom.before(px(30)), ["Model", "Layout1", "Layout2", "Site Plan"], 0, "layout tabs")
    with c.element(
        Rect(x + px(6), tabs_bottom.cy - px(7), x + px(20), tabs_bottom.cy + px(7)),
        icon_spec("add", None, "layout tabs"),
    ):
        c.icon("add", x + px(6), tabs_bottom.cy - px(7), px(14), t.icon)
    rest = rest.above(px(24))
    command = rest.bottom(px(80))
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
    rest = rest.above(px(80))
    props_w = px(rng.choice((0, 250, 280)))
    view = rest
    if props_w:
        props, view = rest.right(props_w), rest.before(props_w)
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
    # view cube and UCS icon
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
    if rng.random() < 0.2:
        quick_dialog(ui, body, "plot")


# ---- GIS -----------------------------------------------------------------------------------------


def compose_gis(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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
    rest = body.below(px(64))
    status, rest = rest.bottom(px(26)), rest.above(px(26))
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
    side_w = px(rng.choice((240, 270, 300)))
    side, mapr = rest.left(side_w), rest.after(side_w)
    c.rect(side, fill=t.panel)
    c.vline(side.x2 - 1, side.y1, side.y2, t.border)
    layers_r = side.top(side.h // 2 + px(40))
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
    browser = side.below(layers_r.h)
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
    # map canvas
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
    if rng.random() < 0.2:
        quick_dialog(ui, body, "export_map")


# ---- image editor --------------------------------------------------------------------------------


def compose_image_editor(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    options = body.top(px(36))
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
    rest = body.below(px(36))
    status, rest = rest.bottom(px(24)), rest.above(px(24))
    zoom = rng.choice(("66.67%", "100%", "50%", "33.33%", "200%"))
    ui.status_bar(
        status,
        [zoom, f"Doc: {rng.randint(5, 90)}.{rng.randint(0, 9)}M/{rng.randint(91, 300)}.{rng.randint(0, 9)}M"],
        [f"{rng.choice((1920, 3000, 4096))} x {rng.choice((1080, 2000, 2731))} px", "RGB/8"],
    )
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
    panels_w = px(rng.choice((260, 300)))
    panels, center = rest.right(panels_w), rest.before(panels_w)
    c.rect(panels, fill=t.panel)
    c.vline(panels.x1, panels.y1, panels.y2, t.border)
    # Color / Swatches
    color_r = panels.top(px(130))
    ui.tabs(
        color_r.top(px(26)), ["Color", "Swatches", "Gradients"], 1, "color panel", strip=t.header, active_fill=t.panel
    )
    names = ("Crimson", "Orange", "Gold", "Lime", "Teal", "Sky", "Navy", "Violet", "Magenta", "Coral", "Olive", "Slate")
    colors = (
        (220, 20, 60),
        (255, 140, 0),
        (255, 200, 0),
        (130, 210, 50),
        (0, 140, 140),
        (90, 170, 230),
        (20, 40, 120),
        (140, 80, 200),
        (220, 40, 180),
        (255, 120, 100),
        (128, 128, 0),
        (100, 110, 130),
    )
    sx, sy = color_r.x1 + px(10), color_r.y1 + px(36)
    cell = px(18)
    for i, (name, col) in enumerate(zip(names, colors)):
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
    layers_r = panels.below(px(130))
    history_h = px(150) if rng.random() < 0.5 else 0
    if history_h:
        hist, layers_r = layers_r.bottom(history_h), layers_r.above(history_h)
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
    # document
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
    doc = board.inset(board.w // rng.choice((8, 10, 14)), board.h // rng.choice((8, 10, 14)))
    sky1, sky2 = PALETTE[rng.randint(0, 9)], (250, 230, 200)
    for yy in range(doc.y1, doc.y2, 4):
        c.rect(Rect(doc.x1, yy, doc.x2, min(doc.y2, yy + 4)), fill=mix(sky1, sky2, (yy - doc.y1) / max(1, doc.h)))
    sun = rng.randint(doc.w // 8, doc.w // 5)
    c.ellipse(
        Rect(doc.x1 + doc.w // 2, doc.y1 + doc.h // 6, doc.x1 + doc.w // 2 + sun, doc.y1 + doc.h // 6 + sun),
        fill=(255, 220, 120),
    )
    for k, shade in enumerate(((90, 120, 90), (60, 90, 70), (40, 60, 50))):
        base = doc.y1 + doc.h // 2 + k * doc.h // 8
        pts = (
            [(doc.x1, doc.y2)]
            + [(doc.x1 + i * doc.w // 6, base + rng.randint(-doc.h // 8, doc.h // 10)) for i in range(7)]
            + [(doc.x2, doc.y2)]
        )
        c.polygon(pts, fill=shade)
    title = rng.choice(("SUMMER FEST", "NORTHERN LIGHTS", "OPEN AIR 2024", "WILD COAST"))
    tf = font("bold", max(12, doc.h // 10))
    c.text(doc.x1 + doc.w // 12, doc.y1 + doc.h // 8, title, tf, (255, 255, 255))
    if rng.random() < 0.2:
        quick_dialog(ui, body, "export_image")


# ---- spreadsheet ---------------------------------------------------------------------------------


def compose_spreadsheet(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    tabs = body.top(px(28))
    ui.tabs(
        tabs,
        ["File", "Home", "Insert", "Page Layout", "Formulas", "Data", "Review", "View", "Automate", "Help"],
        1,
        "ribbon",
        strip=t.toolbar,
        active_fill=t.panel,
    )
    ribbon = body.below(px(28)).top(px(92))
    c.rect(ribbon, fill=t.panel)
    c.hline(ribbon.x1, ribbon.x2, ribbon.y2 - 1, t.border)
    x = ribbon.x1 + px(8)
    # Clipboard
    with c.element(
        Rect(x, ribbon.y1 + px(6), x + px(40), ribbon.y1 + px(62)),
        text_spec("Paste", "toolbar button", "ribbon", "paste"),
        "ribbon",
    ):
        c.icon("paste", x + px(6), ribbon.y1 + px(8), px(28), t.icon)
        c.text(x + px(20) - text_width(ui.small, "Paste") // 2, ribbon.y1 + px(50), "Paste", ui.small, t.text)
    ui.vertical_toolbar(
        Rect(x + px(46), ribbon.y1, x + px(70), ribbon.y2 - px(18)),
        [Icon("cut", "cut"), Icon("copy", "copy"), Icon("brush", None)],
        "Clipboard group",
        icon=14,
        active=-1,
    )
    c.text(x + px(12), ribbon.y2 - px(10), "Clipboard", ui.tiny, t.text_dim)
    x += px(84)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    x += px(8)
    ui.dropdown(
        Rect(x, ribbon.y1 + px(8), x + px(130), ribbon.y1 + px(30)), "font", rng.choice(("Calibri", "Aptos", "Arial"))
    )
    ui.dropdown(
        Rect(x + px(136), ribbon.y1 + px(8), x + px(186), ribbon.y1 + px(30)),
        "font size",
        rng.choice(("10", "11", "12")),
    )
    ui.toolbar(
        Rect(x - px(6), ribbon.y1 + px(34), x + px(200), ribbon.y1 + px(60)),
        [Icon("bold", "bold"), Icon("italic", "italic"), Icon("underline", "underline"), SEPARATOR, Icon("fill", None)],
        "Font group",
        icon=16,
        gap=8,
    )
    c.text(x + px(80), ribbon.y2 - px(10), "Font", ui.tiny, t.text_dim)
    x += px(200)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    ui.toolbar(
        Rect(x, ribbon.y1 + px(6), x + px(150), ribbon.y1 + px(32)),
        [Icon("align_left", "align_left"), Icon("align_center", "align_center"), Icon("align_right", "align_right")],
        "Alignment group",
        icon=16,
        gap=10,
    )
    ui.toolbar(
        Rect(x, ribbon.y1 + px(34), x + px(260), ribbon.y1 + px(60)),
        [Label("Wrap Text", "wrap_text", "wrap"), Label("Merge & Center", "merge_cells", "merge")],
        "Alignment group",
        icon=16,
    )
    c.text(x + px(90), ribbon.y2 - px(10), "Alignment", ui.tiny, t.text_dim)
    x += px(268)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    ui.dropdown(
        Rect(x + px(8), ribbon.y1 + px(8), x + px(128), ribbon.y1 + px(30)),
        "number format",
        rng.choice(("General", "Number", "Currency", "Accounting")),
    )
    ui.toolbar(
        Rect(x, ribbon.y1 + px(34), x + px(140), ribbon.y1 + px(60)),
        [Icon("percent", "percent"), Icon("sum", "autosum")],
        "Number group",
        icon=16,
        gap=10,
    )
    c.text(x + px(40), ribbon.y2 - px(10), "Number", ui.tiny, t.text_dim)
    x += px(140)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    ui.toolbar(
        Rect(x, ribbon.y1 + px(6), ribbon.x2, ribbon.y1 + px(32)),
        [
            Label("Insert", None),
            Label("Insert Sheet Rows", None),
            Label("Delete", None),
            Label("Format", None),
            Label("Format as Table", None),
        ],
        "Cells group",
    )
    ui.toolbar(
        Rect(x, ribbon.y1 + px(34), ribbon.x2, ribbon.y1 + px(60)),
        [
            Label("Sort & Filter", "sort", "sort"),
            Label("Find & Select", None, "search"),
            Icon("filter", "filter"),
            Icon("bar_chart", "chart"),
            Icon("line_chart", None),
        ],
        "Editing group",
    )
    # formula bar
    fbar = body.below(px(120)).top(px(30))
    c.rect(fbar, fill=t.panel)
    col_names = [chr(ord("A") + i) for i in range(26)]
    sel_r, sel_c = rng.randint(2, 12), rng.randint(1, 4)
    addr = f"{col_names[sel_c]}{sel_r + 1}"
    ui.field(Rect(fbar.x1 + px(6), fbar.y1 + px(4), fbar.x1 + px(90), fbar.y2 - px(4)), "name box", addr)
    with c.element(
        Rect(fbar.x1 + px(100), fbar.cy - px(8), fbar.x1 + px(116), fbar.cy + px(8)),
        icon_spec("function", "insert_function", "formula bar"),
    ):
        c.icon("function", fbar.x1 + px(100), fbar.cy - px(8), px(16), t.icon)
    ui.field(
        Rect(fbar.x1 + px(124), fbar.y1 + px(4), fbar.x2 - px(6), fbar.y2 - px(4)),
        "formula bar",
        rng.choice(("=SUM(C2:C14)", "=AVERAGE(D2:D40)", "=VLOOKUP(A2,Data!A:F,4,FALSE)", '=IF(E5>0,E5/D5,"")')),
    )
    rest = body.below(px(150))
    status, rest = rest.bottom(px(24)), rest.above(px(24))
    ui.status_bar(
        status,
        ["Ready", "Accessibility: Good to go"],
        [
            "100%",
            f"Sum: {rng.randint(1000, 99999):,}",
            f"Count: {rng.randint(2, 40)}",
            f"Average: {rng.uniform(10, 9000):,.2f}",
        ],
    )
    sheets_r, grid = rest.bottom(px(28)), rest.above(px(28))
    c.rect(sheets_r, fill=t.header)
    sheet_names = rng_names(rng, SHEETS, rng.randint(4, 7))
    x = ui.tabs(sheets_r.before(sheets_r.w // 2).after(px(60)), sheet_names, 0, "sheet tabs", active_fill=t.content)
    with c.element(
        Rect(x + px(8), sheets_r.cy - px(7), x + px(22), sheets_r.cy + px(7)), icon_spec("add", None, "sheet tabs")
    ):
        c.icon("add", x + px(8), sheets_r.cy - px(7), px(14), t.icon)
    ui.scrollbar(sheets_r.right(sheets_r.w // 2 - px(10)).inset(0, px(6)), False, rng.uniform(0, 0.3), 0.35, "sheet")
    # grid
    c.rect(grid, fill=t.content)
    head_h, rowh, rowhead = px(22), px(21), px(40)
    widths = [px(rng.choice((150, 170)))] + [px(rng.choice((80, 90, 100))) for _ in range(25)]
    c.rect(grid.top(head_h), fill=t.header)
    c.rect(grid.left(rowhead), fill=t.header)
    xs = [grid.x1 + rowhead]
    for w in widths:
        xs.append(xs[-1] + w)
    for i, name in enumerate(col_names):
        if xs[i + 1] > grid.x2 - px(14):
            break
        cell = Rect(xs[i], grid.y1, xs[i + 1], grid.y1 + head_h)
        with c.element(
            cell,
            other_spec(
                "column header",
                name,
                (f"Click the column {name} header.", f"Select all of column {name}."),
                element_type="text",
            ),
        ):
            c.rect(cell, fill=mix(t.header, t.text, 0.04), outline=t.grid)
            c.text(cell.cx - text_width(ui.small, name) // 2, cell.cy, name, ui.small, t.text_dim)
    n_rows = (grid.h - head_h) // rowh
    for r in range(n_rows):
        y = grid.y1 + head_h + r * rowh
        c.hline(grid.x1, grid.x2, y + rowh - 1, t.grid)
        c.text(
            grid.x1 + rowhead // 2 - text_width(ui.small, str(r + 1)) // 2,
            y + rowh // 2,
            str(r + 1),
            ui.small,
            t.text_dim,
        )
    for i in range(len(col_names)):
        if xs[i] > grid.x2:
            break
        c.vline(xs[i], grid.y1 + head_h, grid.y2, t.grid)
    labels = rng_names(rng, ROW_LABELS, min(len(ROW_LABELS), n_rows - 2))
    quarters = ["Q1 2024", "Q2 2024", "Q3 2024", "Q4 2024", "FY 2024", "Budget", "Variance", "Var %"]
    for i, q in enumerate(quarters):
        if xs[i + 2] > grid.x2 - px(14):
            break
        ui.label(
            xs[i + 1] + px(4), grid.y1 + head_h + rowh // 2, q, text_spec(q, "column header", None), ui.bold, t.text
        )
    for r, name in enumerate(labels):
        y = grid.y1 + head_h + (r + 1) * rowh + rowh // 2
        ui.label(xs[0] + px(4), y, name, text_spec(name, "cell", None), ui.font, t.text)
        for i in range(len(quarters)):
            if xs[i + 2] > grid.x2 - px(14):
                break
            value = rng.uniform(-2000, 90000)
            text = f"{value:,.0f}" if i < 7 else f"{rng.uniform(-30, 30):.1f}%"
            color = (200, 40, 40) if value < 0 or text.startswith("-") else t.text
            c.text(xs[i + 2] - px(4) - text_width(ui.font, text), y, text, ui.font, color)
    sel = Rect(xs[sel_c], grid.y1 + head_h + sel_r * rowh - 1, xs[sel_c + 1] + 1, grid.y1 + head_h + (sel_r + 1) * rowh)
    c.rect(sel, outline=(33, 115, 70), width=px(2))
    ui.scrollbar(grid.right(px(14)).below(head_h), True, rng.uniform(0, 0.5), 0.2, "worksheet")
    if rng.random() < 0.2:
        quick_dialog(ui, body, "print")


# ---- analytics console ---------------------------------------------------------------------------


def compose_analytics(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    top = body.top(px(44))
    c.rect(top, fill=t.titlebar)
    c.hline(top.x1, top.x2, top.y2 - 1, t.border)
    with c.element(
        Rect(top.x1 + px(12), top.cy - px(10), top.x1 + px(32), top.cy + px(10)),
        icon_spec("hamburger", None, "top bar"),
    ):
        c.icon("hamburger", top.x1 + px(12), top.cy - px(10), px(20), t.title_text)
    ui.label(top.x1 + px(44), top.cy, app, None, font("bold", px(14)), t.title_text)
    ui.search_field(
        Rect(top.cx - px(220), top.y1 + px(8), top.cx + px(60), top.y2 - px(8)),
        "Search dashboards or type > for commands",
        "dashboard search",
    )
    ui.toolbar(
        top.right(px(170)),
        [Icon("add", None), Icon("help", "help"), Icon("bell", "notifications"), Icon("user", "account")],
        "top bar",
        icon=18,
        gap=14,
    )
    rest = body.below(px(44))
    nav_w = px(rng.choice((200, 220)))
    nav, main = rest.left(nav_w), rest.after(nav_w)
    c.rect(nav, fill=t.panel)
    c.vline(nav.x2 - 1, nav.y1, nav.y2, t.border)
    ui.list_rows(nav.inset(0, px(10)), NAV_ANALYTICS, "navigation", selected=1, row=32)
    c.rect(main, fill=t.content)
    header = main.top(px(48)).inset(px(16), 0)
    ui.label(header.x1, header.cy, doc, text_spec(doc, "label"), font("bold", px(16)))
    x = header.x2
    for item in (
        ("button", "Export CSV"),
        ("button", "Export"),
        ("button", "Save dashboard"),
        ("icon", "share"),
        ("icon", "refresh"),
    ):
        if item[0] == "icon":
            s = px(18)
            x -= s + px(8)
            with c.element(
                Rect(x, header.cy - s // 2, x + s, header.cy - s // 2 + s),
                icon_spec(item[1], item[1], "dashboard header"),
            ):
                c.icon(item[1], x, header.cy - s // 2, s, t.icon)
        else:
            w = text_width(ui.font, item[1]) + px(22)
            x -= w + px(8)
            ui.button(
                Rect(x, header.cy - px(14), x + w, header.cy + px(14)),
                item[1],
                "export" if item[1] == "Export" else None,
                primary=item[1] == "Save dashboard",
            )
    ui.dropdown(
        Rect(x - px(168), header.cy - px(14), x - px(12), header.cy + px(14)),
        "time range",
        rng.choice(("Last 24 hours", "Last 7 days", "Last 6 hours", "Last 30 days")),
    )
    chips = main.below(px(48)).top(px(32)).inset(px(16), 0)
    x = chips.x1
    for chip in rng_names(
        rng, ("env: prod", "region: eu-west-1", "service: api", "status: 5xx", "team: payments", "host: web-03"), 3
    ):
        w = text_width(ui.small, chip) + px(34)
        r = Rect(x, chips.y1 + px(4), x + w, chips.y2 - px(4))
        with c.element(r, text_spec(chip, "chip", None)):
            c.rect(r, fill=mix(t.content, t.accent, 0.15), outline=mix(t.content, t.accent, 0.5), radius=r.h // 2)
            c.text(r.x1 + px(10), r.cy, chip, ui.small, t.text)
            c.icon("close", r.x2 - px(18), r.cy - px(4), px(8), t.text_dim)
        x += w + px(8)
    grid = main.below(px(84)).inset(px(16), px(8))
    cols = 4 if grid.w > px(1000) else 3
    gap = px(12)
    card_w = (grid.w - gap * (cols - 1)) // cols
    kpis = rng_names(rng, METRICS, cols)
    for i, metric in enumerate(kpis):
        r = Rect(grid.x1 + i * (card_w + gap), grid.y1, grid.x1 + i * (card_w + gap) + card_w, grid.y1 + px(92))
        c.rect(r, fill=t.panel, outline=t.border, radius=px(4))
        ui.label(r.x1 + px(12), r.y1 + px(16), metric, text_spec(metric, "card"), ui.small, t.text_dim)
        value = rng.choice(
            (
                f"{rng.uniform(1, 999):.1f}",
                f"{rng.randint(1, 99)}%",
                f"{rng.randint(10, 900)} ms",
                f"{rng.randint(1, 90)}k",
            )
        )
        c.text(r.x1 + px(12), r.y1 + px(50), value, font("bold", px(26)), t.text)
        delta = rng.uniform(-12, 12)
        c.text(
            r.x1 + px(12),
            r.y2 - px(14),
            f"{'+' if delta >= 0 else ''}{delta:.1f}% vs last week",
            ui.tiny,
            (40, 160, 80) if delta >= 0 else (210, 60, 60),
        )
    charts = grid.below(px(104))
    chart_h = charts.h // 2 - px(6)
    line_r = Rect(charts.x1, charts.y1, charts.x1 + charts.w * 3 // 5, charts.y1 + chart_h)
    bar_r = Rect(line_r.x2 + gap, charts.y1, charts.x2, charts.y1 + chart_h)
    for r, title in (
        (line_r, rng.choice(METRICS)),
        (bar_r, rng.choice(("Errors by service", "Requests by region", "Top endpoints"))),
    ):
        c.rect(r, fill=t.panel, outline=t.border, radius=px(4))
        ui.label(r.x1 + px(12), r.y1 + px(16), title, None, ui.bold)
        with c.element(
            Rect(r.x2 - px(26), r.y1 + px(8), r.x2 - px(10), r.y1 + px(24)), icon_spec("more", None, f"{title} panel")
        ):
            c.icon("more", r.x2 - px(26), r.y1 + px(8), px(16), t.icon)
    plot = Rect(line_r.x1 + px(48), line_r.y1 + px(36), line_r.x2 - px(16), line_r.y2 - px(44))
    y_step = rng.choice((25, 50, 100, 250))
    for k in range(5):
        gy = plot.y1 + k * plot.h // 4
        c.hline(plot.x1, plot.x2, gy, t.grid)
        c.text(plot.x1 - px(40), gy, f"{(4 - k) * y_step}", ui.tiny, t.text_dim)
    series = rng_names(rng, ("api", "web", "worker", "cron", "auth"), 3)
    for s_i, name in enumerate(series):
        color = PALETTE[s_i]
        pts = []
        v = rng.uniform(0.3, 0.7)
        for k in range(0, plot.w, max(4, px(12))):
            v = min(0.95, max(0.05, v + rng.uniform(-0.08, 0.08)))
            pts.append((plot.x1 + k, plot.y2 - int(v * plot.h)))
        c.line(pts, color, px(2))
    for k in range(6):
        hx = plot.x1 + k * plot.w // 5
        c.text(hx - px(14), plot.y2 + px(10), f"{(k * 4) % 24:02d}:00", ui.tiny, t.text_dim)
    lx = plot.x1
    for s_i, name in enumerate(series):
        c.rect(Rect(lx, line_r.y2 - px(20), lx + px(14), line_r.y2 - px(16)), fill=PALETTE[s_i])
        lx += (
            px(20) + ui.label(lx + px(20), line_r.y2 - px(18), name, text_spec(name, "legend item"), ui.small) + px(16)
        )
    bplot = Rect(bar_r.x1 + px(16), bar_r.y1 + px(40), bar_r.x2 - px(16), bar_r.y2 - px(12))
    cats = rng_names(rng, ("us-east-1", "eu-west-1", "ap-south-1", "sa-east-1", "eu-central-1", "us-west-2"), 5)
    bh = bplot.h // len(cats)
    for i, cat in enumerate(cats):
        y = bplot.y1 + i * bh
        c.text(bplot.x1, y + bh // 2, cat, ui.small, t.text_dim)
        w = int((bplot.w - px(100)) * rng.uniform(0.15, 1.0))
        c.rect(Rect(bplot.x1 + px(96), y + px(4), bplot.x1 + px(96) + w, y + bh - px(4)), fill=PALETTE[(i + 3) % 10])
    table = Rect(charts.x1, charts.y1 + chart_h + px(12), charts.x2, charts.y2)
    c.rect(table, fill=t.panel, outline=t.border, radius=px(4))
    headers = ("Endpoint", "Method", "Requests", "Errors", "p50", "p95", "Owner")
    colw = table.w // len(headers)
    for i, hname in enumerate(headers):
        ui.label(
            table.x1 + px(12) + i * colw,
            table.y1 + px(16),
            hname,
            text_spec(hname, "column header", "table"),
            ui.bold,
            ctx="table",
        )
    c.hline(table.x1, table.x2, table.y1 + px(30), t.border)
    endpoints = (
        "/api/v1/orders",
        "/api/v1/orders/{id}",
        "/api/v1/users",
        "/api/v1/users/{id}/roles",
        "/api/v1/login",
        "/api/v1/logout",
        "/api/v1/search",
        "/api/v1/search/suggest",
        "/healthz",
        "/metrics",
        "/api/v1/export",
        "/api/v1/export/csv",
        "/api/v1/invoices",
        "/api/v1/invoices/{id}/pdf",
        "/api/v2/orders",
        "/graphql",
    )
    y = table.y1 + px(44)
    for ep in rng_names(rng, endpoints, len(endpoints)):
        if y + px(12) > table.y2:
            break
        cells = (
            ep,
            rng.choice(("GET", "POST", "PUT")),
            f"{rng.randint(100, 99999):,}",
            str(rng.randint(0, 500)),
            f"{rng.randint(5, 90)} ms",
            f"{rng.randint(90, 900)} ms",
            rng.choice(("payments", "platform", "search", "growth")),
        )
        for i, cell in enumerate(cells):
            if i == 0:
                ui.label(
                    table.x1 + px(12),
                    y,
                    cell,
                    text_spec(cell, "link", "table"),
                    ui.small,
                    t.accent if not t.dark else (110, 170, 250),
                    ctx="table",
                )
            else:
                c.text(table.x1 + px(12) + i * colw, y, cell, ui.small, t.text)
        y += px(24)


# ---- terminal ------------------------------------------------------------------------------------


def shell_session(rng: random.Random, n: int) -> List[Tuple[str, Optional[str]]]:
    """`n` lines of a shell session: (text, clickable tail such as a file name or a URL)."""
    user = rng.choice(("dev", "alice", "ops", "build"))
    prompt = f"{user}@{rng.choice(('workstation', 'prod-db-01', 'ci-runner'))}:~/project$ "
    blocks: List[List[Tuple[str, Optional[str]]]] = []
    listing = [(prompt + "ls -la", None)]
    for name in rng_names(rng, SOURCE_FILES, 12):
        listing.append(
            (
                f"-rw-r--r--  1 {user} staff {rng.randint(120, 99999):>6} Mar {rng.randint(1, 28):>2} "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} ",
                name,
            )
        )
    blocks.append(listing)
    log = [(prompt + "git log --oneline -5", None)]
    for msg in rng_names(
        rng,
        (
            "fix cache race on startup",
            "add export command",
            "bump numpy to 2.1",
            "docs: explain thresholds",
            "refactor loader registry",
            "speed up box checks",
            "ci: cache pip downloads",
        ),
        5,
    ):
        log.append((f"{rng.getrandbits(28):07x} {msg}", None))
    blocks.append(log)
    docker = [
        (prompt + "docker ps --format 'table {{.Names}}\\t{{.Status}}\\t{{.Ports}}'", None),
        ("NAMES              STATUS                 PORTS", None),
    ]
    for name in rng_names(rng, ("api", "worker", "postgres", "redis", "nginx", "grafana", "prometheus"), 5):
        docker.append(
            (f"{name:<18} Up {rng.randint(2, 59)} minutes{'':<8} 0.0.0.0:{rng.randint(3000, 9999)}->80/tcp", None)
        )
    blocks.append(docker)
    disk = [
        (prompt + "df -h /", None),
        ("Filesystem      Size  Used Avail Use% Mounted on", None),
        (
            f"/dev/nvme0n1p2  {rng.randint(200, 990)}G  {rng.randint(50, 190)}G  "
            f"{rng.randint(10, 400)}G  {rng.randint(10, 95)}% /",
            None,
        ),
    ]
    blocks.append(disk)
    rng.shuffle(blocks)
    blocks.append(
        [
            (prompt + "python -m http.server 8000", None),
            ("Serving HTTP on 0.0.0.0 port 8000 (", "http://0.0.0.0:8000/"),
            (
                f'127.0.0.1 - - [12/Mar/2024 {rng.randint(10, 23)}:{rng.randint(10, 59)}:07] "GET / HTTP/1.1" 200 -',
                None,
            ),
            (prompt, None),
        ]
    )
    lines = [line for block in blocks for line in block]
    return lines[-n:] if n > 0 else []


def compose_terminal(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    tabs = body.top(px(32))
    x = ui.tabs(
        tabs.before(px(120)),
        rng_names(rng, ("zsh", "htop", "ssh prod-db-01", "python3", "vim notes.md", "docker logs api"), 4),
        0,
        "terminal tabs",
        closable=True,
        strip=t.titlebar,
        active_fill=t.content,
    )
    with c.element(
        Rect(x + px(8), tabs.cy - px(7), x + px(22), tabs.cy + px(7)), icon_spec("add", "terminal", "terminal tabs")
    ):
        c.icon("add", x + px(8), tabs.cy - px(7), px(14), t.icon)
    ui.toolbar(
        tabs.right(px(120)),
        [Icon("split", "split"), Icon("search", "search"), Icon("settings", "settings")],
        "terminal toolbar",
        icon=16,
        gap=12,
    )
    rest = body.below(px(32))
    side_w = px(rng.choice((0, 220)))
    if side_w:
        side, rest = rest.left(side_w), rest.after(side_w)
        c.rect(side, fill=t.panel)
        ui.panel_header(side.top(px(28)), "Hosts", [Icon("add", None)], "Hosts panel")
        hosts = [
            ("terminal", h)
            for h in rng_names(
                rng,
                (
                    "prod-db-01",
                    "prod-db-02",
                    "staging-api",
                    "build-runner-3",
                    "bastion",
                    "gpu-node-7",
                    "backup-nas",
                    "dev-laptop",
                ),
                6,
            )
        ]
        ui.list_rows(side.below(px(30)), hosts, "Hosts panel", selected=-1, row=26, role="list item")
    c.rect(rest, fill=t.content)
    panes = [rest]
    if rest.w > px(1600):  # wide screens split the terminal into two panes side by side
        half = rest.w // 2
        panes = [rest.left(half - px(2)), rest.after(half + px(2))]
        c.rect(Rect(rest.x1 + half - px(2), rest.y1, rest.x1 + half + px(2), rest.y2), fill=t.border)
    f = ui.mono
    for pane in panes:
        y = pane.y1 + px(14)
        for prefix, target in shell_session(rng, (pane.h - px(20)) // px(18)):
            color = (120, 200, 120) if "$ " in prefix else t.text
            c.text(pane.x1 + px(12), y, fit(f, prefix, pane.w - px(30)), f, color)
            if target:
                x = pane.x1 + px(12) + text_width(f, prefix)
                role = "link" if target.startswith("http") else "label"
                ui.label(
                    x,
                    y,
                    target,
                    text_spec(target, role, None),
                    f,
                    (110, 170, 250) if role == "link" else (130, 180, 255),
                )
            y += px(18)
    ui.scrollbar(rest.right(px(12)), True, rng.uniform(0.3, 0.8), 0.15, "terminal")


# ---- system settings -----------------------------------------------------------------------------


def compose_settings(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    side_w = px(rng.choice((240, 260, 280)))
    side, main = body.left(side_w), body.after(side_w)
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
    c.rect(main, fill=t.content)
    page = pages[selected][1]
    inner = main.inset(px(32), px(20))
    ui.label(inner.x1, inner.y1 + px(14), page, None, font("bold", px(20)))
    y = inner.y1 + px(46)
    groups = [
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
    row_h = px(44)
    width = min(inner.w, px(760))
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
        tops[column] = y + gh + px(18)
    bw = px(120)
    ui.button(Rect(inner.x1 + width - bw, inner.y2 - px(30), inner.x1 + width, inner.y2), "Apply", None, primary=True)
    ui.button(
        Rect(inner.x1 + width - 2 * bw - px(10), inner.y2 - px(30), inner.x1 + width - bw - px(10), inner.y2),
        "Reset to Defaults",
    )


ARCHETYPES: Tuple[Archetype, ...] = (
    Archetype(
        "ide",
        "development",
        ("Codeforge", "Quillcode Studio", "PyDeck IDE"),
        "terminal",
        ("File", "Edit", "Selection", "View", "Go", "Run", "Terminal", "Help"),
        0.6,
        ("loader.py", "metrics.py", "plugin.py", "server.py", "cache.py"),
        compose_ide,
    ),
    Archetype(
        "daw",
        "creative",
        ("Wavecraft", "Tracklab Live", "Studio Nine"),
        "waveform",
        ("File", "Edit", "Create", "View", "Options", "Track", "Clip", "Help"),
        0.75,
        ("Night Drive", "Demo Mix v4", "Podcast Ep 12", "Live Set 2024"),
        compose_daw,
    ),
    Archetype(
        "cad",
        "cad",
        ("Draftline CAD", "Solidmark", "Planform 3D"),
        "line_tool",
        ("File", "Edit", "View", "Insert", "Format", "Tools", "Draw", "Dimension", "Modify", "Window", "Help"),
        0.5,
        ("Floor Plan Level 2.dwg", "Apartment B-104.dwg", "Site Office.dwg", "Clinic Wing East.dwg"),
        compose_cad,
    ),
    Archetype(
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
        compose_gis,
    ),
    Archetype(
        "image_editor",
        "creative",
        ("Pixelry", "Lumina Photo", "Canvasia Pro"),
        "brush",
        ("File", "Edit", "Image", "Layer", "Type", "Select", "Filter", "3D", "View", "Window", "Help"),
        0.7,
        ("poster_final.psd", "banner_web.psd", "cover_art.psd", "product_shot.tif"),
        compose_image_editor,
    ),
    Archetype(
        "spreadsheet",
        "office",
        ("Tabulo Sheets", "GridCalc", "Ledgerly"),
        "table",
        ("File", "Edit", "View", "Insert", "Format", "Data", "Tools", "Window", "Help"),
        0.25,
        ("Budget FY2024.xlsx", "Sales Pipeline.xlsx", "Inventory.xlsx", "Forecast Q3.xlsx"),
        compose_spreadsheet,
    ),
    Archetype(
        "analytics",
        "scientific",
        ("Metricly", "Datapane Console", "Observa"),
        "line_chart",
        ("File", "Edit", "View", "Explore", "Alerts", "Help"),
        0.55,
        ("API Overview", "Weekly KPIs", "Cluster Health", "Funnel Analysis"),
        compose_analytics,
    ),
    Archetype(
        "terminal",
        "os",
        ("Shellbox Terminal", "Termite Pro", "Console"),
        "terminal",
        ("Shell", "Edit", "View", "Session", "Profiles", "Window", "Help"),
        0.8,
        ("dev@workstation: ~/project", "ops@prod-db-01: ~", "build@ci-runner: /srv"),
        compose_terminal,
    ),
    Archetype(
        "settings",
        "os",
        ("System Settings", "Control Center", "Preferences"),
        "settings",
        ("File", "Edit", "View", "Window", "Help"),
        0.4,
        ("Settings", "System Preferences"),
        compose_settings,
    ),
)

ARCHETYPES_BY_NAME: Dict[str, Archetype] = {a.name: a for a in ARCHETYPES}

# What an open menu holds, with the near-identical labels that make good distractors.
MENU_ITEMS: Dict[str, Tuple[Tuple[str, str, Optional[str]], ...]] = {
    "File": (
        ("New", "Ctrl+N", "new_file"),
        ("Open...", "Ctrl+O", "open"),
        ("Open Recent", "", None),
        ("-", "", None),
        ("Save", "Ctrl+S", "save"),
        ("Save As...", "Ctrl+Shift+S", "save_as"),
        ("Save All", "", "save_all"),
        ("-", "", None),
        ("Export", "", None),
        ("Export Selection...", "", None),
        ("-", "", None),
        ("Close", "Ctrl+W", None),
        ("Exit", "", None),
    ),
    "Edit": (
        ("Undo", "Ctrl+Z", "undo"),
        ("Redo", "Ctrl+Y", "redo"),
        ("-", "", None),
        ("Cut", "Ctrl+X", "cut"),
        ("Copy", "Ctrl+C", "copy"),
        ("Copy Special", "", None),
        ("Paste", "Ctrl+V", "paste"),
        ("Paste Special...", "", None),
        ("-", "", None),
        ("Find", "Ctrl+F", None),
        ("Find and Replace", "Ctrl+H", None),
        ("Preferences", "", "settings"),
    ),
    "View": (
        ("Zoom In", "Ctrl++", "zoom_in"),
        ("Zoom Out", "Ctrl+-", "zoom_out"),
        ("Zoom to Fit", "", None),
        ("-", "", None),
        ("Show Grid", "", None),
        ("Show Rulers", "", None),
        ("Full Screen", "F11", None),
        ("Appearance", "", None),
    ),
    "Layer": (
        ("New Layer", "Ctrl+Shift+N", None),
        ("Duplicate Layer", "", None),
        ("Delete Layer", "", None),
        ("-", "", None),
        ("Layer Properties...", "", None),
        ("Layer Style", "", None),
        ("Merge Down", "Ctrl+E", None),
        ("Flatten Image", "", None),
    ),
}


def open_menu_for(ui: UI, menus: Sequence[str], positions: Dict[str, int], top: int) -> None:
    """Drop one of the menus that has items down under its title."""
    candidates = [m for m in menus if m in MENU_ITEMS and m in positions]
    if not candidates:
        return
    menu = ui.rng.choice(candidates)
    ui.open_menu(positions[menu] - ui.px(4), top, menu, MENU_ITEMS[menu])
