"""pytest-grounding: GUI-grounding models measured as pytest items.

The public API for writing a detector::

    from pytest_grounding import Box, Prediction, Query, Sample

A detector is any object with a `name` and `predict(query: Query) -> Prediction`; `describe()`
and `close()` are optional (see `pytest_grounding.detectors.base.Detector`).
"""

from .detectors.base import Detector
from .types import Box, Prediction, Query, Sample

__all__ = ["Box", "Detector", "Prediction", "Query", "Sample"]
