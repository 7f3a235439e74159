"""CAGUI-Grounding (OpenBMB/AgentCPM-GUI@acbaf50, `eval/grounding_eval/`; data on the hub as
`openbmb/CAGUI`): JSONL files in `eval/grounding_eval/dataset/code/`, images under
`eval/grounding_eval/dataset/images/`.

- `cap.jsonl` (1,500 rows, `task` "bbox2function"): `text` is the element's function, asked by the
  fun2point scripts (`fun2bbox_eval_*.py`);
- `ocr.jsonl` (1,500 rows, `task` "bbox2text"): `text` is the element's own text, asked by the
  text2point scripts (`text2bbox_eval_*.py`); bbox2text (name the text of a given box) reads the
  same rows and is not a grounding task.

Row: task, image (a path from `eval/`: `grounding_eval/dataset/images/<n>.jpeg`), id,
abs_position **"<x1, y1, x2, y2>" px**, rel_position (the same in 0-1), text. The authors' verify
maps the model's point to pixels and tests it inside abs_position, edges included; an answer that
does not parse is wrong, in the denominator. Accuracy per task; the README's "average" is the mean
of fun2point, text2point and bbox2text; the headline here is the mean of the two grounding tasks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ._common import DatasetError, DatasetRoot, Format, Loaded, read_jsonl, row_failure
from .rows import Row, RowSchema, sample_of

TASKS = {"cap.jsonl": "fun2point", "ocr.jsonl": "text2point"}
PREFIX = "grounding_eval/dataset/"  # the rows' image paths start here (the scripts run from eval/)
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")


def position(raw: Any) -> list[int] | None:
    """abs_position as the authors read it: the four comma-separated integers between < and >."""
    if not isinstance(raw, str):
        return None
    parts = raw.strip("<>").split(",")
    if len(parts) != 4 or not all(_INTEGER.fullmatch(part) for part in parts):
        return None
    return [int(part) for part in parts]


SCHEMA = RowSchema(  # the reader gives the id (the task and the row's id) and finds the image
    name="cagui-grounding",
    image="image",
    instruction="text",
    bbox=lambda row: position(row.fields.get("abs_position")) or row.fields.get("abs_position"),
    app=lambda row: row.context["task"],
    app_category=lambda row: row.context["task"],
    source="CAGUI's cap.jsonl / ocr.jsonl: abs_position '<x1, y1, x2, y2>' in pixels",
    extra=lambda row: {
        "source_file": row.context["source_file"],
        "benchmark": {"name": "cagui-grounding", "task": row.context["task"]},
    },
)


def annotation_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.name in TASKS else []
    for folder in (
        path,
        path / "code",
        path / "dataset" / "code",
        path / "grounding_eval" / "dataset" / "code",
        path / "eval" / "grounding_eval" / "dataset" / "code",
    ):
        found = [folder / name for name in TASKS if (folder / name).is_file()]
        if found:
            return found
    return []


def dataset_root(file: Path) -> Path:
    """The folder holding `images/`: `dataset/` above `code/` in the published layout."""
    for folder in (file.parent, file.parent.parent):
        if (folder / "images").is_dir():
            return folder
    return file.parent.parent if file.parent.name == "code" else file.parent


def resolve_image(root: Path, raw: str) -> Path:
    relative = raw.split(PREFIX, 1)[1] if PREFIX in raw else raw
    return root / relative


def load(path: Path) -> Loaded:
    files = annotation_files(path)
    if not files:
        raise DatasetError(f"{path}: no CAGUI {' or '.join(TASKS)} (eval/grounding_eval/dataset/code/)")
    root_folder = dataset_root(files[0])
    root = DatasetRoot(root_folder)
    problems: list[str] = []
    samples = []
    for file in files:
        task = TASKS[file.name]
        context = {"task": task, "source_file": file.name}
        for line, row in read_jsonl(file):
            own = row.get("id") if isinstance(row, dict) else None
            sample_id = f"{task}-{own if own not in (None, '') else f'line{line}'}"
            raw = row.get("image") if isinstance(row, dict) else None
            if not isinstance(raw, str) or not raw:
                failure = ValueError(f"{file.name}:{line} has no image")
                samples.append(row_failure(sample_id, root_folder / "(none)", problems, failure))
                continue
            found = Row(row, sample_id, resolve_image(root_folder, raw), raw, context, where=f"{file.name}:{line}")
            samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name="cagui-grounding", samples=samples, files=files, problems=problems)


FORMAT = Format("cagui-grounding", sniff=lambda p: bool(annotation_files(p)), load=load)
