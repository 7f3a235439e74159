"""Pointerbench-Pro (HuggingFace imagefolder): `data/test/metadata.jsonl`, one row per target,
bbox [x1, y1, x2, y2] in absolute pixels. Also accepts a bare folder holding metadata.jsonl, or
the file itself. The synthetic default is written in this layout."""

from __future__ import annotations

from pathlib import Path

from ._common import DatasetError, DatasetRoot, Format, Loaded, read_jsonl
from .rows import Row, RowSchema, sample_of

_KNOWN = {  # the fields SCHEMA reads; the others go to extra
    "file_name",
    "id",
    "instruction",
    "bbox",
    "point",
    "element_type",
    "app",
    "app_category",
    "platform",
    "image_size",
}

SCHEMA = RowSchema(
    name="pointerbench",
    image="file_name",
    id="id",
    element_type=lambda row: row.fields.get("element_type") or row.fields.get("data_type"),
    app="app",
    app_category="app_category",
    platform="platform",
    image_size="image_size",
    point="point",
    extra=lambda row: {k: v for k, v in row.fields.items() if k not in _KNOWN},
)


def metadata_file(path: Path) -> Path | None:
    if path.is_file():
        return path if path.name == "metadata.jsonl" else None
    for candidate in (path / "data" / "test" / "metadata.jsonl", path / "metadata.jsonl"):
        if candidate.is_file():
            return candidate
    return None


def dataset_name(meta: Path) -> str:
    folder = meta.parent
    if folder.name == "test" and folder.parent.name == "data":
        folder = folder.parent.parent
    return folder.name


def load(path: Path) -> Loaded:
    meta = metadata_file(path)
    if meta is None:
        raise DatasetError(f"{path}: no data/test/metadata.jsonl or metadata.jsonl")
    problems: list[str] = []
    root = DatasetRoot(path if path.is_dir() else meta.parent)
    samples = []
    for lineno, row in read_jsonl(meta):
        if not isinstance(row, dict):
            raise DatasetError(f"{meta}:{lineno}: expected a JSON object, got {type(row).__name__}")
        file_name = row.get("file_name")
        if not isinstance(file_name, str) or not file_name:
            raise DatasetError(f"{meta}:{lineno}: row {row.get('id')!r} has no file_name")
        found = Row(row, f"line{lineno}", meta.parent / file_name, file_name)
        samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name=dataset_name(meta), samples=samples, files=[meta], problems=problems)


FORMAT = Format("pointerbench", sniff=lambda p: metadata_file(p) is not None, load=load)
