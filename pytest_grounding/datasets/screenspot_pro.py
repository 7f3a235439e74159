"""ScreenSpot-Pro: `annotations/<app>_<os>.json`, rows img_filename, bbox [x1, y1, x2, y2] px,
instruction, id, application, platform, img_size [w, h], ui_type (text|icon), group; images under
`images/<app>_<os>/`. Known label faults (a box with y1 = -1, duplicate ids) are reported, not fatal."""

from __future__ import annotations

from pathlib import Path

from ._common import DatasetError, DatasetRoot, Format, Loaded
from .rows import Row, RowSchema, json_rows, sample_of

# The one declaration of ScreenSpot-Pro's row: this loader and the hub mirrors (hf_columns) read it.
SCHEMA = RowSchema(
    name="screenspot-pro",
    image="img_filename",
    id="id",
    element_type="ui_type",
    app="application",
    app_category="group",
    platform="platform",
    image_size="img_size",
    instruction_cn="instruction_cn",
    source="ScreenSpot-Pro's annotations/*.json schema: bbox [x1, y1, x2, y2] in pixels",
    extra=lambda row: {"instruction_cn": row.fields.get("instruction_cn"), **row.context},
)


def annotation_files(path: Path) -> list[Path]:
    folder = path / "annotations" if path.is_dir() else None
    return sorted(folder.glob("*.json")) if folder is not None and folder.is_dir() else []


def resolve_image(root: Path, file: Path, img_filename: str) -> Path:
    direct = root / "images" / img_filename
    if direct.exists():
        return direct
    return root / "images" / file.stem / Path(img_filename).name


def load(path: Path) -> Loaded:
    files = annotation_files(path)
    if not files:
        raise DatasetError(f"{path}: no annotations/*.json")
    problems: list[str] = []
    root = DatasetRoot(path)
    samples = []
    for file in files:
        context = {"source_file": file.name}
        for index, row in json_rows(file, "img_filename"):
            image = resolve_image(path, file, row["img_filename"])
            found = Row(row, f"{file.stem}_{index:04d}", image, row["img_filename"], context)
            samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name=path.name, samples=samples, files=files, problems=problems)


def sniff(path: Path) -> bool:
    """annotations/*.json, unless they are ScreenSpot-v2-variants' rows (the same layout)."""
    from .screenspot_variants import looks_like_variants

    files = annotation_files(path)
    return bool(files) and not looks_like_variants(files[0])


FORMAT = Format("screenspot-pro", sniff=sniff, load=load)
