"""ScreenSpot v1 (SeeClick) and v2 (OS-Atlas): `screenspot_{mobile,desktop,web}.json` (v2:
`*_v2.json`), rows img_filename, bbox, instruction, data_type, data_source.
**bbox is [x, y, w, h]** in pixels of the original image. Rows have no ids: `<split>_<row>`."""

from __future__ import annotations

from pathlib import Path

from ._common import DatasetError, DatasetRoot, Format, Loaded
from .rows import Row, RowSchema, json_rows, sample_of

IMAGE_DIRS = ("images", "screenspot_imgs", "imgs", ".")
SCHEMA = RowSchema(  # rows have no ids: the reader gives `<split>_<row>`
    name="screenspot",
    image="img_filename",
    box="xywh",
    element_type="data_type",
    app="data_source",
    app_category=lambda row: row.context["split"],
    platform=lambda row: row.context["split"],
    extra=lambda row: dict(row.context),
)


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
        split = split_of(file)
        version = "v2" if file.stem.endswith("_v2") else "v1"
        context = {"split": split, "version": version, "source_file": file.name}
        for index, row in json_rows(file, "img_filename"):
            found = Row(row, f"{split}_{index:04d}", images / row["img_filename"], row["img_filename"], context)
            samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(
        name=path.name if path.is_dir() else path.parent.name, samples=samples, files=files, problems=problems
    )


FORMAT = Format("screenspot", sniff=lambda p: bool(annotation_files(p)), load=load)
