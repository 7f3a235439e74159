"""One sample through one detector: read the image, time the prediction, score it. Never raises:
every failure becomes an error record naming the sample and the file. No pytest here."""

from __future__ import annotations

import dataclasses
import numbers
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.paths import shown_path, shown_text
from ..core.profiles import Profile
from ..core.record import Outcome, Record, Task, to_json, with_fields
from ..core.redact import redact
from ..core.safetext import terminal_line, terminal_traceback
from ..core.types import Box, Prediction, Query, Sample, answer_format_of, epoch_of
from . import scoring


@dataclass(frozen=True)
class Evaluation:
    record: Record
    traceback: str | None = None  # the detector's, for the test report of an error


def read_image(sample: Sample) -> tuple[Any, str | None]:
    """The image as RGB, fully decoded, or an error message."""
    from PIL import Image

    if not sample.image.is_file():
        return None, f"image not found: {sample.image}"
    try:
        with Image.open(sample.image) as handle:
            image = handle.convert("RGB")
            image.load()
    except Exception as exc:  # Pillow raises several types for broken files
        return None, f"cannot read image {shown_path(sample.image)}: {type(exc).__name__}: {_no_home(exc)}"
    return image, None


def read_header(sample: Sample) -> tuple[Any, str | None]:
    """The image opened for its size only (pixels never decoded; the file is closed), for a
    detector with `needs_image = False`, or an error message."""
    from PIL import Image

    if not sample.image.is_file():
        return None, f"image not found: {sample.image}"
    try:
        with Image.open(sample.image) as handle:
            header = handle
    except Exception as exc:  # Pillow raises several types for broken files
        return None, f"cannot read image {shown_path(sample.image)}: {type(exc).__name__}: {_no_home(exc)}"
    return header, None


class InvalidAnswer(ValueError):
    """A detector's answer that is not a prediction: an error for that sample, never repaired."""


def as_prediction(answer: Any) -> Prediction:
    """Detectors return a Prediction; a bare (x, y), a Box or None is accepted for quick custom
    ones. Coordinates are checked, not repaired: a point of three items, a coordinate that is not a
    real number or too large for a float is an InvalidAnswer."""
    if answer is None:
        return Prediction.no_answer()
    if isinstance(answer, Box):
        return Prediction(box=_box(answer))
    if isinstance(answer, Prediction):
        point = None if answer.point is None else _point(answer.point)
        box = None if answer.box is None else _box(answer.box)
        if not isinstance(answer.meta, Mapping):
            raise InvalidAnswer(f"Prediction.meta is a {type(answer.meta).__name__}, expected a mapping")
        points = None if answer.points is None else _points(answer.points)
        return dataclasses.replace(answer, point=point, box=box, points=points)
    if isinstance(answer, (tuple, list)) and len(answer) == 2:
        return Prediction(point=_point(answer))
    raise InvalidAnswer(f"detector returned {_describe(answer)}, expected a Prediction")


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidAnswer(f"{what} is {_describe(value)}, not a number")
    try:
        return float(value)
    except OverflowError:
        raise InvalidAnswer(f"{what} is too large for a float") from None


def _point(value: Any) -> tuple[float, float]:
    if not isinstance(value, (tuple, list)) and not hasattr(value, "__len__"):
        raise InvalidAnswer(f"point is {_describe(value)}, expected (x, y)")
    items = list(value)
    if len(items) != 2:
        raise InvalidAnswer(f"point has {len(items)} items, expected (x, y)")
    return (_number(items[0], "point x"), _number(items[1], "point y"))


def _points(value: Any) -> tuple[tuple[float, float], ...]:
    """A drag's or a sequence's points: a list of (x, y)."""
    if not isinstance(value, (tuple, list)) or not value:
        raise InvalidAnswer(f"points is {_describe(value)}, expected a non-empty list of (x, y)")
    return tuple(_point(item) for item in value)


