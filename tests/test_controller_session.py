"""plugin/controller/controller_session.py: one record per item, and finish() makes the run's one RunResult,
once."""

from helpers import FIXTURES
from pytest_grounding.core.record import Outcome
from pytest_grounding.detectors.floors import CenterDetector
from pytest_grounding.plugin.sessions import controller_of, plan_of, worker_of

MINI = str(FIXTURES / "mini")


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
