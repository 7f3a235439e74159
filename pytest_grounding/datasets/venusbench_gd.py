"""VenusBench-GD (inclusionAI/UI-Venus, branch VenusBench-GD, `eval.py` at 56b1005; data on the hub
as `inclusionAI/VenusBench-GD`): `instruction/<task>.json`, one JSON list per task, images under
`images/` (the row's `img_filename` is relative to it, as eval.py joins it).

Row: img_filename, bbox **[x1, y1, x2, y2] px**, instruction (English), instruction_zh (Chinese:
`--grounding-language cn`), and where present group, platform, application, ui_type, id. eval.py
divides the box by the size read from the image file and tests the model's 0-1 point, edges
included: the same test as the pixel point in the pixel box here (the detector answers on that
file). The task is the file's name; eval.py's `--task all` reads every `*.json` of the folder.

Rows of `refusal_spatial.json` are absent targets (a refusal is right), through the plugin's
absent-target machinery: the authors' shipped run compares them with their `bbox` like any row,
and how those rows mark their absent element is not confirmed (docs/benchmarks.md). The headline
is eval.py's `action_acc`: correct over all rows (micro), unparsed answers included as wrong.
"""

from __future__ import annotations

from pathlib import Path

from ..core.types import Box
from ._common import DatasetError, DatasetRoot, Format, Loaded, four_numbers
from .rows import Row, RowSchema, json_rows, sample_of

TASKS = (
    "element_grounding",
    "spatial_grounding",
    "visual_grounding",
    "reasoning_grounding",
    "functional_grounding",
    "refusal_spatial",
)
REFUSAL = "refusal_spatial"
# The paper's basic / advanced taxonomy; no file or code of the authors says which task is which:
# read from the order the paper lists them in (element, spatial, visual; reasoning, refusal,
# functional). Not confirmed (docs/benchmarks.md).
TIERS = {
    "element_grounding": "basic",
    "spatial_grounding": "basic",
    "visual_grounding": "basic",
    "reasoning_grounding": "advanced",
    "functional_grounding": "advanced",
    "refusal_spatial": "advanced",
}
SLICES = ("group", "platform", "application", "ui_type")


def _extra(row: Row) -> dict:
    task = row.context["task"]
    benchmark = {"name": "venusbench-gd", "task": task, "tier": TIERS.get(task, "unknown")}
    benchmark.update({key: str(row.fields.get(key)) for key in SLICES if row.fields.get(key) is not None})
    return {"instruction_cn": row.fields.get("instruction_zh"), "source_file": f"{task}.json", "benchmark": benchmark}


def _target(row: Row, size: tuple[int, int] | None, problems: list[str]) -> tuple[None, Box | None, str | None]:
    """The box as it is (eval.py swaps nothing); a refusal row's box is not read."""
    if row.context["task"] == REFUSAL:
        return None, None, None
    numbers = four_numbers(row.fields.get("bbox"))
    return None, (Box(*numbers) if numbers else None), None


SCHEMA = RowSchema(
    name="venusbench-gd",
    image="img_filename",  # the reader gives the id: the task and the row's id (else its index)
    element_type="ui_type",
    app="application",
    app_category="group",
    platform="platform",
    instruction_cn="instruction_zh",
    target=_target,
    absent=lambda row: row.context["task"] == REFUSAL,
    source="VenusBench-GD's instruction/<task>.json: bbox [x1, y1, x2, y2] in pixels of the image file",
    extra=_extra,
)


def annotation_files(path: Path) -> list[Path]:
    """The task files: one named file, or every `*.json` of `instruction/` (eval.py's `--task all`),
    when one of them is a VenusBench-GD task."""
    if path.is_file():
        return [path] if path.suffix == ".json" and path.stem in TASKS else []
    for folder in (path / "instruction", path):
        found = sorted(folder.glob("*.json")) if folder.is_dir() else []
        if any(file.stem in TASKS for file in found):
            return found
    return []


def images_folder(file: Path) -> Path:
    """`images/` beside `instruction/` (the published layout), else beside the file."""
    root = file.parent.parent if file.parent.name == "instruction" else file.parent
    return root / "images"


def load(path: Path) -> Loaded:
    files = annotation_files(path)
    if not files:
        raise DatasetError(f"{path}: no instruction/<task>.json (tasks: {', '.join(TASKS)})")
    images = images_folder(files[0])
    root = DatasetRoot(images.parent)
    problems: list[str] = []
    samples = []
    for file in files:
        task = file.stem
        if task not in TASKS:
            problems.append(f"{file.name}: not one of the published tasks ({', '.join(TASKS)}); read as a task")
        context = {"task": task}
        boxed = 0
        for index, row in json_rows(file, "img_filename"):
            if task == REFUSAL and four_numbers(row.get("bbox")) is not None:
                boxed += 1
            # ids are the task's own (each file may number from 0): the task makes them unique
            sample_id = f"{task}_{row['id']}" if row.get("id") not in (None, "") else f"{task}_{index:05d}"
            found = Row(row, sample_id, images / row["img_filename"], row["img_filename"], context)
            samples.append(sample_of(found, SCHEMA, root, problems))
        if boxed:
            problems.append(
                f"{file.name}: {boxed} refusal rows carry a bbox; scored as absent targets (a refusal is "
                "right), not against that box as the authors' positive run does"
            )
    return Loaded(name="venusbench-gd", samples=samples, files=files, problems=problems)


FORMAT = Format("venusbench-gd", sniff=lambda p: bool(annotation_files(p)), load=load)
