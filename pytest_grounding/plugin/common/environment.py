"""What the run records of its environment: the versions of the packages that move scores, the
presets a project defines (conftest hook, TOML file) and a preset as registered."""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

from ...core.record import plain
from .settings import SettingError


def registered_preset(name: str) -> dict[str, Any] | None:
    """A preset as registered (its describe(), in the report's plain types), or None when the name
    is not one (a detector's own preset)."""
    try:
        from ...detectors.vlm.library import PRESETS
        from ...detectors.vlm.presets import get_preset

        # A project preset that takes a built-in's name is compared with the built-in (the published setup)
        shipped = {preset.name: preset for preset in PRESETS}
        return plain((shipped.get(name) or get_preset(name)).describe())
    except Exception:  # an unknown name (or presets that cannot be read): nothing to compare with
        return None


def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in (
        "pytest-grounding",
        "pytest",
        "pytest-xdist",
        "pytest-benchmark",
        "pillow",
        "numpy",
        "onnxruntime-gpu",
        "onnxruntime",
        "rapidocr",
        "torch",
        "transformers",
    ):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found


def register_project_presets(config, toml_path: Path | None) -> None:
    """Presets a project defines: the register_presets hook (conftest.py), then --grounding-presets.
    A file that cannot be read or a table that is not a preset is a usage error naming it."""
    from ...detectors.vlm.presets import ProjectPresets, unregister_project_presets

    unregister_project_presets()  # a fresh run (pytester runs several in one process)
    registry = ProjectPresets()
    try:
        config.hook.pytest_grounding_register_presets.call_historic(kwargs={"registry": registry})
        if toml_path is not None:
            registry.load_toml(toml_path)
    except (ValueError, LookupError) as exc:  # LookupError: a conftest preset based on an unknown one
        message = str(exc)
        raise SettingError(f"--grounding-presets: {message}" if "presets file" in message else message) from None
