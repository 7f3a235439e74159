"""An IDE: activity bar, file explorer, a terminal panel, editor tabs and highlighted code with a
minimap; sometimes the Find and Replace dialog."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ..draw.canvas import Rect, fit, text_width
from ..draw.themes import RGB, Theme, mix
from ..draw.widgets import UI, Icon
from ._layout import SOURCE_FILES, Archetype, DialogSpec, quick_dialog, rng_names

PROJECT_DIRS = ("src", "tests", "docs", "scripts", "config", "assets", "migrations", "notebooks", "benchmarks", "tools")
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

FIND_DIALOG = DialogSpec(
    "Find and Replace",
    (("Find what", "threshold"), ("Replace with", "limit")),
    ("Search mode", "Regular expression"),
    ("Match case", "Whole word", "Search in selection"),
    ("Scope", ("File", "Folder", "Project")),
    ("Replace", "Replace All"),
)


# ---- code ----------------------------------------------------------------------------------------


def code_lines(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
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


def token_color(t: Theme, token: str) -> RGB:
    if token.startswith("#"):
        return t.comment
    if token[0] in "\"'":
        return t.string
    if token[0].isdigit():
        return t.number
    if token in _KEYWORDS:
        return t.keyword
    if token in FUNCS or token in CLASSES:
        return t.function
    return t.text


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
                c.text(r.x1 + gutter + int(col * cw), cy, token, f, token_color(t, token))
            col += len(token)
        y += h


# ---- pieces --------------------------------------------------------------------------------------


def status_bar(ui: UI, status: Rect) -> None:
    t, rng = ui.t, ui.rng
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


def activity_bar(ui: UI, activity: Rect) -> None:
    t, px = ui.t, ui.px
    ui.c.rect(activity, fill=mix(t.panel, t.titlebar, 0.5))
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


def explorer(ui: UI, side: Rect) -> None:
    rng, px = ui.rng, ui.px
    ui.c.rect(side, fill=ui.t.panel)
    ui.panel_header(
        side.top(px(30)), "Explorer", [Icon("refresh", "refresh"), Icon("new_file", "new_file")], "Explorer"
    )
    project = rng.choice(("grounding-bench", "api-server", "etl-pipeline", "vision-tools"))
    nodes = [(0, project, "open_folder")]
    for d in ["src", *rng_names(rng, PROJECT_DIRS[1:], 5)]:
        if d == "src":
            nodes.append((1, d, "open_folder"))
            nodes += [(2, f, "new_file") for f in rng_names(rng, SOURCE_FILES[:13], rng.randint(4, 8))]
        else:
            nodes.append((1, d, "folder"))
    nodes += [(1, f, "new_file") for f in rng_names(rng, SOURCE_FILES[13:], rng.randint(3, 6))]
    ui.tree(side.below(px(34)), nodes, "file explorer", selected=rng.randint(2, 6))


def terminal_panel(ui: UI, panel: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def editor_area(ui: UI, editor: Rect, doc: str) -> None:
    """Tabs with run buttons, breadcrumbs, the code with its minimap and scrollbar."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    rng, px = ui.rng, ui.px
    status, main = body.bottom(px(22)), body.above(px(22))
    status_bar(ui, status)
    activity, rest = main.left(px(48)), main.after(px(48))
    activity_bar(ui, activity)
    side_w = px(rng.choice((220, 250, 280)))
    side, editor = rest.left(side_w), rest.after(side_w)
    explorer(ui, side)
    bottom_h = px(rng.choice((160, 200, 240)))
    panel, editor = editor.bottom(bottom_h), editor.above(bottom_h)
    terminal_panel(ui, panel)
    editor_area(ui, editor, doc)
    if rng.random() < 0.25:
        quick_dialog(ui, body, FIND_DIALOG)


ARCHETYPE = Archetype(
    "ide",
    "development",
    ("Codeforge", "Quillcode Studio", "PyDeck IDE"),
    "terminal",
    ("File", "Edit", "Selection", "View", "Go", "Run", "Terminal", "Help"),
    0.6,
    ("loader.py", "metrics.py", "plugin.py", "server.py", "cache.py"),
    compose,
)
