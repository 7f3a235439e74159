"""plugin/worker/baseline_hooks.py: a sample's figures as JUnit XML properties (flat, built-in types)."""

from pytest_grounding.plugin.worker.baseline_hooks import junit_properties


def test_junit_properties_are_flat_and_leave_out_what_is_missing():
    record = {"outcome": "miss", "detector": "ocr", "dataset": "d", "id": "s1", "point": [3.0, 4.5], "iou": None}
    found = dict(junit_properties(record))
    assert found == {
        "grounding_outcome": "miss",
        "grounding_detector": "ocr",
        "grounding_dataset": "d",
        "grounding_sample_id": "s1",
        "grounding_point": "3,4.5",
    }
