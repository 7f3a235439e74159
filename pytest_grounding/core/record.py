"""The record: what one sample through one detector came to. It is the central data type: made by
`evaluate`, carried over xdist's wire, written to the predictions file and the JSON report, and
read by every figure in `analysis`.

On the wire and on disk a record is a plain dict of built-in types (execnet and JSON take nothing
else), so the type is a TypedDict; `Outcome` and `Task` are `str` enums whose members equal their
values, and records hold the values (`to_json` makes sure of it). A record is made whole by
`evaluate.scoring` and not grown afterwards (every field is `ReadOnly`: mypy refuses code that
changes a record in place): what the plugin knows later (the dataset's fingerprint,
the baseline's verdict) is added by `with_fields`, which returns a new record."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from .redact import redact

if TYPE_CHECKING:  # a typing-only word: the record's fields are read-only to mypy
    from typing_extensions import ReadOnly


# A record keeps the model's raw answer whole up to this many characters (after masking keys), so that
# a run can be parsed again later (`python -m pytest_grounding rescore`): far above any model's answer
# (GUI-Owl-1.5's 2,048 new tokens are about 8,000 characters). Beyond it the text is cut and ends in
# "..." (`evaluate/scoring.py`; a replayed file's answer, `detectors/replay/files.py`).
RAW_LIMIT = 100_000


class _Vocabulary(str, enum.Enum):
    """A `str` enum that prints and formats as its value on every Python from 3.10."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Outcome(_Vocabulary):
    HIT = "hit"
    MISS = "miss"  # in the locate task: a false positive (a box below the IoU threshold)
    WRONG_FORMAT = "wrong_format"  # no usable answer; counted in the accuracy as a miss, and apart
    ERROR = "error"  # the sample could not be scored: left out of the accuracy, never a miss


class AgentEnd(_Vocabulary):
    """Why a model-driven episode ended (agent=crop, issue 39; a record's `agent_end`): a click is
    scored as a click, a refusal as a refusal; the others end without a new click."""

    CLICK = "click"
    REFUSAL = "refusal"  # the preset's refusal form, or `terminate` before any click
    WRONG_FORMAT = "wrong_format"  # a final answer the preset cannot read
    INVALID = "invalid_action"  # a malformed tool call, a crop outside the image or of zero size
    LOOP = "loop"  # a crop of a region already shown
    TURNS = "budget_turns"
    CROPS = "budget_crops"
    CROPS_PER_TURN = "budget_crops_per_turn"
    TOKENS = "budget_tokens"


AGENT_BUDGET_ENDS = (AgentEnd.TURNS, AgentEnd.CROPS, AgentEnd.CROPS_PER_TURN, AgentEnd.TOKENS)


class Task(_Vocabulary):
    GROUNDING = "grounding"  # instruction in, click out
    LOCATE = "locate"  # recorded click in, the element's box out


class CacheUse(_Vocabulary):
    """What --grounding-cache did for an answer, in its prediction's meta under `CACHE_META`
    (detectors/answer_cache.py): the record's `cached` and the summary's counts are read from it."""

    HIT = "hit"  # the answer came from the store: no request, no generation
    STORED = "stored"  # the model answered and the answer was kept
    NOT_STORED = "not_stored"  # the answer was to be kept, but the store could not be written


CACHE_META = "answer_cache"


# the words of an error record whose image path leads outside its dataset: no output reads that image
OUTSIDE_DATASET = "leads outside the dataset folder"
SCHEMA_VERSION = 1  # of the JSON report (pytest_grounding/schema/report.schema.json)
# The most shares a run may be split into (--grounding-shard K/N; never more than the samples
# either): `merge` refuses a report that claims more, so its work is bounded whatever a report says.
MAX_SHARDS = 10_000
# The most epochs a run asks each sample (--grounding-epochs N): 1,000 already costs 1,000 times the
# benchmark; a larger N is a typo that would plan billions of items before the first sample.
MAX_EPOCHS = 1_000
SCORED = (Outcome.HIT, Outcome.MISS, Outcome.WRONG_FORMAT)  # what the accuracy counts
OUTCOMES = tuple(Outcome)
TASKS = tuple(Task)


