"""What crosses between the processes of a run, in one place: the controller's word to each xdist
worker (workerinput), the worker's account at its end (workeroutput), and a sample's record on its
test report (user_properties). Built-in types only on the wire: execnet carries nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...core.record import Record

RECORD = "grounding_record"  # a test report's user property that holds the sample's record
IN_FLIGHT = "grounding_in_flight"  # a call report's property: predictions in flight in its process
_KEY = "grounding"  # the one key of this plugin in workerinput and in workeroutput


@dataclass(frozen=True)
class WorkerInput:
    """The controller to a worker, before it collects."""

    done: tuple[tuple[str, ...], ...] = ()  # (task, detector, dataset, uid) resumed: not run again
    baseline: list[list[str]] | None = None  # the checked baseline's expectations, when one is compared
    loadgroup: bool = False  # --dist loadgroup: the worker marks each screen's samples as one group
    served: dict[str, Any] = field(default_factory=dict)  # served_session.export(): servers and probes
    startup_requests: int = 0  # HTTP requests the controller's checks sent: spent of --grounding-budget
    startup_seconds: float = 0.0  # the controller's frame checks' time: spent of a seconds budget
    halt: str | None = None  # a frame check in flight as the worker starts: the folder its stop comes in (halt.py)

    def send(self, workerinput: dict[str, Any]) -> None:
        done = [list(key) for key in self.done]
        workerinput[_KEY] = {
            "done": done,
            "baseline": self.baseline,
            "loadgroup": self.loadgroup,
            "served": self.served,
            "startup_requests": self.startup_requests,
            "startup_seconds": self.startup_seconds,
            "halt": self.halt,
        }

    @classmethod
    def received(cls, workerinput: Mapping[str, Any]) -> WorkerInput:
        sent = workerinput.get(_KEY) or {}
        return cls(
            done=tuple(tuple(key) for key in sent.get("done") or ()),
            baseline=sent.get("baseline"),
            loadgroup=bool(sent.get("loadgroup")),
            served=dict(sent.get("served") or {}),
            startup_requests=int(sent.get("startup_requests") or 0),
            startup_seconds=float(sent.get("startup_seconds") or 0.0),
            halt=sent.get("halt") if isinstance(sent.get("halt"), str) else None,
        )


@dataclass(frozen=True)
class WorkerOutput:
    """A worker to the controller, at its end."""

    detectors: dict[str, dict[str, Any]] = field(default_factory=dict)  # spec -> what it ran on
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> summary
    shard: dict[str, Any] = field(default_factory=dict)  # the samples this shard was to score
    load_failure: str | None = None  # a detector that could not be built: the controller stops the run
    served: dict[str, Any] = field(default_factory=dict)  # spec -> the served detector's HTTP figures
    unscored: list[dict[str, Any]] = field(default_factory=list)  # prefetched answers of items not run
    budget: dict[str, Any] | None = None  # --grounding-budget: what this worker spent, which budget ended it

    def send(self, workeroutput: dict[str, Any]) -> None:
        workeroutput[_KEY] = {
            "detectors": self.detectors,
            "datasets": self.datasets,
            "shard": self.shard,
            "load_failure": self.load_failure,
            "served": self.served,
            "unscored": self.unscored,
            "budget": self.budget,
        }

    @classmethod
    def received(cls, workeroutput: Mapping[str, Any]) -> WorkerOutput:
        sent = workeroutput.get(_KEY) or {}
        return cls(
            detectors=dict(sent.get("detectors") or {}),
            datasets=dict(sent.get("datasets") or {}),
            shard=dict(sent.get("shard") or {}),
            load_failure=sent.get("load_failure"),
            served=dict(sent.get("served") or {}),
            unscored=list(sent.get("unscored") or []),
            budget=sent.get("budget"),
        )


def record_of(report: Any) -> Record | None:
    """The record a test report carries, if any (collect reports carry none)."""
    for entry in getattr(report, "user_properties", ()):
        name, value = entry[0], entry[1]
        if name == RECORD:
            return value
    return None


def in_flight_of(report: Any) -> tuple[str, int] | None:
    """(process, predictions in flight there) from a call report of a prefetching process."""
    for entry in getattr(report, "user_properties", ()):
        if entry[0] == IN_FLIGHT:
            node = getattr(getattr(report, "node", None), "gateway", None)
            return (str(getattr(node, "id", "main")), int(entry[1]))
    return None
