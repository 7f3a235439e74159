"""Detectors loaded once per process (per xdist worker) and reused for every sample."""

from __future__ import annotations

import time
from typing import Any

from ..core.record import plain
from ..core.registry import Registry
from ..detectors import bind_options, describe, parse_spec
from ..detectors import close as close_detector
from ..detectors.strategies import builtin_registry as builtin_strategies
from ..detectors.strategies import split_chain
from ..detectors.strategies import wrap as wrap_strategies


class DetectorLoadError(Exception):
    pass


class DetectorPool:
    """Detectors loaded once per process (per xdist worker) and reused for every sample."""

    def __init__(self, registry: Registry, strategies: Registry | None = None, answer_store: Any = None) -> None:
        self.registry = registry
        self.answer_store = answer_store  # --grounding-cache: handed to each detector that keeps answers
        self.strategies = strategies if strategies is not None else builtin_strategies()
        self._loaded: dict[str, Any] = {}
        self._failed: dict[str, str] = {}
        self.info: dict[str, dict[str, Any]] = {}

    def get(self, spec: str) -> Any:
        if spec in self._failed:
            raise DetectorLoadError(self._failed[spec])
        if spec not in self._loaded:
            started = time.perf_counter()
            try:
                chain = split_chain(spec, self.strategies)
                name, options = parse_spec(chain.detector, raw=True)
                factory = self.registry.get(name).load()
                detector = factory(**bind_options(name, factory, options))
                if self.answer_store is not None and hasattr(detector, "answer_cache"):
                    detector.answer_cache = self.answer_store
                self._loaded[spec] = wrap_strategies(detector, chain.strategies, self.strategies)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit from a model's import too: an error per item, not a dead run
                self._failed[spec] = f"detector {spec!r} could not be loaded: {type(exc).__name__}: {exc}"
                raise DetectorLoadError(self._failed[spec]) from exc
            self.info[spec] = plain({**describe(self._loaded[spec]), "load_s": round(time.perf_counter() - started, 3)})
        return self._loaded[spec]

    def close(self) -> None:
        for detector in self._loaded.values():
            close_detector(detector)
        self._loaded.clear()
