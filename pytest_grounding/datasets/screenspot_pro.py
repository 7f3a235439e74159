"""ScreenSpot-Pro: `annotations/<app>_<os>.json`, rows img_filename, bbox [x1, y1, x2, y2] px,
instruction, id, application, platform, img_size [w, h], ui_type (text|icon), group; images under
`images/<app>_<os>/`. Known label faults (a box with y1 = -1, duplicate ids) are reported, not fatal."""

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
    read_json,
    row_failure,
    size_of,
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
        rows = read_json(file)
        if not isinstance(rows, list):
            raise DatasetError(f"{file}: expected a JSON list of rows, got {type(rows).__name__}")
        for index, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("img_filename"), str):
                raise DatasetError(f"{file}: row {index} has no img_filename")
            sample_id = f"{file.stem}_{index:04d}"
            image = resolve_image(path, file, row["img_filename"])
            try:
                sample_id = str(row.get("id") or sample_id)
                raw_box = row.get("bbox")
                numbers = four_numbers(raw_box)
                samples.append(
                    build_sample(
                        sample_id=sample_id,
                        image=image,
                        root=root,
                        raw_image=row["img_filename"],
                        instruction=row.get("instruction"),
                        box=Box(*numbers) if numbers else None,
                        raw_box=raw_box,
                        problems=problems,
                        element_type=row.get("ui_type"),
                        app=row.get("application"),
                        app_category=row.get("group"),
                        platform=row.get("platform"),
                        image_size=size_of(row.get("img_size")),
                        extra={"instruction_cn": row.get("instruction_cn"), "source_file": file.name},
                    )
                )
            except (TypeError, ValueError, OverflowError) as exc:
                samples.append(row_failure(sample_id, image, problems, exc))
    return Loaded(name=path.name, samples=samples, files=files, problems=problems)


def sniff(path: Path) -> bool:
    """annotations/*.json, unless they are ScreenSpot-v2-variants' rows (the same layout)."""
    from .screenspot_variants import looks_like_variants

    files = annotation_files(path)
    return bool(files) and not looks_like_variants(files[0])


FORMAT = Format("screenspot-pro", sniff=sniff, load=load)
