"""plugin/items.py: samples and detectors as parametrized items: readable ids, the epochs of a
detector that samples, a deterministic detector's later epochs deselected, a suite's pinned set."""

from helpers import FIXTURES, make_project

MINI = str(FIXTURES / "mini")


def collected(pytester, *args):
    result = pytester.runpytest(f"--dataset={MINI}", "--co", "-q", *args)
    return [line for line in result.stdout.lines if "::" in line]


def test_each_sample_and_detector_is_an_item_with_a_readable_id(pytester):
    make_project(pytester)
    ids = collected(pytester, "--detector", "center", "--detector", "random:seed=3")
    assert len(ids) == len(set(ids)) == 16
    assert "test_suite.py::test_grounding[center-mini-m01-blender-icon]" in ids
    assert "test_suite.py::test_grounding[random-seed-3-mini-m01-blender-icon]" in ids


SAMPLING = """
from pytest_grounding.core.types import Prediction


class Sampling:
    name = "sampling"  # no `deterministic = True`: every epoch may answer differently

    def predict(self, query):
        return Prediction(point=(1.0, 1.0))


def pytest_grounding_register_detectors(registry):
    registry.register("sampling", Sampling)
"""


def test_epochs_repeat_a_sampling_detector_s_items_and_not_a_deterministic_one_s(pytester):
    make_project(pytester, conftest=SAMPLING)
    alone = collected(pytester, "--detector", "center", "--grounding-epochs", "3")
    assert len(alone) == 8 and not any("-e1]" in item for item in alone)  # deterministic: one epoch
    both = collected(pytester, "--detector", "center", "--detector", "sampling", "--grounding-epochs", "3")
    sampled = [item for item in both if "[sampling-" in item]
    assert len(sampled) == 24 and {item[-3:] for item in sampled} == {"e1]", "e2]", "e3]"}
    assert len([item for item in both if "[center-" in item]) == 8  # its later epochs deselected


def test_a_suite_pins_its_own_dataset_relative_to_its_file(pytester):
    make_project(pytester)
    pytester.makepyfile(
        test_pinned=f"""
import pytest

@pytest.mark.grounding(dataset={str(FIXTURES / "screenspot")!r}, detector="center")
def test_pinned(grounding_sample, grounding_detector, grounding_check):
    grounding_check(grounding_sample, grounding_detector)
"""
    )
    ids = collected(pytester, "test_pinned.py")
    assert ids and all(item.startswith("test_pinned.py::test_pinned[center-") for item in ids)
