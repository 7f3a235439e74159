"""A dataset as a run loads it, for the commands that audit and review one (cli/audit.py, review)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ...core.safetext import terminal_line


class AuditError(Exception):
    """A dataset or a run that cannot be read: one line, exit 2."""


def load(spec: str) -> Any:
    """The dataset as a run loads it: the plugin's catalog with every registered format."""
    from ...core.registry import installed_entry_points
    from ...datasets import DatasetError, builtin_registry
    from ...plugin.common.catalog import Catalog

    formats = builtin_registry()
    group = "pytest_grounding.formats"
    formats.register_entry_points(group, installed_entry_points(group)[group])
    catalog = Catalog(formats, "en", lambda text: print(f"note: {terminal_line(text)}", file=sys.stderr))
    try:
        return catalog.load(spec, Path.cwd())
    except DatasetError as exc:
        raise AuditError(str(exc)) from None
