"""Every use of pytest-xdist's private internals, in one place (the versions tested are bounded in
pyproject.toml; tests/test_xdist_compat.py fails when xdist changes under them):

- the prefetch scheduler (scheduling.py's rules): xdist's LoadScheduling with its queues
  (`pending`, `node2pending`, `collection`) topped up through `_send_tests` and `check_schedule`;
- the crash-once scope schedulers and the `--dist each` replacement fix: their work units
  (`assigned_work`, `workqueue`, `registered_collections`, `_reschedule`) and EachScheduling's
  (`node2collection`, `node2pending`, `_started`, `collection_is_completed`);
- a worker's queue (WorkerInteractor's `torun` and `nextitem_index`), read by the prefetch pipeline.

The crash-once schedulers, for `--dist loadgroup`, `loadscope` and `loadfile`: xdist's own scope
schedulers without two faults that a sample which kills its worker (a native crash in a model)
runs into; and for `--dist each`, the replacement fix below.

- xdist puts a crashed worker's whole work unit back in the queue, the item it died in included, so
  that sample kills every replacement until `--max-worker-restart` is spent and the rest of its
  screen never runs. Here the item a worker died in counts as done (its crash is its record, as
  under `--dist load`); the rest of its unit goes back to the queue.
- A unit handed out while a replacement worker is still collecting is looked up in that worker's
  collection, which it has not sent yet (KeyError, an INTERNALERROR that ends the run with no report).
  Here a worker is given work once its collection is in; xdist schedules it then. A replacement that
  sees the same items from another rootdir (`tests0/test_suite.py::...`) is given the same work."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def item_key(nodeid: str) -> str:
    """An item's identity across processes: its test id without xdist's loadgroup suffix and with
    the file named from its own folder (a replacement worker may see the same file from another
    rootdir: `tests0/test_suite.py::...` for `test_suite.py::...`)."""
    if "@" in nodeid.rpartition("]")[2]:  # "...[params]@group"
        nodeid = nodeid[: nodeid.rindex("@")]
    path, sep, rest = nodeid.partition("::")
    return path.rpartition("/")[2] + sep + rest


SCOPE_MODES = ("loadscope", "loadfile", "loadgroup")
MODES = (*SCOPE_MODES, "each")


def make_crash_scheduler(config: Any, log: Any, dist: str) -> Any:
    from xdist.scheduler import EachScheduling, LoadFileScheduling, LoadGroupScheduling, LoadScopeScheduling

    if dist == "each":

        class SameItemsEachScheduling(EachScheduling):
            def add_node_collection(self, node: Any, collection: Any) -> None:
                replacing = self.collection_is_completed
                official = next(iter(self.node2collection.values()), None) if replacing else None
                if official is not None and [item_key(i) for i in collection] == [item_key(i) for i in official]:
                    collection = official  # the same items, seen from another rootdir (a replacement worker)
                super().add_node_collection(node, collection)
                if replacing:
                    # xdist keeps no collection for a replacement (KeyError when it schedules it or
                    # when it dies in turn), and gives one whose dead worker had nothing left (it died
                    # in its last item) the whole run again: it runs nothing and stops instead.
                    self.node2collection[node] = list(collection)
                    if not self.node2pending.get(node):
                        self._started.append(node)
                        node.shutdown()

            def schedule(self) -> None:
                # A replacement still collecting has no collection yet (xdist's KeyError): it is left
                # out of this round, as if started, and scheduled when its collection is in.
                collecting = [n for n in self.node2pending if n not in self.node2collection and n not in self._started]
                self._started.extend(collecting)
                try:
                    super().schedule()
                finally:
                    for node in collecting:
                        self._started.remove(node)

        return SameItemsEachScheduling(config, log)

    base = {"loadscope": LoadScopeScheduling, "loadfile": LoadFileScheduling, "loadgroup": LoadGroupScheduling}[dist]

    class CrashOnceScheduling(base):  # type: ignore[valid-type,misc]
        def remove_node(self, node: Any) -> str | None:
            workload = self.assigned_work.pop(node)
            crashitem = next(
                (nodeid for unit in workload.values() for nodeid, completed in unit.items() if not completed), None
            )
            if crashitem is None:
                return None  # a worker that finished its work
            for unit in workload.values():
                if crashitem in unit:
                    unit[crashitem] = True  # done: recorded as the crash, never run again
            self.workqueue.update((scope, unit) for scope, unit in workload.items() if False in unit.values())
            for other in self.assigned_work:
                self._reschedule(other)
            return crashitem

        def add_node_collection(self, node: Any, collection: Any) -> None:
            official = self.collection
            same = official is not None and [item_key(i) for i in collection] == [item_key(i) for i in official]
            if same:
                collection = official  # the same items, seen from another rootdir (a replacement worker)
            super().add_node_collection(node, collection)
            if official is not None and node not in self.registered_collections:
                node.shutdown()  # another collection: xdist gives it no work, so it must not wait for any

        def _reschedule(self, node: Any) -> None:
            if node not in self.registered_collections:
                return  # still collecting: xdist schedules it when its collection is in
            super()._reschedule(node)

    return CrashOnceScheduling(config, log)


def make_prefetch_scheduler(
    config: Any,
    log: Any,
    window: int,
    screen_of: Callable[[Sequence[str]], list[Any]],
    to_screen_end: Callable[[Sequence[int], int, Sequence[Any]], int],
    refill: Callable[[int, int, int, Sequence[int]], int],
) -> Any:
    """xdist's LoadScheduling, a worker's queue kept `window` deep by `refill`, a chunk grown to its
    screen's end by `to_screen_end` (scheduling.py's rules)."""
    from xdist.scheduler import LoadScheduling

    class PrefetchScheduling(LoadScheduling):
        screens: list[Any] | None = None

        def _send_tests(self, node: Any, num: int) -> None:
            if self.screens is None:
                self.screens = screen_of(self.collection or [])
            super()._send_tests(node, to_screen_end(self.pending, num, self.screens))

        def _top_up(self, node: Any) -> None:
            queues = [len(self.node2pending[n]) for n in self.nodes if not n.shutting_down]
            count = refill(len(self.node2pending[node]), window, len(self.pending), queues)
            if count:
                self._send_tests(node, count)

        def schedule(self) -> None:
            super().schedule()
            if self.collection:
                for node in self.nodes:
                    if not node.shutting_down:
                        self._top_up(node)
                if not self.pending:
                    for node in self.nodes:
                        if not node.shutting_down:
                            node.shutdown()

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            if not node.shutting_down:
                self._top_up(node)
            super().check_schedule(node, duration)

    return PrefetchScheduling(config, log)


def worker_peek(interactor: Any) -> Callable[[int], tuple[list[int], bool]]:
    """xdist's WorkerInteractor: the next item (`nextitem_index`) and its queue (`torun`), which hold
    only what the controller has sent this worker. A non-int entry is the shutdown mark: all known."""

    def peek(index: int) -> tuple[list[int], bool]:
        with interactor.torun.lock() as queue:
            queued = list(queue)
        upcoming = [interactor.nextitem_index, *queued]
        known = [i for i in upcoming if isinstance(i, int) and not isinstance(i, bool) and i != index]
        return known, any(not isinstance(i, int) for i in upcoming)

    return peek


def _interactor(config: Any) -> Any:
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None


def find_interactor(config: Any) -> Any:
    """xdist's WorkerInteractor among the plugins of a worker (None elsewhere)."""
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None
