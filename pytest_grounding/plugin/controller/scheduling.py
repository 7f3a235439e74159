"""The xdist controller's part of the prefetching (`pipeline`): `--dist load` hands a worker a
quarter of its share at first, then refills it two at a time, and not at all while the worker
has two pending and its last item took 0.1 s or more, so a worker would know too few items to keep
N requests in flight. For a run whose detectors take several predictions at once, this scheduler is
xdist's LoadScheduling with two changes: a worker's queue is kept more than a window deep while
items are left (but not past its even share of them, so the workers end together), and a chunk
of consecutive items is sent to its screen's end, so a screen's samples stay on one worker (one
decoding and encoding per screen). A crashed worker's items go back to the others as with
LoadScheduling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ...detectors import option_kinds
from ..common.plan import RunPlan
from ..common.specs import SpecBook
from ..compat.xdist_compat import make_prefetch_scheduler


def declared_window(spec: str, specs: SpecBook) -> int:
    """How many predictions ahead one worker may want for a detector spec, from its options (or
    the detector's defaults), without loading it: concurrency (auto: its maximum) or 2 batches."""
    try:
        parsed = specs.get(spec)
        if parsed.chain.strategies:
            return 1  # strategies run their own calls, one sample at a time
        options = parsed.options
        kinds, _ = option_kinds(parsed.factory(specs.detectors))
    except Exception:  # the spec is checked (and reported) elsewhere
        return 1
    defaults = {key: default for key, (_kind, default) in kinds.items()}
    batch = options.get("batch", defaults.get("batch"))
    if batch not in (None, "") and str(batch).isdigit() and int(batch) > 1:
        return 2 * int(batch)
    if "concurrency" not in kinds:
        return 1
    value = str(options.get("concurrency", defaults.get("concurrency")))
    if value.strip().lower() == "auto":
        from ...detectors.http import AUTO_MAX

        top = options.get("max_concurrency", defaults.get("max_concurrency"))
        return int(top) if top not in (None, "") and str(top).isdigit() else AUTO_MAX
    return int(value) if value.isdigit() else 1


SCREEN_SPILL = 8  # items a chunk may grow by to end with its screen (more: one worker takes the tail)


def to_screen_end(pending: Sequence[int], count: int, screens: Sequence[Any]) -> int:
    """`count` (items to send from the front of `pending`), grown so the chunk does not end inside a
    screen's run of items: each worker then decodes and encodes a screen once, not both workers
    (9 of 64 screens twice on the default set with plain chunks). Never more than SCREEN_SPILL more."""
    end = min(count, len(pending))
    while (
        0 < end < len(pending)
        and end - count < SCREEN_SPILL
        and screens[pending[end]] is not None
        and screens[pending[end]] == screens[pending[end - 1]]
    ):
        end += 1
    return end


def refill(have: int, window: int, pending: int, queues: Sequence[int]) -> int:
    """How many items to send a worker that has `have` queued, `pending` being unsent and `queues`
    every live worker's queue length (its own included): none while it has a window in flight plus
    the item running; else up to two windows (a chunk of consecutive items, not one at a time), but
    never past its even share of what is left, so the workers end together instead of one taking a
    window's worth of tail (0.5 s at 32 in flight and 0.5 s a request)."""
    if pending <= 0 or have >= window + 2:
        return 0
    share = -(-(pending + sum(queues)) // max(1, len(queues)))
    return min(pending, max(0, min(2 * window, share) - have))


class SchedulerHooks:
    def __init__(self, config: Any, plan: RunPlan) -> None:
        self.config = config
        self.plan = plan

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config, log):
        if config.getvalue("dist") != "load":
            return None
        plan = self.plan
        window = max((declared_window(spec, plan.specs) for spec in plan.settings.selection.detector_specs), default=1)
        if window <= 1:
            return None

        def screen_of(nodeids: Sequence[str]) -> list[Any]:
            found = {nodeid: str(entry.sample.image) for nodeid, entry in plan.index.identify(nodeids)}
            return [found.get(nodeid) for nodeid in nodeids]

        return make_prefetch_scheduler(config, log, window, screen_of, to_screen_end, refill)
