"""Parts shared by the vision-language-model detectors (`uitars` in-process, `openai` over HTTP):
prompt builders, image preprocessing, answer extractors, coordinate transforms, and presets that
compose them the way a model's authors do. Pure Python here; torch and transformers stay in the
detectors, `ui-tars` is imported when a part that uses it runs."""

from .parse import Extracted, answer_to_prediction
from .preprocess import Frame, SmartResize
from .presets import Decoding, Preset, get_preset, preset_registry, resolve_preset
from .prompts import Prompt

__all__ = [
    "Decoding",
    "Extracted",
    "Frame",
    "Preset",
    "Prompt",
    "SmartResize",
    "answer_to_prediction",
    "get_preset",
    "preset_registry",
    "resolve_preset",
]
