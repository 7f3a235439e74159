"""A project's report section kept from ending the run: each hook that raises contributes nothing
(the hook's default from Section) and says so once, in the registry's `problems` (the terminal
summary prints them). Built-in sections are not wrapped: their errors are this project's bugs and
its tests catch them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Section

GUARDED_HOOKS = (
    "figures",
    "judge",
    "terminal",
    "run_terminal",
    "markdown",
    "html",
    "metrics",
    "schema",
    "schema_report",
    "schema_defs",
    "thumbnail_records",
    "card",
    "example",
)
COPIED = ("name", "title", "level", "order", "html_inline", "terminal_after_summary", "not_in")


def _guarded(inner: Section, hook: str, problems: list[str]) -> Callable[..., Any]:
    own = getattr(inner, hook)
    fallback = getattr(Section, hook)
    said: list[bool] = []

    def call(self: Section, *args: Any) -> Any:
        try:
            return own(*args)
        except Exception as exc:  # a project's code: its part is left out, the run goes on
            if not said:
                said.append(True)
                problems.append(
                    f"report section {inner.name!r}: {hook}() raised {type(exc).__name__}: {exc}; its part is left out",
                )
            return fallback(self, *args)

    return call


def guarded(inner: Section, problems: list[str]) -> Section:
    """`inner` behind a guard on every hook (a new Section subclass: the attributes copied)."""
    namespace: dict[str, Any] = {attr: getattr(inner, attr) for attr in COPIED}
    namespace.update({hook: _guarded(inner, hook, problems) for hook in GUARDED_HOOKS})
    namespace["__getattr__"] = lambda self, attr: getattr(inner, attr)  # the section's own helpers
    cls = type(f"Guarded{type(inner).__name__}", (Section,), namespace)
    section: Section = cls()
    return section
