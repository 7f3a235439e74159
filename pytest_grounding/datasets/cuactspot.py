"""CUActSpot (microsoft/Phi-Ground, benchmark/CUActSpot/data/ActSpot): one `<image_id>.json`
beside each `<image_id>.png`.

JSON: image_id, task (Chinese), task_en (read first when present), modality (else the image id's
prefix), polygons [{id, type Target | Banned, points [[x, y], ...] px, rank "" or "1".."17",
visible}], masks (not scored). Scored as the authors' eval_utils.evaluate_coordinates: any point
in a Banned polygon fails; unranked targets each need a point (any order, extra points allowed);
ranked targets need point i in a target of rank i (a drag: start, then end). Polygons include
their boundary. A detector answers several points with `Prediction(points=[...])`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.targets import INCLUSIVE, Polygon, Steps, bounds_of
from ..core.types import Box
from ._common import DatasetError, DatasetRoot, Format, Loaded, read_json
from .rows import Row, RowSchema, sample_of

MODALITIES = ("Canvas", "GUI", "Image", "Table", "Text")


def folder_of(path: Path) -> Path | None:
    if path.is_file():
        return path.parent if looks_like(path) else None
    for folder in (path, path / "data" / "ActSpot", path / "ActSpot"):
        first = next(iter(sorted(folder.glob("*.json"))), None) if folder.is_dir() else None
        if first is not None and looks_like(first):
            return folder
    return None


def looks_like(file: Path) -> bool:
    try:
        document = read_json(file)
    except DatasetError:
        return False
    return isinstance(document, dict) and "polygons" in document and "image_id" in document


def polygon_of(item: Any) -> Polygon | None:
    points = item.get("points") if isinstance(item, dict) else None
    if not isinstance(points, list):
        return None
    try:
        vertices = tuple((float(p[0]), float(p[1])) for p in points)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    shape = Polygon(vertices, INCLUSIVE)
    return shape if shape.is_valid else None


def task_kind(target: Steps) -> str:
    if not target.ordered:
        return "single" if len(target.steps) == 1 else "multi-click"
    return {1: "single-ranked", 2: "drag"}.get(len(target.steps), "sequence")


def target_of(document: dict) -> tuple[Steps | None, Box | None, str | None]:
    """(target, its bounding box, defect) from the polygons, as evaluate_coordinates reads them."""
    polygons = document.get("polygons")
    if not isinstance(polygons, list):
        return None, None, "no polygons list"
    targets: list[tuple[str, Polygon]] = []
    banned: list[Polygon] = []
    for item in polygons:
        shape = polygon_of(item)
        if shape is None:
            return None, None, f"unusable polygon {str(item)[:120]!r} (needs 3+ vertices and an area)"
        kind = item.get("type")
        if kind == "Banned":
            banned.append(shape)
        elif kind == "Target":
            targets.append((str(item.get("rank") or "").strip(), shape))
        else:
            return None, None, f"polygon {item.get('id')!r} has type {kind!r} (expected Target or Banned)"
    if not targets:
        return None, None, "no Target polygon"
    bounds = bounds_of([shape for _, shape in targets])
    ranks = [rank for rank, _ in targets]
    if all(rank == "" for rank in ranks):
        return Steps(tuple((shape,) for _, shape in targets), tuple(banned), ordered=False), bounds, None
    if all(rank.isdigit() and int(rank) > 0 for rank in ranks):
        count = max(int(rank) for rank in ranks)
        steps = tuple(tuple(s for rank, s in targets if int(rank) == i + 1) for i in range(count))
        return Steps(steps, tuple(banned), ordered=True), bounds, None
    # Mixed ranked and unranked targets: the authors' evaluator fails every answer; so does this.
    return Steps(((),), tuple(banned), ordered=True), bounds, None


def _target(row: Row, size: tuple[int, int] | None, problems: list[str]) -> tuple[Steps | None, Box | None, str | None]:
    target, bounds, defect = row.context["target"]
    if target is not None and target.steps == ((),):
        problems.append(f"{row.default_id}: mixed ranked and unranked targets: every answer fails (as the authors')")
    return target, bounds, f"{defect} in {row.context['source_file']}" if defect else None


def _extra(row: Row) -> dict:
    target = row.context["target"][0]
    kind = task_kind(target) if target is not None else "unusable"
    benchmark = {"name": "cuactspot", "modality": row.context["modality"], "task_kind": kind}
    return {"source_file": row.context["source_file"], "benchmark": benchmark}


# One document per screen; the reader gives its id (image_id), its target (target_of) and modality.
SCHEMA = RowSchema(
    name="cuactspot",
    image="image_id",
    instruction=lambda row: row.fields.get("task_en") or row.fields.get("task"),
    bbox=lambda row: f"polygons of {row.context['source_file']}",
    app=lambda row: row.context["modality"],
    app_category=lambda row: row.context["modality"],
    target=_target,
    extra=_extra,
)


def load(path: Path) -> Loaded:
    folder = folder_of(path)
    if folder is None:
        raise DatasetError(f"{path}: no CUActSpot <image_id>.json files (with image_id and polygons)")
    files = sorted(folder.glob("*.json"))
    root = DatasetRoot(folder)
    problems: list[str] = []
    samples = []
    for file in files:
        document = read_json(file)
        if not isinstance(document, dict):
            raise DatasetError(f"{file}: expected a JSON object, got {type(document).__name__}")
        sample_id = str(document.get("image_id") or file.stem)
        image = folder / f"{sample_id}.png"
        modality = str(document.get("modality") or sample_id.split("-")[0])
        context = {"source_file": file.name, "modality": modality, "target": target_of(document)}
        samples.append(sample_of(Row(document, sample_id, image, None, context), SCHEMA, root, problems))
    return Loaded(name="cuactspot", samples=samples, files=files, problems=problems)


FORMAT = Format("cuactspot", sniff=lambda p: folder_of(p) is not None, load=load)
