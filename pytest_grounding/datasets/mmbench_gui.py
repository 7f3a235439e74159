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

from ._common import DatasetError, DatasetRoot, Format, Loaded
from .rows import Row, RowSchema, json_rows, sample_of


def _extra(row: Row) -> dict:
    return {
        "benchmark": {
            "name": "mmbench-gui",
            "grounding_type": str(row.fields.get("grounding_type")),
            "platform": row.context["platform"],
            "data_type": str(row.fields.get("data_type")),
        }
    }


SCHEMA = RowSchema(
    name="mmbench-gui",
    image="image_path",
    id="index",
    units="auto",  # as the authors' loader: all values <= 1 are fractions, else pixels; -1 read as 0
    corners="swap",
    element_type="data_type",
    app="app_name",
    app_category="grounding_type",
    platform=lambda row: row.context["platform"],
    image_size="image_size",
    extra=_extra,
)

FILE = "L2_annotations.json"


def annotation_file(path: Path) -> Path | None:
    if path.is_file():
        return path if path.name == FILE else None
    return path / FILE if (path / FILE).is_file() else None


def load(path: Path) -> Loaded:
    file = annotation_file(path)
    if file is None:
        raise DatasetError(f"{path}: no {FILE}")
    rows = json_rows(file, "image_path")
    folder = file.parent
    root = DatasetRoot(folder)
    problems: list[str] = []
    samples = []
    for index, row in rows:
        platform = str(row.get("platform") or "unknown")
        image = folder / "offline_images" / platform / row["image_path"]
        found = Row(row, f"row{index:05d}", image, row["image_path"], {"platform": platform})
        samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name="mmbench-gui-l2", samples=samples, files=[file], problems=problems)


FORMAT = Format("mmbench-gui", sniff=lambda p: annotation_file(p) is not None, load=load)
