"""The optional batch interface of a detector: `batch_size: int` and
`predict_batch(queries) -> list[Prediction]`, one prediction per query, in order. A harness that
has several queries of one detector queued (up to `batch_size`) may hand them over in one call;
`predict(query)` stays and gives what `predict_batch([query])[0]` gives.

One query's failure never loses the others: a detector whose batch has failing queries raises
`BatchError`, which carries every query's own outcome (its `Prediction` or its exception).
`batch_outcomes` is the caller's side: it runs any detector on a list of queries and returns
those outcomes, whether the detector batches or not."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..core.types import Prediction, Query

T = TypeVar("T")
Outcome = Prediction | Exception


@runtime_checkable
class BatchDetector(Protocol):
    """A detector that can answer several queries in one call."""

    name: str
    batch_size: int

    def predict(self, query: Query) -> Prediction: ...

    def predict_batch(self, queries: Sequence[Query]) -> list[Prediction]: ...


class BatchError(RuntimeError):
    """Some queries of a batch failed. `outcomes[i]` is query i's prediction or its exception;
    the first failure is the cause and its message is in this one's."""

    def __init__(self, outcomes: Sequence[Outcome]) -> None:
        self.outcomes: list[Outcome] = list(outcomes)
        failed = [(i, o) for i, o in enumerate(self.outcomes) if isinstance(o, Exception)]
        self.failed = [i for i, _ in failed]
        first = failed[0] if failed else None
        detail = f": query {first[0]}: {type(first[1]).__name__}: {first[1]}" if first else ""
        super().__init__(f"{len(failed)} of {len(self.outcomes)} queries in the batch failed{detail}")
        if first:
            self.__cause__ = first[1]


def batch_size(detector: Any) -> int:
    """How many queries the detector takes in one call: its `batch_size` when it has
    `predict_batch`, else 1."""
    if not callable(getattr(detector, "predict_batch", None)):
        return 1
    try:
        return max(1, int(getattr(detector, "batch_size", 1)))
    except (TypeError, ValueError):
        return 1


def predictions_or_raise(outcomes: Sequence[Outcome]) -> list[Prediction]:
    """The predictions when every query has one, else `BatchError` with all the outcomes."""
    if any(isinstance(o, Exception) for o in outcomes):
        raise BatchError(outcomes)
    return [o for o in outcomes if isinstance(o, Prediction)]


def chunked(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), max(1, size)):
        yield items[start : start + max(1, size)]


def batch_outcomes(detector: Any, queries: Sequence[Query]) -> list[Outcome]:
    """Each query's prediction or exception. A batching detector gets the queries in calls of at
    most `batch_size`; a call that raises anything but `BatchError` is retried one query at a time,
    so a failure (say, out of memory for the whole batch) is charged only to the queries that fail
    alone. A detector without `predict_batch` is called once per query."""
    size = batch_size(detector)
    outcomes: list[Outcome] = []
    for chunk in chunked(queries, size):
        if size > 1 and len(chunk) > 1:
            try:
                outcomes.extend(detector.predict_batch(chunk))
                continue
            except BatchError as exc:
                outcomes.extend(exc.outcomes)
                continue
            except Exception:
                pass  # one by one below
        for query in chunk:
            try:
                outcomes.append(detector.predict(query))
            except Exception as exc:
                outcomes.append(exc)
    return outcomes