def _box(value: Any) -> Box:
    """A Box, or four numbers x1, y1, x2, y2."""
    if isinstance(value, Box):
        items = [value.x1, value.y1, value.x2, value.y2]
    elif isinstance(value, (tuple, list)) or hasattr(value, "tolist"):
        items = list(value.tolist() if hasattr(value, "tolist") else value)
        if len(items) != 4:
            raise InvalidAnswer(f"box has {len(items)} items, expected (x1, y1, x2, y2)")
    else:
        raise InvalidAnswer(f"box is {_describe(value)}, expected a Box or (x1, y1, x2, y2)")
    return Box(*(_number(v, name) for v, name in zip(items, ("box x1", "box y1", "box x2", "box y2"), strict=True)))


class Timeout(Exception):
    pass


class CannotAnswer(Exception):
    """Raised by a detector that knows why it has no answer for this sample (a replayed file with
    no row for it, or two): that sample's error, with the message as given and no traceback."""


def call_with_timeout(fn: Callable[[], Any], timeout: float | None) -> Any:
    """Run fn, giving up after `timeout` seconds. The abandoned call cannot be killed (Python has
    no thread cancel); it finishes in the background while the run goes on."""
    if not timeout:
        return fn()
    box: dict[str, Any] = {}

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


def _open_sample(
    sample: Sample, detector_name: str, read: Callable[[Sample], Any] = read_image
) -> tuple[Any, Evaluation | None]:
    """The sample's image as `read` gives it (the whole picture, or only its header for a detector
    that answers from the sample's identity), or the error record that says why the sample cannot
    be scored."""
    if sample.defect:
        return None, _error(sample, detector_name, f"unusable sample ({sample.defect}) in {sample.image}")
    image, problem = read(sample)
    if problem:
        return None, _error(sample, detector_name, problem)
    width, height = image.size
    if sample.image_size is not None and tuple(sample.image_size) != (width, height):
        declared = f"{sample.image_size[0]}x{sample.image_size[1]}"
        return None, _error(
            sample,
            detector_name,
            f"declared image size {declared} differs from the image's real size {width}x{height} "
            f"({sample.image}): its box would be scored in the wrong frame",
        )
    if getattr(sample.target, "kind", None) != "absent" and sample.bbox.iou(Box(0, 0, width, height)) == 0.0:
        return None, _error(
            sample,
            detector_name,
            f"target box {sample.bbox.as_list()} lies outside the {width}x{height} image {shown_path(sample.image)}",
        )
    return image, None


def _failure_evaluation(sample: Sample, detector_name: str, failure: BaseException, latency_ms: float) -> Evaluation:
    if isinstance(failure, Timeout):
        kind, trace = "timed out", None
    elif isinstance(failure, InvalidAnswer):
        kind, trace = "gave an invalid answer", None
    elif isinstance(failure, CannotAnswer):
        kind, trace = "has no answer", None
    else:
        kind = f"raised {type(failure).__name__}"
        trace = redact(terminal_traceback(failure))
    message = redact(f"detector {detector_name} {kind} on {sample.image}: {failure}")
    return Evaluation(
        scoring.error_record(sample, detector=detector_name, message=message, latency_ms=latency_ms), trace
    )


def _timed(
    call: Callable[[], Any], timeout: float | None, timing: dict[str, float]
) -> tuple[Any, BaseException | None]:
    start = time.perf_counter_ns()
    try:
        answer = call_with_timeout(call, timeout)
        failure: BaseException | None = None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from a detector too: that sample's error, not the run's end
        answer, failure = None, exc
    timing["ms"] = (time.perf_counter_ns() - start) / 1e6
    return answer, failure


