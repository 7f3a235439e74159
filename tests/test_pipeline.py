"""plugin/worker/pipeline.py: the prefetch planning, its cost bounded by the windows, not the run's
length."""

import pytest


@pytest.mark.parametrize("layout", ["one served", "two served, one after the other", "served and batching, mixed"])
def test_planning_costs_the_windows_not_the_run_s_length(layout):
    """A fill looks at the items it may start, not at every item of the horizon: planning 1,200
    items asks for fewer than 12 lane lookups per item (before, a fill looked at up to 4,096 items
    several times per item: quadratic in the run's length), and every item is still started
    once, in order within its detector, never more than its windows allow."""
    import types

    from pytest_grounding.plugin.worker.pipeline import Pipeline, serial_peek

    class Served:
        concurrency = 4

    class Batching:
        batch_size = 3

        def predict_batch(self, queries):  # never called: planning only
            raise AssertionError

    detectors = {"a": Served(), "b": Served() if layout.startswith("two") else Batching()}
    count = 1200
    if layout == "one served":
        specs = ["a"] * count
    elif layout.startswith("two"):
        specs = ["a"] * (count // 2) + ["b"] * (count // 2)
    else:
        specs = ["a" if i % 3 else "b" for i in range(count)]
    items = [
        types.SimpleNamespace(
            fixturenames=["grounding_check"],
            callspec=types.SimpleNamespace(params={"grounding_detector_name": spec, "grounding_sample": i}),
        )
        for i, spec in enumerate(specs)
    ]
    from pytest_grounding.plugin.common.halt import Halt

    worker = types.SimpleNamespace(pool=types.SimpleNamespace(get=detectors.__getitem__), evaluator=None, halt=Halt())
    pipeline = Pipeline(worker, items, serial_peek(count))
    started: list[int] = []
    most_ahead = 0

    def finish_at_once(slot, detector, group):  # stands in for the evaluation thread
        started.append(slot.index)
        lane = pipeline.lanes[slot.spec]
        with lane.counting:
            lane.running -= 1
        slot.done.set()

    pipeline._thread = finish_at_once
    lookups = 0
    find = pipeline._lane

    def counted(index):
        nonlocal lookups
        lookups += 1
        return find(index)

    pipeline._lane = counted
    for index, item in enumerate(items):
        pipeline.advance(item)
        most_ahead = max(most_ahead, max(started) - index)
        slot = pipeline.slots[index]
        assert pipeline.take(item, slot.sample, slot.detector, slot.spec) is None  # evaluation stubbed out
    assert lookups < 12 * count, lookups
    assert sorted(started) == list(range(count))
    for spec in detectors:
        mine = [i for i in started if specs[i] == spec]
        assert mine == sorted(mine)
    if layout == "one served":
        assert most_ahead <= 2 * Served.concurrency  # two windows ahead, as before
    assert pipeline.in_flight() == 0
