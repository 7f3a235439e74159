"""pytest-grounding: GUI-grounding models measured as pytest items.

The public API for writing a detector::

    from pytest_grounding import Box, Prediction, Query, Sample
    from pytest_grounding import LocateQuery, Locator  # the element-at-click task

A detector is any object with a `name` and `predict(query: Query) -> Prediction`; `describe()`
and `close()` are optional (see `pytest_grounding.detectors.base.Detector`).
"""

from .detectors.base import Detector, Locator
from .locate import LocateQuery
from .types import Box, Prediction, Query, Sample

__all__ = ["Box", "Detector", "LocateQuery", "Locator", "Prediction", "Query", "Sample"]
