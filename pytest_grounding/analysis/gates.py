"""Accuracy gates: `0.40` or `40%` (overall), `element_type=icon:0.30` (one slice). Pure: parsing and
judging a summary; the plugin turns failures into the exit status."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .metrics import SLICES
from .thresholds import parse_threshold


@dataclass(frozen=True)
class Gate:
    """A number for the run overall or for one slice (`KEY=VALUE`): an accuracy gate's minimum,
    or a baseline tolerance's largest drop (analysis/baseline.py)."""

    threshold: float
    key: str | None = None
    value: str | None = None
    source: str = ""

    @property
    def label(self) -> str:
        return "overall" if self.key is None else f"{self.key}={self.value}"


@dataclass(frozen=True)
class Verdict:
    gate: Gate
    detector: str
    accuracy: float | None
    scored: int
    unreliable: bool = False  # the detector's errors exceed --grounding-max-errors: not judged
    measure: str = "accuracy"  # "hit rate" on the element-at-click task
    ci95: tuple[float, float] | None = None  # the figure's 95% interval (analysis/intervals.py)
    on_lower: bool = False  # --grounding-gate-on-interval: judged on the interval's lower bound
    values: tuple[str, ...] = ()  # a slice gate that matched no row: the slice's values the run has

    @property
    def judged(self) -> float | None:
        """The number held against the threshold: the accuracy, or its interval's lower bound."""
        if not self.on_lower:
            return self.accuracy
        return None if self.ci95 is None else self.ci95[0]

    @property
    def passed(self) -> bool:
        judged = self.judged
        return not self.unreliable and judged is not None and judged >= self.gate.threshold

    def describe(self) -> str:
        figure = "no scored samples" if self.accuracy is None else f"{self.accuracy:.1%} of {self.scored}"
        if self.accuracy is None and self.values:
            figure += f" ({self.did_you_mean()})"
        if self.on_lower and self.ci95 is not None and self.accuracy is not None:
            figure += f" (95% CI {self.ci95[0]:.1%}-{self.ci95[1]:.1%})"
        if self.unreliable:
            return (
                f"gate FAILED: detector {self.detector} {self.gate.label}: {self.measure} {figure} not judged: "
                "too many errors (see above)"
            )
        relation = ">=" if self.passed else "<"
        status = "passed" if self.passed else "FAILED"
        judged = ""
        if self.on_lower and self.ci95 is not None:
            judged = f": its lower bound {self.ci95[0]:.1%} {relation} threshold {self.gate.threshold:.1%}"
            return f"gate {status}: detector {self.detector} {self.gate.label}: {self.measure} {figure}{judged}"
        return (
            f"gate {status}: detector {self.detector} {self.gate.label}: {self.measure} {figure} "
            f"{relation} threshold {self.gate.threshold:.1%}"
        )

    def did_you_mean(self) -> str:
        """`no sample has element_type=icn; did you mean 'icon'? (values: icon, text)`: a typo in a
        slice value named where the gate fails (issue 61)."""
        import difflib

        wanted = str(self.gate.value or "")
        lowered = {v.lower(): v for v in self.values}
        close = [lowered[c] for c in difflib.get_close_matches(wanted.lower(), list(lowered), n=3, cutoff=0.6)]
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        shown = ", ".join(self.values[:12]) + (", ..." if len(self.values) > 12 else "")
        return f"no sample has {self.gate.label}{hint} (values: {shown})"


@dataclass(frozen=True)
class ErrorVerdict:
    """A detector whose samples are mostly errors measured its set-up, not its skill."""

    detector: str
    errors: int
    samples: int
    max_share: float

    @property
    def share(self) -> float:
        return self.errors / self.samples if self.samples else 0.0

    @property
    def passed(self) -> bool:
        return self.share <= self.max_share

    def describe(self) -> str:
        return (
            f"errors FAILED: detector {self.detector}: {self.errors} of {self.samples} samples "
            f"({self.share:.1%}) are errors, more than --grounding-max-errors {self.max_share:.1%}: its figures "
            "are not meaningful (an outage or a broken set-up, not a bad model)"
        )


def parse_gate(spec: str, source: str = "", what: str = "accuracy gate") -> Gate:
    """`0.4`, `40%`, or `KEY=VALUE:AMOUNT` with KEY one of the summary's slices: the one grammar of
    thresholds (analysis/thresholds.py), its selector a slice."""
    spec = str(spec).strip()
    where = f" (from {source})" if source else ""
    try:
        found = parse_threshold(spec, selector="KEY=VALUE")
        key, value = _slice(found.selector)
        return Gate(found.amount, key=key, value=value, source=source)
    except ValueError as exc:
        raise ValueError(f"bad {what} {spec!r}{where}: {exc}") from None


def _slice(selector: str | None) -> tuple[str | None, str | None]:
    if selector is None:
        return None, None
    key, eq, value = selector.partition("=")
    key = key.strip()
    if not eq or not value.strip():
        raise ValueError("expected KEY=VALUE:AMOUNT (a slice, e.g. element_type=icon:30%)")
    if key not in SLICES:
        raise ValueError(f"unknown slice {key!r}; slices: {', '.join(SLICES)}")
    return key, value.strip()


def error_checks(summary: Mapping[str, Mapping[str, Any]], max_errors: float) -> list[ErrorVerdict]:
    """The errors-share check of every detector, passed or failed (a JUnit case each: issue 61)."""
    return [
        ErrorVerdict(detector, block["errors"], block["samples"], max_errors) for detector, block in summary.items()
    ]


def judge(
    gates: list[Gate],
    summary: Mapping[str, Mapping[str, Any]],
    max_errors: float | None = None,
    *,
    on_lower: bool = False,
) -> list[Verdict | ErrorVerdict]:
    """Every gate against every detector's summary. A slice that matched no scored sample fails:
    a typo in a gate must not pass CI silently. A detector with more errors than `max_errors`
    (a share) fails, and so do its gates, whatever its accuracy on the rest. `on_lower`: a gate
    passes when the lower bound of the figure's 95% interval reaches the threshold (opt in: a
    small run must then show more than the threshold, not only land on it)."""
    verdicts: list[Verdict | ErrorVerdict] = []
    for detector, block in summary.items():
        too_many = (
            ErrorVerdict(detector, block["errors"], block["samples"], max_errors) if max_errors is not None else None
        )
        if too_many is not None and not too_many.passed:
            verdicts.append(too_many)
        for gate in gates:
            row: dict[str, Any] = dict(block) if gate.key is None else _find(block["by"][gate.key], gate.value)
            bounds = row.get("ci95")
            values = () if gate.key is None or row else tuple(str(r["value"]) for r in block["by"][gate.key])
            verdicts.append(
                Verdict(
                    gate,
                    detector,
                    row.get("accuracy"),
                    row.get("scored", 0),
                    unreliable=too_many is not None and not too_many.passed,
                    measure="hit rate" if block.get("task") == "locate" else "accuracy",
                    ci95=(float(bounds[0]), float(bounds[1])) if bounds else None,
                    on_lower=on_lower,
                    values=values,
                )
            )
    return verdicts


def _find(rows: list[Mapping[str, Any]], value: str | None) -> dict[str, Any]:
    wanted = (value or "").lower()
    for row in rows:
        if str(row["value"]).lower() == wanted:
            return dict(row)
    return {}
