"""Predictions started ahead of their items, per process: the server sets the pace.

A detector that can take several predictions at once says so: `concurrency` (an int, read each
time: adaptive detectors change it) for a served one, `batch_size > 1` with `predict_batch(queries)
-> list[Prediction]` for an in-process one that batches. For the items of such a detector, once
collection and deselection are final, this process's pipeline runs `runner.evaluate` (the same
function the item would call: same record, same timeout, same errors) in background threads for
the next items it will run: at most a window of them in flight (the detector's concurrency, or two
batches) and, for a served one, at most two windows started ahead of the item running (answers
waiting for their items); the item's `grounding_check` takes the finished evaluation instead of
predicting.

Which items come next: without xdist, `session.items` after deselection (-k, -m, the grounding
limit, resume, a shard). On an xdist worker, the items the controller has already sent it (the
worker's queue, peeked at; never more), and for `--dist load` a scheduler that keeps each worker's
queue at least a window deep, so a worker has enough known items to keep its requests in flight.
A request is therefore only sent for an item this process will run. What an interruption leaves:
-x / --maxfail / Ctrl-C stop the loop; predictions not started are never started, those in flight
(at most a window) finish in the background and are discarded, those that finished are written to
the predictions file (so --grounding-resume does not pay for them again) but not counted."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...core import budget
from ...core.record import Outcome, Record
from ...evaluate.runner import Evaluation
from ..common.pool import DetectorLoadError
from .pipeline_parts import BatchGroup, Lane, Slot, Workers, lane_width
from .worker_session import WorkerSession

# Answers may wait for their items up to a second window: pytest's thread takes them one item at a
# time, and when it lags (reports, capture, a burst of misses), the requests in flight keep going
# (measured: the suite serially 1.38x the bare client with one window, 1.15x with two).
AHEAD = 2
HORIZON = 4096  # items looked at ahead of the current one when filling the windows


Peek = Callable[[int], tuple[Sequence[int], bool]]  # current index -> (indices after it, known to be all)


class Pipeline:
    """The prefetching of one process. Planning happens in pytest's thread only; the background
    threads run evaluations and set their slot's event."""

    def __init__(self, worker: WorkerSession, items: Sequence[Any], peek: Peek) -> None:
        self.worker = worker
        self.evaluator = worker.evaluator
        self.items = items
        self.peek = peek
        self.position = {id(item): i for i, item in enumerate(items)}
        self.slots: dict[int, Slot] = {}
        self.lanes: dict[str, Lane | None] = {}
        self.stopped = False
        self.workers = Workers()
        self.finishing = threading.Event()  # set by each evaluation that ends: the windows may move
        self._lane_of: dict[int, Lane | None] = {}
        # What keeps a fill's cost to the windows, not the run's length (a fill runs several times
        # per item; scanning the whole horizon each time was quadratic in the items):
        self._open: set[int] = set()  # slots started and neither taken nor dropped
        self._settled = 0  # serially: from the current item up to here, started or run the plain way
        self._span: dict[str, tuple[int, int]] = {}  # each detector spec's first and last item
        for index, item in enumerate(items):
            spec = detector_spec(item)
            if spec is not None:
                self._span[spec] = (self._span.get(spec, (index, index))[0], index)

    def read(self, sample: Any) -> Any:
        """A screen's image, decoded once for its samples (the run's reader, shared with the items
        that run the plain way)."""
        return self.worker.screens.read(sample)

    @property
    def prefetching(self) -> bool:
        """Some detector of this process runs ahead (the progress line then says what is in flight)."""
        return any(lane is not None for lane in self.lanes.values())

    # -- which items, which detector ---------------------------------------------------------------
    def _lane(self, index: int) -> Lane | None:
        # fill() asks again for every item within the horizon each time a window moves: one lookup each
        if index not in self._lane_of:
            self._lane_of[index] = self._find_lane(index)
        return self._lane_of[index]

    def _find_lane(self, index: int) -> Lane | None:
        spec = detector_spec(self.items[index])
        if spec is None:
            return None
        if spec not in self.lanes:
            try:
                detector = self.worker.pool.get(spec)
            except DetectorLoadError:
                detector = None  # the item says so itself
            concurrency, batch = lane_width(detector) if detector is not None else (1, 1)
            self.lanes[spec] = Lane(spec, detector, batch) if concurrency > 1 or batch > 1 else None
        return self.lanes[spec]

    # -- planning ----------------------------------------------------------------------------------
    def advance(self, item: Any) -> None:
        """`item` is about to run: start it (if it has not started) and what comes after, up to
        each detector's window."""
        index = self.position.get(id(item))
        if index is None or self.stopped or self.worker.halt.stopped() is not None:  # halt: nothing more starts
            return
        self.fill(index)

    def fill(self, index: int) -> None:
        if self.stopped:
            return
        after, complete = self.peek(index)
        after = after[:HORIZON]
        if isinstance(after, range):  # serially, in order: what is settled is not looked at again
            self._settled = max(self._settled, index + 1)
            after = range(max(after.start, self._settled), after.stop)
        end = index if not len(after) else after[-1] if isinstance(after, range) else max(after)
        room: dict[str, int] = {}  # what each single-query lane may still start in this fill
        for lane in self.lanes.values():
            if lane is not None and lane.batch == 1:
                room[lane.spec] = self._room(lane)
        waiting: dict[str, list[int]] = {}  # a batch lane's items not started yet, in order
        for position, candidate in enumerate(itertools.chain((index,), after)):
            lane = None if candidate in self.slots else self._lane(candidate)
            if lane is not None and lane.batch > 1:
                waiting.setdefault(lane.spec, []).append(candidate)
            elif lane is not None:
                if lane.spec not in room:  # met for the first time
                    room[lane.spec] = self._room(lane)
                if position == 0 or room[lane.spec] > 0:
                    self._start(candidate, lane)
                    room[lane.spec] -= 1
            if candidate == self._settled and (lane is None or candidate in self.slots):
                self._settled += 1
            if position and self._nothing_more(index, candidate, end, room, waiting):
                complete = False  # more items come after: no partial batch now
                break
        for spec, indices in waiting.items():
            lane = self.lanes[spec]
            assert lane is not None
            while indices:
                group = indices[: lane.batch]
                urgent = group[0] == index
                if not urgent and (lane.outstanding + len(group) > lane.window()):
                    break
                if not urgent and len(group) < lane.batch and not complete:
                    break  # more items may come: a fuller batch later
                self._start_group(group, lane)
                indices = indices[lane.batch :]

    def _slot(self, index: int, lane: Lane) -> Slot:
        params = self.items[index].callspec.params
        slot = Slot(index, params["grounding_sample"], lane.detector, lane.spec)
        self.slots[index] = slot
        self._open.add(index)
        lane.outstanding += 1
        with lane.counting:
            lane.running += 1
        return slot

    def _start(self, index: int, lane: Lane) -> None:
        meter = budget.current()
        if meter is not None and not meter.admit():
            return  # the run's budget is spent: the item is refused too (budget_hooks.py)
        slot = self._slot(index, lane)
        self._thread(slot, lane.detector, None)

    def _start_group(self, indices: Sequence[int], lane: Lane) -> None:
        meter = budget.current()
        if meter is not None and not meter.admit(len(indices)):
            return  # a batch is admitted whole or not at all
        group = BatchGroup(lane.detector, indices, lane.lock)
        lane.batches.append(len(indices))
        for index in indices:
            slot = self._slot(index, lane)
            self._thread(slot, group.member(index), group)

    def _thread(self, slot: Slot, detector: Any, group: BatchGroup | None) -> None:
        lane = self.lanes[slot.spec]
        assert lane is not None

        def work() -> None:
            try:
                slot.evaluation = self.evaluator.run(slot.sample, detector, slot.spec)
            except BaseException as exc:  # evaluate records everything; this is a last guard, never a lost record
                message = f"detector {slot.spec} failed in the prefetch pipeline: {type(exc).__name__}: {exc}"
                slot.evaluation = Evaluation(self.evaluator.error(slot.sample, slot.spec, message))
            finally:
                if group is not None:
                    group.leave(slot.index)
                with lane.counting:
                    lane.running -= 1
                slot.done.set()
                self.finishing.set()

        self.workers.submit(work)

    @staticmethod
    def _room(lane: Lane) -> int:
        """What a single-query lane may start now: read once per fill (an adaptive limit moves)."""
        window = lane.window()
        with lane.counting:
            running = lane.running
        return min(window - running, AHEAD * window - lane.outstanding)

    def _nothing_more(
        self, index: int, at: int, end: int, room: Mapping[str, int], waiting: Mapping[str, list[int]]
    ) -> bool:
        """Whether the rest of this fill could start nothing: every lane is full (a batch lane has
        gathered what may start and one batch more) or has no item after `at`, and no detector not
        met yet has a first item between `at` and the last candidate."""
        for spec, lane in self.lanes.items():
            if lane is None or self._span.get(spec, (-1, -1))[1] <= at:
                continue
            if lane.batch == 1:
                if room.get(spec, 1) > 0:
                    return False
                continue
            gathered = waiting.get(spec, [])
            urgent = bool(gathered) and gathered[0] == index
            if not urgent and lane.outstanding + lane.batch > lane.window():
                continue
            if len(gathered) < max(0, lane.window() - lane.outstanding) + lane.batch:
                return False
        return not any(at < first <= end for spec, (first, _) in self._span.items() if spec not in self.lanes)

    # -- the item's side ---------------------------------------------------------------------------
    def take(self, item: Any, sample: Any, detector: Any, name: str) -> Evaluation | None:
        """The item's finished evaluation (waiting for it, filling the windows meanwhile), or None
        when this call is not the one that was prefetched (another sample, detector or name)."""
        slot = self.slots.get(self.position.get(id(item), -1))
        if slot is None or slot.taken or slot.sample is not sample or slot.spec != name:
            return None
        lane = self.lanes.get(slot.spec)
        if lane is None or detector is not lane.detector:
            return None
        while not slot.done.is_set():
            # another evaluation ended (a place in flight is free), new items came to an xdist
            # worker's queue, or an adaptive limit grew: start what may start
            self.finishing.wait(0.05)
            self.finishing.clear()
            self.fill(slot.index)
        slot.taken = True
        self._open.discard(slot.index)
        lane.outstanding -= 1
        self.fill(slot.index)
        return slot.evaluation

    def started(self, item: Any) -> bool:
        """The item's prediction was started ahead (it runs, whatever the budget says now)."""
        return self.position.get(id(item), -1) in self.slots

    def drop(self, item: Any) -> None:
        """The item's protocol is over: a slot it never took (a skip, a setup error) frees its place."""
        index = self.position.get(id(item))
        slot = self.slots.get(index) if index is not None else None
        if slot is not None and not slot.taken:
            slot.taken = True
            self._open.discard(slot.index)
            lane = self.lanes.get(slot.spec)
            if lane is not None:
                lane.outstanding -= 1

    def in_flight(self) -> int:
        return sum(1 for index in self._open if not self.slots[index].done.is_set())

    def stop(self) -> list[Record]:
        """No more starts. The records of evaluations that finished for items that did not run."""
        self.stopped = True
        self.workers.close()
        return [
            slot.evaluation.record
            for slot in self.slots.values()
            if not slot.taken
            and slot.done.is_set()
            and slot.evaluation is not None
            and slot.evaluation.record.get("outcome") != Outcome.ERROR
        ]


def detector_spec(item: Any) -> str | None:
    """The detector spec a grounding item runs; None for any other item."""
    if "grounding_check" not in getattr(item, "fixturenames", ()):
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    spec = params.get("grounding_detector_name")
    if "grounding_sample" not in params or not isinstance(spec, str):
        return None
    return spec


# -- where the next items come from -------------------------------------------------------------------


def serial_peek(count: int) -> Peek:
    def peek(index: int) -> tuple[Sequence[int], bool]:
        return range(index + 1, min(count, index + 1 + HORIZON)), True

    return peek
