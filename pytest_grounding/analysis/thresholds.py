"""One grammar for every threshold: `[SELECTOR:]AMOUNT`, AMOUNT a share (`0.05`) or a percent (`5%`),
the same meaning everywhere (`--grounding-min-accuracy`, `--grounding-tolerance`, `--grounding-max-drop`,
`--grounding-max-errors`, and any new one). A bare number that cannot be a share (`5`) is an error
that says how to write it: `5` meaning five points and `0.05` meaning five points must not both pass.
Each caller checks its own SELECTOR (a slice `KEY=VALUE`, a variant); pure."""

from __future__ import annotations

import math
from dataclasses import dataclass

HOW = "write a share (0.05) or a percent (5%)"


@dataclass(frozen=True)
class Threshold:
    """A share (0..1), for the run as a whole (`selector` None) or for what `selector` names."""

    amount: float
    selector: str | None = None


def parse_amount(text: object) -> float:
    """`0.05` or `5%` -> 0.05; a ValueError saying how to write it otherwise (the caller names the source)."""
    written = str(text).strip()
    percent = written.endswith("%")
    try:
        number = float(written[:-1].strip() if percent else written)
    except ValueError:
        raise ValueError(f"{written!r} is not an amount: {HOW}") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{written!r} is not an amount: {HOW}, at least 0")
    if percent:
        if number > 100:
            raise ValueError(f"{written!r} is above 100%")
        return number / 100.0
    if number > 1:
        meant = f"; {number:g} percent is {number / 100:g} or {number:g}%" if number <= 100 else ""
        raise ValueError(f"{written!r} is not a share (0 to 1): {HOW}{meant}")
    return number


def parse_threshold(spec: object, selector: str = "SELECTOR") -> Threshold:
    """`AMOUNT` or `SELECTOR:AMOUNT` (the selector may hold colons; the amount follows the last).
    `selector` names what this threshold selects, for the message."""
    text = str(spec).strip()
    head, sep, amount = text.rpartition(":")
    if sep and not head.strip():
        raise ValueError(f"nothing before ':' (expected [{selector}:]AMOUNT)")
    try:
        share = parse_amount(amount)
    except ValueError as exc:
        raise ValueError(f"{exc} (expected [{selector}:]AMOUNT)") from None
    return Threshold(share, head.strip() or None)


def share_option(value: object, source: str) -> float:
    """An option that is one AMOUNT with no selector (`--grounding-max-errors 10%`), naming its source."""
    try:
        return parse_amount(value)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
