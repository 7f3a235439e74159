"""--grounding-perturb: the change each perturbation makes, per detector, and the robustness gate
(--grounding-max-drop). Pure: records in, plain data out.

A variant's records carry `variant` (its label), `axis`, `perturbation` and `original_uid`
(core/variants.py). Each is paired with the original sample's record of the same detector (same
dataset, original uid and epoch). Per variant:

- `accuracy` over its scored records, with its 95% interval clustered by the ORIGINAL screen
  (an overlay's variant is a file per sample, but the samples of one screen still go together);
- on the pairs both scored: the originals' accuracy, the change `delta` = variant - original with
  its 95% interval (intervals.difference: clustered by screen, Student's t) and McNemar's exact p
  (compare.mcnemar_exact) on the discordant pairs;
- the flips: the pairs whose outcome went from a hit to a miss (`hit_to_miss`) or back;
- `no_variant`: originals with no record of this variant: the axis made none (a target a zoom
  pushed off the screen, no rewording in the paraphrase table, no free place for an overlay, a
  target other than one box on a geometric axis) or the run did not reach it.

The detector's own accuracy and breakdowns count the originals only (metrics.summarize)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.record import SCORED, Outcome
from ..core.types import sample_uid
from . import intervals
from .compare import mcnemar_exact
from .thresholds import parse_threshold

NO_VARIANT_REASONS = {
    "zoom": "targets pushed off the screen (less than half their box left)",
    "paraphrase": "samples without a rewording in the table",
    "occlude": "screens with no place for the overlay clear of the target",
    "downscale": "targets other than one box",
}


def is_variant(record: Mapping[str, Any]) -> bool:
    return record.get("variant") is not None


def pair_key(record: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """(dataset, original uid, epoch): what a variant's record and its original's share."""
    epoch = record.get("epoch")
    uid = sample_uid(str(record.get("uid")), epoch)
    if is_variant(record):
        uid = str(record.get("original_uid") or uid)
    return (record.get("dataset"), uid, epoch)


def _hit(record: Mapping[str, Any]) -> bool:
    return record.get("outcome") == Outcome.HIT


def figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The robustness block of one detector's records (None: no variant among them)."""
    variants = [r for r in records if is_variant(r)]
    if not variants:
        return None
    originals = {pair_key(r): r for r in records if not is_variant(r)}
    by_label: dict[str, list[Mapping[str, Any]]] = {}
    for record in variants:
        by_label.setdefault(str(record["variant"]), []).append(record)
    rows = [
        _variant_row(label, found, originals)
        for label, found in sorted(by_label.items(), key=lambda kv: (str(kv[1][0].get("axis")), kv[0]))
    ]
    return {
        "variants": rows,
        "originals": len(originals),
        "paired_on": "the same samples: dataset, original uid and epoch",
        "interval": f"{intervals.METHOD} (accuracy), paired t over screens (change); clustered by {intervals.CLUSTER}",
    }


def _variant_row(
    label: str, found: Sequence[Mapping[str, Any]], originals: Mapping[tuple[Any, Any, Any], Mapping[str, Any]]
) -> dict[str, Any]:
    first = found[0]
    scored = [r for r in found if r.get("outcome") in SCORED]
    clustered = [
        {**r, "image": (originals.get(pair_key(r)) or r).get("image"), "dataset": r.get("dataset")} for r in scored
    ]
    accuracy = intervals.proportion(intervals.Outcomes.of(clustered)) if clustered else None
    pairs = [
        (original, record)
        for record in scored
        if (original := originals.get(pair_key(record))) is not None and original.get("outcome") in SCORED
    ]
    before = [_hit(original) for original, _ in pairs]
    after = [_hit(record) for _, record in pairs]
    screens = [intervals.screen_of(original, i) for i, (original, _) in enumerate(pairs)]
    change = intervals.difference(before, after, screens)
    lost = [_flip(original, record) for original, record in pairs if _hit(original) and not _hit(record)]
    gained = [_flip(original, record) for original, record in pairs if not _hit(original) and _hit(record)]
    with_variant = {pair_key(r) for r in found}
    axis = str(first.get("axis"))
    return {
        "label": label,
        "axis": axis,
        "perturbation": first.get("perturbation"),
        "samples": len(found),
        "scored": len(scored),
        "errors": sum(1 for r in found if r.get("outcome") == Outcome.ERROR),
        "accuracy": None if accuracy is None else accuracy.estimate,
        "ci95": intervals.ci95(accuracy),
        "pairs": len(pairs),
        "original_accuracy": sum(before) / len(before) if before else None,
        "paired_accuracy": sum(after) / len(after) if after else None,
        "delta": None if change is None else change.as_dict()["delta"],
        "delta_ci95": None if change is None else change.as_dict()["ci95"],
        "clusters": None if change is None else change.clusters,
        "mcnemar_p": mcnemar_exact(len(gained), len(lost)) if pairs else None,
        "hit_to_miss": lost,
        "miss_to_hit": gained,
        "no_variant": sum(1 for key in originals if key not in with_variant),
        "no_variant_reason": NO_VARIANT_REASONS.get(axis, "samples the axis made no variant of"),
    }


def _flip(original: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "dataset": original.get("dataset"),
        "id": original.get("id"),
        "uid": original.get("uid"),
        "variant_uid": record.get("uid"),
    }


