"""Screens -> targets -> a Pointerbench-Pro imagefolder (`data/test/metadata.jsonl` + PNGs).

Each screen is planned and drawn from its own random streams, derived from (seed, screen index)
with SHA-256, so screens are independent (generated in parallel, byte-identical) and `count`
only decides how many screens there are. `count` is the number of samples (targets); a screen
holds 3-7 of them and the last screen is cut to the remainder.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from .archetypes import ARCHETYPES, ARCHETYPES_BY_NAME, Archetype, open_menu_for
from .draw.canvas import Canvas, Key, Phrase, Recorded, Rect, text_width
from .draw.phrases import icon_spec, other_spec, text_spec
from .draw.themes import DARK_THEMES, LIGHT_THEMES, PLATFORMS, RESOLUTIONS, THEMES, mix
from .draw.widgets import UI
from .identity import GENERATOR_VERSION, METADATA, SPLIT

TARGETS_PER_SCREEN = (3, 4, 5, 5, 6, 7)
TYPE_WEIGHTS = (("icon", 0.4), ("text", 0.35), ("other", 0.25))
FUNCTIONAL_SHARE = 0.5
MIN_SIDE = 4  # px: a target thinner than this is not a fair target
MAX_AREA_SHARE = 0.2  # of the screen: larger elements are layout, not targets


@dataclass(frozen=True)
class ScreenPlan:
    seed: int
    index: int
    archetype: str
    app: str
    category: str
    theme: str
    platform: str
    width: int
    height: int
    scale: float
    targets: int

    @property
    def file_name(self) -> str:
        return f"screen_{self.index:05d}.png"


@dataclass(frozen=True)
class Target:
    element_key: int
    element_type: str
    role: str
    instruction: str
    form: str
    box: tuple[int, int, int, int]  # x1, y1 = first drawn pixel; x2, y2 = last drawn pixel + 1

    @property
    def point(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.box
        return ((x1 + x2 - 1) // 2, (y1 + y2 - 1) // 2)  # the middle drawn column and row


def stream(seed: int, index: int, purpose: str) -> random.Random:
    """An independent random stream per (seed, screen, purpose); SHA-256, not hash(), so it does not
    depend on PYTHONHASHSEED, the platform or the Python version."""
    digest = hashlib.sha256(f"pytest-grounding/synth/{seed}/{index}/{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def plan_screen(seed: int, index: int) -> ScreenPlan:
    rng = stream(seed, index, "plan")
    # Archetypes in rotation (offset by the seed) so that every small set covers all of them.
    archetype = ARCHETYPES[(index + seed) % len(ARCHETYPES)]
    themes = DARK_THEMES if rng.random() < archetype.dark_bias else LIGHT_THEMES
    theme = rng.choice(themes)
    width, height, _ = rng.choices(RESOLUTIONS, weights=[w for _, _, w in RESOLUTIONS])[0]
    scale = 1.25 if width >= 2560 and rng.random() < 0.4 else 1.0
    return ScreenPlan(
        seed=seed,
        index=index,
        archetype=archetype.name,
        app=rng.choice(archetype.apps),
        category=archetype.category,
        theme=theme.name,
        platform=rng.choice(PLATFORMS),
        width=width,
        height=height,
        scale=scale,
        targets=rng.choice(TARGETS_PER_SCREEN),
    )


def screens_for(count: int, seed: int) -> list[tuple[ScreenPlan, int]]:
    """The screens `count` samples need, each with how many of its targets are used."""
    out: list[tuple[ScreenPlan, int]] = []
    remaining = count
    index = 0
    while remaining > 0:
        plan = plan_screen(seed, index)
        take = min(plan.targets, remaining)
        out.append((plan, take))
        remaining -= take
        index += 1
    return out


# ---- drawing -------------------------------------------------------------------------------------


def render_screen(plan: ScreenPlan, skip: Sequence[int] = ()) -> Canvas:
    """Draw the screen; `skip` leaves elements out (by draw-order key) without changing anything
    else, which is how the tests prove that a recorded box is exactly the target's pixels."""
    theme = next(t for t in THEMES if t.name == plan.theme)
    archetype = ARCHETYPES_BY_NAME[plan.archetype]
    canvas = Canvas((plan.width, plan.height), theme.desktop, skip=skip)
    rng = stream(plan.seed, plan.index, "render")
    ui = UI(canvas, theme, plan.platform, plan.scale, rng)
    doc = rng.choice(archetype.documents)
    body, menus, menu_top = draw_frame(ui, plan, archetype, f"{doc} - {plan.app}")
    canvas.rect(body, fill=theme.panel)
    archetype.compose(ui, body, plan.app, doc)
    if menus and rng.random() < 0.25:
        open_menu_for(ui, archetype.menus, menus, menu_top)
    canvas.finish()
    return canvas


