"""`python -m pytest_grounding annotate DIR --detector SPEC --out annotations.json`: draft annotations
from a detector that can list a screen's elements (the `ocr` and `omniparser` detectors' `elements`).

Each screen becomes a sample, each listed element a `"status": "draft"` element whose instruction is
its text. Screens already in the output file are kept as they are (a second run adds new screens only).
Screenshots outside the output's folder are copied into its `images/` folder: the harness loader opens
only images inside the dataset folder.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from ...core.safetext import terminal_line
from ...datasets._common import slug
from .document import DRAFT, CurationError, load, new_document, save
from .review import to_normalized

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")


def screenshots(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def draft_elements(listed: list[Any], width: int, height: int) -> list[dict[str, Any]]:
    """The harness elements of one screen from a detector's `ListedElement`s (pure): boxes clipped to
    the screen, those with no area left out, each a draft."""
    out: list[dict[str, Any]] = []
    for item in listed:
        box = item.box
        x1, y1 = max(0.0, float(box.x1)), max(0.0, float(box.y1))
        x2, y2 = min(float(width), float(box.x2)), min(float(height), float(box.y2))
        if x2 <= x1 or y2 <= y1:
            continue
        text = " ".join(str(item.text or "").split())
        out.append(
            {
                "id": f"e{len(out)}",
                "bbox": to_normalized((x1, y1, x2, y2), width, height),
                "text": text,
                "instruction": text,
                "type": str(item.type or "other"),
                "status": DRAFT,
            }
        )
    return out


LISTERS = ("ocr", "omniparser")  # the built-in detectors with an elements(image) method


def load_lister(spec: str) -> Any:
    """The detector named by SPEC (`name` or `name:key=value,...`), checked to be able to list elements."""
    from ...detectors import EXTRAS, bind_options, builtin_registry, parse_spec
    from ...detectors.base import ElementLister

    name, options = parse_spec(spec, raw=True)
    registry = builtin_registry()
    registry.register_entry_points("pytest_grounding.detectors")
    try:
        factory = registry.get(name).load()
    except ImportError as exc:
        extra = f" (pip install 'pytest-grounding[{EXTRAS[name]}]')" if name in EXTRAS else ""
        raise CurationError(f"detector {name!r} cannot be loaded: {exc}{extra}") from None
    if not callable(getattr(factory, "elements", None)):
        raise CurationError(
            f"detector {name!r} cannot list a screen's elements (it has no elements(image) method); "
            f"use {' or '.join(LISTERS)}, or a detector of your own with that method"
        )
    detector = factory(**bind_options(name, factory, options))
    assert isinstance(detector, ElementLister)
    return detector


def run_annotate(folder: Path, spec: str, out_path: Path, dataset: str | None = None, out: TextIO | None = None) -> int:
    """0 written; 2 nothing to do or the detector cannot list elements."""
    from PIL import Image

    out = out or sys.stdout
    images = screenshots(folder) if folder.is_dir() else []
    if not images:
        print(terminal_line(f"error: no screenshots ({', '.join(IMAGE_SUFFIXES)}) in {folder}"), file=out)
        return 2
    try:
        document = load(out_path) if out_path.exists() else new_document(dataset or out_path.parent.name)
        detector = load_lister(spec)
    except (CurationError, LookupError, ValueError, ImportError, OSError) as exc:  # unknown name, bad option, no model
        print(terminal_line(f"error: {exc}"), file=out)
        return 2
    root = out_path.parent.resolve()
    known = {sample["image"] for sample in document["samples"]}
    ids = {str(sample.get("id")) for sample in document["samples"]}
    added = elements = 0
    for image_file in images:
        name = relative_name(image_file, folder, root)
        if name in known:
            continue
        if not (root / name).exists():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(image_file, root / name)
        try:
            with Image.open(image_file) as opened:
                screen = opened.convert("RGB")
        except (OSError, ValueError) as exc:
            print(terminal_line(f"skipped {image_file}: cannot read the image: {type(exc).__name__}: {exc}"), file=out)
            continue
        try:
            listed = draft_elements(detector.elements(screen), *screen.size)
        except Exception as exc:  # one screen the parser fails on is that screen's loss, not the run's
            print(terminal_line(f"skipped {image_file}: the detector failed: {type(exc).__name__}: {exc}"), file=out)
            continue
        screen_id = unique(slug(Path(name).stem), ids)
        document["samples"].append(
            {"id": screen_id, "image": name, "width": screen.width, "height": screen.height, "elements": listed}
        )
        save(out_path, document)  # one screen at a time: an interrupted run keeps what it parsed
        added += 1
        elements += len(listed)
        print(terminal_line(f"{name}: {len(listed)} elements"), file=out)
    save(out_path, document)
    print(
        terminal_line(f"wrote {out_path}: {added} new screens, {elements} draft elements (detector {spec})"), file=out
    )
    return 0


def relative_name(image: Path, folder: Path, root: Path) -> str:
    """The image's path as the annotations file names it: relative to the file's folder when it is
    inside it, else `images/<path under the screenshots folder>` (where it is copied)."""
    resolved = image.resolve()
    if root in resolved.parents:
        return resolved.relative_to(root).as_posix()
    return (Path("images") / image.relative_to(folder)).as_posix()


def unique(base: str, taken: set[str]) -> str:
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    taken.add(name)
    return name
