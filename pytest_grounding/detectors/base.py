"""What a detector is: an object with a name, `predict(query) -> Prediction`, and optional
`describe()` (settings and runtime facts for the report) and `close()`; one that also answers the
element-at-click task (`--grounding-task locate`) has `locate(query) -> Prediction` (a `Locator`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..core.redact import redact
from ..core.types import Box, Prediction, Query
from ..evaluate.locate import LocateQuery


@runtime_checkable
class Detector(Protocol):
    name: str

    def predict(self, query: Query) -> Prediction: ...


@runtime_checkable
class Locator(Protocol):
    """Answers the element-at-click task: the image and a recorded click point (`query.point`) in,
    the box of the element under it out (`Prediction(box=...)`), never seeing the target."""

    name: str

    def locate(self, query: LocateQuery) -> Prediction: ...


@dataclass(frozen=True)
class ListedElement:
    """One element of a parsed screen: its box (pixels), type (text | icon | ...) and its text
    (None for an icon with no text in it)."""

    box: Box
    type: str
    text: str | None = None


@runtime_checkable
class ElementLister(Protocol):
    """A detector that can list a screen's elements (`python -m pytest_grounding annotate`)."""

    name: str

    def elements(self, image: Any) -> list[ListedElement]: ...


def describe(detector: Any) -> dict[str, Any]:
    """The detector's own description, or just its name and class."""
    info: dict[str, Any] = {
        "name": getattr(detector, "name", type(detector).__name__),
        "class": f"{type(detector).__module__}.{type(detector).__qualname__}",
    }
    fn = getattr(detector, "describe", None)
    if callable(fn):
        try:
            described = fn()
            info.update(described)
        except Exception as exc:  # a broken describe() is a note in the report, never the run's end
            info["describe_error"] = redact(f"{type(exc).__name__}: {exc}")[:300]
    return info


def close(detector: Any) -> None:
    fn = getattr(detector, "close", None)
    if callable(fn):
        fn()
