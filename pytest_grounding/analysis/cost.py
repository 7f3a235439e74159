"""Token usage and cost. A served detector keeps the response's `usage` in each record's
`meta.usage` (a cropping strategy sums its calls'); this sums it per detector and, with
`--grounding-price prompt=X,completion=Y` (USD per million tokens), prices the run and 1,000
samples. Pure: records in, plain dicts and lines out. Sums are of whole tokens, so the figures do
not depend on the order xdist workers finished in."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.usage import COMPLETION, PROMPT, TOTAL, usage_of

PRICE_KEYS = ("prompt", "completion")


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1_000_000

    def as_dict(self) -> dict[str, float]:
        return {"prompt_per_million_usd": self.prompt, "completion_per_million_usd": self.completion}

    @classmethod
    def from_dict(cls, found: Any) -> Price | None:
        """The price a report's `cost.price` holds (None: none was set)."""
        if not isinstance(found, dict):
            return None
        return cls(float(found["prompt_per_million_usd"]), float(found["completion_per_million_usd"]))


def parse_price(value: Any, source: str) -> Price | None:
    """`prompt=0.3,completion=1.2` -> Price; nothing given -> None; anything else a ValueError
    naming `source` (the option or the ini key)."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    found: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, number = (s.strip() for s in part.partition("="))
        if not sep:
            raise ValueError(f"{source}: {part!r} is not KEY=VALUE (expected prompt=X,completion=Y, USD per million)")
        if key not in PRICE_KEYS:
            raise ValueError(f"{source}: unknown key {key!r} (expected prompt and completion, USD per million tokens)")
        if key in found:
            raise ValueError(f"{source}: {key} given twice")
        try:
            price = float(number)
        except ValueError:
            raise ValueError(f"{source}: {key}={number!r} is not a number (USD per million tokens)") from None
        if not math.isfinite(price) or price < 0:
            raise ValueError(f"{source}: {key}={number} must be a finite number >= 0")
        found[key] = price
    missing = [key for key in PRICE_KEYS if key not in found]
    if missing:
        raise ValueError(f"{source}: {' and '.join(missing)} missing (expected prompt=X,completion=Y, USD per million)")
    return Price(found["prompt"], found["completion"])


def summarize(records: Iterable[Mapping[str, Any]], price: Price | None, key: Any = None) -> dict[str, dict[str, Any]]:
    """Per summary block (`key(record)`, the detector by default): tokens summed over the records
    that report usage; with a price, the run's cost and the cost per 1,000 of those samples. A
    detector that reports no usage appears only when a price is set (to say it cannot be priced)."""
    key = key or (lambda record: record["detector"])
    blocks: dict[str, dict[str, Any]] = {}
    for record in records:
        block = blocks.setdefault(key(record), {"samples": 0, "with_usage": 0, PROMPT: 0, COMPLETION: 0, TOTAL: 0})
        block["samples"] += 1
        usage = usage_of(record)
        if usage is None:
            continue
        block["with_usage"] += 1
        for name in (PROMPT, COMPLETION, TOTAL):
            block[name] += usage[name]
    out = {}
    for name in sorted(blocks):
        block = blocks[name]
        if not block["with_usage"] and price is None:
            continue
        if price is not None and block["with_usage"]:
            cost = price.cost(block[PROMPT], block[COMPLETION])
            block["cost_usd"] = cost
            block["cost_per_1000_samples_usd"] = cost * 1000 / block["with_usage"]
        else:
            block["cost_usd"] = block["cost_per_1000_samples_usd"] = None
        out[name] = block
    return out


def document(blocks: Mapping[str, Mapping[str, Any]], price: Price | None) -> dict[str, Any] | None:
    """The report's `cost` entry: None when no detector reported usage and no price was set."""
    if not blocks and price is None:
        return None
    return {"price": None if price is None else price.as_dict(), "detectors": {k: dict(v) for k, v in blocks.items()}}


def usd(value: float) -> str:
    if value == 0:
        return "$0"
    return f"${value:,.2f}" if value >= 1 else f"${value:.3g}"


def lines(block: Mapping[str, Any] | None, price: Price | None) -> list[str]:
    """The detector block's token and cost lines."""
    if block is None:
        return []
    if not block["with_usage"]:
        return ["  tokens  none reported (only served detectors report usage): the run cannot be priced"]
    n = block["with_usage"]
    every = f"{n} sample" if n == 1 else f"{n} samples"
    reported = f"usage of {n} of {block['samples']} samples" if n < block["samples"] else every
    out = [
        f"  tokens  prompt {block[PROMPT]:,}  completion {block[COMPLETION]:,}  total {block[TOTAL]:,}  "
        f"(per sample {block[PROMPT] / n:,.0f} + {block[COMPLETION] / n:,.1f}; {reported})"
    ]
    if price is not None and block.get("cost_usd") is not None:
        out.append(
            f"  cost    {usd(block['cost_usd'])} for this run, {usd(block['cost_per_1000_samples_usd'])} per 1,000 "
            f"samples (prompt ${price.prompt:g}, completion ${price.completion:g} per million tokens)"
        )
    return out
