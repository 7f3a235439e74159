"""Replayed files' own verdicts beside ours, over a run (pure): per replayed detector, the rows
compared, the agreements, and every disagreement with its reason (the reason is given per record
by detectors/replay/agreement.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MetricsCheck:
    """A ScreenSpot-Pro results file's own `metrics` against ours recomputed from the run's verdicts."""

    scored: int  # samples this run scored for the replayed detector
    rows: int  # rows the file has
    differences: tuple[str, ...] | None  # None: not compared (the counts differ); (): reproduced


@dataclass(frozen=True)
class ReplayFindings:
    """Per replayed detector: agreement with the file's verdicts, and its metrics checked."""

    blocks: dict[str, dict[str, Any]] = field(default_factory=dict)  # tally() per replayed spec
    metrics: dict[str, MetricsCheck] = field(default_factory=dict)


def tally(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per detector with replayed records: rows compared, agreements, and every disagreement."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        replay = record.get("replay")
        if not isinstance(replay, Mapping):
            continue
        block = out.setdefault(
            str(record["detector"]),
            {"file": replay.get("file"), "format": replay.get("format"), "replayed": 0, "compared": 0, "agree": 0},
        )
        block.setdefault("disagreements", [])
        block["replayed"] += 1
        if replay.get("agree") is None:
            continue
        block["compared"] += 1
        if replay["agree"]:
            block["agree"] += 1
        else:
            block["disagreements"].append(
                {
                    "dataset": record.get("dataset"),
                    "id": record.get("id"),
                    "row": replay.get("row"),
                    "ours": record.get("outcome"),
                    "theirs": replay.get("their_verdict"),
                    "reason": replay.get("reason"),
                }
            )
    for block in out.values():
        block["disagreements"].sort(key=lambda d: (str(d["dataset"]), str(d["id"])))
    return out
