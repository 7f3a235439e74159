"""plugin/common/wire.py: what crosses between the controller and its xdist workers, built-in types only."""

import json

from pytest_grounding.plugin.common.wire import RECORD, WorkerInput, WorkerOutput, record_of


def test_worker_input_and_output_round_trip_through_json():
    told = WorkerInput(
        done=(("grounding", "center", "d", "u1"),), baseline=[["f", "1", "center", "hit"]], loadgroup=True
    )
    sent: dict = {}
    told.send(sent)
    assert WorkerInput.received(json.loads(json.dumps(sent))) == told
    output = WorkerOutput(detectors={"center": {"device": "cpu"}}, shard={"d": {"planned": 3}}, load_failure="boom")
    back: dict = {}
    output.send(back)
    assert WorkerOutput.received(json.loads(json.dumps(back))) == output
    assert WorkerInput.received({}) == WorkerInput() and WorkerOutput.received({}) == WorkerOutput()


def test_a_report_carries_its_record_under_one_name():
    report = type("Report", (), {"user_properties": [("other", 1), (RECORD, {"uid": "u"})]})()
    assert record_of(report) == {"uid": "u"}
    assert record_of(type("Collect", (), {})()) is None
