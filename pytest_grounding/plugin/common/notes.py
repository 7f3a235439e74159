"""The run's notes: each said once, in the order first said, in the header and the summary. One
object per process, made beside the plan (the catalog, the controller's start-up checks and its
session add to it); the plan itself holds none."""

from __future__ import annotations

from collections.abc import Iterator


class Notes:
    def __init__(self) -> None:
        self._said: dict[str, None] = {}  # insertion-ordered, each text once

    def add(self, text: str) -> None:
        self._said.setdefault(text, None)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._said))

    def __len__(self) -> int:
        return len(self._said)

    def __repr__(self) -> str:
        return f"Notes({list(self._said)!r})"
