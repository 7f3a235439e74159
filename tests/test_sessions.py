"""plugin/worker_session.py, controller_session.py and evaluate/evaluator.py: the worker side's one
evaluator makes each record whole once (fingerprint, the baseline's verdict); the controller's
finish() makes the run's one RunResult, once."""

import pytest

from helpers import FIXTURES
from pytest_grounding.analysis.baseline import IMPROVED, NEW, REGRESSION, sample_key
from pytest_grounding.core.record import Outcome
from pytest_grounding.detectors.floors import CenterDetector
from pytest_grounding.plugin.sessions import controller_of, plan_of, worker_of

MINI = str(FIXTURES / "mini")


@pytest.fixture
def sessions(pytester):
    config = pytester.parseconfigure(f"--dataset={MINI}", "--detector=center")
    plan_of(config).check_run_settings(lambda line: None)
    return config


def test_the_evaluator_makes_a_record_whole_with_its_fingerprint(sessions):
    worker = worker_of(sessions)
    sample = worker.plan.samples_in_order()[0]
    found = worker.evaluator.run(sample, CenterDetector(), "center")
    record = found.record
    assert record["fingerprint"] == worker.plan.catalog.fingerprint_of(sample.dataset)
    assert record["outcome"] in (Outcome.HIT, Outcome.MISS) and "baseline" not in record
    error = worker.evaluator.error(sample, "center", "boom")
    assert (error["outcome"], error["error"], error["fingerprint"]) == ("error", "boom", record["fingerprint"])


def test_with_a_baseline_each_record_carries_its_verdict(sessions):
    worker = worker_of(sessions)
    samples = worker.plan.samples_in_order()[:3]
    records = [worker.evaluator.run(s, CenterDetector(), "center").record for s in samples]
    flipped = {Outcome.HIT: Outcome.MISS, Outcome.MISS: Outcome.HIT}
    worker.expect({sample_key(records[0]): flipped.get(records[0]["outcome"], Outcome.MISS)})
    again = worker.evaluator.run(samples[0], CenterDetector(), "center").record
    expected = REGRESSION if records[0]["outcome"] == Outcome.MISS else IMPROVED
    assert again["baseline"] == expected
    assert worker.evaluator.run(samples[1], CenterDetector(), "center").record["baseline"] == NEW


def test_finish_makes_one_result_and_names_the_items_not_run(sessions):
    plan, controller, worker = plan_of(sessions), controller_of(sessions), worker_of(sessions)
    samples = plan.samples_in_order()
    ids = [f"t.py::test_sample[center-{s.uid}]" for s in samples]
    plan.index.add(["center"], samples)
    controller.ledger.expect(ids)
    for nodeid, sample in zip(ids[:-1], samples[:-1], strict=True):
        controller.ledger.saw(nodeid)
        assert controller.add_record(worker.evaluator.run(sample, CenterDetector(), "center").record, nodeid)
    assert not controller.add_record(controller.records[0], ids[0])  # an item keeps its first record
    result = controller.finish(interrupted=False)
    assert controller.finish(interrupted=True) is result
    assert result.partial and len(result.records) == len(samples) - 1
    assert [entry.uid for entry in controller.not_run] == [samples[-1].uid]
    assert any(note.startswith("not run: 1 of") for note in result.notes)
    block = result.summary["center"]
    assert block["samples"] == len(samples) - 1
    assert block["hits"] == sum(r["outcome"] == Outcome.HIT for r in result.records)
    assert result.verdicts == ()  # an interrupted run is not judged
