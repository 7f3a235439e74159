"""One row schema and one row loop: every format and every hub mirror declares where a row keeps
each field (a `RowSchema`), and `sample_of` turns one row into one Sample the same way for all.

A reader (the format's `load`, or hf.py for a table) finds the rows and where each one's image is;
the loop does the rest, in one order for every format: the id; the image kept inside the dataset
(a path that leads outside is that sample's error, and is never opened); the declared image size
(a size that is not two positive numbers is that sample's error); the box in its convention, or
the target by the benchmark's own rule; the slices; the extras. A value that cannot be converted
makes that row an error, never the load.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.targets import Absent
from ..core.types import Box, Sample
from ._common import (
    PLACEHOLDER_BOX,
    DatasetError,
    DatasetRoot,
    build_sample,
    corners_fixed,
    four_numbers,
    read_json,
    row_failure,
    two_numbers,
    with_defect,
)

BOX_FORMATS = ("xyxy", "xywh")
# px: absolute pixels; normalized: 0-1 fractions of the image (a value far outside is an error);
# auto: MMBench-GUI's authors' rule (all values <= 1: fractions, else pixels; -1 read as 0)
UNITS = ("px", "normalized", "auto")


@dataclass(frozen=True)
class Row:
    """One row as its reader found it."""

    fields: Mapping[str, Any]
    default_id: str  # the id when the row holds none
    image: Path  # where its image is
    raw_image: Any = None  # the path as the row gives it (named when it leads outside the dataset)
    context: Mapping[str, Any] = field(default_factory=dict)  # the file's own values: split, style, ...
    # The image's size known otherwise (a header already read), or a function that reads it: called
    # only for an image inside the dataset whose row declares no size.
    size: tuple[int, int] | Callable[[], tuple[int, int] | None] | None = None
    trusted: bool = False  # the reader wrote the image itself (a table's extracted screenshot): not checked
    where: str = ""  # prefixed to the sample's error: "row 3 of test.parquet"
    defect: str | None = None  # what the reader already knows is wrong (no image at all)


# A benchmark's own target rule: (target or None, its bounding box, defect) from the row, the
# image's size and the dataset's notes (where it reports what it noticed).
TargetRule = Callable[[Row, tuple[int, int] | None, list[str]], tuple[Any, Box | None, str | None]]


@dataclass(frozen=True)
class RowSchema:
    """Where a row keeps each field, and in which convention its box is. A field is the row's key,
    or (instruction, bbox, the slices, point) a small function of the Row for a value no one key
    holds. The key fields (image ... gui_types) are also a hub table's column names (hf_columns:
    the spec's options set them)."""

    name: str
    image: str = "image"
    instruction: Any = "instruction"
    bbox: Any = "bbox"
    box: str = "xyxy"  # xyxy | xywh
    units: str = "px"  # px | normalized | auto
    id: str | None = None
    element_type: Any = None
    app: Any = None
    app_category: Any = None
    platform: Any = None
    image_size: Any = None  # [w, h]
    file_name: str | None = None  # a table's column that names the extracted image file
    negative: str | None = None  # a truthy value: the target is absent (carried as extra["negative"])
    instruction_cn: str | None = None  # ScreenSpot-Pro's Chinese instruction (--grounding-language cn)
    box_type: str | None = None  # OSWorld-G: bbox | polygon | refusal, which says how to read `bbox`
    gui_types: str | None = None  # OSWorld-G: the element's GUI types (a list)
    # A benchmark whose own row rules convert each row (osworld-g): `box` and `units` do not apply.
    rows: str | None = None
    source: str = ""  # where the convention comes from (shown by errors and the docs)
    point: Any = None  # a recorded click point, in the box's units
    corners: str = "keep"  # keep | swap (reversed corners swapped and reported, as the authors' evaluators)
    extra: Callable[[Row], dict[str, Any]] | None = None  # what the record's `extra` carries
    target: TargetRule | None = None  # the benchmark's own target rule, instead of one box
    absent: Callable[[Row], bool] | None = None  # the element is not on the screen (a refusal is right)
    header_size: bool = True  # a size read from the image's header is the sample's image_size too

    def required(self) -> tuple[str, ...]:
        kind = (self.box_type,) if self.rows and self.box_type else ()
        return (self.image, self.instruction, self.bbox, *kind)

    def optional(self) -> tuple[str, ...]:
        fields = (self.id, self.element_type, self.app, self.app_category, self.platform, self.image_size)
        more = (self.file_name, self.negative, self.instruction_cn, self.box_type, self.gui_types)
        return tuple(c for c in (*fields, *more) if isinstance(c, str) and c and c not in self.required())


def value(row: Row, spec: Any) -> Any:
    """A field's value: the row's key, or the schema's function of the row."""
    if spec is None:
        return None
    if isinstance(spec, str):
        return row.fields.get(spec)
    return spec(row)


def sample_id_of(row: Row, schema: RowSchema) -> str:
    raw = row.fields.get(schema.id) if schema.id else None
    return row.default_id if raw in (None, "") else str(raw)