def evaluate(
    sample: Sample,
    detector: Any,
    *,
    detector_name: str,
    timeout: float | None = None,
    around: Callable[[Callable[[], Any]], Any] | None = None,
    read: Callable[[Sample], Any] = read_image,
    profile: Profile | None = None,
) -> Evaluation:
    """`around(fn)` lets the caller wrap the timed call (pytest-benchmark's pedantic); `read` the
    reading of the image (the prefetch pipeline reads a screen once for its samples); `profile`
    the scoring profile (core/profiles.py; None: the default). Whatever
    the detector returns or raises (short of Ctrl-C or killing the process) ends in a record.
    A detector's optional `annotate_record(record)` adds its own fields to the scored record."""
    by_identity = getattr(detector, "needs_image", True) is False  # answers from the sample, not the pixels
    answer_format = answer_format_of(sample)
    if answer_format is not None and not getattr(detector, "answer_formats", False):
        return _error(
            sample,
            detector_name,
            f"detector {detector_name} cannot be asked in another coordinate format (--grounding-perturb format: "
            "the served detectors openai, vllm and llamacpp can)",
        )
    image, failed = _open_sample(sample, detector_name, read_header if by_identity else read)
    if failed is not None:
        return failed
    width, height = image.size
    query = Query(
        image=image,
        instruction=sample.instruction,
        sample=sample if by_identity else None,
        epoch=epoch_of(sample),
        answer_format=answer_format,
    )
    timing: dict[str, float] = {}

    def timed() -> tuple[Any, BaseException | None]:
        return _timed(lambda: detector.predict(query), timeout, timing)

    answer, failure = around(timed) if around else timed()
    latency_ms = timing.get("ms", 0.0)
    if failure is None:
        try:
            prediction, queue_ms = _queueing(as_prediction(answer))
            record = scoring.score(
                sample,
                prediction,
                detector=detector_name,
                latency_ms=max(0.0, latency_ms - queue_ms),
                image_size=(width, height),
                profile=profile,
            )
            if queue_ms:
                record = with_fields(record, queue_ms=round(queue_ms, 3))
            annotate = getattr(detector, "annotate_record", None)
            if callable(annotate):
                annotated = dict(record)
                annotate(annotated)
                record = to_json(annotated)
        except Exception as exc:  # an answer we cannot score is that sample's error, never a lost record
            failure = exc
        else:
            return Evaluation(record)
    return _failure_evaluation(sample, detector_name, failure, latency_ms)


def _queueing(prediction: Prediction) -> tuple[Prediction, float]:
    """A served detector reports the time its request waited for a place in flight inside our
    client (meta "queue_ms"): the record's latency is the request's own time, the wait apart."""
    queue_ms = prediction.meta.get("queue_ms")
    if isinstance(queue_ms, bool) or not isinstance(queue_ms, (int, float)) or not queue_ms > 0:
        return prediction, 0.0
    meta = {k: v for k, v in prediction.meta.items() if k != "queue_ms"}
    return dataclasses.replace(prediction, meta=meta), float(queue_ms)


def evaluate_locate(
    sample: Sample,
    detector: Any,
    *,
    detector_name: str,
    timeout: float | None = None,
    threshold: float = 0.5,
    around: Callable[[Callable[[], Any]], Any] | None = None,
    read: Callable[[Sample], Any] = read_image,
) -> Evaluation:
    result = _evaluate_locate(
        sample, detector, detector_name=detector_name, timeout=timeout, threshold=threshold, around=around, read=read
    )
    # error records too: they count in the locate block
    record = with_fields(result.record, task=Task.LOCATE, threshold=result.record.get("threshold", threshold))
    return Evaluation(record, result.traceback)


