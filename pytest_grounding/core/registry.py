"""A small registry of named factories, given as callables or lazy "module:attr" strings so that
a heavy detector is imported only when a run asks for it (lm-evaluation-harness style)."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# A lazy "module:attr" string, or the object itself: a factory (detectors) or a Format (datasets).
Target = Any


class UnknownName(LookupError, ValueError):
    """A name the user gave that no registry holds: a lookup that failed and a bad value, so every
    check that turns a ValueError into a usage error (a spec's options, a preflight) says it in one line."""


@dataclass(frozen=True)
class Entry:
    name: str
    target: Target
    help: str = ""
    origin: str = "built-in"

    def load(self) -> Any:
        """The registered object: a factory, or (dataset formats) a Format."""
        if not isinstance(self.target, str):
            return self.target
        module_name, _, attr = self.target.partition(":")
        obj: Any = importlib.import_module(module_name)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
        return obj


def installed_entry_points(*groups: str) -> dict[str, list[Any]]:
    """Several groups' entry points from one scan of the installed packages' metadata (each
    lookup by group reads every package's metadata again: ~15 ms a scan here, in every process)."""
    from importlib.metadata import entry_points

    everything = entry_points()
    return {group: list(everything.select(group=group)) for group in groups}


class Registry:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def register(
        self, name: str, target: Target, *, help: str = "", origin: str = "built-in", replace: bool = False
    ) -> None:
        if name in self._entries and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered ({self._entries[name].origin})")
        self._entries[name] = Entry(name, target, help, origin)

    def register_entry_points(self, group: str, found: Iterable[Any] | None = None) -> None:
        """The group's entry points: `found` (from `installed_entry_points`), else looked up."""
        if found is None:
            from importlib.metadata import entry_points

            found = entry_points(group=group)
        for ep in found:
            if ep.name not in self._entries:
                self.register(ep.name, ep.value, origin=f"entry point {ep.value}")

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._entries))

    def entries(self) -> Iterable[Entry]:
        return (self._entries[n] for n in self.names())

    def get(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownName(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(name, self.names(), n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return f"unknown {self.kind} {name!r}.{hint} Known: {', '.join(self.names()) or '(none)'}."
