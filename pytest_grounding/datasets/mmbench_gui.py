"""MMBench-GUI L2, GUI element grounding (OpenGVLab/MMBench-GUI): `L2_annotations.json` and
`offline_images/<platform>/<image_path>` (platform one of os_windows, os_mac, os_linux, os_ios,
os_android, os_web).

Row: index, image_path, instruction, bbox **[x1, y1, x2, y2] normalised 0-1** (the authors'
loader also takes pixels: a box with a value above 1 is read as pixels, and -1 as 0), image_size
[W, H], data_type (icon | text), app_name, platform, grounding_type (basic | advanced). The
authors' figure: Basic and Advanced, each sample-weighted over platforms, and their mean.
"""

from __future__ import annotations

from pathlib import Path

from ..core.types import Box
from ._common import (
    DatasetError,
    DatasetRoot,
    Format,
    Loaded,
    build_sample,
    corners_fixed,
    four_numbers,
    read_json,
    row_failure,
    size_of,
)

FILE = "L2_annotations.json"


def annotation_file(path: Path) -> Path | None:
    if path.is_file():
        return path if path.name == FILE else None
    return path / FILE if (path / FILE).is_file() else None


def to_pixels(numbers: tuple[float, float, float, float], size: tuple[int, int] | None) -> Box | None:
    """As the authors' loader: -1 coerced to 0; all values <= 1 are normalised, else pixels."""
    values = [0.0 if v == -1 else v for v in numbers]
    if all(v <= 1.0 for v in values):
        if size is None:
            return None
        x1, y1, x2, y2 = values
        return Box.from_normalized(x1, y1, x2, y2, size[0], size[1])
    return Box(*values)


def load(path: Path) -> Loaded:
    file = annotation_file(path)
    if file is None:
        raise DatasetError(f"{path}: no {FILE}")
    rows = read_json(file)
    if not isinstance(rows, list):
        raise DatasetError(f"{file}: expected a JSON list of rows, got {type(rows).__name__}")
    folder = file.parent
    root = DatasetRoot(folder)
    problems: list[str] = []
    samples = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("image_path"), str):
            raise DatasetError(f"{file}: row {index} has no image_path")
        sample_id = str(row.get("index", f"row{index:05d}"))
        platform = str(row.get("platform") or "unknown")
        image = folder / "offline_images" / platform / row["image_path"]
        try:
            size = size_of(row.get("image_size"))
            numbers = four_numbers(row.get("bbox"))
            box = corners_fixed(to_pixels(numbers, size) if numbers else None, sample_id, problems)
            samples.append(
                build_sample(
                    sample_id=sample_id,
                    image=image,
                    root=root,
                    raw_image=row["image_path"],
                    instruction=row.get("instruction"),
                    box=box,
                    raw_box=row.get("bbox"),
                    problems=problems,
                    element_type=row.get("data_type"),
                    app=row.get("app_name"),
                    app_category=row.get("grounding_type"),
                    platform=platform,
                    image_size=size,
                    extra={
                        "benchmark": {
                            "name": "mmbench-gui",
                            "grounding_type": str(row.get("grounding_type")),
                            "platform": platform,
                            "data_type": str(row.get("data_type")),
                        }
                    },
                )
            )
        except (TypeError, ValueError, OverflowError) as exc:
            samples.append(row_failure(sample_id, image, problems, exc))
    return Loaded(name="mmbench-gui-l2", samples=samples, files=[file], problems=problems)


FORMAT = Format("mmbench-gui", sniff=lambda p: annotation_file(p) is not None, load=load)
