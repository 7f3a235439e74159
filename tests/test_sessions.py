"""plugin/sessions.py: where each process keeps its part of the run: the plan everywhere, the worker
session where samples are predicted, the controller session where results gather."""

import pytest

from helpers import FIXTURES
from pytest_grounding.plugin.sessions import controller_of, local_controller, local_worker, plan_of, worker_of

MINI = str(FIXTURES / "mini")


def test_the_only_process_predicts_and_gathers(pytester):
    config = pytester.parseconfigure(f"--dataset={MINI}")
    assert worker_of(config).plan is plan_of(config) is controller_of(config).plan


def test_a_worker_session_exists_only_where_samples_are_predicted(pytester):
    config = pytester.parseconfigure(f"--dataset={MINI}", "-n", "2")
    assert local_worker(config) is None
    assert controller_of(config).plan is plan_of(config)


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_an_xdist_worker_predicts_and_gathers_nothing(pytester):
    config = pytester.parseconfig(f"--dataset={MINI}")
    config.workerinput = {"workerid": "gw0", "workercount": 2}  # what xdist gives a worker before configure
    config._do_configure()
    try:
        assert local_controller(config) is None and local_worker(config).plan is plan_of(config)
    finally:
        config._ensure_unconfigure()