def _evaluate_locate(
    sample: Sample,
    detector: Any,
    *,
    detector_name: str,
    timeout: float | None,
    threshold: float,
    around: Callable[[Callable[[], Any]], Any] | None,
    read: Callable[[Sample], Any],
) -> Evaluation:
    """The element-at-click task: the detector's `locate` gets the image and the recorded click
    point (the row's `point`, else the box centre), never the box; `locate_with_retries` tries the
    documented transforms until one gives a box containing the point. The timeout covers them all."""
    from .locate import LocateQuery, locate_with_retries

    image, failed = _open_sample(sample, detector_name, read)
    if failed is not None:
        return failed
    locate = getattr(detector, "locate", None)
    if not callable(locate):
        return _error(
            sample,
            detector_name,
            f"detector {detector_name} has no locate(query) method: it answers the grounding task only",
        )
    click = sample.point if sample.point is not None else sample.bbox.center
    query = LocateQuery(image=image, point=(float(click[0]), float(click[1])))
    timing: dict[str, float] = {}

    def checked(located: LocateQuery) -> Prediction:
        return as_prediction(locate(located))

    def timed() -> tuple[Any, BaseException | None]:
        return _timed(lambda: locate_with_retries(checked, query), timeout, timing)

    outcome, failure = around(timed) if around else timed()
    latency_ms = timing.get("ms", 0.0)
    if failure is None:
        try:
            record = scoring.score_located(
                sample,
                outcome,
                detector=detector_name,
                latency_ms=latency_ms,
                image_size=image.size,
                click=query.point,
                threshold=threshold,
            )
        except Exception as exc:
            failure = exc
        else:
            return Evaluation(record)
    return _failure_evaluation(sample, detector_name, failure, latency_ms)


def _error(sample: Sample, detector_name: str, message: str) -> Evaluation:
    return Evaluation(scoring.error_record(sample, detector=detector_name, message=message))


def _no_home(exc: BaseException) -> str:
    """An exception's text with the file it names shown as shown_path does."""
    text = str(exc)
    name = getattr(exc, "filename", None)
    return text.replace(str(name), shown_path(str(name))) if name else text


def explain(record: Mapping[str, Any], roots: Sequence[Any] = ()) -> str:
    """The failure message a person can act on: one line, safe for a terminal (data may hold
    escape sequences or CR/LF). Paths under one of `roots` (the sample's dataset folder) are shown
    relative to it, others as shown_path does: the message goes into the JUnit XML, a shared file."""
    text = _explain(record)
    for root in roots:
        folder = str(root).rstrip("/")
        if folder and folder != ".":
            text = text.replace(folder + "/", "")
    return terminal_line(shown_text(text))  # a path inside a message (a detector's error): never a home path


def _explain(record: Mapping[str, Any]) -> str:
    where = f"{record['dataset']}/{record['id']} ({shown_path(str(record['image']))})"  # no home path in JUnit
    target = ", ".join(f"{v:g}" for v in record["target"])
    if record.get("task") == Task.LOCATE and record["outcome"] in (Outcome.MISS, Outcome.WRONG_FORMAT):
        x, y = record["point"]
        if record["outcome"] == Outcome.WRONG_FORMAT:
            return (
                f"not found: {record['detector']} returned no box at ({x:g}, {y:g}) after {record['attempts']} "
                f"attempts; target [{target}] in {where}"
            )
        return (
            f"false positive: {record['detector']} returned a box with IoU {record['iou']:.2f} < "
            f"{record['threshold']:g} at ({x:g}, {y:g}); target [{target}] in {where}"
        )
    if record["outcome"] == Outcome.WRONG_FORMAT:
        return (
            f"wrong format: {record['detector']} gave no usable point for {where}; "
            f"raw answer: {record['raw']!r}; target [{target}]"
        )
    if record["outcome"] == Outcome.MISS and record.get("refusal"):
        reason = (record.get("meta") or {}).get("reason")
        said = f" ({reason})" if reason else ""
        return (
            f"miss: refused{said}, but the target [{target}] is on the screen for {record['instruction']!r} in {where}"
        )
    if record["outcome"] == Outcome.MISS and record.get("negative"):
        x, y = record["point"]
        return (
            f"miss: clicked ({x:g}, {y:g}) but the target is absent (a refusal was expected) "
            f"for {record['instruction']!r} in {where}"
        )
    if record["outcome"] == Outcome.MISS:
        x, y = record["point"]
        return (
            f"miss: clicked ({x:g}, {y:g}), {record['distance']:.1f} px from target [{target}] "
            f"for {record['instruction']!r} in {where}"
        )
    return f"error in {record['dataset']}/{record['id']}: {record['error']}"
