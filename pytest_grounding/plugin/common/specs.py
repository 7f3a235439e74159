"""Detector specs parsed once per process: the strategy chain split off, the detector's name and
its raw options, its registry entry and factory. Every place that needs a spec's parts (the
checks before a run, the pool, the scheduler's window, the deterministic test) asks here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.registry import Registry
from ...detectors import parse_spec
from ...detectors.strategies import Chain, split_chain


@dataclass(frozen=True)
class DetectorSpec:
    """One `--detector` value, split: `ocr:lang=en+zoom` -> detector `ocr`, options, strategies."""

    spec: str
    chain: Chain
    name: str
    options: dict[str, Any]
    origin: str  # the registry entry's origin: "built-in", an entry point, a plugin

    def factory(self, detectors: Registry) -> Any:
        return detectors.get(self.name).load()


@dataclass
class SpecBook:
    """The specs of a run, each parsed once (a ChainError, OptionError or UnknownName propagates
    to the caller, who names where the spec came from)."""

    detectors: Registry
    strategies: Registry
    _parsed: dict[str, DetectorSpec] = field(default_factory=dict)

    def get(self, spec: str) -> DetectorSpec:
        found = self._parsed.get(spec)
        if found is None:
            chain = split_chain(spec, self.strategies)
            name, options = parse_spec(chain.detector, raw=True)
            origin = self.detectors.get(name).origin
            found = self._parsed[spec] = DetectorSpec(spec, chain, name, options, origin)
        return found

    def factory(self, spec: str) -> Any:
        return self.get(spec).factory(self.detectors)

    def deterministic(self, spec: str) -> bool:
        """The detector's class says it gives the same answer every time (`deterministic = True`)."""
        try:
            factory = self.factory(spec)
        except Exception:  # an unusable spec is the checks' message, not this one's
            return False
        return getattr(factory, "deterministic", False) is True
