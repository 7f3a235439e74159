"""--grounding-epochs N: figures of a run that asked each sample N times. Pure: no pytest.

A sample's epochs are the records of one detector with the same dataset and sample uid (the
record's uid less its `-e<k>` suffix) that carry an `epoch`; error records are left out (as in
every accuracy), so a sample counts with the epochs that were scored. Per detector:

- `mean_accuracy`: hits over every scored epoch (each sample weighs N epochs), with its 95%
  interval clustered by screen (intervals.proportion: a screen's epochs are one cluster).
- `pass_at_k` (k = N): the share of samples hit in at least one epoch.
- `majority_accuracy`: the share of samples whose consensus answer is a hit. The consensus answer
  is the most common answer over the sample's epochs (the click point as recorded; no point: the
  outcome, a refusal or a wrong format); a tie goes to the tied answer given first (the lowest
  epoch). Its outcome is that epoch's outcome.
- `stability`: the share of samples whose outcome (hit, miss, wrong format) is not the same in
  every scored epoch (0: every sample answered alike every time); `changed` counts them.

pass@k and the majority accuracy have intervals too, one value per sample, clustered by screen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.record import Outcome
from ..core.types import sample_uid
from . import intervals

TIE_RULE = "the most common answer over the epochs; a tie goes to the answer given first (lowest epoch)"


def has_epochs(records: Iterable[Mapping[str, Any]]) -> bool:
    return any(record.get("epoch") is not None for record in records)


def by_sample(records: Iterable[Mapping[str, Any]]) -> dict[tuple[Any, ...], list[Mapping[str, Any]]]:
    """(detector, dataset, sample uid) -> its scored epochs' records, in epoch order."""
    found: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for record in records:
        epoch = record.get("epoch")
        if epoch is None or record.get("outcome") == Outcome.ERROR:
            continue
        key = (record.get("detector"), record.get("dataset"), sample_uid(str(record.get("uid")), epoch))
        found.setdefault(key, []).append(record)
    for epochs in found.values():
        epochs.sort(key=lambda r: int(r["epoch"]))
    return found


def answer_of(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """What two epochs must share to have given the same answer: the point(s), else the outcome."""
    points = record.get("points") or ([record["point"]] if record.get("point") is not None else None)
    if points:
        return ("points", tuple(tuple(float(v) for v in p) for p in points))
    return ("refusal",) if record.get("refusal") else ("no point", record.get("outcome"))


def majority(epochs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The record of the consensus answer (TIE_RULE); `epochs` in epoch order."""
    answers = [answer_of(record) for record in epochs]
    counts = Counter(answers)
    most = max(counts.values())
    first = next(i for i, answer in enumerate(answers) if counts[answer] == most)
    return epochs[first]


def changed(epochs: Sequence[Mapping[str, Any]]) -> bool:
    return len({record.get("outcome") for record in epochs}) > 1


def figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The epochs block of one detector's records (None: no record carries an epoch)."""
    if not has_epochs(records):
        return None
    samples = by_sample(records)
    scored = [record for epochs in samples.values() for record in epochs]
    epochs = max((int(r["epoch"]) for r in records if r.get("epoch") is not None), default=1)
    first = [epochs_of[0] for epochs_of in samples.values()]  # the sample's screen, once per sample
    any_hit = [any(r["outcome"] == Outcome.HIT for r in epochs_of) for epochs_of in samples.values()]
    consensus = [majority(epochs_of)["outcome"] == Outcome.HIT for epochs_of in samples.values()]
    flipped = sum(changed(epochs_of) for epochs_of in samples.values())
    count = len(samples)
    mean = intervals.proportion(intervals.Outcomes.of(scored)) if scored else None
    return {
        "epochs": epochs,
        "samples": count,
        "scored_epochs": len(scored),
        "mean_accuracy": None if mean is None else mean.estimate,
        "mean_ci95": intervals.ci95(mean),
        "pass_at_k": {"k": epochs, **_share(first, any_hit)},
        "majority": {**_share(first, consensus), "tie_rule": TIE_RULE},
        "stability": flipped / count if count else None,
        "changed": flipped,
    }


def _share(firsts: Sequence[Mapping[str, Any]], hits: Sequence[bool]) -> dict[str, Any]:
    """A share of samples with its interval clustered by the samples' screens."""
    rows = [
        {"dataset": r.get("dataset"), "image": r.get("image"), "uid": r.get("uid"), "outcome": _hit(hit)}
        for r, hit in zip(firsts, hits, strict=True)
    ]
    found = intervals.proportion(intervals.Outcomes.of(rows)) if rows else None
    return {"accuracy": None if found is None else found.estimate, "ci95": intervals.ci95(found), "hits": sum(hits)}


def _hit(hit: bool) -> str:
    return Outcome.HIT.value if hit else Outcome.MISS.value
