"""Showdown-Clicks (generalagents/showdown-clicks, split dev): `data.csv` beside `frames/`.

CSV columns: id, image (path relative to the CSV's folder, e.g. frames/<uuid>/<n>.webp),
instruction, x1, y1, x2, y2 (px: the box of viable click locations), width, height. The authors
score a click inside the box, edges included, and report accuracy with a 95% bootstrap interval
(headlines.py); there are no slices.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from ..core.types import Box
from ._common import DatasetError, DatasetRoot, Format, Loaded, build_sample, corners_fixed, row_failure

COLUMNS = ("id", "image", "instruction", "x1", "y1", "x2", "y2")
NAME = "data.csv"


def csv_file(path: Path) -> Path | None:
    candidates = [path] if path.is_file() else [path / NAME, path / "showdown-clicks-dev" / NAME]
    for file in candidates:
        if file.is_file() and file.suffix == ".csv" and set(COLUMNS) <= set(header(file)):
            return file
    return None


def header(file: Path) -> list[str]:
    try:
        with file.open(newline="", encoding="utf-8") as handle:
            return next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def number(value: str | None, column: str) -> float:
    result = float(value if value is not None else "nan")
    if not math.isfinite(result):
        raise ValueError(f"column {column} is {value!r}, not a number")
    return result


def load(path: Path) -> Loaded:
    file = csv_file(path)
    if file is None:
        raise DatasetError(f"{path}: no {NAME} with the columns {', '.join(COLUMNS)}")
    folder = file.parent
    root = DatasetRoot(folder)
    problems: list[str] = []
    samples = []
    try:
        with file.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"{file}: cannot read: {exc}") from None
    for index, row in enumerate(rows):
        line = index + 2  # the header is line 1
        sample_id = (row.get("id") or "").strip() or f"line{line}"
        raw_image = (row.get("image") or "").strip()
        image = folder / raw_image
        try:
            if not raw_image:
                raise ValueError(f"{file}:{line} has no image")
            box = corners_fixed(Box(*(number(row.get(c), c) for c in ("x1", "y1", "x2", "y2"))), sample_id, problems)
            width, height = row.get("width"), row.get("height")
            size = (int(number(width, "width")), int(number(height, "height"))) if width and height else None
            samples.append(
                build_sample(
                    sample_id=sample_id,
                    image=image,
                    root=root,
                    raw_image=raw_image,
                    instruction=row.get("instruction"),
                    box=box,
                    raw_box=[row.get(c) for c in ("x1", "y1", "x2", "y2")],
                    problems=problems,
                    app=Path(raw_image).parent.name or "unknown",  # the recording
                    platform="macos",
                    image_size=size,
                    extra={"line": line, "benchmark": {"name": "showdown-clicks"}},
                )
            )
        except (TypeError, ValueError, OverflowError) as exc:
            samples.append(row_failure(sample_id, image, problems, ValueError(f"line {line}: {exc}")))
    return Loaded(name="showdown-clicks", samples=samples, files=[file], problems=problems)


FORMAT = Format("showdown-clicks", sniff=lambda p: csv_file(p) is not None, load=load)
