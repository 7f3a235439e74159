"""Accuracy gates: `0.40` (overall) or `element_type=icon:0.30` (one slice). Pure: parsing and
judging a summary; the plugin turns failures into the exit status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

from .metrics import SLICES


@dataclass(frozen=True)
class Gate:
    threshold: float
    key: Optional[str] = None
    value: Optional[str] = None
    source: str = ""

    @property
    def label(self) -> str:
        return "overall" if self.key is None else f"{self.key}={self.value}"


@dataclass(frozen=True)
class Verdict:
    gate: Gate
    detector: str
    accuracy: Optional[float]
    scored: int

    @property
    def passed(self) -> bool:
        return self.accuracy is not None and self.accuracy >= self.gate.threshold

    def describe(self) -> str:
        figure = "no scored samples" if self.accuracy is None else f"{self.accuracy:.1%} of {self.scored}"
        relation = ">=" if self.passed else "<"
        status = "passed" if self.passed else "FAILED"
        return (f"gate {status}: detector {self.detector} {self.gate.label}: accuracy {figure} "
                f"{relation} threshold {self.gate.threshold:.1%}")


def parse_threshold(text: str) -> float:
    text = text.strip()
    value = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"threshold {text!r} is outside 0..1 (or 0%..100%)")
    return value


def parse_gate(spec: str, source: str = "") -> Gate:
    """`0.4`, `40%`, or `KEY=VALUE:THRESHOLD` with KEY one of the summary's slices."""
    spec = spec.strip()
    where = f" (from {source})" if source else ""
    head, sep, tail = spec.rpartition(":")
    try:
        if not sep:
            return Gate(parse_threshold(spec), source=source)
        key, eq, value = head.partition("=")
        key = key.strip()
        if not eq or not value.strip():
            raise ValueError("expected KEY=VALUE:THRESHOLD")
        if key not in SLICES:
            raise ValueError(f"unknown slice {key!r}; slices: {', '.join(SLICES)}")
        return Gate(parse_threshold(tail), key=key, value=value.strip(), source=source)
    except ValueError as exc:
        raise ValueError(f"bad accuracy gate {spec!r}{where}: {exc}") from None


def judge(gates: List[Gate], summary: Mapping[str, Mapping[str, Any]]) -> List[Verdict]:
    """Every gate against every detector's summary. A slice that matched no scored sample fails:
    a typo in a gate must not pass CI silently."""
    verdicts = []
    for detector, block in summary.items():
        for gate in gates:
            row: Dict[str, Any] = dict(block) if gate.key is None else _find(block["by"][gate.key], gate.value)
            verdicts.append(Verdict(gate, detector, row.get("accuracy"), row.get("scored", 0)))
    return verdicts


def _find(rows: List[Mapping[str, Any]], value: Optional[str]) -> Dict[str, Any]:
    wanted = (value or "").lower()
    for row in rows:
        if str(row["value"]).lower() == wanted:
            return dict(row)
    return {}
