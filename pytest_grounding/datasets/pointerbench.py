"""Pointerbench-Pro (HuggingFace imagefolder): `data/test/metadata.jsonl`, one row per target,
bbox [x1, y1, x2, y2] in absolute pixels. Also accepts a bare folder holding metadata.jsonl, or
the file itself. The synthetic default is written in this layout."""

from __future__ import annotations

from pathlib import Path

from ..core.types import Box
from ._common import (
    DatasetError,
    DatasetRoot,
    Format,
    Loaded,
    build_sample,
    four_numbers,
    read_jsonl,
    row_failure,
    size_of,
    two_numbers,
)

_KNOWN = {
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
        image = meta.parent / file_name
        sample_id = f"line{lineno}"
        try:
            sample_id = str(row.get("id") or sample_id)
            raw_box = row.get("bbox")
            numbers = four_numbers(raw_box)
            samples.append(
                build_sample(
                    sample_id=sample_id,
                    image=image,
                    instruction=row.get("instruction"),
                    box=Box(*numbers) if numbers else None,
                    raw_box=raw_box,
                    problems=problems,
                    root=root,
                    raw_image=file_name,
                    element_type=row.get("element_type") or row.get("data_type"),
                    app=row.get("app"),
                    app_category=row.get("app_category"),
                    platform=row.get("platform"),
                    image_size=size_of(row.get("image_size")),
                    point=two_numbers(row.get("point")),
                    extra={k: v for k, v in row.items() if k not in _KNOWN},
                )
            )
        except (TypeError, ValueError, OverflowError) as exc:
            samples.append(row_failure(sample_id, image, problems, exc))
    return Loaded(name=dataset_name(meta), samples=samples, files=[meta], problems=problems)


FORMAT = Format("pointerbench", sniff=lambda p: metadata_file(p) is not None, load=load)
