"""A DAW: transport bar, sample browser, track headers with mute/solo/arm buttons and clips with
waveforms on an arrangement, a device chain; sometimes the Export Audio dialog."""

from __future__ import annotations

from ..draw.canvas import Rect, fit, text_width
from ..draw.phrases import icon_spec, other_spec, text_spec
from ..draw.themes import PALETTE, RGB, mix, text_on
from ..draw.typefaces import font
from ..draw.widgets import SEPARATOR, UI, Field, Icon, Label, ToolItem
from ._layout import Archetype, DialogSpec, quick_dialog, rng_names

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

EXPORT_DIALOG = DialogSpec(
    "Export Audio",
    (("File name", "night_drive_master"), ("Folder", "~/Music/Bounces")),
    ("Format", "WAV 24-bit"),
    ("Normalize", "Include return tracks", "Open folder when done"),
    ("Sample rate", ("44.1 kHz", "48 kHz", "96 kHz")),
    ("Export", "Export Selection"),
)


def transport_bar(ui: UI, transport: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    c.rect(transport, fill=t.toolbar)
    c.hline(transport.x1, transport.x2, transport.y2 - 1, t.border)
    items: list[ToolItem] = [
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


def sample_browser(ui: UI, browser: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def arrangement_frame(ui: UI, heads: Rect, arrange: Rect) -> tuple[Rect, Rect, int]:
    """The track list's header, the bar ruler and the empty lanes: (ruler, lanes, bar width)."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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
    return ruler, lane_area, bar_w


def track_button(ui: UI, box: Rect, letter: str, name: str) -> None:
    """The mute (M) or solo (S) button of a track; some are on."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def track_header(ui: UI, row: Rect, name: str, color: RGB) -> None:
    """A track's colour, name, mute/solo/record-arm buttons, volume fader and knob."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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
        track_button(ui, Rect(bx, row.y2 - px(24), bx + px(20), row.y2 - px(6)), letter, name)
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
        c.ellipse(Rect(arm.cx - s // 2, arm.cy - s // 2, arm.cx - s // 2 + s, arm.cy - s // 2 + s), fill=(200, 60, 60))
    ui.slider(
        Rect(bx + px(32), row.y2 - px(22), row.x2 - px(40), row.y2 - px(8)), f"{name} volume", rng.uniform(0.3, 0.9)
    )
    c.icon("knob", row.x2 - px(30), row.y2 - px(24), px(18), t.icon)


def track_clips(ui: UI, lane: Rect, name: str, n: int, color: RGB, bar_w: int) -> None:
    """Clips with waveforms along the lane of track number `n`."""
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def device_chain(ui: UI, device: Rect) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
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


def compose(ui: UI, body: Rect, app: str, doc: str) -> None:
    t, c, rng, px = ui.t, ui.c, ui.rng, ui.px
    transport = body.top(px(44))
    transport_bar(ui, transport)
    rest = body.below(px(44))
    bottom_h = px(rng.choice((150, 180)))
    device, rest = rest.bottom(bottom_h), rest.above(bottom_h)
    browser_w = px(rng.choice((0, 200, 230)))
    if browser_w:
        browser, rest = rest.left(browser_w), rest.after(browser_w)
        sample_browser(ui, browser)
    head_w = px(230)
    heads, arrange = rest.left(head_w), rest.after(head_w)
    ruler, lane_area, bar_w = arrangement_frame(ui, heads, arrange)
    track_h = px(rng.choice((48, 56, 64)))
    names = rng_names(rng, TRACKS, 12)
    y = heads.y1 + px(26)
    for n, name in enumerate(names):
        if y + track_h > heads.y2:
            break
        color = PALETTE[n % len(PALETTE)]
        row = Rect(heads.x1, y, heads.x2, y + track_h)
        track_header(ui, row, name, color)
        track_clips(ui, Rect(lane_area.x1, y, lane_area.x2, y + track_h), name, n, color, bar_w)
        y += track_h
    c.vline(heads.x2 - 1, heads.y1, heads.y2, t.border)
    playhead = lane_area.x1 + int(lane_area.w * rng.uniform(0.1, 0.45))
    c.vline(playhead, ruler.y1, lane_area.y2, (230, 70, 60))
    device_chain(ui, device)
    if rng.random() < 0.2:
        quick_dialog(ui, body, EXPORT_DIALOG)


ARCHETYPE = Archetype(
    "daw",
    "creative",
    ("Wavecraft", "Tracklab Live", "Studio Nine"),
    "waveform",
    ("File", "Edit", "Create", "View", "Options", "Track", "Clip", "Help"),
    0.75,
    ("Night Drive", "Demo Mix v4", "Podcast Ep 12", "Live Set 2024"),
    compose,
)
