"""plugin/common/wire.py: what a call report says of the predictions in flight in its process."""

from pytest_grounding.plugin.common.wire import IN_FLIGHT, in_flight_of


def test_a_report_of_a_prefetching_process_names_its_process_and_count():
    gateway = type("Gateway", (), {"id": "gw1"})()
    report = type("Report", (), {"user_properties": [(IN_FLIGHT, 7)], "node": type("N", (), {"gateway": gateway})()})()
    assert in_flight_of(report) == ("gw1", 7)
    serial = type("Report", (), {"user_properties": [(IN_FLIGHT, 2)]})()
    assert in_flight_of(serial) == ("main", 2)
    assert in_flight_of(type("Report", (), {"user_properties": []})()) is None
