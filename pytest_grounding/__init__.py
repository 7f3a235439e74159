"""pytest-grounding: GUI-grounding models measured as pytest items.

The public API for writing a detector::

    from pytest_grounding import Box, Prediction, Query, Sample
    from pytest_grounding import LocateQuery, Locator  # the element-at-click task

A detector is any object with a `name` and `predict(query: Query) -> Prediction`; `describe()`
and `close()` are optional (see `pytest_grounding.detectors.base.Detector`).

The package's folders say what each part is and which process runs it: `core` (types, no I/O),
`evaluate` (one sample to one record), `analysis` (records to figures), `render` (figures to
text and files), `plugin` (everything that imports pytest), `datasets`, `detectors`, `cli`.
"""

from __future__ import annotations

from .core.types import Box, Prediction, Query, Sample
from .detectors.base import Detector, Locator
from .evaluate.locate import LocateQuery

__all__ = ["Box", "Detector", "LocateQuery", "Locator", "Prediction", "Query", "Sample"]
