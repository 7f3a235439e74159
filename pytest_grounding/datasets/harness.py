"""The evaluation-harness schema: `annotations.json` = {"version", "dataset", "samples": [{"id",
"image", "width", "height", "elements": [{"id", "bbox" [x1, y1, x2, y2] normalized 0-1, "text",
"type", "click_point" [x, y] 0-1}]}]}. One sample per element; the instruction is the element's
`instruction` when it has one, else its text.

Curation (`annotate`, `review`, `record`) marks elements with a `status`: `rejected` elements are
left out; `draft` ones run like any other (the checker warns about them), except a draft with no
instruction yet, which is left out with a note; `accepted` or no status is a reviewed element. Any
other status makes that element's sample an error naming it."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from ..core.types import Box
from ._common import DatasetError, DatasetRoot, Format, Loaded, four_numbers, read_json, row_failure
from .rows import Row, RowSchema, sample_of

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


@functools.lru_cache(maxsize=4096)
def header_size(path: Path) -> tuple[int, int] | None:
    """Image size from the file header (no decode), for rows that declare none."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.size
    except Exception:  # a missing or broken image is reported when its sample runs
        return None


def _target(row: Row, size: tuple[int, int] | None, problems: list[str]) -> tuple[None, Box | None, str | None]:
    """The element's 0-1 box scaled by the screen's size (declared, else its header)."""
    raw = row.fields.get("bbox")
    numbers = four_numbers(raw)
    if numbers and size:
        return None, Box.from_normalized(*numbers, *size), None
    return None, None, None if size else f"unusable bbox {f'{raw!r} (image size unknown)'!r}"


def _screen(row: Row, key: str) -> object:
    """The element's own value, else its screen's (app: else the dataset's name)."""
    return row.fields.get(key) or row.context["entry"].get(key)


# One sample per element of a screen (row.fields: the element; row.context: its screen).
SCHEMA = RowSchema(
    name="harness",
    image="image",
    instruction=lambda row: row.fields.get("instruction") or row.fields.get("text"),
    units="normalized",  # the click point; the box by _target
    element_type="type",
    app=lambda row: _screen(row, "app") or row.context["dataset"],
    app_category=lambda row: _screen(row, "app_category"),
    platform=lambda row: _screen(row, "platform"),
    image_size=lambda row: [row.context["entry"].get("width"), row.context["entry"].get("height")],
    header_size=False,  # the sample's image_size is what the file declares
    point="click_point",
    target=_target,
    extra=lambda row: {
        "text": row.fields.get("text"),
        "screen_id": row.context["screen_id"],
        "status": row.fields.get("status") or ACCEPTED,
    },
)


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
        screen_id = str(entry.get("id") or f"s{index:04d}")
        context = {"entry": entry, "screen_id": screen_id, "dataset": document.get("dataset")}
        header = functools.partial(header_size, image)  # read once per screen, only when needed
        for position, element in enumerate(entry.get("elements") or []):
            if not isinstance(element, dict):
                raise DatasetError(f"{file}: samples[{index}].elements[{position}] is not an object")
            sample_id = f"{screen_id}-{position}"
            status = element.get("status")
            if status == REJECTED:
                continue
            try:
                sample_id = f"{screen_id}-{element.get('id') or position}"
            except (TypeError, ValueError, OverflowError) as exc:
                samples.append(row_failure(sample_id, image, problems, exc))
                continue
            if status == DRAFT and not str(element.get("instruction") or element.get("text") or "").strip():
                problems.append(f"{sample_id}: draft element without an instruction left out (review it)")
                continue
            samples.append(
                sample_of(Row(element, sample_id, image, entry["image"], context, header), SCHEMA, root, problems)
            )
            if status is not None and status not in STATUSES:
                samples[-1] = replace(
                    samples[-1], defect=f"unknown status {status!r} in {file} (expected one of {', '.join(STATUSES)})"
                )
    return Loaded(
        name=str(document.get("dataset") or file.parent.name), samples=samples, files=[file], problems=problems
    )


FORMAT = Format("harness", sniff=lambda p: annotation_file(p) is not None, load=load)
