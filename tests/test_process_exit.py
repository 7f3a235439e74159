"""The end of a grounding process (plugin/compat/process_exit.py): what the run leaves is frozen out of
the last garbage collections once it is over; never in a process that goes on, never before what
is garbage then is collected (a `__del__` that raises is still reported)."""

import gc
import sys

import pytest

from helpers import FIXTURES, XDIST, make_project

MINI = str(FIXTURES / "mini")
AT_EXIT = """
import atexit, gc
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count()))
"""


def frozen_at_exit(result):
    lines = [line for line in result.outlines if line.startswith("frozen at exit:")]
    assert len(lines) == 1, result.stdout.str()[-2000:]
    return int(lines[0].split(":")[1])


@pytest.mark.slow
@XDIST
def test_a_grounding_process_ends_frozen_one_that_scored_nothing_does_not(pytester, workers):
    make_project(pytester, conftest=AT_EXIT)
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    grounding = pytester.runpytest_subprocess(f"--dataset={MINI}", "--detector", "center", "test_suite.py", *workers)
    assert frozen_at_exit(grounding) > 1000
    other = pytester.runpytest_subprocess("test_other.py", *workers)
    other.assert_outcomes(passed=1)
    assert frozen_at_exit(other) == 0


@pytest.mark.slow
def test_a_collect_only_run_of_grounding_items_ends_frozen_too(pytester):
    """--co makes every item (the heap pytest's last collections walk) and scores nothing."""
    make_project(pytester, conftest=AT_EXIT)
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    listed = pytester.runpytest_subprocess(f"--dataset={MINI}", "--detector", "center", "test_suite.py", "--co", "-q")
    assert listed.ret == 0 and frozen_at_exit(listed) > 1000
    other = pytester.runpytest_subprocess("test_other.py", "--co", "-q")
    assert other.ret == 0 and frozen_at_exit(other) == 0


def test_the_collector_is_paused_while_items_are_made_and_the_session_finishes(pytester):
    """Making 20,000 items and the summary at the end allocate while every sample and item is alive:
    the cyclic collector is paused then (not walking that heap again and again), and on again after."""
    make_project(
        pytester,
        conftest="""
import gc
import pytest

SEEN = {}

@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    SEEN["generate"] = gc.isenabled()

def pytest_terminal_summary(terminalreporter):
    SEEN["summary"] = gc.isenabled()

def pytest_collection_finish(session):
    SEEN["between"] = gc.isenabled()

def pytest_unconfigure(config):
    print("gc enabled:", SEEN, gc.isenabled())
""",
    )
    result = pytester.runpytest_inprocess(f"--dataset={MINI}", "--detector", "center", "--co", "-q", "-s")
    line = next(line for line in result.outlines if line.startswith("gc enabled:"))
    assert line == "gc enabled: {'generate': False, 'between': True, 'summary': False} True", line
    assert gc.isenabled()


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_garbage_at_the_end_is_still_collected_and_a_raising_del_reported(pytester):
    make_project(
        pytester,
        conftest=AT_EXIT
        + """
class Boom:
    def __del__(self):
        raise RuntimeError("boom in __del__ at the end")


KEPT = []


def pytest_configure(config):
    boom = Boom()
    boom.cycle = boom  # only the cycle collector frees it
    KEPT.append(boom)


def pytest_unconfigure(config):
    KEPT.clear()  # garbage from here on, before the grounding plugin's last hook
""",
    )
    result = pytester.runpytest_subprocess(f"--dataset={MINI}", "--detector", "center")
    assert "boom in __del__ at the end" in result.stdout.str() + result.stderr.str()
    assert frozen_at_exit(result) > 1000


def test_a_run_inside_a_test_leaves_this_process_unfrozen(pytester):
    make_project(pytester)
    result = pytester.runpytest_inprocess(f"--dataset={MINI}", "--detector", "center")
    assert result.ret in (0, 1), result.stdout.str()[-2000:]
    assert gc.get_freeze_count() == 0


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_a_second_session_in_one_process_unfreezes_the_first(pytester):
    make_project(
        pytester,
        conftest="import gc\n\ndef pytest_sessionstart(session):\n"
        "    print('frozen at start:', gc.get_freeze_count())\n",
    )
    script = pytester.makepyfile(
        run_twice=f"""
import gc, pytest
for _ in range(2):
    pytest.main(["--dataset={MINI}", "--detector", "center", "-q", "-s", "test_suite.py"])
    print("frozen after:", gc.get_freeze_count())
"""
    )
    result = pytester.run(sys.executable, str(script))
    starts = [int(line.split(":")[1]) for line in result.outlines if line.startswith("frozen at start:")]
    afters = [int(line.split(":")[1]) for line in result.outlines if line.startswith("frozen after:")]
    assert starts == [0, 0] and len(afters) == 2 and min(afters) > 1000, result.stdout.str()[-2000:]
