"""A terminal: tabs, a Hosts panel on some screens, one or (on wide screens) two panes of a shell
session whose file names and URLs are targets."""

from __future__ import annotations

import random

from ..draw.canvas import Rect, fit, text_width
from ..draw.phrases import icon_spec, text_spec
from ..draw.widgets import UI, Icon
from ._layout import SOURCE_FILES, Archetype, rng_names

ShellLine = tuple[str, str | None]  # text, and a clickable tail such as a file name or a URL


def shell_session(rng: random.Random, n: int) -> list[ShellLine]:
    """`n` lines of a shell session: (text, clickable tail such as a file name or a URL)."""
    user = rng.choice(("dev", "alice", "ops", "build"))
    prompt = f"{user}@{rng.choice(('workstation', 'prod-db-01', 'ci-runner'))}:~/project$ "
    blocks: list[list[ShellLine]] = []
    listing: list[ShellLine] = [(prompt + "ls -la", None)]
    for name in rng_names(rng, SOURCE_FILES, 12):
        listing.append(
            (
                f"-rw-r--r--  1 {user} staff {rng.randint(120, 99999):>6} Mar {rng.randint(1, 28):>2} "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} ",
                name,
            )
        )
    blocks.append(listing)
    log: list[ShellLine] = [(prompt + "git log --oneline -5", None)]
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
    docker: list[ShellLine] = [
        (prompt + "docker ps --format 'table {{.Names}}\\t{{.Status}}\\t{{.Ports}}'", None),
        ("NAMES              STATUS                 PORTS", None),
    ]
    for name in rng_names(rng, ("api", "worker", "postgres", "redis", "nginx", "grafana", "prometheus"), 5):
        docker.append(
            (f"{name:<18} Up {rng.randint(2, 59)} minutes{'':<8} 0.0.0.0:{rng.randint(3000, 9999)}->80/tcp", None)
        )
    blocks.append(docker)
    disk: list[ShellLine] = [
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


def tab_strip(ui: UI, tabs: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def hosts_panel(ui: UI, side: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def shell_pane(ui: UI, pane: Rect) -> None:
    """A shell session filling the pane, its last lines showing."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    f = ui.mono
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


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    tab_strip(ui, body.top(px(32)))
    rest = body.below(px(32))
    side_w = px(rng.choice((0, 220)))
    if side_w:
        side, rest = rest.left(side_w), rest.after(side_w)
        hosts_panel(ui, side)
    c.rect(rest, fill=t.content)
    panes = [rest]
    if rest.w > px(1600):  # wide screens split the terminal into two panes side by side
        half = rest.w // 2
        panes = [rest.left(half - px(2)), rest.after(half + px(2))]
        c.rect(Rect(rest.x1 + half - px(2), rest.y1, rest.x1 + half + px(2), rest.y2), fill=t.border)
    for p in panes:
        shell_pane(ui, p)
    ui.scrollbar(rest.right(px(12)), True, rng.uniform(0.3, 0.8), 0.15, "terminal")


ARCHETYPE = Archetype(
    "terminal",
    "os",
    ("Shellbox Terminal", "Termite Pro", "Console"),
    "terminal",
    ("Shell", "Edit", "View", "Session", "Profiles", "Window", "Help"),
    0.8,
    ("dev@workstation: ~/project", "ops@prod-db-01: ~", "build@ci-runner: /srv"),
    compose,
)