# -- the gate -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaxDrop:
    """--grounding-max-drop [VARIANT:]AMOUNT: a variant (label or axis; None: every one) may cost at
    most `share` of accuracy (0.05 = 5 points) against its originals on the same samples."""

    share: float
    variant: str | None = None
    source: str = ""

    @classmethod
    def of_points(cls, points: float, variant: str | None = None, source: str = "") -> MaxDrop:
        """From accuracy points, as a report keeps it (`max_drops[].points`)."""
        return cls(points / 100.0, variant, source)

    @property
    def points(self) -> float:
        """The largest drop in accuracy points: how the drops are shown and kept in the report."""
        return round(self.share * 100.0, 9)

    @property
    def label(self) -> str:
        return f"max drop {self.variant or 'every variant'}"

    @property
    def threshold(self) -> float:
        return self.points


def parse_max_drops(values: Any, source: str = "") -> tuple[MaxDrop, ...]:
    """`5%`, `0.05` or `zoom70:5%` (repeatable): the one grammar of thresholds (analysis/thresholds.py),
    its selector a variant; a ValueError naming the bad value and its source."""
    found: list[MaxDrop] = []
    for value in [values] if isinstance(values, str) else list(values or []):
        text = str(value).strip()
        where = f" (from {source})" if source else ""
        if "=" in text and ":" not in text:  # the form before the one grammar: zoom70=5 (points)
            raise ValueError(f"bad max drop {text!r}{where}: write VARIANT:AMOUNT, e.g. zoom70:5% (or zoom70:0.05)")
        try:
            threshold = parse_threshold(text, selector="VARIANT")
        except ValueError as exc:
            raise ValueError(f"bad max drop {text!r}{where}: {exc}") from None
        found.append(MaxDrop(threshold.amount, threshold.selector, source))
    return tuple(found)


@dataclass(frozen=True)
class DropVerdict:
    gate: MaxDrop
    detector: str
    variant: str | None
    drop: float | None  # points: original - variant on the pairs (None: nothing to judge)
    pairs: int

    @property
    def passed(self) -> bool:
        return self.drop is not None and self.drop <= self.gate.points + 1e-9  # 5% allows a drop of 5.0

    def describe(self) -> str:
        status = "passed" if self.passed else "FAILED"
        if self.variant is None or self.drop is None:
            what = self.gate.variant or "every variant"
            return f"gate {status}: detector {self.detector} --grounding-max-drop {what}: no paired variant to judge"
        relation = "<=" if self.passed else ">"
        return (
            f"gate {status}: detector {self.detector} {self.variant}: drop {self.drop:+.1f} points over "
            f"{self.pairs} pairs {relation} {self.gate.points:g} allowed"
        )


def judge(gates: Sequence[MaxDrop], summary: Mapping[str, Mapping[str, Any]]) -> list[DropVerdict]:
    """Every max-drop gate against every detector's variants; a gate that names no variant the
    detector ran fails (a typo must not pass)."""
    verdicts: list[DropVerdict] = []
    for detector, block in summary.items():
        rows = (block.get("robustness") or {}).get("variants", [])
        for gate in gates:
            chosen = [r for r in rows if gate.variant in (None, r["label"], r["axis"])]
            if not chosen:
                verdicts.append(DropVerdict(gate, detector, None, None, 0))
            for row in chosen:
                drop = None if row["delta"] is None else -100.0 * float(row["delta"]) + 0.0  # no -0.0
                verdicts.append(DropVerdict(gate, detector, row["label"], drop, int(row["pairs"])))
    return verdicts


def gates_entry(verdicts: Sequence[Any]) -> dict[str, Any]:
    """The report's `robustness_gates` (none without a max-drop gate)."""
    entries = [
        {
            "detector": v.detector,
            "gate": v.gate.variant,
            "variant": v.variant,
            "max_drop": v.gate.points,
            "drop": None if v.drop is None else round(v.drop, 6),
            "pairs": v.pairs,
            "passed": v.passed,
        }
        for v in verdicts
        if isinstance(v, DropVerdict)
    ]
    return {"robustness_gates": entries} if entries else {}


def verdicts_of(document: Mapping[str, Any]) -> list[DropVerdict]:
    """The max-drop verdicts a report holds (`robustness_gates`), as the run judged them."""
    found = []
    for entry in document.get("robustness_gates") or []:
        most = MaxDrop.of_points(float(entry["max_drop"]), entry.get("gate"))
        drop = None if entry.get("drop") is None else float(entry["drop"])
        found.append(DropVerdict(most, entry["detector"], entry.get("variant"), drop, int(entry["pairs"])))
    return found


def settings_entry(settings: Any) -> dict[str, Any]:
    """The report's `run.settings` keys of a sweep (none without one)."""
    specs, drops = list(settings.selection.perturb), settings.verdict.max_drops
    entry: dict[str, Any] = {"perturb": specs} if specs else {}
    if drops:
        entry["max_drops"] = [{"variant": d.variant, "points": d.points} for d in drops]
    return entry


def max_drops_of(settings: Mapping[str, Any]) -> tuple[MaxDrop, ...]:
    """A report's max-drop gates read back (merge judges them again on the merged records)."""
    return tuple(
        MaxDrop.of_points(float(d["points"]), d.get("variant"), "report")
        for d in settings.get("max_drops") or ()
        if isinstance(d, Mapping)
    )
