"""What a detector is: an object with a name, `predict(query) -> Prediction`, and optional
`describe()` (settings and runtime facts for the report) and `close()`."""

from __future__ import annotations

from typing import Any, Dict, Protocol, runtime_checkable

from ..types import Prediction, Query


@runtime_checkable
class Detector(Protocol):
    name: str

    def predict(self, query: Query) -> Prediction: ...


def describe(detector: Any) -> Dict[str, Any]:
    """The detector's own description, or just its name and class."""
    info: Dict[str, Any] = {"name": getattr(detector, "name", type(detector).__name__),
                            "class": f"{type(detector).__module__}.{type(detector).__qualname__}"}
    fn = getattr(detector, "describe", None)
    if callable(fn):
        info.update(fn())
    return info


def close(detector: Any) -> None:
    fn = getattr(detector, "close", None)
    if callable(fn):
        fn()
