"""Pieces every loader shares: the error type, the Format shape, box parsing, slugs."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import safefile, safejson
from ..core.record import OUTSIDE_DATASET
from ..core.types import Box, Sample


class DatasetError(Exception):
    """A dataset that cannot be read at all; the message names the file and the problem."""


@dataclass(frozen=True)
class Loaded:
    name: str
    samples: Sequence[Sample]
    files: Sequence[Path]
    problems: Sequence[str] = field(default_factory=tuple)
    path: Path | None = None  # what the dataset is called by, when not the path given (a hub name's cache)
    fingerprint: str | None = None  # when hashing every file's bytes would be too slow (GBs of parquet)


@dataclass(frozen=True)
class Format:
    name: str
    sniff: Callable[[Path], bool]
    load: Callable[[Path], Loaded]
    # A format whose spec is more than a path (`hf:NAME:SPLIT:key=value`) reads it itself:
    # open(spec_after_prefix, base_folder) -> Loaded.
    open: Callable[[str, Path | None], Loaded] | None = None


_SLUG_RE = re.compile(r"[^a-z0-9]+")
_NAME_RE = re.compile(r"[^a-z0-9-]+")


def slug(text: Any) -> str:
    """An ASCII test-id part: lower case, runs of anything else folded to "_"."""
    return _SLUG_RE.sub("_", _ascii(text)).strip("_") or "x"


def name_slug(text: Any) -> str:
    """Like slug, but keeps hyphens: dataset names such as "screenagent-dev" stay readable."""
    return _NAME_RE.sub("_", _ascii(text)).strip("_-") or "dataset"


def _ascii(text: Any) -> str:
    return unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode().lower()


def read_json(path: Path) -> Any:
    try:
        text = safefile.read_text(path)  # a regular file, bounded: a FIFO or /dev/zero is refused
        return safejson.loads(text, numbers_beyond="null")  # a number past the bounds: that row's defect
    except (OSError, UnicodeDecodeError, safefile.FileTooLarge) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        raise DatasetError(f"{path}: unreadable JSON value: {exc}") from None


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    try:
        text = safefile.read_text(path)  # a regular file, bounded
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, safejson.loads(line, numbers_beyond="null")))  # a bad number: that row's defect
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{lineno}: invalid JSON: {exc.msg}") from None
        except ValueError as exc:  # e.g. an integer past Python's digit limit
            raise DatasetError(f"{path}:{lineno}: unreadable JSON value: {exc}") from None
    return rows


def four_numbers(value: Any) -> tuple[float, float, float, float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        return None
    try:
        numbers = tuple(float(v) for v in value)
    except (TypeError, ValueError, OverflowError):  # a 400-digit integer does not fit a float
        return None
    if not all(math.isfinite(v) for v in numbers):
        return None
    return numbers  # type: ignore[return-value]


def two_numbers(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    try:
        x, y = (float(v) for v in value)
    except (TypeError, ValueError, OverflowError):
        return None
    return (x, y) if math.isfinite(x) and math.isfinite(y) else None


def box_defect(box: Box | None, raw: Any) -> str | None:
    if box is None:
        return f"unusable bbox {raw!r}"
    if not box.is_valid:
        return f"degenerate bbox {box.as_list()} (x2 must exceed x1, y2 exceed y1)"
    return None


def outside_note(sample_id: str, box: Box, size: tuple[int, int] | None) -> str | None:
    if size is not None and box.is_valid and not box.inside(*size):
        return f"{sample_id}: bbox {box.as_list()} extends outside the {size[0]}x{size[1]} image"
    return None


def corners_fixed(box: Box | None, sample_id: str, problems: list[str]) -> Box | None:
    """A box given with reversed corners (x2 < x1 or y2 < y1), swapped and reported in the
    dataset's problems, as issue 19 asks of the public benchmarks' loaders: a reversed box would
    otherwise be a target no click can hit, which is a data fault, not a detector's miss."""
    if box is None or not all(math.isfinite(v) for v in box.as_list()):
        return box
    fixed = Box(min(box.x1, box.x2), min(box.y1, box.y2), max(box.x1, box.x2), max(box.y1, box.y2))
    if fixed != box:
        problems.append(f"{sample_id}: bbox {box.as_list()} has reversed corners; read as {fixed.as_list()}")
    return fixed