class Record(TypedDict, total=False):
    # what was run
    task: ReadOnly[str]  # a Task value
    detector: ReadOnly[str]
    dataset: ReadOnly[str]
    fingerprint: ReadOnly[str | None]
    # the sample
    id: ReadOnly[str]
    uid: ReadOnly[str]
    image: ReadOnly[str]
    instruction: ReadOnly[str]
    element_type: ReadOnly[str]
    app: ReadOnly[str]
    app_category: ReadOnly[str]
    platform: ReadOnly[str]
    target: ReadOnly[list[float]]  # [x1, y1, x2, y2] px
    target_shape: ReadOnly[dict[str, Any]]  # several boxes, a polygon, ordered steps (core.targets)
    benchmark: ReadOnly[dict[str, Any]]  # the public benchmark's own slices (analysis.headlines)
    negative: ReadOnly[bool]  # the target is absent: a refusal is the right answer
    size_px: ReadOnly[float]  # sqrt(w * h) of the target box
    size: ReadOnly[str]  # its bucket
    area_share: ReadOnly[float | None]
    image_size: ReadOnly[list[int] | None]
    # the answer and its verdict
    outcome: ReadOnly[str]  # an Outcome value
    refusal: ReadOnly[bool]
    truncated: ReadOnly[bool]  # a served answer the engine cut (finish_reason "length"); scored as it came
    cached: ReadOnly[bool]  # --grounding-cache: the answer came from the answer cache (no request sent)
    point: ReadOnly[list[float] | None]
    points: ReadOnly[list[list[float]]]
    box: ReadOnly[list[float] | None]
    iou: ReadOnly[float | None]
    distance: ReadOnly[float | None]
    distance_px: ReadOnly[float]  # the same, beside a miss's kind (issue 46)
    miss_kind: ReadOnly[str]  # why a scored miss missed: core/misses.py
    parser_candidates: ReadOnly[int]  # a parse-then-match detector's parsed elements (core/coverage.py)
    parser_covered: ReadOnly[bool]  # one of them covers the target
    parser_miss: ReadOnly[str]  # a miss of such a detector: not_detected | not_matched
    latency_ms: ReadOnly[float | None]
    attempts: ReadOnly[int]
    transform: ReadOnly[str | None]  # locate: the transform that gave the answer
    threshold: ReadOnly[float]  # locate: the IoU a hit needs
    raw: ReadOnly[str | None]
    error: ReadOnly[str | None]
    meta: ReadOnly[dict[str, Any]]
    baseline: ReadOnly[str]  # the baseline's verdict on this sample (analysis.baseline)
    # model-driven grounding (agent=crop, issue 39): each request of the episode, and why it ended
    turns: ReadOnly[list[dict[str, Any]]]
    agent_end: ReadOnly[str]


def with_fields(record: Record, **fields: Any) -> Record:
    """A copy of `record` with `fields` set: records are not changed once made."""
    merged: dict[str, Any] = {**record, **fields}
    return to_json(merged)


def to_json(record: Mapping[str, Any]) -> Record:
    """The record as plain built-in types: enum members as their values, no numpy, finite floats."""
    out: Record = plain(dict(record))
    return out


def plain(value: Any) -> Any:
    """Built-in types only (a numpy float in user_properties crashes an xdist worker)."""
    kind = type(value)  # the exact built-in types first: a record is made of them (called per item)
    if value is None or kind is bool or kind is int:
        return value
    if kind is str:
        return redact(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {str(k): plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if isinstance(value, str):  # a subclass (an Outcome, torch's TorchVersion) cannot cross xdist's wire
        return redact(str(value))  # a meta text may quote a server's answer
    from .types import Box  # core.types imports PIL lazily only; no cycle at import time

    if isinstance(value, Box):
        return value.as_list()
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return plain(value.tolist())
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return str(value)


SIZE_BUCKETS = ("<32", "32-100", ">100")  # the target box's side sqrt(w * h), px of the original image


def size_bucket(side: float) -> str:
    if side < 32:
        return "<32"
    return "32-100" if side <= 100 else ">100"
