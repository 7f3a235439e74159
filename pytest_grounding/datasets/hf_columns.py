"""Column mappings for tables from the Hugging Face Hub (parquet / arrow): which column holds what,
and in which box convention. Pure: no pyarrow, no I/O.

A mapping is chosen by the mirror's name (`hf:lmms-lab/ScreenSpot-Pro`), by `mapping=NAME` in the
spec, or by the table's columns (a layout that only one published mirror family has); never by
looking at the values. Spec options (`image=COL`, `box=xywh`, ...) override single fields.
A benchmark's mirror (OSWorld-G) names its loader's row rules in `rows`: hf.py hands each row,
under the benchmark's field names, to that loader's conversion instead of reading one box.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from . import screenspot_pro
from .rows import RowSchema

BOX_FORMATS = ("xyxy", "xywh")
UNITS = ("px", "normalized")


# Where a table keeps each field: the one row schema (rows.py) with column names for fields.
ColumnMap = RowSchema

# ScreenSpot-Pro's own row schema (screenspot_pro.SCHEMA, declared once) as the table mirrors keep
# it: the image embedded in `image`, its file name in img_filename.
_PRO = dataclasses.replace(screenspot_pro.SCHEMA, image="image", file_name="img_filename", extra=None)
# OS-Copilot's ScreenSpot-v2 JSON rows with the screenshot embedded: bbox [x, y, w, h] in pixels.
_V2_RAW = ColumnMap(
    name="screenspot-v2",
    box="xywh",
    element_type="data_type",
    app="data_source",
    platform="data_source",
    file_name="img_filename",
    source="OS-Copilot's screenspot_*_v2.json schema: bbox [x, y, w, h] in pixels",
)
# Mirrors that converted the boxes to x1, y1, x2, y2 as fractions of the image (and renamed or
# dropped img_filename on the way).
_V2_NORMALIZED = dataclasses.replace(
    _V2_RAW,
    name="screenspot-v2-normalized",
    box="xyxy",
    units="normalized",
    file_name=None,
    source="HongxinLi/ScreenSpot_v2: bbox [x1, y1, x2, y2] as 0-1 fractions of the image",
)
_V1_ROOTS = dataclasses.replace(
    _V2_NORMALIZED,
    name="screenspot-rootsautomation",
    file_name="file_name",
    source="rootsautomation/ScreenSpot (ScreenSpot v1): bbox converted to [x1, y1, x2, y2], 0-1 fractions",
)

# MMInstruction/OSWorld-G: OSWorld-G's JSON rows with the screenshot embedded, as lmms-eval reads them
# (image, instruction, image_size, box_type, box_coordinates); each row is converted by osworld_g.py's
# rules: bbox [x, y, w, h] px, polygon a flat [x0, y0, x1, y1, ...] px (ray casting), refusal absent.
_OSWORLD_G = ColumnMap(
    name="osworld-g",
    bbox="box_coordinates",
    box="xywh",
    id="id",
    image_size="image_size",
    file_name="image_path",
    box_type="box_type",
    gui_types="GUI_types",
    rows="osworld-g",
    source="OSWorld-G's JSON schema (lmms-eval's osworld_g task): box_type bbox [x, y, w, h] px | polygon | refusal",
)

MAPPINGS: dict[str, ColumnMap] = {m.name: m for m in (_PRO, _V2_RAW, _V2_NORMALIZED, _V1_ROOTS, _OSWORLD_G)}

# Published mirrors by hub name (lower case) -> mapping, and the split they publish.
MIRRORS: dict[str, tuple[str, str]] = {
    "lmms-lab/screenspot-pro": ("screenspot-pro", "train"),
    "tiger-lab/screenspot-pro": ("screenspot-pro", "test"),
    "lmms-lab/screenspot-v2": ("screenspot-v2", "train"),
    "hongxinli/screenspot_v2": ("screenspot-v2-normalized", "test"),
    "rootsautomation/screenspot": ("screenspot-rootsautomation", "test"),
    "mminstruction/osworld-g": ("osworld-g", "test"),
}

# Column layouts that identify a mirror family: all of `signature` present (and none of `absent`).
LAYOUTS: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = (
    ("screenspot-pro", frozenset({"image", "instruction", "bbox", "img_size", "ui_type", "application"}), frozenset()),
    (
        "screenspot-v2",
        frozenset({"image", "img_filename", "instruction", "bbox", "data_type", "data_source"}),
        frozenset({"file_name"}),
    ),
    (
        "screenspot-rootsautomation",
        frozenset({"image", "file_name", "instruction", "bbox", "data_type", "data_source"}),
        frozenset({"img_filename"}),
    ),
    ("osworld-g", frozenset({"image", "instruction", "box_type", "box_coordinates"}), frozenset()),
)

# Spec options that set one field of the mapping (`image=screenshot`, `box=xywh`).
FIELD_OPTIONS = (
    *("image", "instruction", "bbox", "box", "units", "id", "element_type", "app", "app_category", "platform"),
    *("image_size", "file_name", "negative", "instruction_cn", "box_type", "gui_types"),
)


class MappingError(ValueError):
    """No mapping fits: the message lists the table's columns and how to map them."""


