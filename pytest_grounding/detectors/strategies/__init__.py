"""Cropping strategies: wrappers any detector can wear, spelled in the detector spec.

Grammar (docs/strategies.md): ``DETECTOR[:key=value,...][+STRATEGY[:key=value,...]]...``, e.g.
``ocr+zoom``, ``uitars:model=DIR+screenseeker:depth=2``, ``ocr+regrounding+zoom:rounds=2``. A ``+``
starts a strategy when the name after it is a registered strategy; ``+name:...`` or a near miss of
a strategy's name that is not registered is a usage error; any other ``+`` stays in the value (a
path holding ``+``).
Strategies apply left to right: the first wraps the detector, the next wraps that.

A strategy is a factory ``(detector, **options) -> detector``: it receives only what a detector
receives (a Query: the image and the instruction), never the target. Built-ins are registered
here by lazy path; a project adds its own through ``pytest_grounding_register_strategies``."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from ...core.registry import Registry

ENTRY_POINT_GROUP = "pytest_grounding.strategies"
SEPARATOR = "+"

BUILTIN = {
    "regrounding": (
        "pytest_grounding.detectors.strategies.wrappers:Regrounding",
        "ground, crop ~1024x1024 around the answer, ground again (options: size)",
    ),
    "zoom": (
        "pytest_grounding.detectors.strategies.wrappers:Zoom",
        "iterative narrowing: each round halves the window around the last answer (options: rounds, factor, min_size)",
    ),
    "zoomin": (
        "pytest_grounding.detectors.strategies.zoomin:ZoomIn",
        "two-stage zoom-in as papers report it: ground, crop ratio x the screen around the answer at the "
        "authors' crop size, ground again (options: ratio, resize)",
    ),
    "screenseeker": (
        "pytest_grounding.detectors.strategies.screenseeker:ScreenSeekeR",
        "planner-guided recursive search with Gaussian voting and NMS (options: depth, planner, base_url, ...)",
    ),
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def builtin_registry() -> Registry:
    registry = Registry("strategy")
    for name, (target, help_text) in BUILTIN.items():
        registry.register(name, target, help=help_text)
    return registry


class ChainError(ValueError):
    """A detector spec whose strategy part is wrong; the message names that part."""


@dataclass(frozen=True)
class Chain:
    """A detector spec split: the detector's own spec and the strategy specs, innermost first."""

    detector: str
    strategies: tuple[str, ...] = ()


def split_chain(spec: str, strategies: Registry) -> Chain:
    """`ocr:lang=en+zoom:rounds=2` -> Chain("ocr:lang=en", ("zoom:rounds=2",))."""
    pieces = spec.split(SEPARATOR)
    parts: list[str] = [pieces[0]]
    for piece in pieces[1:]:
        name = piece.partition(":")[0].strip()
        if name in strategies:
            parts.append(piece)
            continue
        close = difflib.get_close_matches(name, strategies.names(), n=1)
        if _NAME.fullmatch(name) and (":" in piece or close):
            # a strategy's shape (or a typo of one), not a registered one: say so rather than pass it on
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ChainError(
                f"unknown strategy {name!r} in {spec!r}.{hint} Known strategies: {', '.join(strategies.names())}"
            )
        parts[-1] += SEPARATOR + piece  # a value holding '+' (a path), not a strategy
    if not parts[0].strip():
        raise ChainError(f"{spec!r} names no detector before {SEPARATOR!r}")
    return Chain(parts[0], tuple(p.strip() for p in parts[1:]))


def wrap(detector: Any, strategy_specs: tuple[str, ...], strategies: Registry) -> Any:
    """The detector inside each strategy in turn, options bound by each factory's signature."""
    from .. import bind_options, parse_spec

    for strategy_spec in strategy_specs:
        name, options = parse_spec(strategy_spec, raw=True)
        factory = strategies.get(name).load()
        detector = factory(detector, **bind_options(name, factory, options))
    return detector


def check(strategy_specs: tuple[str, ...], strategies: Registry) -> None:
    """Names and options checked without building anything (a usage error before any sample runs)."""
    from .. import OptionError, bind_options, parse_spec

    for strategy_spec in strategy_specs:
        try:
            name, options = parse_spec(strategy_spec, raw=True)
            factory = strategies.get(name).load()
            bind_options(name, factory, options)
        except (OptionError, ValueError, LookupError) as exc:
            text = str(exc).replace("detector ", "strategy ", 1)
            raise ChainError(f"strategy part {strategy_spec!r}: {text}") from None
        validate = getattr(factory, "validate_options", None)
        if callable(validate):
            try:
                validate(**bind_options(name, factory, options))
            except ValueError as exc:
                raise ChainError(f"strategy part {strategy_spec!r}: {exc}") from None


__all__ = ["BUILTIN", "Chain", "ChainError", "builtin_registry", "check", "split_chain", "wrap"]
