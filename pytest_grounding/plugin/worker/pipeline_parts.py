"""The prefetch pipeline's parts: how wide a detector's lane is (its concurrency, or its batch), a
slot per item started ahead, a batch gathered from several items, and the reused daemon threads
that run the evaluations (pipeline.py plans; these carry out)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...detectors.batching import batch_outcomes
from ...evaluate.runner import Evaluation


def lane_width(detector: Any) -> tuple[int, int]:
    """(concurrency, batch size) a detector declares; (1, 1) runs it the plain way."""
    batch = getattr(detector, "batch_size", 1)
    if (
        isinstance(batch, int)
        and not isinstance(batch, bool)
        and batch > 1
        and callable(getattr(detector, "predict_batch", None))
    ):
        return 1, batch
    concurrency = getattr(detector, "concurrency", 1)
    if isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency > 1:
        return concurrency, 1
    return 1, 1


@dataclass
class Slot:
    """One item's evaluation, started ahead."""

    index: int
    sample: Any
    detector: Any
    spec: str
    done: threading.Event = field(default_factory=threading.Event)
    evaluation: Evaluation | None = None
    taken: bool = False


class BatchGroup:
    """Several items' queries for one `predict_batch` call. Each member's evaluation calls
    `member(i).predict(query)`; the member that completes the group runs the batch (one at a
    time per detector: `lock`), the others wait for it. A member whose sample could not be
    opened never predicts: it `leave`s, and the group does not wait for it."""

    def __init__(self, detector: Any, members: Sequence[int], lock: threading.Lock) -> None:
        self.detector = detector
        self.expected = set(members)
        self.lock = lock
        self.queries: dict[int, Any] = {}
        self.gone: set[int] = set()
        self.answers: dict[int, Any] = {}
        self.failure: BaseException | None = None
        self.ready = threading.Event()
        self._state = threading.Lock()
        self._started = False
        self.sizes: list[int] = []  # the batches run (for tests and the report)

    def member(self, index: int) -> Any:
        group = self

        class Member:
            def predict(self, query: Any) -> Any:
                return group.arrive(index, query)

        return Member()

    def arrive(self, index: int, query: Any) -> Any:
        with self._state:
            self.queries[index] = query
        self._maybe_run()
        self.ready.wait()
        if self.failure is not None:
            raise self.failure
        answer = self.answers[index]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def leave(self, index: int) -> None:
        with self._state:
            if index in self.queries:
                return
            self.gone.add(index)
        self._maybe_run()

    def _maybe_run(self) -> None:
        with self._state:
            if self._started or len(self.queries) + len(self.gone) < len(self.expected):
                return
            self._started = True
            order = sorted(self.queries)
        try:
            if order:
                with self.lock:  # each query's own prediction or exception: one failing query
                    outcomes = batch_outcomes(self.detector, [self.queries[i] for i in order])  # loses no other
                self.sizes.append(len(order))
                if len(outcomes) != len(order):
                    raise ValueError(f"predict_batch returned {len(outcomes)} answers for {len(order)} queries")
                self.answers = dict(zip(order, outcomes, strict=True))
        except BaseException as exc:  # the whole call broke: every member's error, in its own record
            self.failure = exc
        finally:
            self.ready.set()


@dataclass
class Lane:
    spec: str
    detector: Any
    batch: int
    outstanding: int = 0  # started, not yet taken or dropped
    running: int = 0  # started, not finished (in flight)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counting: threading.Lock = field(default_factory=threading.Lock)
    batches: list[int] = field(default_factory=list)

    def window(self) -> int:
        if self.batch > 1:
            return 2 * self.batch  # one batch running, the next one gathered
        return max(1, lane_width(self.detector)[0])


class Workers:
    """The daemon threads that run a pipeline's evaluations, reused from item to item. Starting a
    thread makes the starting one wait until the new one runs, which cost pytest's thread about a
    second per 300 items while the others encode images; daemon, so a request that hangs never holds
    up the interpreter's exit. A thread is added only when none is idle: a job never waits for one."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0
        self.count = 0

    def submit(self, job: Callable[[], None]) -> None:
        with self.lock:
            spawn = self.idle == 0
            if spawn:
                self.count += 1
            else:
                self.idle -= 1
        self.jobs.put(job)
        if spawn:
            threading.Thread(target=self._serve, name=f"grounding-prefetch-{self.count}", daemon=True).start()

    def _serve(self) -> None:
        while (job := self.jobs.get()) is not None:
            job()  # never raises: the pipeline's jobs record their own failures
            with self.lock:
                self.idle += 1

    def close(self) -> None:
        """Each thread ends once the jobs before its stop mark are done (in-flight ones finish)."""
        with self.lock:
            count, self.count, self.idle = self.count, 0, 0
        for _ in range(count):
            self.jobs.put(None)