PLACEHOLDER_BOX = Box(0.0, 0.0, 0.0, 0.0)


class DatasetRoot:
    """Keeps image paths inside the dataset's folder: a `file_name` that is absolute, climbs out
    with `..`, or reaches outside through a symlink is refused (the run never opens it). Resolved
    folders are cached, so a 100k-row dataset costs one resolve per folder and one lstat per row."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._folders: dict[Path, bool] = {}

    def problem(self, image: Path, raw: Any) -> str | None:
        inside = self._folders.get(image.parent)
        if inside is None:
            inside = self._folders[image.parent] = _within(image.parent.resolve(), self.root)
        if inside and image.is_symlink():
            inside = _within(image.resolve(), self.root)
        if inside:
            return None
        return f"image path {str(raw)[:200]!r} {OUTSIDE_DATASET} {self.root}"


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def row_failure(sample_id: str, image: Path, problems: list[str], exc: Exception) -> Sample:
    """A row whose values could not be converted at all: that row's error, the others load."""
    return build_sample(
        sample_id=sample_id,
        image=image,
        instruction="",
        box=None,
        raw_box=f"(row unreadable: {type(exc).__name__}: {str(exc)[:200]})",
        problems=problems,
    )


def text(value: Any, default: str = "") -> str:
    return default if value is None else str(value).strip() or default


def build_sample(
    *,
    sample_id: str,
    image: Path,
    instruction: Any,
    box: Box | None,
    raw_box: Any,
    problems: list[str],
    root: DatasetRoot | None = None,
    raw_image: Any = None,
    element_type: Any = None,
    app: Any = None,
    app_category: Any = None,
    platform: Any = None,
    image_size: tuple[int, int] | None = None,
    point: tuple[float, float] | None = None,
    extra: dict | None = None,
    target: Any = None,
    outside: str | None = None,  # the caller's own finding that the image path leads outside
) -> Sample:
    """One Sample from converted fields; what cannot be scored becomes its `defect`, what is
    merely odd (a box past the image edge) goes to the dataset's problems. `target` (targets.py)
    when the target is more than `box` (then its bounding box); `extra["negative"]` true (a
    mirror's negative flag) makes the target absent."""
    from ..core.targets import Absent

    if target is None and isinstance(extra, dict) and extra.get("negative") is True:
        target = Absent()
    absent = isinstance(target, Absent)
    if absent:
        box = PLACEHOLDER_BOX
    defect = outside or (root.problem(image, raw_image if raw_image is not None else image) if root else None)
    defect = defect or (None if absent else box_defect(box, raw_box))
    instruction_text = text(instruction)
    if defect is None and not instruction_text:
        defect = "empty instruction"
    if defect is None and not absent:
        note = outside_note(sample_id, box, image_size)  # type: ignore[arg-type]
        if note:
            problems.append(note)
    return Sample(
        dataset="",
        id=sample_id,
        uid="",
        image=image,
        instruction=instruction_text,
        bbox=box if box is not None else PLACEHOLDER_BOX,
        element_type=text(element_type, "other").lower(),
        app=text(app, "unknown"),
        app_category=text(app_category, "unknown"),
        platform=text(platform, "unknown"),
        image_size=image_size,
        point=point,
        defect=defect,
        extra=dict(extra or {}),
        target=target,
    )


def with_defect(sample: Sample, defect: str, keep_outside: bool = True) -> Sample:
    """The loader's own, more specific reason a row cannot be scored (a path outside the dataset
    keeps its defect: validate reports it by that text)."""
    import dataclasses

    if keep_outside and sample.defect and OUTSIDE_DATASET in sample.defect:
        return sample
    return dataclasses.replace(sample, defect=defect)