def draw_frame(ui: UI, plan: ScreenPlan, archetype: Archetype, title: str) -> tuple[Rect, dict[str, int], int]:
    """Window chrome for the platform; returns the app's body rect, where its menu titles are (for
    an open menu) and the y under the menu bar."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    screen = Rect(0, 0, plan.width, plan.height)
    browser = archetype.name == "analytics" and rng.random() < 0.7
    if plan.platform == "macos":
        bar = screen.top(px(25))
        fill = mix(t.menubar, t.desktop, 0.15)
        c.rect(bar, fill=fill)
        titles = (
            ("Browser", "File", "Edit", "View", "History", "Bookmarks", "Window", "Help")
            if browser
            else (plan.app, *archetype.menus)
        )
        menus = ui.menu_bar(bar.before(px(260)), titles, bold_first=True, fill=fill)
        if browser:
            menus = {}
        x = bar.x2 - px(12)
        clock = f"{rng.choice(('Mon', 'Tue', 'Wed', 'Thu', 'Fri'))} {rng.randint(8, 19)}:{rng.randint(0, 59):02d}"
        x -= text_width(ui.font, clock)
        ui.label(x, bar.cy, clock, text_spec(clock, "status item", None), ui.font)
        for kind, concept in (("battery", "battery"), ("wifi", "wifi"), ("search", None)):
            s = px(15)
            x -= s + px(14)
            with c.element(Rect(x, bar.cy - s // 2, x + s, bar.cy - s // 2 + s), icon_spec(kind, concept, "menu bar")):
                c.icon(kind, x, bar.cy - s // 2, s, ui.t.text)
        window = screen.below(px(25))
        ui.title_bar(window.top(px(28)), title, archetype.app_icon)
        body = window.below(px(28))
        if browser:
            body = browser_chrome(ui, body, plan)
        return body, menus, bar.y2
    window = screen
    if plan.platform == "windows" and rng.random() < 0.6:
        window = screen.above(px(44))
        taskbar(ui, screen.bottom(px(44)))
    title_h = px(30) if plan.platform == "windows" else px(38)
    ui.title_bar(window.top(title_h), title, archetype.app_icon)
    body = window.below(title_h)
    if browser:
        return browser_chrome(ui, body, plan), {}, body.y1
    menubar = body.top(px(24) if plan.platform == "windows" else px(28))
    menus = ui.menu_bar(menubar, archetype.menus)
    return body.below(menubar.h), menus, menubar.y2


def browser_chrome(ui: UI, r: Rect, plan: ScreenPlan) -> Rect:
    """A web console runs in a browser: a tab strip and an address bar above the page."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    ui.tabs(
        r.top(px(32)),
        [f"{plan.app} - Dashboards", "Pull requests", "Runbook: on-call", "Status page"],
        0,
        "browser tabs",
        strip=t.titlebar,
        active_fill=t.toolbar,
        closable=True,
    )
    bar = r.below(px(32)).top(px(38))
    c.rect(bar, fill=t.toolbar)
    x = ui.toolbar(bar.left(px(130)), [], "browser toolbar")
    for kind, concept in (("undo", None), ("redo", None), ("refresh", None)):
        s = px(16)
        with c.element(
            Rect(x, bar.cy - s // 2, x + s, bar.cy - s // 2 + s), icon_spec(kind, concept, "browser toolbar")
        ):
            c.icon(kind, x, bar.cy - s // 2, s, t.icon)
        x += s + px(14)
    host = plan.app.lower().replace(" ", "")
    url = f"https://{host}.example.com/d/{rng.getrandbits(24):06x}/overview?orgId=1&from=now-24h&to=now"
    ui.field(Rect(x + px(6), bar.y1 + px(6), bar.x2 - px(120), bar.y2 - px(6)), "address bar", url)
    ui.toolbar(bar.right(px(110)), [], "browser toolbar")
    s = px(16)
    for i, kind in enumerate(("star", "extensions", "more")):
        xx = bar.x2 - px(100) + i * px(32)
        with c.element(
            Rect(xx, bar.cy - s // 2, xx + s, bar.cy - s // 2 + s), icon_spec(kind, None, "browser toolbar")
        ):
            c.icon(kind, xx, bar.cy - s // 2, s, t.icon)
    return r.below(px(70))


def taskbar(ui: UI, r: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    fill = (32, 32, 32) if t.dark else (238, 238, 238)
    ink = (240, 240, 240) if t.dark else (30, 30, 30)
    c.rect(r, fill=fill)
    s = px(18)
    x = r.x1 + px(14)
    start = other_spec(
        "taskbar button", "start", ("Click the Start button.",), ("Open the Start menu.",), element_type="icon"
    )
    with c.element(Rect(x, r.cy - s // 2, x + s, r.cy - s // 2 + s), start):
        half = s // 2
        for dx, dy in ((0, 0), (half + 1, 0), (0, half + 1), (half + 1, half + 1)):
            c.rect(
                Rect(x + dx, r.cy - s // 2 + dy, x + dx + half - 1, r.cy - s // 2 + dy + half - 1), fill=(0, 120, 215)
            )
    x += s + px(16)
    box = Rect(x, r.y1 + px(7), x + px(220), r.y2 - px(7))
    with c.element(
        box, other_spec("field", "taskbar search", ("Click the taskbar search box.",), ("Search Windows.",))
    ):
        c.rect(box, fill=mix(fill, ink, 0.1), radius=box.h // 2)
        c.icon("search", box.x1 + px(10), box.cy - px(7), px(14), ink)
        c.text(box.x1 + px(32), box.cy, "Type here to search", ui.font, mix(ink, fill, 0.35))
    x = box.x2 + px(20)
    for kind in rng.sample(["folder", "globe", "terminal", "calendar", "image", "cloud"], 4):
        with c.element(Rect(x, r.cy - px(10), x + px(20), r.cy + px(10)), icon_spec(kind, None, "taskbar")):
            c.icon(kind, x, r.cy - px(10), px(20), ui.icon_color(kind) if kind == "folder" else ink)
        x += px(40)
    clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    date = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2024"
    cx = r.x2 - px(16) - max(text_width(ui.small, clock), text_width(ui.small, date))
    ui.label(cx, r.cy - px(8), clock, text_spec(clock, "status item", None), ui.small, ink)
    c.text(cx, r.cy + px(8), date, ui.small, ink)
    x = cx - px(28)
    for kind, concept in (("speaker", None), ("wifi", None), ("bell", None)):
        with c.element(Rect(x, r.cy - px(8), x + px(16), r.cy + px(8)), icon_spec(kind, concept, "system tray")):
            c.icon(kind, x, r.cy - px(8), px(16), ink)
        x -= px(28)


# ---- choosing targets ----------------------------------------------------------------------------


def key_counts(canvas: Canvas) -> dict[Key, int]:
    """How many things on the screen answer to each key. Strings and icons count every drawing
    (also those that are not elements: code, cell values, a second icon); everything else counts
    the elements that claim the key."""
    counts: dict[Key, int] = {}

    def bump(key: Key) -> None:
        counts[key] = counts.get(key, 0) + 1

    for namespace, drawn in (("text", canvas.texts), ("icon", canvas.icons)):
        for name, ctx in drawn:
            bump((namespace, name, None))
            if ctx is not None:
                bump((namespace, name, ctx))
    for rec in canvas.elements:
        claims = {p.key for p in rec.spec.phrases if p.key[0] not in ("text", "icon")} | set(rec.spec.keys)
        for key in sorted(claims, key=repr):
            bump(key)
    return counts


def usable_phrases(rec: Recorded, counts: dict[Key, int]) -> list[Phrase]:
    return [p for p in rec.spec.phrases if counts.get(p.key, 0) == 1]


def is_fair_target(rec: Recorded, width: int, height: int) -> bool:
    if not (rec.spec.targetable and rec.box is not None and rec.visible and rec.inside):
        return False
    x1, y1, x2, y2 = rec.box
    if x2 - x1 < MIN_SIDE or y2 - y1 < MIN_SIDE or (x2 - x1) * (y2 - y1) > MAX_AREA_SHARE * width * height:
        return False
    # Nothing on the screen centre: a centre click must not score by construction.
    return not (x1 <= width / 2 <= x2 and y1 <= height / 2 <= y2)


def choose_targets(canvas: Canvas, plan: ScreenPlan) -> list[Target]:
    rng = stream(plan.seed, plan.index, "targets")
    counts = key_counts(canvas)
    pools: dict[str, list[tuple[Recorded, list[Phrase]]]] = {name: [] for name, _ in TYPE_WEIGHTS}
    for rec in canvas.elements:
        if is_fair_target(rec, plan.width, plan.height):
            phrases = usable_phrases(rec, counts)
            if phrases:
                pools[rec.spec.element_type].append((rec, phrases))
    for pool in pools.values():
        rng.shuffle(pool)
    targets: list[Target] = []
    while len(targets) < plan.targets:
        available = [(name, weight) for name, weight in TYPE_WEIGHTS if pools[name]]
        if not available:
            break
        kind = rng.choices([n for n, _ in available], weights=[w for _, w in available])[0]
        pool = pools[kind]
        # Decide the form first, then take an element that can be asked for in that form.
        form = "functional" if rng.random() < FUNCTIONAL_SHARE else "literal"
        fits = [i for i, (_, phrases) in enumerate(pool) if any(p.form == form for p in phrases)]
        rec, phrases = pool.pop(fits[-1] if fits else len(pool) - 1)
        phrase = rng.choice([p for p in phrases if p.form == form] or phrases)
        assert rec.box is not None
        targets.append(Target(rec.key, rec.spec.element_type, rec.spec.role, phrase.text, phrase.form, rec.box))
    return targets


# ---- rows and files ------------------------------------------------------------------------------


def png_bytes(canvas: Canvas) -> bytes:
    buffer = io.BytesIO()
    # Fixed options, no text chunks, no timestamps: same pixels -> same bytes.
    canvas.image.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def rows_for(plan: ScreenPlan, targets: Sequence[Target]) -> list[dict]:
    slug = plan.app.lower().replace(" ", "_")
    rows = []
    for target in targets:
        box = list(target.box)
        rows.append(
            {
                "file_name": plan.file_name,
                "id": "",
                "instruction": target.instruction,
                "bbox": box,
                "point": list(target.point),
                "answer_type": "point",
                "eval": {"type": "point_in_bbox", "bbox": box},
                "data_type": target.element_type,
                "element_type": target.element_type,
                "app": plan.app,
                "app_slug": slug,
                "app_category": plan.category,
                "platform": plan.platform,
                "source_id": f"synth-v{GENERATOR_VERSION}/seed{plan.seed}/screen{plan.index}"
                f"/element{target.element_key}",
                "image_size": [plan.width, plan.height],
                "synth": {
                    "archetype": plan.archetype,
                    "theme": plan.theme,
                    "scale": plan.scale,
                    "role": target.role,
                    "instruction_form": target.form,
                },
            }
        )
    return rows


def build_screen(plan: ScreenPlan, take: int, folder: str) -> list[dict]:
    """Render one screen, write its PNG into `folder`, return its rows (ids not yet assigned)."""
    canvas = render_screen(plan)
    targets = choose_targets(canvas, plan)
    if len(targets) < take:
        raise RuntimeError(
            f"screen {plan.index} (seed {plan.seed}, {plan.archetype}) has only {len(targets)} fair targets"
        )
    Path(folder, plan.file_name).write_bytes(png_bytes(canvas))
    return rows_for(plan, targets[:take])


def _build(job: tuple[ScreenPlan, int, str]) -> list[dict]:
    return build_screen(*job)


def generate(out_dir, count: int, seed: int = 0, workers: int | None = None) -> Path:
    """Write `count` samples (targets) over as many screens as they need to
    `out_dir/data/test/metadata.jsonl` + `screen_NNNNN.png` (screens a previous run left there are
    removed); returns `out_dir`. The same (count, seed) gives the same bytes. `workers` processes
    draw the screens (default: one per CPU core for sets of more than a few screens); they are
    spawned, so a script calling this at import time needs the usual `if __name__ == "__main__":`."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    out = Path(out_dir)
    folder = out.joinpath(*SPLIT)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("screen_*.png"):  # a previous run's screens, so none is left over
        old.unlink()
    jobs = [(plan, take, str(folder)) for plan, take in screens_for(count, seed)]
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if len(jobs) >= 16 else 1
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            per_screen = list(pool.map(_build, jobs, chunksize=4))
    else:
        per_screen = [_build(job) for job in jobs]
    rows = [row for screen_rows in per_screen for row in screen_rows]
    for number, row in enumerate(rows):
        row["id"] = f"syn_{number:05d}"
    write_metadata(folder / METADATA, rows)
    info = {
        "generator": "pytest_grounding.datasets.synth",
        "version": GENERATOR_VERSION,
        "seed": seed,
        "count": count,
        "screens": len(jobs),
    }
    (out / "synth.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return out


def write_metadata(path: Path, rows: Iterable[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
