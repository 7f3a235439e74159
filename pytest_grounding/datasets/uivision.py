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

from ..core.targets import normalised
from ..core.types import Box
from ._common import (
    DatasetError,
    DatasetRoot,
    Format,
    Loaded,
    build_sample,
    four_numbers,
    read_json,
    row_failure,
    size_of,
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
        rows = read_json(file)
        if not isinstance(rows, list):
            raise DatasetError(f"{file}: expected a JSON list of rows, got {type(rows).__name__}")
        split = file.stem[len(PREFIX) :]
        for index, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("image_path"), str):
                raise DatasetError(f"{file}: row {index} has no image_path")
            sample_id = str(row.get("id") or f"{split}_{index:05d}")
            image = resolve_image(root_folder, row["image_path"])
            try:
                numbers = four_numbers(row.get("bbox"))
                box = None
                if numbers:
                    box, swapped = normalised(Box(*numbers))
                    if swapped:
                        note = f"bbox {list(numbers)} has reversed corners; read as {box.as_list()}"
                        problems.append(f"{sample_id}: {note}")
                samples.append(
                    build_sample(
                        sample_id=sample_id,
                        image=image,
                        root=root,
                        raw_image=row["image_path"],
                        instruction=row.get("prompt_to_evaluate"),
                        box=box,
                        raw_box=row.get("bbox"),
                        problems=problems,
                        element_type=row.get("element_type"),
                        app=row.get("platform"),
                        app_category=row.get("category"),
                        platform=split,
                        image_size=size_of(row.get("image_size")),
                        extra={
                            "source_file": file.name,
                            "benchmark": {
                                "name": "ui-vision",
                                "split": split,
                                "platform": str(row.get("platform")),
                                "category": str(row.get("category")),
                                "element_type": str(row.get("element_type")),
                            },
                        },
                    )
                )
            except (TypeError, ValueError, OverflowError) as exc:
                samples.append(row_failure(sample_id, image, problems, exc))
    return Loaded(name="ui-vision", samples=samples, files=files, problems=problems)


FORMAT = Format("ui-vision", sniff=lambda p: bool(annotation_files(p)), load=load)
