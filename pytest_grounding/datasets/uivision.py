"""UI-Vision element grounding (ServiceNow/ui-vision): `annotations/element_grounding/
element_grounding_{basic,functional,spatial}.json`, images under `images/` (the row's
`image_path` is relative to it, as the authors' eval_uivision.py joins it).

Row: image_path, prompt_to_evaluate (the instruction), bbox **[x1, y1, x2, y2]** px (sometimes
with reversed corners: swapped, as the authors' evaluator does, and reported), image_size [W, H],
platform (the application), category, element_type. The split is the file's. The authors' figure
is the unweighted mean of the three splits' accuracies (headlines.py).
"""

from __future__ import annotations

from pathlib import Path

from ._common import DatasetError, DatasetRoot, Format, Loaded
from .rows import Row, RowSchema, json_rows, sample_of


def _extra(row: Row) -> dict:
    benchmark = {"name": "ui-vision", "split": row.context["split"]}
    benchmark.update({key: str(row.fields.get(key)) for key in ("platform", "category", "element_type")})
    return {"source_file": row.context["source_file"], "benchmark": benchmark}


SCHEMA = RowSchema(
    name="ui-vision",
    image="image_path",
    id="id",
    instruction="prompt_to_evaluate",
    corners="swap",  # as the authors' evaluator
    element_type="element_type",
    app="platform",  # the row's platform is the application
    app_category="category",
    platform=lambda row: row.context["split"],
    image_size="image_size",
    extra=_extra,
)

SPLITS = ("basic", "functional", "spatial")
PREFIX = "element_grounding_"


def annotation_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.name.startswith(PREFIX) and path.suffix == ".json" else []
    for folder in (path / "annotations" / "element_grounding", path / "element_grounding", path):
        found = sorted(folder.glob(f"{PREFIX}*.json")) if folder.is_dir() else []
        if found:
            return found
    return []


def dataset_root(file: Path) -> Path:
    """The folder holding `images/`: the annotations' grandparent in the published layout."""
    for folder in (file.parent.parent.parent, file.parent.parent, file.parent):
        if (folder / "images").is_dir():
            return folder
    return file.parent.parent.parent


def resolve_image(root: Path, image_path: str) -> Path:
    direct = root / "images" / image_path
    if direct.exists():
        return direct
    nested = root / "images" / "element_grounding" / image_path
    return nested if nested.exists() else direct


def load(path: Path) -> Loaded:
    files = annotation_files(path)
    if not files:
        raise DatasetError(f"{path}: no annotations/element_grounding/{PREFIX}*.json")
    root_folder = dataset_root(files[0])
    root = DatasetRoot(root_folder)
    problems: list[str] = []
    samples = []
    for file in files:
        split = file.stem[len(PREFIX) :]
        context = {"split": split, "source_file": file.name}
        for index, row in json_rows(file, "image_path"):
            image = resolve_image(root_folder, row["image_path"])
            found = Row(row, f"{split}_{index:05d}", image, row["image_path"], context)
            samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name="ui-vision", samples=samples, files=files, problems=problems)


FORMAT = Format("ui-vision", sniff=lambda p: bool(annotation_files(p)), load=load)