def mirror_of(hub_name: str) -> tuple[ColumnMap, str] | None:
    """The published mirror's mapping and split, by its hub name (case-insensitive)."""
    entry = MIRRORS.get(hub_name.strip("/").lower())
    return (MAPPINGS[entry[0]], entry[1]) if entry else None


def by_columns(columns: Iterable[str]) -> ColumnMap | None:
    present = set(columns)
    matches = [name for name, signature, absent in LAYOUTS if signature <= present and not absent & present]
    return MAPPINGS[matches[0]] if len(matches) == 1 else None


def choose(
    columns: Iterable[str], options: Mapping[str, str], hub_name: str | None = None, where: str = ""
) -> ColumnMap:
    """The mapping for a table: `mapping=NAME`, else the mirror's name, else its column layout;
    then each field option on top. Columns the mapping names must exist."""
    columns = list(columns)
    unknown = sorted(set(options) - set(FIELD_OPTIONS) - {"mapping"})
    if unknown:
        known = ", ".join(("mapping", *FIELD_OPTIONS))
        raise MappingError(f"{where}: unknown option(s) {', '.join(unknown)}; options: {known}")
    base: ColumnMap | None
    if "mapping" in options:
        base = MAPPINGS.get(options["mapping"])
        if base is None:
            raise MappingError(f"{where}: unknown mapping {options['mapping']!r}; known: {', '.join(MAPPINGS)}")
    else:
        mirror = mirror_of(hub_name) if hub_name else None
        base = mirror[0] if mirror else by_columns(columns)
    fields = {k: v for k, v in options.items() if k != "mapping"}
    if base is None:
        if not {"image", "instruction", "bbox", "box", "units"} <= set(fields):
            raise MappingError(unknown_layout(columns, where))
        base = ColumnMap(name="custom", source="columns named in the spec")
    if base.rows and {"box", "units"} & set(fields):
        raise MappingError(
            f"{where}: mapping {base.name} reads each row's box by {base.rows}'s own rules "
            f"(by its {base.box_type} column); box= and units= do not apply"
        )
    if not base.rows and {"box_type", "gui_types"} & set(fields):
        raise MappingError(f"{where}: box_type= and gui_types= belong to the osworld-g mapping, not {base.name}")
    for key in ("box", "units"):
        allowed = BOX_FORMATS if key == "box" else UNITS
        if key in fields and fields[key] not in allowed:
            raise MappingError(f"{where}: {key}={fields[key]} is not one of {', '.join(allowed)}")
    mapping = base
    if fields:  # an empty value (`id=`) unsets an optional column
        changes: dict[str, Any] = {k: (v or None) for k, v in fields.items()}
        mapping = dataclasses.replace(base, name=f"{base.name}+options", **changes)
    if mapping.rows and not mapping.box_type:
        raise MappingError(f"{where}: mapping {base.name} needs its box_type column (bbox | polygon | refusal)")
    missing = [c for c in mapping.required() if c not in columns]
    if missing:
        raise MappingError(
            f"{where}: mapping {base.name} needs column(s) {', '.join(missing)}, the table has: "
            f"{', '.join(columns)}; name the right ones in the spec, e.g. hf:SOURCE:SPLIT:image=COL:bbox=COL"
        )
    # Optional columns a mirror does not have are simply not read.
    absent: dict[str, Any] = {f: None for f in FIELD_OPTIONS if _optional_missing(mapping, f, columns)}
    return dataclasses.replace(mapping, **absent) if absent else mapping


def _optional_missing(mapping: ColumnMap, field: str, columns: list[str]) -> bool:
    if field in ("box", "units", "image", "instruction", "bbox"):
        return False
    if getattr(mapping, field) in mapping.required():
        return False
    value = getattr(mapping, field)
    return value is not None and value not in columns


def unknown_layout(columns: Iterable[str], where: str) -> str:
    return (
        f"{where}: no known column layout (columns: {', '.join(columns)}). Name a mapping "
        f"(mapping={'|'.join(MAPPINGS)}) or map the columns in the spec: "
        "hf:SOURCE:SPLIT:image=COL:instruction=COL:bbox=COL:box=xyxy|xywh:units=px|normalized "
        "(optional: id, element_type, app, app_category, platform, image_size, file_name, negative, instruction_cn)"
    )