def declared_size(raw: Any) -> tuple[tuple[int, int] | None, str | None]:
    """A row's declared [width, height]: (size, None), (None, None) when it declares none, or
    (None, why) when what it declares is no size (text, one number, zero or negative)."""
    if raw is None or raw == "" or raw == [None, None] or raw == (None, None):
        return None, None
    pair = two_numbers(raw)
    if pair is None or pair[0] < 1 or pair[1] < 1:
        return None, f"declared image size {str(raw)[:80]!r} is not [width, height] in positive pixels"
    return (int(pair[0]), int(pair[1])), None


def to_pixels(numbers: tuple[float, float, float, float], schema: RowSchema, size: tuple[int, int] | None):
    """(box in absolute pixels x1 y1 x2 y2 or None, defect) from four numbers in the schema's convention."""
    box = Box.from_xywh(*numbers) if schema.box == "xywh" else Box(*numbers)
    if schema.units == "auto":  # MMBench-GUI's loader
        x1, y1, x2, y2 = (0.0 if v == -1 else v for v in numbers)
        if not all(v <= 1.0 for v in (x1, y1, x2, y2)):
            return Box(x1, y1, x2, y2), None
        return (Box.from_normalized(x1, y1, x2, y2, *size) if size else None), None
    if schema.units == "normalized":
        if not all(-0.01 <= v <= 1.01 for v in numbers):
            return None, (
                f"bbox {list(numbers)} is not in 0-1 fractions, as mapping {schema.name} says this column is "
                "(give units=px in the spec if the table holds pixels)"
            )
        if size is None:
            return None, f"bbox {list(numbers)} is normalized and the image size is unknown (no size column, no header)"
        return Box.from_normalized(box.x1, box.y1, box.x2, box.y2, *size), None
    return box, None


def sample_of(row: Row, schema: RowSchema, root: DatasetRoot | None, problems: list[str]) -> Sample:
    """One row to one Sample (never raises for a row's values: what is wrong is that sample's defect)."""
    sample_id = row.default_id
    try:
        sample_id = sample_id_of(row, schema)
        check = root if root is not None and not row.trusted else None
        outside = check.problem(row.image, row.raw_image if row.raw_image is not None else row.image) if check else None
        declared, size_defect = declared_size(value(row, schema.image_size))
        size = declared
        if size is None and not (outside or size_defect):  # never a header outside the dataset
            size = row.size() if callable(row.size) else row.size
        target, box, rule_defect = None, None, None
        raw_box = value(row, schema.bbox)
        if schema.target is not None:
            target, box, rule_defect = schema.target(row, size, problems)
        else:
            numbers = four_numbers(raw_box)
            if numbers is not None:
                box, rule_defect = to_pixels(numbers, schema, size)
                if schema.corners == "swap":
                    box = corners_fixed(box, sample_id, problems)
        extra = schema.extra(row) if schema.extra else {}
        point = two_numbers(value(row, schema.point))
        if point is not None and schema.units == "normalized":
            point = (point[0] * size[0], point[1] * size[1]) if size else None
        if schema.absent is not None and schema.absent(row):
            target = Absent()
        if (extra.get("negative") is True or isinstance(target, Absent)) and box is None:  # nothing to score
            box, rule_defect = PLACEHOLDER_BOX, None
        sample = build_sample(
            sample_id=sample_id,
            image=row.image,
            outside=outside,
            instruction=value(row, schema.instruction),
            box=box,
            raw_box=raw_box,
            problems=problems,
            element_type=value(row, schema.element_type),
            app=value(row, schema.app),
            app_category=value(row, schema.app_category),
            platform=value(row, schema.platform),
            image_size=size if schema.header_size else declared,
            point=point,
            extra=extra,
            target=target,
        )
    except (TypeError, ValueError, OverflowError, OSError) as exc:  # OSError: an image path no file system takes
        return row_failure(sample_id, row.image, problems, ValueError(f"{row.where}: {exc}") if row.where else exc)
    defect = row.defect or size_defect or rule_defect
    if defect:
        sample = with_defect(sample, defect)
    if row.where and sample.defect:
        sample = with_defect(sample, f"{row.where}: {sample.defect}", keep_outside=False)
    return sample


def json_rows(file: Path, image: str) -> list[tuple[int, dict]]:
    """A JSON file's list of rows, each an object naming its image in the string field `image`:
    anything else is the whole file's error, naming it and the row."""
    rows = read_json(file)
    if not isinstance(rows, list):
        raise DatasetError(f"{file}: expected a JSON list of rows, got {type(rows).__name__}")
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get(image), str):
            raise DatasetError(f"{file}: row {index} has no {image}")
    return list(enumerate(rows))


def finite(value: Any, column: str) -> float:
    """A number that must be one (a CSV cell): anything else makes its row an error naming the column."""
    result = float(value if value is not None else "nan")
    if not math.isfinite(result):
        raise ValueError(f"column {column} is {value!r}, not a number")
    return result
