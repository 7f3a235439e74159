"""`replay`: answers each sample from a predictions file made elsewhere (another harness, a
published log, an earlier run of this plugin), never from the ground truth. Formats, matching
and the verdict comparison live beside it in this folder; docs/replay.md shows them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.types import Prediction, Query
from ...evaluate.runner import CannotAnswer
from .agreement import compare
from .files import Answer, FieldMap, read_replay_file
from .match import Index

COORDS = ("pixels", "normalized")


class ReplayDetector:
    """Options: path=FILE (required), name=LABEL, format=NAME (force one), detector=SPEC (one
    detector's rows of a pytest-grounding file), id_field/point_field/box_field/correct_field
    (a user mapping, dotted paths), coords=pixels|normalized; requests=FILE: path= is a batch
    engine's results for that requests file (--grounding-batch-out), decoded as the served
    detector would (detectors/batch_replay.py)."""

    needs_image = False  # the answer is in the file: the image is opened for its size only
    deterministic = True  # one stored answer per sample: --grounding-epochs replays it once

    def __init__(
        self,
        path: str = "",
        name: str = "replay",
        format: str = "",
        detector: str = "",
        id_field: str = "",
        point_field: str = "",
        box_field: str = "",
        correct_field: str = "",
        coords: str = "pixels",
        requests: str = "",
    ) -> None:
        if not path:
            raise ValueError("replay needs path=FILE: the predictions file to score")
        if coords not in COORDS:
            raise ValueError(f"replay coords={coords!r}: expected one of {', '.join(COORDS)}")
        if (point_field or box_field or correct_field) and not id_field:
            raise ValueError("replay: point_field=/box_field=/correct_field= need id_field= too")
        if id_field and not (point_field or box_field):
            raise ValueError("replay: id_field= needs point_field= or box_field= (where the answer is)")
        mapping = None
        if id_field:
            mapping = FieldMap(id_field, point_field or None, box_field or None, correct_field or None)
        self.name = name
        self.path = Path(path)
        self.coords = coords
        self.file = read_replay_file(self.path, mapping=mapping, detector=detector or None, fmt=format or None)
        self.index = Index(self.file)
        self._rows = {answer.line: answer for answer in self.file.answers}

    def predict(self, query: Query) -> Prediction:
        sample = query.sample
        if sample is None:
            raise CannotAnswer(f"replay of {self.path} answers dataset samples only (this query names none)")
        match = self.index.match(sample)
        answer = match.answer
        if answer is None:
            raise CannotAnswer(str(match.problem))
        where = f"row {answer.line} of {self.path}"
        if answer.invalid:
            raise CannotAnswer(f"{where}: {answer.invalid}")
        if answer.error is not None:
            raise CannotAnswer(f"{where} is an error, not an answer: {answer.error}")
        meta: dict[str, Any] = {"replay_row": answer.line}
        if answer.refusal:
            return Prediction.refusal(None, answer.raw, replay_row=answer.line)
        if answer.wrong_format:
            return Prediction.no_answer(answer.raw, replay_row=answer.line)
        scale = query.image.size if self.coords == "normalized" else (1, 1)
        return _scaled(answer, scale, meta)

    def annotate_record(self, record: dict[str, Any]) -> None:
        """Beside our verdict, what the file said (the record's `replay` field)."""
        row = (record.get("meta") or {}).get("replay_row")
        answer = self._rows.get(row) if isinstance(row, int) else None
        if answer is not None:
            record["replay"] = compare(record, answer, file=str(self.path), fmt=self.file.format)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "replay",
            "file": str(self.path),
            "format": self.file.format,
            "matched_by": self.file.by,
            "answers": len(self.file.answers),
            "skipped_rows": len(self.file.skipped),
            "coords": self.coords,
            "headline": f"{self.file.format} file {self.path.name}, {len(self.file.answers)} answers",
        }


def _scaled(answer: Answer, scale: tuple[int, int], meta: dict[str, Any]) -> Prediction:
    sx, sy = float(scale[0]), float(scale[1])
    point = None if answer.point is None else (answer.point[0] * sx, answer.point[1] * sy)
    box = None
    if answer.box is not None:
        from ...core.types import Box

        x1, y1, x2, y2 = answer.box
        box = Box(x1 * sx, y1 * sy, x2 * sx, y2 * sy)
    points = None if answer.points is None else tuple((x * sx, y * sy) for x, y in answer.points)
    return Prediction(point=point, box=box, points=points, raw=answer.raw, meta=meta)
