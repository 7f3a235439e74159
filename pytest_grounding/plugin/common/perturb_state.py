"""--grounding-perturb in a pytest process: the axes' registry (built-ins, the
`pytest_grounding_register_perturbations` hook, the `pytest_grounding.perturbations` entry
points) and the run's variants, parsed once when the plan is built (a bad spec is a usage error).
The sweep lives on the RunPlan (`plan.sweep`); `plan.expand` makes items' samples with it. The
same in every xdist process."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core.registry import Registry
from ...perturb import ENTRY_POINT_GROUP, builtin_registry, parse, split_specs
from ...perturb.base import Perturbation
from .settings import SettingError


@dataclass(frozen=True)
class Sweep:
    registry: Registry
    perturbations: tuple[Perturbation, ...] = ()


def build_sweep(config: Any, specs: Sequence[str], installed: Sequence[Any] | None = None) -> Sweep:
    """The registry and the run's variants; SettingError for a bad spec. `installed`: the group's
    entry points when the caller has read them already (one scan of the installed packages a run)."""
    registry = builtin_registry()
    config.hook.pytest_grounding_register_perturbations.call_historic(kwargs={"registry": registry})
    registry.register_entry_points(ENTRY_POINT_GROUP, installed)
    try:
        return Sweep(registry, tuple(parse(split_specs(specs), registry)))
    except ValueError as exc:
        raise SettingError(f"--grounding-perturb: {exc}") from None
