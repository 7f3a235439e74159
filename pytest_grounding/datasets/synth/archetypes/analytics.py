"""An analytics console: top bar with search, a navigation rail, a dashboard header with export
buttons and time range, filter chips, KPI cards, a line chart, a bar chart and a table of endpoints."""

from __future__ import annotations

from ..draw.canvas import Rect, text_width
from ..draw.phrases import icon_spec, text_spec
from ..draw.themes import PALETTE, mix
from ..draw.typefaces import font
from ..draw.widgets import UI, Icon
from ._layout import Archetype, rng_names

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
ENDPOINTS = (
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
CARD_GAP = 12  # logical px between cards and between the two charts


def top_bar(ui: UI, top: Rect, app: str) -> None:
    t, c, px = ui.t, ui.c, ui.px
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


def navigation(ui: UI, nav: Rect) -> None:
    t, c, px = ui.t, ui.c, ui.px
    c.rect(nav, fill=t.panel)
    c.vline(nav.x2 - 1, nav.y1, nav.y2, t.border)
    ui.list_rows(nav.inset(0, px(10)), NAV_ANALYTICS, "navigation", selected=1, row=32)


def dashboard_header(ui: UI, header: Rect, doc: str) -> None:
    """The dashboard's name, export and save buttons, share and refresh icons, the time range."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def filter_chips(ui: UI, chips: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def kpi_cards(ui: UI, grid: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    cols = 4 if grid.w > px(1000) else 3
    gap = px(CARD_GAP)
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


def chart_frames(ui: UI, line_r: Rect, bar_r: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def line_chart(ui: UI, line_r: Rect) -> None:
    """Three services' series over a day, with axis labels and a legend."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    plot = Rect(line_r.x1 + px(48), line_r.y1 + px(36), line_r.x2 - px(16), line_r.y2 - px(44))
    y_step = rng.choice((25, 50, 100, 250))
    for k in range(5):
        gy = plot.y1 + k * plot.h // 4
        c.hline(plot.x1, plot.x2, gy, t.grid)
        c.text(plot.x1 - px(40), gy, f"{(4 - k) * y_step}", ui.tiny, t.text_dim)
    series = rng_names(rng, ("api", "web", "worker", "cron", "auth"), 3)
    for s_i in range(len(series)):
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


def bar_chart(ui: UI, bar_r: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    bplot = Rect(bar_r.x1 + px(16), bar_r.y1 + px(40), bar_r.x2 - px(16), bar_r.y2 - px(12))
    cats = rng_names(rng, ("us-east-1", "eu-west-1", "ap-south-1", "sa-east-1", "eu-central-1", "us-west-2"), 5)
    bh = bplot.h // len(cats)
    for i, cat in enumerate(cats):
        y = bplot.y1 + i * bh
        c.text(bplot.x1, y + bh // 2, cat, ui.small, t.text_dim)
        w = int((bplot.w - px(100)) * rng.uniform(0.15, 1.0))
        c.rect(Rect(bplot.x1 + px(96), y + px(4), bplot.x1 + px(96) + w, y + bh - px(4)), fill=PALETTE[(i + 3) % 10])


def endpoint_table(ui: UI, table: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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
    y = table.y1 + px(44)
    for ep in rng_names(rng, ENDPOINTS, len(ENDPOINTS)):
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


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    top_bar(ui, body.top(px(44)), app)
    rest = body.below(px(44))
    nav_w = px(rng.choice((200, 220)))
    nav, main = rest.left(nav_w), rest.after(nav_w)
    navigation(ui, nav)
    c.rect(main, fill=t.content)
    dashboard_header(ui, main.top(px(48)).inset(px(16), 0), doc)
    filter_chips(ui, main.below(px(48)).top(px(32)).inset(px(16), 0))
    grid = main.below(px(84)).inset(px(16), px(8))
    kpi_cards(ui, grid)
    gap = px(CARD_GAP)
    charts = grid.below(px(104))
    chart_h = charts.h // 2 - px(6)
    line_r = Rect(charts.x1, charts.y1, charts.x1 + charts.w * 3 // 5, charts.y1 + chart_h)
    bar_r = Rect(line_r.x2 + gap, charts.y1, charts.x2, charts.y1 + chart_h)
    chart_frames(ui, line_r, bar_r)
    line_chart(ui, line_r)
    bar_chart(ui, bar_r)
    endpoint_table(ui, Rect(charts.x1, charts.y1 + chart_h + px(12), charts.x2, charts.y2))


ARCHETYPE = Archetype(
    "analytics",
    "scientific",
    ("Metricly", "Datapane Console", "Observa"),
    "line_chart",
    ("File", "Edit", "View", "Explore", "Alerts", "Help"),
    0.55,
    ("API Overview", "Weekly KPIs", "Cluster Health", "Funnel Analysis"),
    compose,
)
