"""evaluate/evaluator.py (through plugin/worker/worker_session.py): the process's one evaluator makes a
record whole once: its fingerprint, then the baseline's verdict."""

from helpers import FIXTURES
from pytest_grounding.analysis.baseline import IMPROVED, NEW, REGRESSION, sample_key
from pytest_grounding.core.record import Outcome
from pytest_grounding.detectors.floors import CenterDetector
from pytest_grounding.plugin.sessions import worker_of

MINI = str(FIXTURES / "mini")


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
