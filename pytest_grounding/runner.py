"""One sample through one detector: read the image, time the prediction, score it. Never raises:
every failure becomes an error record naming the sample and the file. No pytest here."""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from . import metrics
from .types import Box, Prediction, Query, Sample


@dataclass(frozen=True)
class Evaluation:
    record: Dict[str, Any]
    traceback: Optional[str] = None  # the detector's, for the test report of an error


def read_image(sample: Sample):
    """The image as RGB, fully decoded, or an error message."""
    from PIL import Image

    if not sample.image.is_file():
        return None, f"image not found: {sample.image}"
    try:
        with Image.open(sample.image) as handle:
            image = handle.convert("RGB")
            image.load()
    except Exception as exc:  # Pillow raises several types for broken files
        return None, f"cannot read image {sample.image}: {type(exc).__name__}: {exc}"
    return image, None


def as_prediction(answer: Any) -> Prediction:
    """Detectors return a Prediction; a bare (x, y) or None is accepted for quick custom ones."""
    if isinstance(answer, Prediction):
        return answer
    if answer is None:
        return Prediction.no_answer()
    if isinstance(answer, Box):
        return Prediction(box=answer)
    if isinstance(answer, (tuple, list)) and len(answer) == 2:
        return Prediction(point=(float(answer[0]), float(answer[1])))
    raise TypeError(f"detector returned {type(answer).__name__}, expected a Prediction")


class Timeout(Exception):
    pass


def call_with_timeout(fn: Callable[[], Any], timeout: Optional[float]) -> Any:
    """Run fn, giving up after `timeout` seconds. The abandoned call cannot be killed (Python has
    no thread cancel); it finishes in the background while the run goes on."""
    if not timeout:
        return fn()
    box: Dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="grounding-predict", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise Timeout(f"no answer within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def evaluate(sample: Sample, detector: Any, *, detector_name: str, timeout: Optional[float] = None,
             around: Optional[Callable[[Callable[[], Any]], Any]] = None) -> Evaluation:
    """`around(fn)` lets the caller wrap the timed call (pytest-benchmark's pedantic)."""
    if sample.defect:
        return _error(sample, detector_name, f"unusable sample ({sample.defect}) in {sample.image}")
    image, problem = read_image(sample)
    if problem:
        return _error(sample, detector_name, problem)
    width, height = image.size
    if sample.bbox.iou(Box(0, 0, width, height)) == 0.0:
        return _error(sample, detector_name,
                      f"target box {sample.bbox.as_list()} lies outside the {width}x{height} image {sample.image}")
    query = Query(image=image, instruction=sample.instruction)
    timing: Dict[str, float] = {}

    def timed() -> Tuple[Any, Optional[BaseException]]:
        start = time.perf_counter_ns()
        try:
            answer = call_with_timeout(lambda: detector.predict(query), timeout)
            failure: Optional[BaseException] = None
        except Exception as exc:
            answer, failure = None, exc
        timing["ms"] = (time.perf_counter_ns() - start) / 1e6
        return answer, failure

    answer, failure = around(timed) if around else timed()
    latency_ms = timing.get("ms", 0.0)
    if failure is None:
        try:
            prediction = as_prediction(answer)
        except (TypeError, ValueError) as exc:
            failure = exc
    if failure is not None:
        kind = "timed out" if isinstance(failure, Timeout) else f"raised {type(failure).__name__}"
        message = f"detector {detector_name} {kind} on {sample.image}: {failure}"
        trace = None if isinstance(failure, Timeout) else "".join(
            traceback.format_exception(type(failure), failure, failure.__traceback__))
        return Evaluation(metrics.error_record(sample, detector=detector_name, message=message,
                                               latency_ms=latency_ms), trace)
    record = metrics.score(sample, prediction, detector=detector_name, latency_ms=latency_ms,
                           image_size=(width, height))
    return Evaluation(record)


def _error(sample: Sample, detector_name: str, message: str) -> Evaluation:
    return Evaluation(metrics.error_record(sample, detector=detector_name, message=message))


def explain(record: Dict[str, Any]) -> str:
    """The failure message a person can act on."""
    where = f"{record['dataset']}/{record['id']} ({record['image']})"
    target = ", ".join(f"{v:g}" for v in record["target"])
    if record["outcome"] == metrics.WRONG_FORMAT:
        return (f"wrong format: {record['detector']} gave no usable point for {where}; "
                f"raw answer: {record['raw']!r}; target [{target}]")
    if record["outcome"] == metrics.MISS:
        x, y = record["point"]
        return (f"miss: clicked ({x:g}, {y:g}), {record['distance']:.1f} px from target [{target}] "
                f"for {record['instruction']!r} in {where}")
    return f"error: {record['error']}"
