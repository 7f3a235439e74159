"""`replay:path=RESULTS,requests=FILE`: a batch engine's results for a requests file that
--grounding-batch-out wrote (detectors/batch_files.py reads both), each answer decoded by the
served detector's own code in the frame the manifest names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.types import Prediction, Query
from ..evaluate.runner import CannotAnswer
from .batch_files import BatchError, batch_id, read_results
from .replay import ReplayDetector
from .served import decode_reply, offline_preset


class BatchReplay:
    """`replay:path=RESULTS,requests=FILE`: each sample's answer from a batch engine's results,
    decoded as the served detector that wrote FILE would have decoded it live."""

    needs_image = False  # the answer is in the file: the image is opened for its size only
    deterministic = True

    def __init__(self, path: str, requests: str, name: str = "replay") -> None:

        self.name = name
        self.path = Path(path)
        self.requests = Path(requests)
        try:
            self.results = read_results(self.path, self.requests)
        except OSError as exc:
            raise BatchError(f"{exc}") from None
        detector = self.results.manifest.get("detector") or {}
        self.detector = detector
        self.preset = offline_preset(
            str(detector.get("preset_name")), detector.get("preset_options") or {}, detector.get("pixel_budget")
        )

    def predict(self, query: Query) -> Prediction:
        sample = query.sample
        if sample is None:
            raise CannotAnswer(f"replay of {self.path} answers dataset samples only (this query names none)")
        custom_id = batch_id(sample.uid, query.epoch)
        entry = self.results.samples.get(custom_id)
        if entry is None:
            raise CannotAnswer(f"{self.requests} holds no request for {custom_id!r}: not in the batch that was written")
        result = self.results.by_id.get(custom_id)
        if result is None:
            raise CannotAnswer(f"{self.path} holds no result for {custom_id!r} (request of {self.requests})")
        if result.problem is not None:
            raise CannotAnswer(f"{self.path} line {result.line} ({custom_id}): {result.problem}")
        frame = self.preset.preprocess.frame(query.image.size)
        sent = entry.get("sent")
        if sent is not None and list(frame.model) != list(sent):
            raise CannotAnswer(
                f"{custom_id}: the screen is {query.image.size[0]}x{query.image.size[1]} here and was sent at "
                f"{sent[0]}x{sent[1]}, not {frame.model[0]}x{frame.model[1]}: another version of the screen"
            )
        meta = {"batch_line": result.line, "pixel_budget": self.detector.get("pixel_budget")}
        return decode_reply(self.preset, result.body, frame, meta)

    def describe(self) -> dict[str, Any]:
        found = self.results
        return {
            "name": self.name,
            "kind": "replay",
            "file": str(self.path),
            "format": "openai-batch",
            "requests": str(self.requests),
            "answers": len(found.by_id),
            "foreign": len(found.foreign),
            "model": self.detector.get("model"),
            "preset": self.preset.describe(),
            "headline": f"batch results {self.path.name} of {self.requests.name} ({self.detector.get('model')}, "
            f"preset {self.preset.name}), {len(found.by_id)} of {len(found.samples)} answered"
            + (f", {len(found.foreign)} results of other requests ignored" if found.foreign else ""),
        }


class Replay(ReplayDetector):
    """The `replay` detector: a predictions file (replay/), or with requests=FILE a batch engine's
    results for FILE. The choice lives here, above replay/, which must not import the served path."""

    def __new__(cls, *args: Any, requests: str = "", **kwargs: Any) -> Any:
        if requests:
            path, name = kwargs.get("path", args[0] if args else ""), kwargs.get("name", "replay")
            if set(kwargs) - {"path", "name"}:
                raise ValueError("replay with requests=FILE takes path=RESULTS and name= only")
            return BatchReplay(path, requests, name)
        return super().__new__(cls)
