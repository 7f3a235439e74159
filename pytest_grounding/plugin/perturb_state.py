"""--grounding-perturb in a pytest process: the axes' registry (built-ins, the
`pytest_grounding_register_perturbations` hook, the `pytest_grounding.perturbations` entry
points), the run's variants parsed once at configure (a bad spec is a usage error), and the
samples expanded with them (collection, resume). The same in every xdist process."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from ..core.registry import Registry
from ..core.types import Sample
from ..perturb import ENTRY_POINT_GROUP, builtin_registry, parse, split_specs, with_variants
from ..perturb.base import Perturbation
from .settings import SettingError

KEY = pytest.StashKey["Sweep"]()


@dataclass
class Sweep:
    registry: Registry
    perturbations: list[Perturbation] = field(default_factory=list)


def configure(config: Any, specs: Sequence[str]) -> Sweep:
    """The registry and the run's variants, kept in config.stash; SettingError for a bad spec."""
    registry = builtin_registry()
    config.hook.pytest_grounding_register_perturbations.call_historic(kwargs={"registry": registry})
    registry.register_entry_points(ENTRY_POINT_GROUP)
    try:
        sweep = Sweep(registry, parse(split_specs(specs), registry))
    except ValueError as exc:
        raise SettingError(f"--grounding-perturb: {exc}") from None
    config.stash[KEY] = sweep
    return sweep


def perturbations(config: Any) -> list[Perturbation]:
    sweep = config.stash.get(KEY, None)
    return sweep.perturbations if sweep is not None else []


def expand(config: Any, samples: Iterable[Sample]) -> list[Sample]:
    """The samples, each followed by its variants (none without --grounding-perturb)."""
    return with_variants(samples, perturbations(config))
