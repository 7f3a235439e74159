"""The sample x model matrix of one benchmark (issue 49): every sample a row, every detector a
column, each cell the detector's outcome on that sample (hit, miss, wrong_format: no usable
answer, error: not scored; None: the run did not have the sample), with the counts people ask
for first: samples every detector misses, samples every detector hits, and each detector's unique
wins (the samples only it hits).

Pure: records in, a frozen record and plain dicts out; no pytest, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.record import Outcome
from . import compare

OUTCOMES = (Outcome.HIT, Outcome.MISS, Outcome.WRONG_FORMAT, Outcome.ERROR)


@dataclass(frozen=True)
class Column:
    name: str  # a board row's label
    source: str  # the report it came from
    records: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Row:
    dataset: str
    uid: str
    id: str
    instruction: str
    outcomes: tuple[str | None, ...]  # one per column

    @property
    def hits(self) -> int:
        return sum(1 for o in self.outcomes if o == Outcome.HIT)

    @property
    def scored(self) -> int:
        return sum(1 for o in self.outcomes if o is not None and o != Outcome.ERROR)


@dataclass(frozen=True)
class Matrix:
    columns: tuple[str, ...]
    sources: tuple[str, ...]
    rows: tuple[Row, ...]

    def all_miss(self) -> int:
        """Samples scored by at least one detector and hit by none."""
        return sum(1 for r in self.rows if r.scored and not r.hits)

    def all_hit(self) -> int:
        """Samples every detector scored and hit."""
        return sum(1 for r in self.rows if r.hits == len(self.columns))

    def unique_wins(self) -> dict[str, int]:
        wins = dict.fromkeys(self.columns, 0)
        for row in self.rows:
            if row.hits == 1:
                wins[self.columns[row.outcomes.index(Outcome.HIT)]] += 1
        return wins


def matrix(columns: Sequence[Column]) -> Matrix:
    """Rows in the order samples first appear (the dataset's order in the first run), a sample
    the first run lacks after them; a sweep's variants are left out."""
    by_column: list[dict[tuple[str, str], Mapping[str, Any]]] = []
    order: dict[tuple[str, str], Mapping[str, Any]] = {}
    for column in columns:
        mine = {}
        for record in column.records:
            if record.get("variant") is not None:
                continue
            key = compare.sample_key(record)
            mine[key] = record
            order.setdefault(key, record)
        by_column.append(mine)
    rows = []
    for key, first in order.items():
        outcomes = []
        for mine in by_column:
            found = mine.get(key)
            outcome = None if found is None else str(found.get("outcome"))
            outcomes.append(outcome)
        rows.append(
            Row(key[0], key[1], str(first.get("id", key[1])), str(first.get("instruction") or ""), tuple(outcomes))
        )
    return Matrix(tuple(c.name for c in columns), tuple(c.source for c in columns), tuple(rows))


def as_dict(found: Matrix) -> dict[str, Any]:
    """Plain data for `board --json` and the HTML board's script: outcomes as one list per sample,
    in the order of `detectors`."""
    return {
        "detectors": list(found.columns),
        "sources": list(found.sources),
        "outcomes": [str(o) for o in OUTCOMES],
        "samples": [
            {
                "dataset": r.dataset,
                "uid": r.uid,
                "id": r.id,
                "instruction": r.instruction,
                "outcomes": list(r.outcomes),
            }
            for r in found.rows
        ],
        "all_miss": found.all_miss(),
        "all_hit": found.all_hit(),
        "unique_wins": found.unique_wins(),
    }
