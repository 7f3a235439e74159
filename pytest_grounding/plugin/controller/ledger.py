"""Every item the run was to score, and what became of it (the controller's account). xdist may
report an item more than once (loadscope and loadgroup put a crashed worker's item back in the
queue, so a sample that kills its worker crashes every replacement; `--dist each` runs every item
on every worker), and some items never at all (xdist out of worker restarts, -x, Ctrl-C). Here each
item gets one record, and the items no report came for are named.

Which record an item keeps: the first real one (a scored sample, or a detector's error), never
replaced, because the predictions file is written as records arrive and a line written cannot be
taken back: the file and the report say the same, one line per item. A crash record (the worker
died in the item) only stands in for an item until a real record comes (a re-queued item that
completes on a replacement worker): it is written to the predictions file at the end, if nothing
replaced it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...core.record import Record
from ...core.types import Sample
from ..compat.xdist_compat import item_key


@dataclass(frozen=True)
class NotRun:
    """An item the run was to score and no report came for."""

    nodeid: str
    detector: str
    dataset: str
    id: str
    uid: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Ledger:
    expected: dict[str, str] = field(default_factory=dict)  # item key -> test id, in collection order
    reported: set[str] = field(default_factory=set)  # keys of the items any report came for
    placed: dict[str, int] = field(default_factory=dict)  # item key -> index of its record in the run's records
    stand_ins: dict[str, Record] = field(default_factory=dict)  # crash records nothing has replaced (yet)
    crashes: int = 0  # items a worker died in (xdist)

    def expect(self, nodeids: Iterable[str]) -> None:
        """The items collected (serially: the session's; under xdist: each worker's, all the same)."""
        for nodeid in nodeids:
            self.expected.setdefault(item_key(nodeid), nodeid)

    def saw(self, nodeid: str) -> None:
        self.reported.add(item_key(nodeid))

    def place(self, records: list[Record], nodeid: str | None, record: Record, *, crash: bool) -> bool:
        """Put an item's record among the run's records; False when the item has one already (the
        record is dropped). A crash record is held back from the predictions file (`stand_ins`)."""
        if nodeid is None:  # a record that names no item: counted as it comes
            records.append(record)
            return True
        key = item_key(nodeid)
        index = self.placed.get(key)
        if index is None:
            self.placed[key] = len(records)
            records.append(record)
            if crash:
                self.crashes += 1
                self.stand_ins[key] = record
            return True
        if crash or key not in self.stand_ins:
            return False  # the item's first real word stands
        del self.stand_ins[key]
        records[index] = record
        return True

    def take_stand_ins(self) -> list[Record]:
        """The crash records that stayed (for the predictions file, once)."""
        found = list(self.stand_ins.values())
        self.stand_ins.clear()
        return found

    def missing(self) -> list[str]:
        """The test ids of the items no report came for, in collection order."""
        return [nodeid for key, nodeid in self.expected.items() if key not in self.reported]


def item_identity(
    nodeid: str, specs: Sequence[str], by_uid: Mapping[str, Sample], samples: Iterable[Sample]
) -> tuple[str, Sample | None] | None:
    """The detector spec and the sample behind a test id `...[<detector>-<uid>]` (under loadgroup
    with an `@group` suffix): None for an item that is not a grounding sample (another test of the
    same session); the sample None when this process never loaded it (pinned by a suite)."""
    from ...datasets import slug

    if "@" in nodeid.rpartition("]")[2]:  # xdist's loadgroup suffix: "...[params]@group"
        nodeid = nodeid[: nodeid.rindex("@")]
    if not nodeid.endswith("]"):
        return None
    params = nodeid.rpartition("[")[2][:-1]
    keys = {(slug(spec).replace("_", "-") if ":" in spec else spec): spec for spec in specs}
    key = next((k for k in sorted(keys, key=len, reverse=True) if params.startswith(k + "-")), None)
    detector = "?" if key is None else keys[key]
    sample = by_uid.get(params if key is None else params[len(key) + 1 :])
    if sample is None:  # an id pytest made unique with a suffix: the slow way
        sample = next((s for s in samples if params.endswith("-" + s.uid) or params == s.uid), None)
    if sample is None and key is None:
        return None
    return detector, sample


def placeholder(params: str) -> Sample:
    """A sample this process never loaded, named by its test id's parameters."""
    from ...datasets._common import PLACEHOLDER_BOX

    return Sample(dataset="?", id=params, uid=params, image=Path("?"), instruction="", bbox=PLACEHOLDER_BOX)


def identify(nodeids: Sequence[str], specs: Sequence[str], datasets: Iterable[Any]) -> list[tuple[str, str, Sample]]:
    """(node id, detector spec, sample) of each grounding item among `nodeids` (other tests of the
    session left out); a sample this process never loaded (pinned by a suite) is named by its test id."""
    if not nodeids:
        return []
    samples = [sample for dataset in {id(d): d for d in datasets}.values() for sample in dataset.samples]
    by_uid: dict[str, Sample] = {}
    for sample in samples:
        by_uid.setdefault(sample.uid, sample)
    found = []
    for nodeid in nodeids:
        identity = item_identity(nodeid, specs, by_uid, samples)
        if identity is not None:
            found.append((nodeid, identity[0], identity[1] or placeholder(params_of(nodeid))))
    return found


def params_of(nodeid: str) -> str:
    if "@" in nodeid.rpartition("]")[2]:
        nodeid = nodeid[: nodeid.rindex("@")]
    return nodeid.rpartition("[")[2].rstrip("]")
