"""Which of the package's extras are installed (read from its own metadata, so it cannot drift
from pyproject.toml), and the default detector that follows from it."""

from __future__ import annotations

import re


def default_detector() -> str:
    """The real OCR detector when its extra is installed, so a new user sees a real model first."""
    return "ocr" if missing_extra("ocr") is None else "center"


def missing_extra(extra: str) -> str | None:
    """The first distribution of `pytest-grounding[extra]` that is not installed, or None. Read
    from the package's own metadata, so it cannot drift from pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, requires, version

    try:
        requirements = requires("pytest-grounding") or []
    except PackageNotFoundError:  # run from a checkout that is not installed: nothing to compare with
        return None
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    for requirement in requirements:
        if not marker.search(requirement):
            continue
        name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]
        if name.startswith("pytest-grounding"):
            continue
        try:
            version(name)
        except PackageNotFoundError:
            return name
    return None
