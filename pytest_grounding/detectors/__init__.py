"""Detector registry: built-ins by lazy import path, installed packages through the entry-point
group `pytest_grounding.detectors`, a project's own through the `pytest_grounding_register_detectors`
hook in its conftest.py."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from ..registry import Registry
from .base import Detector, close, describe

ENTRY_POINT_GROUP = "pytest_grounding.detectors"

BUILTIN = {
    "center": ("pytest_grounding.detectors.floors:CenterDetector", "the image centre (sanity floor)"),
    "random": ("pytest_grounding.detectors.floors:RandomDetector", "a seeded uniform random click (floor); option seed=N"),
    "ocr": ("pytest_grounding.detectors.ocr:OcrDetector", "RapidOCR text boxes + lexical/semantic matching (extra: ocr)"),
    "omniparser": ("pytest_grounding.detectors.omniparser:OmniParserDetector", "OmniParser v2 icons + OCR merge"),
}


def builtin_registry() -> Registry:
    registry = Registry("detector")
    for name, (target, help_text) in BUILTIN.items():
        registry.register(name, target, help=help_text)
    return registry


def parse_spec(spec: str) -> Tuple[str, Dict[str, Any]]:
    """`name` or `name:key=value,key=value` (values that look numeric become numbers)."""
    name, _, rest = spec.partition(":")
    options: Dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"detector option {item!r} in {spec!r} is not key=value")
        options[key.strip()] = _coerce(value.strip())
    return name.strip(), options


def _coerce(value: str) -> Any:
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


__all__ = ["Detector", "builtin_registry", "parse_spec", "describe", "close", "ENTRY_POINT_GROUP"]
