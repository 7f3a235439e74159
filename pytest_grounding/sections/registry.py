"""The registry of report sections, like the detectors': built-ins by lazy "module:attr" names,
installed packages through the `pytest_grounding.sections` entry-point group, a project's through
the `pytest_grounding_register_sections` hook (plugin/common/hookspecs.py).

Pure code (analysis/metrics.summarize, the renderers, `merge`) asks `active()`: the registry the
running pytest session built (its project's sections included), else the built-ins and the
installed entry points."""

from __future__ import annotations

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


_default: SectionRegistry | None = None
_active: list[SectionRegistry] = []


def default() -> SectionRegistry:
    """The built-ins and the installed packages' entry points (read once per process)."""
    global _default
    if _default is None:
        registry = builtin_sections()
        registry.register_entry_points(ENTRY_POINTS)
        _default = registry
    return _default


def active() -> SectionRegistry:
    return _active[-1] if _active else default()


def sections(level: str | None = None) -> list[Section]:
    """The active registry's sections in order (see SectionRegistry.sections)."""
    return active().sections(level)


def configure(config: Any) -> SectionRegistry:
    """The plugin's registry for one pytest session: the built-ins, the hook's, the entry points';
    active until `unconfigure`."""
    registry = builtin_sections()
    config.hook.pytest_grounding_register_sections.call_historic(kwargs={"registry": registry})
    registry.register_entry_points(ENTRY_POINTS)
    _active.append(registry)
    return registry


def unconfigure(registry: SectionRegistry) -> None:
    if registry in _active:
        _active.remove(registry)


__all__ = ["DETECTOR", "RUN", "SectionRegistry", "active", "builtin_sections", "configure", "sections"]
