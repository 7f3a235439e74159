"""Numbers as every output writes them (terminal, markdown, HTML, comparison tables): one rounding."""

from __future__ import annotations


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal, "-" when there is none."""
    return "-" if value is None else f"{value * 100:.1f}%"


def points(share: float) -> str:
    """A change of a share in percentage points, signed, one decimal: `+2.5`, `-0.4`, `+0.0` (a
    change that rounds to nothing never reads `-0.0`)."""
    text = f"{share * 100:+.1f}"
    return "+0.0" if text == "-0.0" else text


def ms(value: float | None) -> str:
    """Milliseconds: whole above 100, one decimal from 10, two below."""
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.2f}" if value < 10 else f"{value:.1f}"
