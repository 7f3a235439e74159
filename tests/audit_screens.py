"""Screens of labelled buttons with label errors of each kind injected, for the audit's tests and
benchmark: a Pointerbench-layout dataset, the injected ids by kind, three replayed runs' clicks,
and the texts drawn on each screen (what a perfect OCR would read)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

FONT = Path(__file__).resolve().parent.parent / "pytest_grounding" / "datasets" / "synth" / "fonts" / "DejaVuSans.ttf"
WORDS = [
    "Export",
    "Import",
    "Settings",
    "Preview",
    "Cancel",
    "Delete",
    "Rename",
    "Upload",
    "Refresh",
    "Archive",
    "Compile",
    "Publish",
    "Download",
    "History",
    "Options",
    "Profile",
    "Restore",
    "Library",
    "Capture",
    "Measure",
    "Scripts",
    "Network",
    "Storage",
    "Explore",
    "Monitor",
    "Project",
    "Windows",
    "Filters",
    "Account",
    "Journal",
    "Console",
    "Balance",
    "Display",
    "Printer",
    "Session",
    "Company",
    "Teacher",
    "Reports",
    "Contact",
    "Chapter",
]
SIZE = (480, 200)
BUTTON = (130, 40)
ICON = (420, 160, 14)  # the circle icon's centre and radius on every screen


@dataclass
class Built:
    root: Path
    injected: dict[str, list[str]]  # kind -> ids (an ambiguous pair counts as one injection, its first id)
    pairs: dict[str, str] = field(default_factory=dict)  # ambiguous: first id -> second id
    clean: list[str] = field(default_factory=list)
    texts: dict[str, list[tuple[str, tuple[float, float, float, float]]]] = field(default_factory=dict)
    runs: list[Path] = field(default_factory=list)


def _misspelt(word: str) -> str:
    """Two inner letters swapped: 'Export' -> 'Exprot'."""
    i = len(word) // 2
    return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]


def build(root: Path, seed: int = 7) -> Built:
    """Five screens, one per injected kind, four injections each, and 22 clean samples."""
    from PIL import Image, ImageDraw, ImageFont

    rng = random.Random(seed)
    font = ImageFont.truetype(str(FONT), 18)
    folder = root / "data" / "test"
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    built = Built(root, {k: [] for k in ("geometry", "text_mismatch", "typo", "ambiguous", "consensus")})
    words = list(WORDS)
    rng.shuffle(words)
    truth: dict[str, tuple[float, float] | None] = {}  # where a careful model clicks
    for n in range(5):
        image = Image.new("RGB", SIZE, "white")
        draw = ImageDraw.Draw(image)
        labels = [words.pop() for _ in range(6)]
        boxes = []
        for i, label in enumerate(labels):
            x, y = 15 + (i % 3) * 150, 20 + (i // 3) * 70
            box = (x, y, x + BUTTON[0], y + BUTTON[1])
            draw.rectangle(box, fill=(225, 230, 240), outline=(90, 90, 110), width=2)
            _left, _top, right, bottom = draw.textbbox((0, 0), label, font=font)
            tx, ty = x + (BUTTON[0] - right) / 2, y + (BUTTON[1] - bottom) / 2
            draw.text((tx, ty), label, fill="black", font=font)
            boxes.append(box)
        cx, cy, r = ICON
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(200, 60, 60))
        name = f"screen{n}.png"
        image.save(folder / name)
        built.texts[str((folder / name).resolve())] = [
            (lbl, tuple(map(float, b))) for lbl, b in zip(labels, boxes, strict=True)
        ]

        def row(sid: str, instruction: str, box: tuple, kind: str = "text", click=None, name: str = name) -> None:
            rows.append(
                {
                    "file_name": name,
                    "id": sid,
                    "instruction": instruction,
                    "bbox": list(box),
                    "element_type": kind,
                    "app": "demo",
                    "app_category": "office",
                    "platform": "linux",
                    "image_size": list(SIZE),
                }
            )
            truth[sid] = click

        def centre(box: tuple) -> tuple[float, float]:
            return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)

        kind = ("geometry", "text_mismatch", "typo", "ambiguous", "consensus")[n]
        # Clean rows on the buttons no injection touches.
        for i in {"typo": range(4, 6), "consensus": range(6)}.get(kind, range(3)):
            sid = f"s{n}b{i}"
            row(sid, f"{('Click', 'Press', 'Open')[i % 3]} {labels[i]}", boxes[i], click=centre(boxes[i]))
            built.clean.append(sid)
        sid = f"s{n}x"
        verbs = ("Choose", "Pick", "Use", "Hit")
        if kind == "geometry":  # no area, 2 px wide, across the right edge, the whole screen
            x1, y1, _x2, y2 = boxes[3]
            bad = [(x1, y1, x1, y2), (x1, y1, x1 + 2, y2), (SIZE[0] - 40, y1, SIZE[0] + 60, y2), (0, 0, *SIZE)]
            for j, box in enumerate(bad):
                row(f"{sid}{j}", f"{verbs[j]} {labels[3 + j % 3]}", box, click=centre(boxes[3 + j % 3]))
        if kind == "text_mismatch":  # the box on another button than the one named
            for j, (named, wrong) in enumerate(((3, 4), (4, 5), (5, 3), (1, 4))):
                text = f"Click {labels[named]}" if j % 2 else f'Press "{labels[named]}"'
                row(f"{sid}{j}", text, boxes[wrong], click=centre(boxes[named]))
        if kind == "typo":  # the label misspelt, the box right
            for j in range(4):
                row(f"{sid}{j}", f"Select {_misspelt(labels[j])}", boxes[j], click=centre(boxes[j]))
        if kind == "ambiguous":  # one instruction twice with two boxes
            for j in range(4):
                first, second = f"{sid}{j}a", f"{sid}{j}b"
                instruction = f"Select the control number {j + 1}"
                row(first, instruction, boxes[3], click=centre(boxes[3]))
                row(second, instruction, boxes[4 + j % 2], click=centre(boxes[3]))
                built.pairs[first] = second
        if kind == "consensus":  # an icon's box on empty space; the runs all click the icon
            names = ("Click the red circle", "Press the round red icon", "Open the red dot", "Tap the red disc")
            for j in range(4):
                row(f"{sid}{j}", names[j], (20 + 100 * j, 150, 60 + 100 * j, 190), kind="icon", click=(cx, cy))
        built.injected[kind] = [f"{sid}{j}" + ("a" if kind == "ambiguous" else "") for j in range(4)]
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    # Three replayed runs: careful clicks with a little jitter, each missing two clean samples at random places.
    for k in range(3):
        misses = set(rng.sample(built.clean, 2))
        lines = []
        for r in rows:
            click = truth[r["id"]]
            if r["id"] in misses or click is None:
                click = (rng.uniform(0, SIZE[0]), rng.uniform(0, SIZE[1]))
            point = [round(click[0] + rng.uniform(-4, 4), 1), round(click[1] + rng.uniform(-4, 4), 1)]
            lines.append(json.dumps({"id": r["id"], "point": point, "detector": f"model{k}"}))
        path = root / f"run{k}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        built.runs.append(path)
    return built


def flagged(findings, built: Built, kind: str) -> int:
    """How many injections of `kind` were flagged with that kind (an ambiguous pair by either row)."""
    ids = {
        f["id"] if isinstance(f, dict) else f.id
        for f in findings
        if (f["kind"] if isinstance(f, dict) else f.kind) == kind
    }
    return sum(1 for sid in built.injected[kind] if sid in ids or built.pairs.get(sid) in ids)


def clean_flagged(findings, built: Built) -> list[str]:
    ids = {f["id"] if isinstance(f, dict) else f.id for f in findings}
    return sorted(ids & set(built.clean))
