"""ScreenSpot v1 (SeeClick) and v2 (OS-Atlas): `screenspot_{mobile,desktop,web}.json` (v2:
`*_v2.json`), rows img_filename, bbox, instruction, data_type, data_source.
**bbox is [x, y, w, h]** in pixels of the original image. Rows have no ids: `<split>_<row>`."""

from __future__ import annotations

from pathlib import Path

from ..core.types import Box
from ._common import DatasetError, DatasetRoot, Format, Loaded, build_sample, four_numbers, read_json, row_failure

IMAGE_DIRS = ("images", "screenspot_imgs", "imgs", ".")


def annotation_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.name.startswith("screenspot_") and path.suffix == ".json" else []
    return sorted(path.glob("screenspot_*.json"))


def split_of(file: Path) -> str:
    return file.stem[len("screenspot_") :].replace("_v2", "")


def image_root(folder: Path) -> Path:
    for name in IMAGE_DIRS:
        if (folder / name).is_dir() and (name == "." or any((folder / name).iterdir())):
            return (folder / name).resolve()
    return folder


def load(path: Path) -> Loaded:
    files = annotation_files(path)
    if not files:
        raise DatasetError(f"{path}: no screenspot_*.json annotation files")
    images = image_root(files[0].parent)
    problems: list[str] = []
    root = DatasetRoot(files[0].parent)
    samples = []
    for file in files:
        rows = read_json(file)
        if not isinstance(rows, list):
            raise DatasetError(f"{file}: expected a JSON list of rows, got {type(rows).__name__}")
        split = split_of(file)
        version = "v2" if file.stem.endswith("_v2") else "v1"
        for index, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("img_filename"), str):
                raise DatasetError(f"{file}: row {index} has no img_filename")
            sample_id, image = f"{split}_{index:04d}", images / row["img_filename"]
            try:
                raw_box = row.get("bbox")
                numbers = four_numbers(raw_box)
                samples.append(
                    build_sample(
                        sample_id=sample_id,
                        image=image,
                        root=root,
                        raw_image=row["img_filename"],
                        instruction=row.get("instruction"),
                        box=Box.from_xywh(*numbers) if numbers else None,
                        raw_box=raw_box,
                        problems=problems,
                        element_type=row.get("data_type"),
                        app=row.get("data_source"),
                        app_category=split,
                        platform=split,
                        extra={"split": split, "version": version, "source_file": file.name},
                    )
                )
            except (TypeError, ValueError, OverflowError) as exc:
                samples.append(row_failure(sample_id, image, problems, exc))
    return Loaded(
        name=path.name if path.is_dir() else path.parent.name, samples=samples, files=files, problems=problems
    )


FORMAT = Format("screenspot", sniff=lambda p: bool(annotation_files(p)), load=load)
