"""plugin/compat/xdist_compat.py leans on pytest-xdist's private internals: each test here names one and
fails when the installed xdist no longer has it (the versions tested are bounded in pyproject.toml)."""

import inspect

import pytest

xdist = pytest.importorskip("xdist")
from xdist import remote, scheduler  # noqa: E402

from pytest_grounding.plugin.compat import xdist_compat  # noqa: E402
from pytest_grounding.plugin.controller import scheduling  # noqa: E402


class Config:
    """What xdist's schedulers read from pytest's config."""

    option = type("option", (), {"maxschedchunk": None})()

    def getvalue(self, name):
        return {"tx": ["2*popen"], "dist": "load"}[name]

    def getoption(self, name, default=None):
        return {"maxschedchunk": None, "tx": ["2*popen"], "numprocesses": 2}.get(name, default)


class Node:
    shutting_down = False
    gateway = type("gateway", (), {"id": "gw0"})()

    def send_runtest_some(self, indices):
        self.sent = getattr(self, "sent", []) + list(indices)

    def shutdown(self):
        self.shutting_down = True


def test_load_scheduling_keeps_the_queues_the_prefetch_scheduler_tops_up():
    made = scheduler.LoadScheduling(Config())
    for name in ("pending", "node2pending", "collection", "node2collection"):
        assert hasattr(made, name), name
    for name in ("_send_tests", "check_schedule", "schedule", "add_node", "add_node_collection"):
        assert callable(getattr(made, name)), name
    assert "num" in inspect.signature(scheduler.LoadScheduling._send_tests).parameters
    assert isinstance(type(made).nodes, property)


def test_the_prefetch_scheduler_is_built_on_this_xdist_and_hands_out_chunks_to_a_screen_s_end():
    screens = ["a", "a", "a", "b", "b", "c"]
    made = xdist_compat.make_prefetch_scheduler(
        Config(),
        None,
        2,
        lambda ids: [screens[int(i)] for i in ids],
        scheduling.to_screen_end,
        scheduling.refill,
    )
    nodes = [Node(), Node()]
    for node in nodes:
        made.add_node(node)
    ids = [str(i) for i in range(len(screens))]
    for node in nodes:
        made.add_node_collection(node, ids)
    made.schedule()
    sent = [node.sent for node in nodes]
    assert sorted(i for chunk in sent for i in chunk) == list(range(len(screens)))
    for chunk in sent:  # a chunk never ends inside a screen's run of items
        assert chunk[-1] == len(screens) - 1 or screens[chunk[-1]] != screens[chunk[-1] + 1]


def test_scope_schedulers_keep_the_work_units_the_crash_once_scheduler_edits():
    for base in (scheduler.LoadScopeScheduling, scheduler.LoadFileScheduling, scheduler.LoadGroupScheduling):
        made = base(Config())
        for name in ("assigned_work", "workqueue", "registered_collections", "collection"):
            assert hasattr(made, name), (base, name)
        for name in ("_reschedule", "remove_node", "add_node_collection"):
            assert callable(getattr(made, name)), (base, name)
    for dist in xdist_compat.SCOPE_MODES:
        assert xdist_compat.make_crash_scheduler(Config(), None, dist) is not None


def test_each_scheduling_keeps_what_the_replacement_fix_reads():
    made = scheduler.EachScheduling(Config())
    for name in ("node2collection", "node2pending", "_started", "collection_is_completed"):
        assert hasattr(made, name), name
    assert xdist_compat.make_crash_scheduler(Config(), None, "each") is not None


def test_a_worker_s_queue_is_where_the_pipeline_peeks():
    init = inspect.getsource(remote.WorkerInteractor.__init__)
    assert "self.torun" in init and "self.nextitem_index" in init
    assert callable(getattr(remote, "TestQueue", None)) and hasattr(remote.TestQueue, "lock")

    class Queue:
        def __init__(self, items):
            self.items = items

        def lock(self):
            import contextlib

            return contextlib.nullcontext(self.items)

    interactor = type("Interactor", (), {"torun": Queue([3, 4, "shutdown"]), "nextitem_index": 2})()
    known, all_known = xdist_compat.worker_peek(interactor)(1)
    assert known == [2, 3, 4] and all_known
