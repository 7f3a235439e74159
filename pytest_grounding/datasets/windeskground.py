"""WinDeskGround (ZZZhr-1/WinDeskGround@1e047cc, `eval/evaluate_model.py`; data on the hub as
`Zbao/WinDeskGround`): a JSON list of rows, `test.json` in each condition's folder with its images
beside it (the file the authors' generators write and `evaluate_model.py --data_file` reads, with
`--image_root` that folder).

Row: img_filename (else image_path; its base name is joined to the file's folder), instruction,
bbox **[x, y, w, h] px** (else gt_bbox [x1, y1, x2, y2], else the target window's
target_bbox_proj), optional id; the target window (`windows[i].is_target`) names the category in
its `type`. The authors divide the box by the image's size read from the file and clip it to
[0, 1]: here it is clipped to the image in pixels, the same test. A row whose image, instruction or
box is missing, or whose values raise in their code, is skipped and **not counted**: here it is
that sample's error (left out of every figure, counted apart, its reason said), never a miss.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.types import Box
from ._common import DatasetError, DatasetRoot, Format, Loaded, four_numbers, read_json
from .harness import header_size
from .rows import Row, RowSchema, sample_of

NAME = "test.json"
SKIPPED = "skipped and not counted, as the authors' evaluate_model.py"


def raw_box(fields: Mapping[str, Any]) -> tuple[Any, str]:
    """The row's box as the authors look for it: (value, "xywh" | "xyxy"), or (None, "")."""
    if fields.get("bbox"):
        return fields["bbox"], "xywh"
    if "gt_bbox" in fields:
        return fields["gt_bbox"], "xyxy"
    target = target_window(fields)
    if target is not None and "target_bbox_proj" in target:
        return target["target_bbox_proj"], "xyxy"
    return None, ""


def target_window(fields: Mapping[str, Any]) -> dict | None:
    windows = fields.get("windows")
    if not isinstance(windows, list):
        return None
    return next((w for w in windows if isinstance(w, dict) and w.get("is_target")), None)


def category(fields: Mapping[str, Any]) -> str:
    """The target window's type (the README's categories), else a row's own category or type."""
    target = target_window(fields) or {}
    return str(target.get("type") or fields.get("category") or fields.get("type") or "unknown")


def _target(row: Row, size: tuple[int, int] | None, problems: list[str]) -> tuple[None, Box | None, str | None]:
    value, convention = raw_box(row.fields)
    numbers = four_numbers(value)
    if numbers is None:
        what = "no bbox, gt_bbox or target window box" if value is None else f"unusable box {str(value)[:80]!r}"
        return None, None, f"{SKIPPED}: {what}"
    if size is None:
        return None, None, f"{SKIPPED}: its image cannot be opened for its size"
    box = Box.from_xywh(*numbers) if convention == "xywh" else Box(*numbers)
    width, height = size
    clipped = Box(
        min(max(box.x1, 0.0), width),
        min(max(box.y1, 0.0), height),
        min(max(box.x2, 0.0), width),
        min(max(box.y2, 0.0), height),
    )
    if clipped != box:
        problems.append(f"{row.default_id}: box {box.as_list()} clipped to the {width}x{height} image, as the authors")
    return None, clipped, None


def _extra(row: Row) -> dict:
    return {
        "source_file": row.context["source_file"],
        "benchmark": {"name": "windeskground", "condition": row.context["condition"], "category": category(row.fields)},
    }


SCHEMA = RowSchema(  # the reader gives the id (the row's id, else its index) and finds the image
    name="windeskground",
    image="img_filename",
    app=lambda row: category(row.fields),
    app_category=lambda row: row.context["condition"],
    platform=lambda row: "windows",
    target=_target,
    source="WinDeskGround's test.json: bbox [x, y, w, h] in pixels, clipped to the image",
    extra=_extra,
)


