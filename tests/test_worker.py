"""plugin/worker/hooks.py: an xdist worker loads its detectors before the first item; one that cannot be
built stops the run with one message, not an error per item."""

import pytest

from helpers import FIXTURES, make_project

MINI = str(FIXTURES / "mini")
BROKEN = """
class Broken:
    name = "broken"

    def __init__(self):
        raise RuntimeError("no weights here")


def pytest_grounding_register_detectors(registry):
    registry.register("broken", Broken)
"""


@pytest.mark.slow
def test_a_detector_a_worker_cannot_build_is_one_message(pytester):
    make_project(pytester, conftest=BROKEN)
    result = pytester.runpytest(f"--dataset={MINI}", "--detector=broken", "-n", "2")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert output.count("could not be loaded: RuntimeError: no weights here") == 1
    assert "ERROR at setup" not in output
