"""plugin/worker/worker_session.py: a predicting process's detectors said once at the top, the baseline's
outcomes taken in, the evaluator built from the run's settings."""

import pytest

from helpers import FIXTURES
from pytest_grounding.plugin.common.pool import DetectorLoadError
from pytest_grounding.plugin.sessions import plan_of, worker_of

MINI = str(FIXTURES / "mini")


def test_each_detector_is_loaded_once_and_said_in_one_line(pytester):
    config = pytester.parseconfigure(f"--dataset={MINI}", "--grounding-task=locate", "--grounding-timeout=3")
    worker = worker_of(config)
    (line,) = worker.detector_lines(["center"])
    assert line.startswith("grounding: detector center: ")
    assert worker.pool.get("center") is worker.pool.get("center")
    evaluator = worker.evaluator
    assert (evaluator.task, evaluator.timeout, evaluator.verdict_of) == ("locate", 3.0, None)
    assert evaluator.fingerprint_of == plan_of(config).catalog.fingerprint_of  # a bound method: equal, not the same
    worker.expect({("f", "s1", "center"): "hit"})
    assert worker.judged and worker.evaluator.verdict_of is not None
    with pytest.raises(DetectorLoadError):
        worker.detector_lines(["no-such-detector"])
