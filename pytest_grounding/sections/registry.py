"""The registry of report sections, like the detectors': built-ins by lazy "module:attr" names,
installed packages through the `pytest_grounding.sections` entry-point group, a project's through
the `pytest_grounding_register_sections` hook (plugin/common/hookspecs.py).

A pytest session's registry is built once (`configure`) and held by its run plan
(plugin/common/plan.py RunPlan.sections); the session hands its sections to the figures
(analysis/document.py) and to each output. Code outside a session (`merge`, `rescore`, `report`,
`summary`, a benchmark script) uses `default()`: the built-ins and the installed entry points.
No module global says which session is running."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.registry import Registry
from .base import DETECTOR, RUN, Section
from .guard import guarded

ENTRY_POINTS = "pytest_grounding.sections"

# name -> "module:attr" of a Section instance (or class); loaded on first use.
BUILTIN = {
    "card": "pytest_grounding.sections.card:SECTION",  # the run card (issue 58)
    "locate": "pytest_grounding.sections.locate:SECTION",
    "refusals": "pytest_grounding.sections.refusals:SECTION",
    "benchmarks": "pytest_grounding.sections.benchmarks:SECTION",
    "epochs": "pytest_grounding.sections.epochs:SECTION",
    "agentic": "pytest_grounding.sections.agentic:SECTION",
    "robustness": "pytest_grounding.sections.robustness:SECTION",
    "served": "pytest_grounding.sections.served:SECTION",
    "cache": "pytest_grounding.sections.cache:SECTION",
    "cost": "pytest_grounding.sections.cost:SECTION",
    "reproduction": "pytest_grounding.sections.reproduction:SECTION",
    "errata": "pytest_grounding.sections.errata:SECTION",
    "baseline": "pytest_grounding.sections.baseline:SECTION",
    "replay": "pytest_grounding.sections.replay:SECTION",
    # why a model misses (issue 46)
    "tolerance": "pytest_grounding.sections.misses:TOLERANCE",
    "tolerance_share": "pytest_grounding.sections.misses:TOLERANCE_SHARE",
    "miss_analysis": "pytest_grounding.sections.misses:MISS_ANALYSIS",
    "diagnosis": "pytest_grounding.sections.misses:DIAGNOSIS",
    "frame_check": "pytest_grounding.sections.misses:FRAME_CHECK",
    # answers where the engine put them (issue 56)
    "reasoning": "pytest_grounding.sections.reasoning:SECTION",
    "formats": "pytest_grounding.sections.formats:SECTION",
    "coverage": "pytest_grounding.sections.coverage:SECTION",
}


class SectionRegistry(Registry):
    """A Registry whose entries are Section objects, loaded once and handed out in their order."""

    def __init__(self) -> None:
        super().__init__("report section")
        self._loaded: dict[str, Section] = {}
        self.problems: list[str] = []  # a project section's hook that raised (sections/guard.py)

    def register(
        self, name: str, target: Any, *, help: str = "", origin: str = "built-in", replace: bool = False
    ) -> None:
        super().register(name, target, help=help, origin=origin, replace=replace)
        self._loaded.pop(name, None)

    def section(self, name: str) -> Section:
        if name not in self._loaded:
            found = self.get(name).load()
            section = found() if isinstance(found, type) else found
            if not isinstance(section, Section):
                raise TypeError(f"report section {name!r} is {type(section).__name__}, not a sections.Section")
            if section.name != name:
                raise ValueError(f"report section registered as {name!r} names itself {section.name!r}")
            if BUILTIN.get(name) != self.get(name).target:  # a project's or a package's: never the run's end
                section = guarded(section, self.problems)
            self._loaded[name] = section
        return self._loaded[name]

    def sections(self, level: str | None = None) -> list[Section]:
        """Every section (or those of one level: DETECTOR, RUN) in their `order`, then by name."""
        found = [self.section(name) for name in self.names()]
        if level is not None:
            found = [s for s in found if s.level == level]
        return sorted(found, key=lambda s: (s.order, s.name))


def builtin_sections() -> SectionRegistry:
    registry = SectionRegistry()
    for name, target in BUILTIN.items():
        registry.register(name, target)
    return registry


_default: SectionRegistry | None = None  # a cache of what is installed, not a session's state


def default() -> SectionRegistry:
    """The built-ins and the installed packages' entry points (read once per process)."""
    global _default
    if _default is None:
        registry = builtin_sections()
        registry.register_entry_points(ENTRY_POINTS)
        _default = registry
    return _default


def sections(level: str | None = None, registry: SectionRegistry | None = None) -> list[Section]:
    """`registry`'s sections (default: `default()`) in order (see SectionRegistry.sections)."""
    return (registry or default()).sections(level)


def ordered(found: Sequence[Section] | SectionRegistry | None) -> list[Section]:
    """What an output loops over: the sections it was handed (a registry or a list), else the
    installed ones (`default()`)."""
    if found is None:
        return default().sections()
    if isinstance(found, SectionRegistry):
        return found.sections()
    return list(found)


def summarize(
    records: Iterable[Mapping[str, Any]], *, refusal_rows: str = "include", registry: SectionRegistry | None = None
) -> dict[str, dict[str, Any]]:
    """analysis/metrics.summarize with `registry`'s detector sections' figures (default: the installed)."""
    from ..analysis.metrics import summarize as core

    return core(records, refusal_rows=refusal_rows, figures=sections(DETECTOR, registry))


def configure(config: Any, installed: Iterable[Any] | None = None) -> SectionRegistry:
    """A pytest session's registry: the built-ins, the `pytest_grounding_register_sections` hook's,
    the entry points' (`installed`: the group's, from the plan's one scan). The run plan holds it
    (RunPlan.sections)."""
    registry = builtin_sections()
    config.hook.pytest_grounding_register_sections.call_historic(kwargs={"registry": registry})
    registry.register_entry_points(ENTRY_POINTS, installed)
    return registry


__all__ = [
    "DETECTOR",
    "RUN",
    "SectionRegistry",
    "builtin_sections",
    "configure",
    "default",
    "ordered",
    "sections",
    "summarize",
]
