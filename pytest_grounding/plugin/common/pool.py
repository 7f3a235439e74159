"""Detectors loaded once per process (per xdist worker) and reused for every sample."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ...core.record import plain
from ...detectors import bind_options, describe
from ...detectors import close as close_detector
from ...detectors.answer_cache import KeepsAnswers
from ...detectors.strategies import wrap as wrap_strategies
from .specs import SpecBook


class DetectorLoadError(Exception):
    pass


class DetectorPool:
    """Detectors loaded once per process (per xdist worker) and reused for every sample."""

    def __init__(self, specs: SpecBook, answer_store: Any = None, labels: Mapping[str, str] | None = None) -> None:
        self.specs = specs
        self.labels = labels if labels is not None else {}  # label= of marker-pinned specs (filled at collection)
        self.answer_store = answer_store  # --grounding-cache: handed to each detector that keeps answers
        self._loaded: dict[str, Any] = {}
        self._failed: dict[str, str] = {}
        self.info: dict[str, dict[str, Any]] = {}

    def get(self, spec: str) -> Any:
        if spec in self._failed:
            raise DetectorLoadError(self._failed[spec])
        if spec not in self._loaded:
            started = time.perf_counter()
            try:
                parsed = self.specs.get(spec)
                factory = parsed.factory(self.specs.detectors)
                detector = factory(**bind_options(parsed.name, factory, parsed.options))
                if self.answer_store is not None and isinstance(detector, KeepsAnswers):
                    detector.use_answer_store(self.answer_store)
                self._loaded[spec] = wrap_strategies(detector, parsed.chain.strategies, self.specs.strategies)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit from a model's import too: an error per item, not a dead run
                self._failed[spec] = f"detector {spec!r} could not be loaded: {type(exc).__name__}: {exc}"
                raise DetectorLoadError(self._failed[spec]) from exc
            self.info[spec] = plain({**describe(self._loaded[spec]), "load_s": round(time.perf_counter() - started, 3)})
            # --grounding-epochs runs a deterministic detector once: `merge` reads here which epochs it owes
            self.info[spec]["deterministic"] = self.specs.deterministic(spec)
            if spec in self.labels:
                self.info[spec]["label"] = self.labels[spec]
        return self._loaded[spec]

    @property
    def loaded(self) -> bool:
        return bool(self._loaded)

    def served_stats(self) -> dict[str, Any]:
        """Each served detector's HTTP figures (`served_stats()`), by spec."""
        return {
            spec: plain(detector.served_stats())
            for spec, detector in self._loaded.items()
            if callable(getattr(detector, "served_stats", None))
        }

    def close(self) -> None:
        for detector in self._loaded.values():
            close_detector(detector)
        self._loaded.clear()


class LocalWorker(Protocol):
    """What the controller reads from the worker session of its own process (a run without xdist,
    where the one process predicts and gathers): the worker's session itself, seen through this."""

    pool: DetectorPool
    shard_planned: dict[str, dict[str, Any]]

    def detector_lines(self, specs: Sequence[str]) -> list[str]: ...

    def served_stats(self) -> dict[str, Any]: ...
