"""plugin/common/pool.py: each detector built once per process; one that cannot be built is one message,
said again (never rebuilt) for every item that asks."""

import pytest

from pytest_grounding.detectors import builtin_registry
from pytest_grounding.detectors.strategies import builtin_registry as strategies
from pytest_grounding.plugin.common.pool import DetectorLoadError, DetectorPool
from pytest_grounding.plugin.common.specs import SpecBook

BUILT: list[str] = []


class Counted:
    name = "counted"
    answer_cache = None

    def __init__(self, label: str = "x"):
        BUILT.append(label)

    def use_answer_store(self, store):  # detectors/answer_cache.KeepsAnswers
        self.answer_cache = store

    def predict(self, query):  # never asked here
        raise AssertionError


def pool_of(store=None):
    detectors = builtin_registry()
    detectors.register("counted", Counted)
    detectors.register("broken", "no_such_module:Thing")
    return DetectorPool(SpecBook(detectors, strategies()), store)


def test_a_detector_is_built_once_and_described():
    BUILT.clear()
    pool = pool_of(store="the store")
    first = pool.get("counted:label=a")
    assert pool.get("counted:label=a") is first and BUILT == ["a"]
    assert first.answer_cache == "the store"  # --grounding-cache handed to a detector that keeps answers
    assert pool.loaded and "load_s" in pool.info["counted:label=a"]
    pool.close()
    assert not pool.loaded


def test_one_that_cannot_be_built_fails_the_same_way_every_time():
    pool = pool_of()
    with pytest.raises(DetectorLoadError, match="'broken' could not be loaded") as first:
        pool.get("broken")
    with pytest.raises(DetectorLoadError) as again:
        pool.get("broken")
    assert str(first.value) == str(again.value)
