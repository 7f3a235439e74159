"""Showdown-Clicks (generalagents/showdown-clicks, split dev): `data.csv` beside `frames/`.

CSV columns: id, image (path relative to the CSV's folder, e.g. frames/<uuid>/<n>.webp),
instruction, x1, y1, x2, y2 (px: the box of viable click locations), width, height. The authors
score a click inside the box, edges included, and report accuracy with a 95% bootstrap interval
(headlines.py); there are no slices.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..core import safefile
from ._common import DatasetError, DatasetRoot, Format, Loaded, row_failure
from .rows import Row, RowSchema, finite, sample_of

COLUMNS = ("id", "image", "instruction", "x1", "y1", "x2", "y2")
NAME = "data.csv"
CORNERS = ("x1", "y1", "x2", "y2")


def _corners(row: Row) -> list[float]:
    """The four columns as numbers; one that is not makes the row an error naming its line."""
    try:
        return [finite(row.fields.get(c), c) for c in CORNERS]
    except ValueError as exc:
        raise ValueError(f"line {row.context['line']}: {exc}") from None


def _size(row: Row) -> list | None:
    width, height = row.fields.get("width"), row.fields.get("height")
    return [width, height] if width and height else None


SCHEMA = RowSchema(  # the reader gives the id (`line<N>` where the row has none)
    name="showdown-clicks",
    image="image",
    bbox=_corners,
    corners="swap",
    app=lambda row: Path(row.context["image"]).parent.name or "unknown",  # the recording
    platform=lambda row: "macos",
    image_size=_size,
    extra=lambda row: {"line": row.context["line"], "benchmark": {"name": "showdown-clicks"}},
)


def csv_file(path: Path) -> Path | None:
    candidates = [path] if path.is_file() else [path / NAME, path / "showdown-clicks-dev" / NAME]
    for file in candidates:
        if file.is_file() and file.suffix == ".csv" and set(COLUMNS) <= set(header(file)):
            return file
    return None


MAX_CSV_BYTES = 256 << 20  # a clicks table of a few thousand rows is kilobytes


def header(file: Path) -> list[str]:
    try:
        text = safefile.read_text(file, limit=MAX_CSV_BYTES)  # a regular file, bounded
        return next(csv.reader(io.StringIO(text, newline="")), [])
    except (OSError, ValueError, csv.Error):
        return []


def load(path: Path) -> Loaded:
    file = csv_file(path)
    if file is None:
        raise DatasetError(f"{path}: no {NAME} with the columns {', '.join(COLUMNS)}")
    folder = file.parent
    root = DatasetRoot(folder)
    problems: list[str] = []
    samples = []
    try:
        text = safefile.read_text(file, limit=MAX_CSV_BYTES)  # a regular file, bounded
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except (OSError, ValueError, csv.Error) as exc:
        raise DatasetError(f"{file}: cannot read: {exc}") from None
    for index, row in enumerate(rows):
        line = index + 2  # the header is line 1
        sample_id = (row.get("id") or "").strip() or f"line{line}"
        raw_image = (row.get("image") or "").strip()
        image = folder / raw_image
        if not raw_image:
            failure = ValueError(f"line {line}: {file}:{line} has no image")
            samples.append(row_failure(sample_id, image, problems, failure))
            continue
        found = Row(row, sample_id, image, raw_image, {"line": line, "image": raw_image})
        samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name="showdown-clicks", samples=samples, files=[file], problems=problems)


FORMAT = Format("showdown-clicks", sniff=lambda p: csv_file(p) is not None, load=load)
