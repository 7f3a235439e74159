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

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

from .core.types import Box, Prediction, Query, Sample
from .detectors.base import Detector, Locator
from .evaluate.locate import LocateQuery

__all__ = ["Box", "Detector", "LocateQuery", "Locator", "Prediction", "Query", "Sample"]

# Import paths documented before the package had its folders: they still name the same modules.
MOVED = {
    f"{__name__}.{old}": f"{__name__}.{new}"
    for old, new in {
        "synth": "datasets.synth",
        "validate": "datasets.validate",
        "vlm": "detectors.vlm",
        "strategies": "detectors.strategies",
    }.items()
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import pytest_grounding.detectors.vlm.presets` gives the module object of its new place (one object,
    one state: never a second copy loaded under the old name)."""

    @staticmethod
    def target(name: str) -> str | None:
        for old, new in MOVED.items():
            if name == old or name.startswith(old + "."):
                return new + name[len(old) :]
        return None

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if self.target(fullname) else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.import_module(self.target(spec.name) or spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())
