"""Significance tiers: detectors on one benchmark ranked by accuracy and grouped into tiers by
paired tests on the samples they share (issue 49).

Each pair of detectors is tested with McNemar's exact test on the samples both scored
(compare.paired, which also gives the difference's 95% interval clustered by screen); the p values
of all the pairs are adjusted together by Holm's step-down method, so that the chance of calling
any one pair different when none is stays under `alpha`. Tiers are then read off the ranking: the
best detector heads tier 1; going down the ranking, a detector stays in the current tier while it is
not significantly worse than that tier's head, and the first one that is heads the next tier.
Detectors in one tier are therefore not distinguishable at 95% from the tier's head.

Only like is paired with like: detectors scored by another profile (core/profiles.py), or run on
another set of samples (a partial run, another --grounding-limit or shard), are never paired with
the others; they get no tier and the reason says why.

Pure: records in, frozen records and plain dicts out; no pytest, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.record import Outcome
from . import compare, intervals

ALPHA = 0.05


@dataclass(frozen=True)
class Contender:
    """One detector's latest run on the benchmark: its name (a board row's label), the scoring
    profile that judged it, and its records on that benchmark."""

    name: str
    scoring: str
    records: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Ranked:
    name: str
    accuracy: float | None  # hits over its scored samples
    scored: int
    rank: int  # 1 = the best accuracy (among every contender)
    tier: int | None  # None: not paired with the tiered detectors (`reason` says why)
    reason: str = ""


@dataclass(frozen=True)
class Pair:
    """`better` against `worse` (by accuracy) on the samples both scored: `wins` samples only
    `better` hit, `losses` only `worse` hit; McNemar's exact p, then Holm's adjusted p."""

    better: str
    worse: str
    n: int
    wins: int
    losses: int
    p_value: float
    p_holm: float
    difference: intervals.Difference | None  # better - worse, clustered by screen
    alpha: float = ALPHA

    @property
    def significant(self) -> bool:
        return self.p_holm < self.alpha


@dataclass(frozen=True)
class Tiers:
    ranked: tuple[Ranked, ...]  # best first
    pairs: tuple[Pair, ...]
    notes: tuple[str, ...] = ()
    alpha: float = ALPHA

    def tier_of(self, name: str) -> int | None:
        return next((r.tier for r in self.ranked if r.name == name), None)


def sample_set(records: Sequence[Mapping[str, Any]]) -> frozenset[tuple[str, str, str]]:
    """The samples a run was given (errors included: it was asked them), by dataset, uid and the
    dataset version; a sweep's variants are left out (they are paired with their originals)."""
    return frozenset(
        (*compare.sample_key(r), str(r.get("fingerprint") or "")) for r in records if r.get("variant") is None
    )


def _accuracy(records: Sequence[Mapping[str, Any]]) -> tuple[float | None, int]:
    scored = [r for r in records if r.get("outcome") != Outcome.ERROR and r.get("variant") is None]
    hits = sum(1 for r in scored if r.get("outcome") == Outcome.HIT)
    return (hits / len(scored) if scored else None), len(scored)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p values, in the order given: the i-th smallest of m multiplied by
    m - i + 1, kept monotone, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, min(1.0, (m - position) * p_values[index]))
        adjusted[index] = running
    return adjusted


def _main_group(contenders: Sequence[Contender], sets: Mapping[str, frozenset[Any]]) -> list[Contender]:
    """The contenders that may be paired: the largest group sharing one scoring profile and one
    sample set (on a tie, the group holding the best accuracy)."""
    groups: dict[tuple[str, frozenset[Any]], list[Contender]] = {}
    for contender in contenders:
        groups.setdefault((contender.scoring, sets[contender.name]), []).append(contender)

    def weight(group: list[Contender]) -> tuple[int, float]:
        best = max((_accuracy(c.records)[0] or 0.0) for c in group)
        return (len(group), best)

    return max(groups.values(), key=weight) if groups else []


