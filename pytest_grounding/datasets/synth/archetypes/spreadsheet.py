"""A spreadsheet: a Home ribbon, the formula bar, a worksheet of quarterly figures with a selected
cell, sheet tabs, a status bar with sums; sometimes the Print dialog."""

from __future__ import annotations

from ..draw.canvas import Rect, text_width
from ..draw.phrases import icon_spec, other_spec, text_spec
from ..draw.themes import mix
from ..draw.widgets import SEPARATOR, UI, Icon, Label
from ._layout import Archetype, DialogSpec, quick_dialog, rng_names

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
COLUMNS = [chr(ord("A") + i) for i in range(26)]
QUARTERS = ["Q1 2024", "Q2 2024", "Q3 2024", "Q4 2024", "FY 2024", "Budget", "Variance", "Var %"]
HEADER_H, ROW_H, ROW_HEADER_W = 22, 21, 40  # logical px of the worksheet grid

PRINT_DIALOG = DialogSpec(
    "Print",
    (("Printer", "Office LaserJet"), ("Pages", "1-12")),
    ("Paper", "A4 portrait"),
    ("Print in grayscale", "Collate copies", "Print gridlines"),
    ("Scaling", ("None", "Fit width", "Fit page")),
    ("Print", "Print Preview"),
)


# ---- ribbon: one function per group, each drawn from `x` on --------------------------------------


def clipboard_group(ui: UI, ribbon: Rect, x: int) -> None:
    t, c, px = ui.t, ui.c, ui.px
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


def font_group(ui: UI, ribbon: Rect, x: int) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def alignment_group(ui: UI, ribbon: Rect, x: int) -> None:
    t, c, px = ui.t, ui.c, ui.px
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


def number_group(ui: UI, ribbon: Rect, x: int) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def cells_and_editing_groups(ui: UI, ribbon: Rect, x: int) -> None:
    px = ui.px
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


def ribbon_panel(ui: UI, ribbon: Rect) -> None:
    t, c, px = ui.t, ui.c, ui.px
    c.rect(ribbon, fill=t.panel)
    c.hline(ribbon.x1, ribbon.x2, ribbon.y2 - 1, t.border)
    x = ribbon.x1 + px(8)
    clipboard_group(ui, ribbon, x)
    x += px(84)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    x += px(8)
    font_group(ui, ribbon, x)
    x += px(200)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    alignment_group(ui, ribbon, x)
    x += px(268)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    number_group(ui, ribbon, x)
    x += px(140)
    c.vline(x, ribbon.y1 + px(6), ribbon.y2 - px(6), t.border)
    cells_and_editing_groups(ui, ribbon, x)


# ---- the rest ------------------------------------------------------------------------------------


