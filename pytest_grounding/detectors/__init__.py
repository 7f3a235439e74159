"""Detector registry: built-ins by lazy import path, installed packages through the entry-point
group `pytest_grounding.detectors`, a project's own through the `pytest_grounding_register_detectors`
hook in its conftest.py."""

from __future__ import annotations

import difflib
import inspect
import math
from typing import Any

from ..core.identity import split_options
from ..core.registry import Registry
from .base import Detector, close, describe

ENTRY_POINT_GROUP = "pytest_grounding.detectors"

BUILTIN = {
    "center": ("pytest_grounding.detectors.floors:CenterDetector", "the image centre (sanity floor)"),
    "random": (
        "pytest_grounding.detectors.floors:RandomDetector",
        "a seeded uniform random click (floor); option seed=N",
    ),
    "ocr": (
        "pytest_grounding.detectors.ocr:OcrDetector",
        "RapidOCR text boxes + lexical/semantic matching (extra: ocr)",
    ),
    "uitars": (
        "pytest_grounding.detectors.qwenvl:UITarsDetector",
        "UI-TARS in-process; ByteDance-Seed/UI-TARS-1.5-7B unless model=ORG/NAME or PATH (extra: uitars)",
    ),
    "qwenvl": (
        "pytest_grounding.detectors.qwenvl:QwenVLDetector",
        "Qwen2-VL / Qwen2.5-VL / Qwen3-VL in-process with any preset; model=ORG/NAME or PATH,preset=NAME "
        "(extra: uitars)",
    ),
    "openai": ("pytest_grounding.detectors.served:OpenAIDetector", "OpenAI-compatible server (extra: openai)"),
    "vllm": (
        "pytest_grounding.detectors.vllm_server:VLLMDetector",
        "a vLLM server the harness starts and stops; model=HUB_ID_OR_FOLDER[,preset=NAME][,server=PATH] "
        "(extra: openai; vLLM in its own environment)",
    ),
    "llamacpp": (
        "pytest_grounding.detectors.llamacpp_server:LlamaCppDetector",
        "a llama.cpp llama-server the harness starts and stops; model=FILE.gguf[,mmproj=FILE.gguf][,preset=NAME]"
        "[,server=PATH] (extra: openai; llama-server built apart)",
    ),
    "omniparser": (
        "pytest_grounding.detectors.omniparser:OmniParserDetector",
        "OmniParser v2 icons + OCR merge (extra: omniparser)",
    ),
    "replay": (
        "pytest_grounding.detectors.batch_replay:Replay",
        "answers from a predictions file made elsewhere; path=FILE[,name=LABEL] (docs: replay)",
    ),
}


# Built-ins that need an optional extra: `pip install "pytest-grounding[EXTRA]"`.
EXTRAS = {
    "ocr": "ocr",
    "omniparser": "omniparser",
    "uitars": "uitars",
    "qwenvl": "uitars",
    "openai": "openai",
    "vllm": "openai",
    "llamacpp": "openai",
}


def builtin_registry() -> Registry:
    registry = Registry("detector")
    for name, (target, help_text) in BUILTIN.items():
        registry.register(name, target, help=help_text)
    return registry


def parse_spec(spec: str, *, raw: bool = False) -> tuple[str, dict[str, Any]]:
    """`name` or `name:key=value,key=value`. Values that look numeric become numbers unless `raw`
    (then `bind_options` converts them by the detector's own signature)."""
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in split_options(rest, spec))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"detector option {item!r} in {spec!r} is not key=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            options[key.strip()] = value[1:-1]  # quoted: kept as it is, commas included
        else:
            options[key.strip()] = value if raw else _coerce(value)
    return name.strip(), options


def _coerce(value: str) -> Any:
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


class OptionError(ValueError):
    """A detector option that the detector does not take, or a value of the wrong kind."""


def option_kinds(factory: Any) -> tuple[dict[str, tuple[str, Any]], bool]:
    """{option: (kind, default)} from the factory's signature (kind: bool, int, float, str or any),
    and whether it takes **kwargs (then unknown names are its business)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return {}, True
    kinds: dict[str, tuple[str, Any]] = {}
    open_ended = False
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            open_ended = True
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.POSITIONAL_ONLY) or parameter.name == "self":
            continue
        default = None if parameter.default is parameter.empty else parameter.default
        kinds[parameter.name] = (_kind_of(default, parameter.annotation), default)
    return kinds, open_ended


def _kind_of(default: Any, annotation: Any) -> str:
    if isinstance(default, bool):
        return "bool"
    for kind in (int, float, str):
        if isinstance(default, kind):
            return kind.__name__
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    for name in ("bool", "int", "float", "str", "Path"):
        if name in str(text):
            return "str" if name == "Path" else name
    return "any"


def bind_options(name: str, factory: Any, options: dict[str, str]) -> dict[str, Any]:
    """Raw `key=value` strings -> keyword arguments for the factory, checked against its
    signature: an unknown name or a value of the wrong kind is an OptionError that lists the
    detector's options (with "did you mean")."""
    kinds, open_ended = option_kinds(factory)
    listing = ", ".join(f"{key}={default!r} ({kind})" for key, (kind, default) in kinds.items()) or "(none)"
    bound: dict[str, Any] = {}
    for key, text in options.items():
        if key not in kinds:
            if open_ended:
                bound[key] = _coerce(text)
                continue
            close = difflib.get_close_matches(key, list(kinds), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise OptionError(f"detector {name!r} has no option {key!r}.{hint} Its options: {listing}")
        kind = kinds[key][0]
        try:
            bound[key] = _convert(text, kind)
        except ValueError as exc:
            raise OptionError(f"detector {name!r} option {key}={text!r}: {exc}. Its options: {listing}") from None
    return bound


def _convert(text: str, kind: str) -> Any:
    lowered = text.strip().lower()
    if kind == "bool":
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        raise ValueError("expected true or false")
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError("expected a whole number") from None
    if kind == "float":
        try:
            number = float(text)
        except ValueError:
            raise ValueError("expected a number") from None
        if not math.isfinite(number):
            raise ValueError("expected a finite number")
        return number
    if kind == "str":
        return text
    value = _coerce(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("expected a finite number")
    return value


__all__ = [
    "ENTRY_POINT_GROUP",
    "EXTRAS",
    "Detector",
    "OptionError",
    "bind_options",
    "builtin_registry",
    "close",
    "describe",
    "parse_spec",
]
