"""Parts shared by the vision-language-model detectors (`qwenvl`/`uitars` in-process, `openai` over
HTTP): prompt builders, image preprocessing, answer extractors, coordinate transforms, and presets
that compose them the way a model's authors do (`library.py`). Pure Python here; torch and
transformers stay in the detectors, `ui-tars` is imported when the part that uses it runs."""

from .parse import EXTRACTORS, REFUSALS, TRANSFORMS, Extracted, answer_to_prediction
from .preprocess import PREPROCESSORS, Frame, SmartResize
from .preset import Decoding, Preset
from .presets import (
    all_presets,
    get_preset,
    preset_registry,
    presets_from_toml,
    register_preset,
    resolve_preset,
)
from .prompts import Prompt

__all__ = [
    "EXTRACTORS",
    "PREPROCESSORS",
    "REFUSALS",
    "TRANSFORMS",
    "Decoding",
    "Extracted",
    "Frame",
    "Preset",
    "Prompt",
    "SmartResize",
    "all_presets",
    "answer_to_prediction",
    "get_preset",
    "preset_registry",
    "presets_from_toml",
    "register_preset",
    "resolve_preset",
]