def formula_bar(ui: UI, fbar: Rect, addr: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(fbar, fill=t.panel)
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


def status_bar(ui: UI, status: Rect) -> None:
    rng = ui.rng
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


def sheet_tabs(ui: UI, sheets_r: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(sheets_r, fill=t.header)
    sheet_names = rng_names(rng, SHEETS, rng.randint(4, 7))
    x = ui.tabs(sheets_r.before(sheets_r.w // 2).after(px(60)), sheet_names, 0, "sheet tabs", active_fill=t.content)
    with c.element(
        Rect(x + px(8), sheets_r.cy - px(7), x + px(22), sheets_r.cy + px(7)), icon_spec("add", None, "sheet tabs")
    ):
        c.icon("add", x + px(8), sheets_r.cy - px(7), px(14), t.icon)
    ui.scrollbar(sheets_r.right(sheets_r.w // 2 - px(10)).inset(0, px(6)), False, rng.uniform(0, 0.3), 0.35, "sheet")


def worksheet_frame(ui: UI, grid: Rect) -> tuple[list[int], int]:
    """Column headers, row numbers and grid lines; returns the column edges and the row count."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(grid, fill=t.content)
    head_h, rowh, rowhead = px(HEADER_H), px(ROW_H), px(ROW_HEADER_W)
    widths = [px(rng.choice((150, 170)))] + [px(rng.choice((80, 90, 100))) for _ in range(25)]
    c.rect(grid.top(head_h), fill=t.header)
    c.rect(grid.left(rowhead), fill=t.header)
    xs = [grid.x1 + rowhead]
    for w in widths:
        xs.append(xs[-1] + w)
    for i, name in enumerate(COLUMNS):
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
    for i in range(len(COLUMNS)):
        if xs[i] > grid.x2:
            break
        c.vline(xs[i], grid.y1 + head_h, grid.y2, t.grid)
    return xs, n_rows


def report_cells(ui: UI, grid: Rect, xs: list[int], n_rows: int) -> None:
    """Row labels, quarter headers and the figures under them."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    head_h, rowh = px(HEADER_H), px(ROW_H)
    labels = rng_names(rng, ROW_LABELS, min(len(ROW_LABELS), n_rows - 2))
    for i, q in enumerate(QUARTERS):
        if xs[i + 2] > grid.x2 - px(14):
            break
        ui.label(
            xs[i + 1] + px(4), grid.y1 + head_h + rowh // 2, q, text_spec(q, "column header", None), ui.bold, t.text
        )
    for r, name in enumerate(labels):
        y = grid.y1 + head_h + (r + 1) * rowh + rowh // 2
        ui.label(xs[0] + px(4), y, name, text_spec(name, "cell", None), ui.font, t.text)
        for i in range(len(QUARTERS)):
            if xs[i + 2] > grid.x2 - px(14):
                break
            value = rng.uniform(-2000, 90000)
            text = f"{value:,.0f}" if i < 7 else f"{rng.uniform(-30, 30):.1f}%"
            color = (200, 40, 40) if value < 0 or text.startswith("-") else t.text
            c.text(xs[i + 2] - px(4) - text_width(ui.font, text), y, text, ui.font, color)


def worksheet(ui: UI, grid: Rect, sel_r: int, sel_c: int) -> None:
    c, rng, px = ui.c, ui.rng, ui.px
    xs, n_rows = worksheet_frame(ui, grid)
    report_cells(ui, grid, xs, n_rows)
    head_h, rowh = px(HEADER_H), px(ROW_H)
    sel = Rect(xs[sel_c], grid.y1 + head_h + sel_r * rowh - 1, xs[sel_c + 1] + 1, grid.y1 + head_h + (sel_r + 1) * rowh)
    c.rect(sel, outline=(33, 115, 70), width=px(2))
    ui.scrollbar(grid.right(px(14)).below(head_h), True, rng.uniform(0, 0.5), 0.2, "worksheet")


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, rng, px = ui.t, ui.rng, ui.px
    tabs = body.top(px(28))
    ui.tabs(
        tabs,
        ["File", "Home", "Insert", "Page Layout", "Formulas", "Data", "Review", "View", "Automate", "Help"],
        1,
        "ribbon",
        strip=t.toolbar,
        active_fill=t.panel,
    )
    ribbon_panel(ui, body.below(px(28)).top(px(92)))
    sel_r, sel_c = rng.randint(2, 12), rng.randint(1, 4)
    addr = f"{COLUMNS[sel_c]}{sel_r + 1}"
    formula_bar(ui, body.below(px(120)).top(px(30)), addr)
    rest = body.below(px(150))
    status, rest = rest.bottom(px(24)), rest.above(px(24))
    status_bar(ui, status)
    sheets_r, grid = rest.bottom(px(28)), rest.above(px(28))
    sheet_tabs(ui, sheets_r)
    worksheet(ui, grid, sel_r, sel_c)
    if rng.random() < 0.2:
        quick_dialog(ui, body, PRINT_DIALOG)


ARCHETYPE = Archetype(
    "spreadsheet",
    "office",
    ("Tabulo Sheets", "GridCalc", "Ledgerly"),
    "table",
    ("File", "Edit", "View", "Insert", "Format", "Data", "Tools", "Window", "Help"),
    0.25,
    ("Budget FY2024.xlsx", "Sales Pipeline.xlsx", "Inventory.xlsx", "Forecast Q3.xlsx"),
    compose,
)