def annotation_files(path: Path) -> list[Path]:
    """A named JSON file; a folder's test.json; else the test.json of each condition below it
    (`<condition>/test.json`, `simulation/L1/test.json`, `sensitivity/<experiment>/<condition>/`)."""
    if path.is_file():
        return [path] if path.suffix == ".json" and looks_like(path) else []
    if (path / NAME).is_file():
        return [path / NAME] if looks_like(path / NAME) else []
    # the folders of its generate_commands.py, nothing deeper (a folder of datasets is not one)
    patterns = (f"*/{NAME}", f"simulation/*/{NAME}", f"sensitivity/*/*/{NAME}")
    found = sorted({file for pattern in patterns for file in path.glob(pattern)})
    return [file for file in found if looks_like(file)]


@functools.lru_cache(maxsize=256)
def looks_like(file: Path) -> bool:
    """A JSON list whose first row names an image and an instruction and holds one of the boxes."""
    try:
        rows = read_json(file)
    except DatasetError:
        return False
    first = rows[0] if isinstance(rows, list) and rows else None
    return (
        isinstance(first, dict)
        and ("img_filename" in first or "image_path" in first)
        and "instruction" in first
        and any(key in first for key in ("bbox", "gt_bbox", "windows"))
    )


def image_of(folder: Path, fields: dict) -> tuple[Path, Any]:
    """Where evaluate_model.py finds the image: the base name in the file's folder, else the
    `image_path` as given (here relative to the file's folder: theirs is relative to where it runs)."""
    raw = fields.get("img_filename") or fields.get("image_path")
    if not isinstance(raw, str) or not raw:
        return folder / "(none)", raw
    if os.path.isabs(raw) and str(folder) not in raw:
        return Path(raw), raw  # outside the dataset: refused, never opened
    direct = folder / os.path.basename(raw)
    fallback = fields.get("image_path")
    usable = isinstance(fallback, str) and bool(fallback) and not os.path.isabs(fallback)
    if not direct.exists() and usable and (folder / str(fallback)).exists():
        return folder / str(fallback), fallback
    return direct, raw


def skipped(fields: dict, image: Path, raw: Any) -> str | None:
    """Why the authors skip this row before asking the model (their `continue`s)."""
    if not isinstance(raw, str) or not raw:
        return f"{SKIPPED}: no img_filename or image_path"
    if not image.is_file():
        return f"{SKIPPED}: image not found: {image.name}"
    if not fields.get("instruction"):
        return f"{SKIPPED}: no instruction"
    return None


def load(path: Path) -> Loaded:
    files = annotation_files(path)
    if not files:
        raise DatasetError(f"{path}: no WinDeskGround {NAME} (rows with img_filename, instruction and bbox)")
    base = path if path.is_dir() else path.parent
    root = DatasetRoot(base)
    problems: list[str] = []
    samples = []
    for file in files:
        rows = read_json(file)
        if not isinstance(rows, list):
            raise DatasetError(f"{file}: expected a JSON list of rows, got {type(rows).__name__}")
        folder = file.parent
        condition = folder.relative_to(base).as_posix() if folder != base else folder.name
        prefix = f"{condition}-" if len(files) > 1 else ""
        context = {"condition": condition, "source_file": file.relative_to(base).as_posix()}
        for index, fields in enumerate(rows):
            fields = fields if isinstance(fields, dict) else {}
            own = fields.get("id")
            sample_id = prefix + (str(own) if own not in (None, "") else f"row{index:05d}")
            image, raw = image_of(folder, fields)
            reason = skipped(fields, image, raw) or (None if isinstance(rows[index], dict) else f"{SKIPPED}: not a row")
            size = functools.partial(header_size, image)
            found = Row(fields, sample_id, image, raw, context, size, where="", defect=reason)
            samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name="windeskground", samples=samples, files=files, problems=problems)


FORMAT = Format("windeskground", sniff=lambda p: bool(annotation_files(p)), load=load)
