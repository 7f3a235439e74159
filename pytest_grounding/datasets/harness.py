"""The evaluation-harness schema: `annotations.json` = {"version", "dataset", "samples": [{"id",
"image", "width", "height", "elements": [{"id", "bbox" [x1, y1, x2, y2] normalized 0-1, "text",
"type", "click_point" [x, y] 0-1}]}]}. One sample per element; the instruction is the element's
`instruction` when it has one, else its text.

Curation (`annotate`, `review`, `record`) marks elements with a `status`: `rejected` elements are
left out; `draft` ones run like any other (the checker warns about them), except a draft with no
instruction yet, which is left out with a note; `accepted` or no status is a reviewed element. Any
other status makes that element's sample an error naming it."""

from __future__ import annotations

from dataclasses import replace
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
    two_numbers,
)

DRAFT, ACCEPTED, REJECTED = "draft", "accepted", "rejected"
STATUSES = (DRAFT, ACCEPTED, REJECTED)


def annotation_file(path: Path) -> Path | None:
    candidate = path if path.is_file() else path / "annotations.json"
    if candidate.is_file() and candidate.name == "annotations.json":
        return candidate
    return None


def image_path(folder: Path, name: str) -> Path:
    direct = folder / name
    return direct if direct.exists() or not (folder / "images" / name).exists() else folder / "images" / name


def header_size(path: Path) -> tuple[int, int] | None:
    """Image size from the file header (no decode), for rows that declare none."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.size
    except Exception:  # a missing or broken image is reported when its sample runs
        return None


def load(path: Path) -> Loaded:
    file = annotation_file(path)
    if file is None:
        raise DatasetError(f"{path}: no annotations.json")
    document = read_json(file)
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        raise DatasetError(f"{file}: expected an object with a 'samples' list")
    problems: list[str] = []
    root = DatasetRoot(file.parent)
    samples = []
    for index, entry in enumerate(document["samples"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("image"), str):
            raise DatasetError(f"{file}: samples[{index}] has no image")
        image = image_path(file.parent, entry["image"])
        outside = root.problem(image, entry["image"])
        declared = size_of((entry.get("width"), entry.get("height")))
        # The header is read only inside the dataset folder: a path outside is never opened.
        size = declared or (None if outside else header_size(image))
        screen_id = str(entry.get("id") or f"s{index:04d}")
        for position, element in enumerate(entry.get("elements") or []):
            if not isinstance(element, dict):
                raise DatasetError(f"{file}: samples[{index}].elements[{position}] is not an object")
            sample_id = f"{screen_id}-{position}"
            status = element.get("status")
            if status == REJECTED:
                continue
            try:
                sample_id = f"{screen_id}-{element.get('id') or position}"
                if status == DRAFT and not str(element.get("instruction") or element.get("text") or "").strip():
                    problems.append(f"{sample_id}: draft element without an instruction left out (review it)")
                    continue
                samples.append(
                    _element_sample(
                        document,
                        entry,
                        element,
                        sample_id=sample_id,
                        image=image,
                        size=size,
                        declared=declared,
                        screen_id=screen_id,
                        root=root,
                        problems=problems,
                    )
                )
            except (TypeError, ValueError, OverflowError) as exc:
                samples.append(row_failure(sample_id, image, problems, exc))
                continue
            if status is not None and status not in STATUSES:
                samples[-1] = replace(
                    samples[-1], defect=f"unknown status {status!r} in {file} (expected one of {', '.join(STATUSES)})"
                )
    return Loaded(
        name=str(document.get("dataset") or file.parent.name), samples=samples, files=[file], problems=problems
    )


def _element_sample(
    document: dict,
    entry: dict,
    element: dict,
    *,
    sample_id: str,
    image: Path,
    size: tuple[int, int] | None,
    declared: tuple[int, int] | None,
    screen_id: str,
    root: DatasetRoot,
    problems: list[str],
):
    raw_box = element.get("bbox")
    numbers = four_numbers(raw_box)
    box = Box.from_normalized(*numbers, *size) if numbers and size else None
    click = two_numbers(element.get("click_point"))
    return build_sample(
        sample_id=sample_id,
        image=image,
        root=root,
        raw_image=entry["image"],
        instruction=element.get("instruction") or element.get("text"),
        box=box,
        raw_box=raw_box if size else f"{raw_box!r} (image size unknown)",
        problems=problems,
        element_type=element.get("type"),
        app=element.get("app") or entry.get("app") or document.get("dataset"),
        app_category=element.get("app_category") or entry.get("app_category"),
        platform=element.get("platform") or entry.get("platform"),
        image_size=declared,
        point=(click[0] * size[0], click[1] * size[1]) if click and size else None,
        extra={"text": element.get("text"), "screen_id": screen_id, "status": element.get("status") or ACCEPTED},
    )


FORMAT = Format("harness", sniff=lambda p: annotation_file(p) is not None, load=load)
