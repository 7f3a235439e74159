"""The dataset checker: what makes a grounding benchmark score wrong, found before a run.

`check_dataset` returns problem records (the only I/O is decoding each distinct image once);
`validate_path` loads a dataset, prints one line per problem and a count per kind, and returns
the exit status: 0 clean or warnings only, 1 errors, 2 the dataset could not be loaded.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..core.types import Sample

# A target covering more than a quarter of the screen is implausible for grounding (ScreenSpot-Pro
# targets average 0.07%): it is a region rather than an element, or a box in the wrong convention
# (x, y, w, h read as x1, y1, x2, y2), and a click at the screen centre often scores on it.
OVERSIZED_SHARE = 0.25

ERROR, WARNING = "error", "warning"

# kind -> (severity, what it means)
KINDS: dict[str, tuple[str, str]] = {
    "path-outside-dataset": (
        ERROR,
        "the image path is absolute, climbs out with '..' or follows a symlink out of "
        "the dataset folder: it is never opened",
    ),
    "missing-file": (ERROR, "the image file does not exist"),
    "undecodable-image": (ERROR, "the image file exists but cannot be decoded"),
    "size-mismatch": (ERROR, "the declared image size differs from the real one: boxes are in another frame"),
    "degenerate-box": (ERROR, "the box is unusable or has no area (x2 <= x1 or y2 <= y1)"),
    "box-outside-image": (ERROR, "the box extends past the image edges"),
    "oversized-box": (WARNING, f"the box covers more than {OVERSIZED_SHARE:.0%} of the image"),
    "duplicate-id": (ERROR, "another sample has the same id (predictions files are keyed by id)"),
    "point-outside-box": (ERROR, "the recorded click point lies outside the sample's own box"),
    "duplicate-instruction": (WARNING, "the same instruction is asked twice on the same image"),
    "unusable-sample": (ERROR, "the loader could not make a scorable sample (e.g. empty instruction)"),
    "draft-element": (WARNING, "a drafted element nobody has reviewed yet (python -m pytest_grounding review)"),
    "loader-note": (WARNING, "something the loader noticed while reading the annotations"),
}


@dataclass(frozen=True)
class Problem:
    kind: str
    severity: str  # "error" | "warning"
    sample_id: str  # "-" for problems of the dataset as a whole
    file: str
    message: str

    def line(self) -> str:
        return f"{self.sample_id}: {self.kind}: {self.message} ({self.file})"


@dataclass(frozen=True)
class ImageFacts:
    exists: bool
    size: tuple[int, int] | None = None  # None when missing or undecodable
    error: str | None = None  # why decoding failed


def problem(kind: str, sample_id: str, file: object, message: str) -> Problem:
    return Problem(kind, KINDS[kind][0], sample_id, str(file), message)


def inspect_image(path: Path) -> ImageFacts:
    """Decode the whole file (a truncated PNG or JPEG only fails when its pixels are read)."""
    from PIL import Image

    try:
        if not path.is_file():
            return ImageFacts(exists=False)
    except OSError as exc:  # a name no file system takes: that row's fault, never the whole check's
        return ImageFacts(exists=False, error=f"{type(exc).__name__}: {exc.strerror or exc}")
    try:
        with Image.open(path) as image:
            image.load()
            return ImageFacts(exists=True, size=image.size)
    except Exception as exc:  # Pillow raises OSError, SyntaxError, ValueError... for bad files
        return ImageFacts(exists=True, error=f"{type(exc).__name__}: {exc}")


def _fmt(values: Iterable[float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def outside_dataset(sample: Sample) -> bool:
    from ._common import OUTSIDE_DATASET

    return bool(sample.defect) and OUTSIDE_DATASET in str(sample.defect)


def check_sample(sample: Sample, facts: ImageFacts) -> list[Problem]:
    """Everything that can be wrong with one sample, given what its image really is."""
    out: list[Problem] = []
    sid, file = sample.id, sample.image
    if outside_dataset(sample):
        return [problem("path-outside-dataset", sid, file, str(sample.defect))]
    if not facts.exists:
        out.append(problem("missing-file", sid, file, "image not found"))
    elif facts.error:
        out.append(problem("undecodable-image", sid, file, facts.error))
    declared = tuple(sample.image_size) if sample.image_size else None
    if facts.size and declared and facts.size != declared:
        out.append(
            problem(
                "size-mismatch",
                sid,
                file,
                f"declared {declared[0]}x{declared[1]}, file is {facts.size[0]}x{facts.size[1]}",
            )
        )
    if getattr(sample.target, "kind", None) == "absent":  # no box to check: the element is not on screen
        if sample.defect:
            out.append(problem("unusable-sample", sid, file, sample.defect))
        return out
    box = sample.bbox
    if not box.is_valid:
        out.append(problem("degenerate-box", sid, file, sample.defect or f"box {_fmt(box.as_list())} has no area"))
        return out
    if sample.defect:
        out.append(problem("unusable-sample", sid, file, sample.defect))
    frame = facts.size or declared
    if frame:
        width, height = frame
        if not box.inside(width, height):
            over = max(-box.x1, -box.y1, box.x2 - width, box.y2 - height)
            out.append(
                problem(
                    "box-outside-image",
                    sid,
                    file,
                    f"box {_fmt(box.as_list())} extends {over:g} px past the {width}x{height} image",
                )
            )
        share = box.area / float(width * height)
        one_element = len(getattr(sample.target, "shapes", ())) <= 1 and not getattr(sample.target, "steps", ())
        if share > OVERSIZED_SHARE and one_element:  # several targets' bounding box is no element
            centre = " and contains the image centre" if box.contains((width / 2, height / 2)) else ""
            out.append(
                problem(
                    "oversized-box", sid, file, f"box {_fmt(box.as_list())} covers {share:.0%} of the image{centre}"
                )
            )
    elif box.x1 < 0 or box.y1 < 0:  # outside whatever the image's size
        out.append(
            problem("box-outside-image", sid, file, f"box {_fmt(box.as_list())} starts at a negative coordinate")
        )
    if sample.extra.get("status") == "draft":  # the harness format's curation status
        out.append(problem("draft-element", sid, file, "not reviewed yet: it runs, but nobody has checked its box"))
    if sample.point is not None and not box.contains(sample.point):
        out.append(
            problem(
                "point-outside-box",
                sid,
                file,
                f"point {_fmt(sample.point)} is {box.distance_to(sample.point):.1f} px outside "
                f"box {_fmt(box.as_list())}",
            )
        )
    return out


def duplicate_ids(samples: Sequence[Sample]) -> list[Problem]:
    first: dict[str, Sample] = {}
    out = []
    for sample in samples:
        if sample.id in first:
            out.append(
                problem(
                    "duplicate-id",
                    sample.id,
                    sample.image,
                    f"id also used by the sample on {first[sample.id].image.name}",
                )
            )
        else:
            first[sample.id] = sample
    return out


def duplicate_instructions(samples: Sequence[Sample]) -> list[Problem]:
    first: dict[tuple[Path, str], Sample] = {}
    out = []
    for sample in samples:
        key = (sample.image, " ".join(sample.instruction.lower().split()))
        if not key[1]:
            continue
        if key in first:
            other = first[key]
            same = "the same box" if other.bbox == sample.bbox else f"a different box {_fmt(other.bbox.as_list())}"
            out.append(
                problem(
                    "duplicate-instruction",
                    sample.id,
                    sample.image,
                    f"same instruction as {other.id} on this image, with {same}",
                )
            )
        else:
            first[key] = sample
    return out


def loader_notes(
    dataset_problems: Sequence[str], ids: Iterable[str], file: object, covered: Iterable[str]
) -> list[Problem]:
    """The loader's notes ("ID: message"), minus those a check above already reports
    (a box past the edge is both a loader note and a box-outside-image error)."""
    known, already = set(ids), set(covered)
    out = []
    for note in dataset_problems:
        head, sep, rest = note.partition(": ")
        sample_id = head if sep and head in known else "-"
        if sample_id in already and "outside" in note:
            continue
        out.append(problem("loader-note", sample_id, file, rest if sample_id != "-" else note))
    return out


def check_dataset(dataset) -> list[Problem]:
    """All problems of a loaded Dataset, dataset-wide first, then sample by sample."""
    samples: Sequence[Sample] = dataset.samples
    # Images outside the dataset folder are never opened, not even to check them.
    facts = {path: inspect_image(path) for path in sorted({s.image for s in samples if not outside_dataset(s)})}
    unopened = ImageFacts(exists=False)
    per_sample: list[Problem] = []
    for sample in samples:
        per_sample.extend(check_sample(sample, facts.get(sample.image, unopened)))
    outside = [p.sample_id for p in per_sample if p.kind == "box-outside-image"]
    notes = loader_notes(dataset.problems, (s.id for s in samples), dataset.path, outside)
    return notes + duplicate_ids(samples) + per_sample + duplicate_instructions(samples)


def validation_lines(problems: Sequence[Problem], samples: int, images: int, name: str) -> list[str]:
    errors = sum(1 for p in problems if p.severity == ERROR)
    warnings = len(problems) - errors
    lines = [f"{name}: {samples} samples on {images} images: {errors} errors, {warnings} warnings"]
    for kind, count in sorted(Counter(p.kind for p in problems).items()):
        lines.append(f"  {kind}: {count} ({KINDS[kind][0]}: {KINDS[kind][1]})")
    return lines


def validate_path(spec: str, out: TextIO | None = None, max_per_kind: int | None = None) -> int:
    """Load `spec` (a path or FORMAT:PATH), print its problems and a summary; 0 clean or only
    warnings, 1 errors, 2 not loadable. `max_per_kind` caps the lines printed per kind (the
    counts stay complete)."""
    from . import DatasetError, load_dataset

    out = out or sys.stdout
    try:
        dataset = load_dataset(spec)
    except DatasetError as exc:
        print(f"error: {exc}", file=out)
        return 2
    problems = check_dataset(dataset)
    printed: Counter = Counter()
    for item in problems:
        printed[item.kind] += 1
        if max_per_kind is None or printed[item.kind] <= max_per_kind:
            print(item.line(), file=out)
    hidden = sum(max(0, n - max_per_kind) for n in printed.values()) if max_per_kind is not None else 0
    if hidden:
        print(f"... {hidden} more lines not shown (--max-per-kind {max_per_kind})", file=out)
    images = len({s.image for s in dataset.samples})
    for line in validation_lines(
        problems, len(dataset.samples), images, f"{dataset.name} ({dataset.format}, {dataset.path})"
    ):
        print(line, file=out)
    return 1 if any(p.severity == ERROR for p in problems) else 0
