"""Presets: a model prompted and decoded as its authors do, composed from named parts (prompt,
preprocessing, extractors, coordinate transform, decoding, refusal form). Both VLM detectors take
`preset=NAME` and any part as an override option (`resolve_preset`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..registry import Registry
from . import prompts
from .parse import check_parts
from .preprocess import SmartResize


@dataclass(frozen=True)
class Decoding:
    """temperature 0 = greedy. `frequency_penalty` is sent to servers only (transformers has none)."""

    max_new_tokens: int = 128
    temperature: float = 0.0
    top_p: float | None = None
    frequency_penalty: float | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(frozen=True)
class Preset:
    name: str
    family: str
    prompt: prompts.Prompt
    preprocess: SmartResize
    extractors: tuple[str, ...]
    transform: str
    decoding: Decoding = field(default_factory=Decoding)
    refusal: str | None = None
    source: str = ""

    def describe(self) -> dict[str, Any]:
        info = asdict(self)
        info["preprocess"] = self.preprocess.describe()
        info["extractors"] = list(self.extractors)
        return info


UITARS_SOURCE_15 = "bytedance/UI-TARS issues #182 and #215 (maintainer's ScreenSpot-Pro setup); ui-tars 0.5.1 on PyPI"
UITARS_15 = SmartResize(factor=28, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28)

PRESETS: tuple[Preset, ...] = (
    Preset(
        "uitars-1.5-point",
        "UI-TARS-1.5 (Qwen2.5-VL)",
        prompts.Prompt(prompts.UITARS_POINT),
        UITARS_15,
        ("uitars_action", "paren"),
        "abs_smart_resize",
        Decoding(max_new_tokens=128),
        source=UITARS_SOURCE_15,
    ),
    Preset(
        "uitars-1.5-computer-use",
        "UI-TARS-1.5 (Qwen2.5-VL)",
        prompts.Prompt(prompts.UITARS_COMPUTER_USE),
        UITARS_15,
        ("uitars_action", "paren"),
        "abs_smart_resize",
        Decoding(max_new_tokens=128),
        source="bytedance/UI-TARS README (1.5 computer-use prompt, click action only)",
    ),
    # UI-TARS 1.0 (Qwen2-VL) answers 0-1000 of the image; Qwen2-VL processor defaults (3136 / 12845056).
    Preset(
        "uitars-1.0",
        "UI-TARS 1.0 (Qwen2-VL)",
        prompts.Prompt(prompts.UITARS_POINT),
        SmartResize(factor=28, min_pixels=56 * 56, max_pixels=28 * 28 * 16384),
        ("uitars_action", "paren"),
        "rel1000",
        Decoding(max_new_tokens=128, frequency_penalty=1.0),
        source="bytedance/UI-TARS README_v1 'Coordinate Mapping', issue #6",
    ),
)
DEFAULT_PRESET = "uitars-1.5-point"


def preset_registry() -> Registry:
    registry = Registry("preset")
    for preset in PRESETS:
        registry.register(preset.name, lambda preset=preset: preset, help=f"{preset.family}: {preset.source}")
    return registry


def get_preset(name: str) -> Preset:
    return preset_registry().get(name).load()()


# Options that override one part of a preset (detector options are strings or numbers).
OVERRIDES = (
    "prompt",
    "system",
    "image_first",
    "factor",
    "min_pixels",
    "max_pixels",
    "extractors",
    "transform",
    "refusal",
    "max_new_tokens",
    "temperature",
    "top_p",
    "frequency_penalty",
    "greedy",
)


def resolve_preset(name: str = DEFAULT_PRESET, **overrides: Any) -> Preset:
    """The named preset with the given parts replaced. `extractors` is `a+b` (tried in order),
    `prompt` holds `{instruction}`, `refusal=none` drops the refusal form, `greedy=true` forces
    temperature 0 (and `greedy=false` without a temperature samples at 1.0)."""
    unknown = sorted(set(overrides) - set(OVERRIDES))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(unknown)}; preset parts: {', '.join(OVERRIDES)}")
    preset = get_preset(name)
    given = {k: v for k, v in overrides.items() if v is not None}
    prompt_parts: dict[str, Any] = {k: given[k] for k in ("system", "image_first") if k in given}
    if "prompt" in given:
        prompt_parts["user"] = str(given["prompt"])
    if "image_first" in prompt_parts:
        prompt_parts["image_first"] = _as_bool(prompt_parts["image_first"], "image_first")
    resize_parts = {k: int(given[k]) for k in ("factor", "min_pixels", "max_pixels") if k in given}
    decoding_parts: dict[str, Any] = {
        k: given[k] for k in ("max_new_tokens", "temperature", "top_p", "frequency_penalty") if k in given
    }
    if "max_new_tokens" in decoding_parts:
        decoding_parts["max_new_tokens"] = int(decoding_parts["max_new_tokens"])
    if "greedy" in given:
        if _as_bool(given["greedy"], "greedy"):
            decoding_parts["temperature"] = 0.0
        elif float(decoding_parts.get("temperature", preset.decoding.temperature)) == 0:
            decoding_parts["temperature"] = 1.0
    if "temperature" in decoding_parts:
        decoding_parts["temperature"] = float(decoding_parts["temperature"])
    changes: dict[str, Any] = {}
    if prompt_parts:
        changes["prompt"] = replace(preset.prompt, **prompt_parts)
    if resize_parts:
        changes["preprocess"] = replace(preset.preprocess, **resize_parts)
    if decoding_parts:
        changes["decoding"] = replace(preset.decoding, **decoding_parts)
    if "extractors" in given:
        changes["extractors"] = tuple(filter(None, str(given["extractors"]).split("+")))
    if "transform" in given:
        changes["transform"] = str(given["transform"])
    if "refusal" in given:
        changes["refusal"] = None if str(given["refusal"]).lower() == "none" else str(given["refusal"])
    resolved = replace(preset, **changes) if changes else preset
    check_parts(resolved.extractors, resolved.transform, resolved.refusal)
    return resolved


def _as_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be true or false, not {value!r}")


def split_overrides(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Detector options -> (preset overrides, the rest)."""
    parts = {k: v for k, v in options.items() if k in OVERRIDES}
    return parts, {k: v for k, v in options.items() if k not in OVERRIDES}