def _why_apart(contender: Contender, head: Contender, sets: Mapping[str, frozenset[Any]]) -> str:
    if contender.scoring != head.scoring:
        return (
            f"not paired: scored by the {contender.scoring} profile, the tiered detectors by {head.scoring} "
            "(rescore puts them on one profile)"
        )
    mine, theirs = sets[contender.name], sets[head.name]
    return (
        f"not paired: another sample set ({len(mine)} samples, the tiered detectors' {len(theirs)}, "
        f"{len(mine & theirs)} shared)"
    )


def _flipped(found: intervals.Difference | None) -> intervals.Difference | None:
    """compare.paired's other - baseline turned into better - worse."""
    if found is None:
        return None
    return intervals.Difference(-found.delta, -found.high, -found.low, found.se, found.samples, found.clusters)


def tiers(contenders: Sequence[Contender], alpha: float = ALPHA) -> Tiers:
    """Rank, pair, adjust and group (the module's docstring says how)."""
    sets = {c.name: sample_set(c.records) for c in contenders}
    figures = {c.name: _accuracy(c.records) for c in contenders}

    def best_first(c: Contender) -> tuple[int, float, str]:
        accuracy = figures[c.name][0]
        return (accuracy is None, -(accuracy or 0.0), c.name)

    ordered = sorted(contenders, key=best_first)
    group = [c for c in ordered if c in _main_group([c for c in ordered if figures[c.name][0] is not None], sets)]
    notes = []
    raw: list[tuple[Contender, Contender, compare.Paired]] = []
    for i, better in enumerate(group):
        for worse in group[i + 1 :]:
            pair = compare.paired(
                compare.Method(better.name, {}, better.records), compare.Method(worse.name, {}, worse.records)
            )
            raw.append((better, worse, pair))
    adjusted = holm([p.p_value for _, _, p in raw])
    pairs = tuple(
        Pair(
            better.name,
            worse.name,
            pair.n,
            wins=pair.broken,  # `broken`: the baseline (better) hit, the other missed
            losses=pair.fixed,
            p_value=pair.p_value,
            p_holm=p_holm,
            difference=_flipped(pair.difference),
            alpha=alpha,
        )
        for (better, worse, pair), p_holm in zip(raw, adjusted, strict=True)
    )
    significant = {(p.better, p.worse) for p in pairs if p.significant}
    tier_of: dict[str, int] = {}
    head: Contender | None = None
    tier = 0
    for contender in group:
        if head is None or (head.name, contender.name) in significant:
            head, tier = contender, tier + 1
        tier_of[contender.name] = tier
    ranked = []
    for rank, contender in enumerate(ordered, 1):
        accuracy, scored = figures[contender.name]
        reason = ""
        if contender.name not in tier_of:
            reason = "no sample scored" if accuracy is None else _why_apart(contender, group[0], sets)
        ranked.append(Ranked(contender.name, accuracy, scored, rank, tier_of.get(contender.name), reason))
    if len(group) < len(ordered) and group:
        notes.append(
            f"{len(ordered) - len(group)} detector(s) not paired with the others (another sample set or scoring "
            "profile): no tier"
        )
    if len(group) > 2:
        notes.append(f"{len(pairs)} pairs tested; p values adjusted by Holm's method for {len(pairs)} tests")
    return Tiers(tuple(ranked), pairs, tuple(notes), alpha)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def as_dict(found: Tiers) -> dict[str, Any]:
    """Plain data for `board --json`: every detector with its rank and tier, the pairwise table."""
    return {
        "alpha": found.alpha,
        "method": "McNemar's exact test on the samples both scored, p adjusted by Holm over all pairs",
        "rows": [
            {
                "name": r.name,
                "accuracy": _round(r.accuracy),
                "scored": r.scored,
                "rank": r.rank,
                "tier": r.tier,
                **({"reason": r.reason} if r.reason else {}),
            }
            for r in found.ranked
        ],
        "pairs": [
            {
                "better": p.better,
                "worse": p.worse,
                "paired": p.n,
                "wins": p.wins,
                "losses": p.losses,
                "p_value": _round(p.p_value),
                "p_holm": _round(p.p_holm),
                "significant": p.significant,
                "difference": None if p.difference is None else p.difference.as_dict(),
            }
            for p in found.pairs
        ],
        "notes": list(found.notes),
    }
