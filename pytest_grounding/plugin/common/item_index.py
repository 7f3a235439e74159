"""Which detector spec and sample each item runs, by its test id: made where the items are made
(collection, with the same ids), and in an xdist controller from the run's own datasets by the
same rule, so the controller looks items up instead of parsing ids back. An item of a dataset a
suite pinned (loaded only by the workers) is named from its test id alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...core.types import Sample

LOADGROUP = "@"  # xdist's loadgroup suffix: "...[params]@group"


@dataclass(frozen=True)
class ItemEntry:
    spec: str  # the detector spec; "?" when the id names none of the run's
    sample: Sample  # a placeholder (dataset "?") for a sample this process never loaded


def spec_id(spec: str) -> str:
    """A detector spec as its items' ids show it."""
    from ...datasets import slug

    return slug(spec).replace("_", "-") if ":" in spec else spec


def params_of(nodeid: str) -> str | None:
    """The parameter part of a test id (`[<detector>-<uid>]`), without xdist's group suffix."""
    if LOADGROUP in nodeid.rpartition("]")[2]:
        nodeid = nodeid[: nodeid.rindex(LOADGROUP)]
    if not nodeid.endswith("]"):
        return None
    return nodeid.rpartition("[")[2][:-1]


def placeholder(params: str) -> Sample:
    """A sample this process never loaded, named by its test id's parameters."""
    from ...datasets._common import PLACEHOLDER_BOX

    return Sample(dataset="?", id=params, uid=params, image=Path("?"), instruction="", bbox=PLACEHOLDER_BOX)


@dataclass
class ItemIndex:
    specs: tuple[str, ...] = ()  # the run's detector specs (to name an item of an unknown sample)
    _entries: dict[str, ItemEntry] = field(default_factory=dict)  # item params -> entry
    labels: dict[str, str] = field(default_factory=dict)  # spec -> label= given by a suite's marker

    def add(self, specs: Sequence[str], samples: Iterable[Sample]) -> None:
        """The items `specs` x `samples` make, keyed by the ids collection gives them."""
        samples = list(samples)
        for spec in specs:
            prefix = spec_id(spec)
            for sample in samples:
                self._entries.setdefault(f"{prefix}-{sample.uid}", ItemEntry(spec, sample))

    def add_samples(self, samples: Iterable[Sample]) -> None:
        """Items parametrized by sample only (a suite without a detector parameter)."""
        for sample in samples:
            self._entries.setdefault(sample.uid, ItemEntry("?", sample))

    def lookup(self, nodeid: str) -> ItemEntry | None:
        """The item's entry; None for a test that is not a grounding item."""
        params = params_of(nodeid)
        if params is None:
            return None
        found = self._entries.get(params)
        if found is not None:
            return found
        # Not made here: a pinned dataset's sample (the controller never loads it), or an id pytest made
        # unique with a suffix. Named by its spec's prefix, when it has one.
        spec = next((s for s in sorted(self.specs, key=len, reverse=True) if params.startswith(spec_id(s) + "-")), None)
        if spec is None:
            return None
        return ItemEntry(spec, placeholder(params[len(spec_id(spec)) + 1 :]))

    def identify(self, nodeids: Sequence[str]) -> list[tuple[str, ItemEntry]]:
        """(node id, entry) of each grounding item among `nodeids` (other tests left out)."""
        return [(nodeid, entry) for nodeid in nodeids if (entry := self.lookup(nodeid)) is not None]
