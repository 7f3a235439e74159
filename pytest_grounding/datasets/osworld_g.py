"""OSWorld-G (xlang-ai/OSWorld-G, folder `benchmark/`): `OSWorld-G.json` (original instructions)
and `OSWorld-G_refined.json` (the same rows, refined instructions), `classification_result.json`
(the paper's categories), `images/<image_path>`.

Row: id, image_path, image_size [W, H], instruction, box_type (bbox | polygon | refusal),
box_coordinates, GUI_types. `bbox` is **[x, y, w, h]** px; `polygon` a flat [x0, y0, x1, y1, ...]
px, scored by ray casting as the authors' eval.py does; `refusal` means the element is absent (a
refusal is the right answer). A folder loads `OSWorld-G.json` (else the refined file); name the
refined file itself to run it. Categories are multi-label; a row in none is "unclassified".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.targets import RAY, Absent, AnyOf, Polygon
from ..core.types import Box
from ._common import DatasetError, DatasetRoot, Format, Loaded, four_numbers, read_json
from .rows import Row, RowSchema, json_rows, sample_id_of, sample_of

ORIGINAL, REFINED = "OSWorld-G.json", "OSWorld-G_refined.json"
CLASSES = "classification_result.json"
BOX_TYPES = ("bbox", "polygon", "refusal")


def annotation_file(path: Path) -> Path | None:
    if path.is_file():
        return path if path.name in (ORIGINAL, REFINED) else None
    for name in (ORIGINAL, REFINED):
        if (path / name).is_file():
            return path / name
    return None


def categories(folder: Path) -> tuple[dict[str, list[str]], list[Path]]:
    """id -> the paper's categories, from classification_result.json (absent: none)."""
    file = folder / CLASSES
    if not file.is_file():
        return {}, []
    return read_categories(file), [file]


def read_categories(file: Path) -> dict[str, list[str]]:
    """classification_result.json: `{"classified": {category: [{"id": ...}, ...]}}` -> id -> categories."""
    document = read_json(file)
    classified = document.get("classified") if isinstance(document, dict) else None
    if not isinstance(classified, dict):
        raise DatasetError(f'{file}: expected {{"classified": {{category: [{{"id": ...}}, ...]}}}}')
    found: dict[str, list[str]] = {}
    for category, members in sorted(classified.items()):
        if not isinstance(members, list):
            raise DatasetError(f"{file}: category {category!r} is not a list of rows")
        for member in members:
            member_id = member.get("id") if isinstance(member, dict) else member
            if member_id is not None:
                found.setdefault(str(member_id), []).append(str(category))
    return found


def polygon(values: Any) -> Polygon | None:
    if not isinstance(values, list) or len(values) < 6 or len(values) % 2:
        return None
    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError, OverflowError):
        return None
    shape = Polygon(tuple(zip(numbers[0::2], numbers[1::2], strict=True)), RAY)
    return shape if shape.is_valid else None


def target_of(box_type: Any, coordinates: Any) -> tuple[Any, Box | None, str | None]:
    """(target, bounding box, defect) for one row."""
    if box_type == "refusal":
        return Absent(), None, None
    if box_type == "bbox":
        numbers = four_numbers(coordinates)
        box = Box.from_xywh(*numbers) if numbers else None
        return None, box, None
    if box_type == "polygon":
        shape = polygon(coordinates)
        if shape is None:
            return None, None, f"unusable polygon {str(coordinates)[:120]!r} (needs 3+ vertices and an area)"
        return AnyOf((shape,)), shape.bounds, None
    return None, None, f"unknown box_type {box_type!r} (expected {', '.join(BOX_TYPES)})"


def _target(row: Row, size: tuple[int, int] | None, problems: list[str]) -> tuple[Any, Box | None, str | None]:
    return target_of(row.fields.get("box_type"), row.fields.get("box_coordinates"))


def _extra(row: Row) -> dict[str, Any]:
    raw_types = row.fields.get("GUI_types")
    gui_types: list = raw_types if isinstance(raw_types, list) else []
    classes: Mapping[str, list[str]] = row.context.get("classes") or {}
    sample_id = sample_id_of(row, SCHEMA)
    return {
        **row.context["origin"],
        "benchmark": {
            # the refined split is its own benchmark (re-annotated; its scores differ from the
            # original's by points): its headline never pools with the original's
            "name": "osworld-g-refined" if row.context["variant"] == "refined" else "osworld-g",
            "category": list(classes.get(sample_id, ["unclassified"])),
            "box_type": str(row.fields.get("box_type")),
            "instructions": row.context["variant"],
            "gui_types": [str(t) for t in gui_types],
        },
    }


# The authors' field names; the hub mirror (hf.py) hands its rows over under these names. The row's
# context: origin (extra fields), classes (id -> categories), variant (original | refined).
SCHEMA = RowSchema(
    name="osworld-g",
    image="image_path",
    id="id",
    bbox="box_coordinates",
    image_size="image_size",
    app_category="box_type",
    target=_target,
    extra=_extra,
)


def load(path: Path) -> Loaded:
    file = annotation_file(path)
    if file is None:
        raise DatasetError(f"{path}: no {ORIGINAL} or {REFINED}")
    folder = file.parent
    rows = json_rows(file, "image_path")
    classes, class_files = categories(folder)
    variant = "refined" if file.name == REFINED else "original"
    images = folder / "images"
    root = DatasetRoot(folder)
    problems: list[str] = []
    samples = []
    for index, row in rows:
        context = {"origin": {"source_file": file.name}, "classes": classes, "variant": variant}
        found = Row(row, f"row{index:04d}", images / row["image_path"], row["image_path"], context)
        samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name=f"osworld-g-{variant}", samples=samples, files=[file, *class_files], problems=problems)


FORMAT = Format("osworld-g", sniff=lambda p: annotation_file(p) is not None, load=load)
