"""What a preset is: a model prompted and decoded as its authors do, composed from named parts
(prompt, preprocessing, extractors, coordinate transform, decoding, refusal form). The shipped ones
are in `library.py`; finding, registering and overriding them is `presets.py`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from . import prompts
from .parse import answer_to_prediction, split_transform
from .preprocess import Preprocess


@dataclass(frozen=True)
class Decoding:
    """temperature 0 = greedy. `frequency_penalty`, `top_k`, `stop` and `skip_special_tokens` are
    sent to servers as vLLM takes them; in-process, `top_k` samples and special tokens are kept
    when `skip_special_tokens` is false (OS-Atlas writes its box between `<|box_start|>` tokens)."""

    max_new_tokens: int = 128
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    frequency_penalty: float | None = None
    stop: tuple[str, ...] = ()
    skip_special_tokens: bool = True
    # chat-template switches (Holo2/3: thinking off for grounding): to the template in-process, as
    # vLLM's `chat_template_kwargs` to a server
    chat_template_kwargs: tuple[tuple[str, bool], ...] = ()

    def __post_init__(self) -> None:  # refused when the preset is made, not by failing every sample
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            raise ValueError(f"decoding: max_new_tokens={self.max_new_tokens!r} must be an integer of at least 1")
        if not (_finite(self.temperature) and self.temperature >= 0):
            raise ValueError(f"decoding: temperature={self.temperature!r} must be a number of at least 0")
        if self.top_p is not None and not (_finite(self.top_p) and 0 < self.top_p <= 1):
            raise ValueError(f"decoding: top_p={self.top_p!r} must be above 0 and at most 1")
        if self.top_k is not None and (isinstance(self.top_k, bool) or not isinstance(self.top_k, int)):
            raise ValueError(f"decoding: top_k={self.top_k!r} must be an integer")
        if self.frequency_penalty is not None and not _finite(self.frequency_penalty):
            raise ValueError(f"decoding: frequency_penalty={self.frequency_penalty!r} must be a number")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    @property
    def thinking(self) -> bool | None:
        """The chat template's thinking switch the preset sends (None: it sends none, the template's default)."""
        for key, value in self.chat_template_kwargs:
            if key in ("enable_thinking", "thinking"):
                return bool(value)
        return None

    def summary(self) -> str:
        how = "greedy" if self.greedy else f"temperature {self.temperature:g}"
        extra = [f"{k} {v:g}" for k, v in (("top_p", self.top_p), ("top_k", self.top_k)) if v is not None]
        if self.frequency_penalty is not None:
            extra.append(f"frequency_penalty {self.frequency_penalty:g}")
        if self.stop:
            extra.append("stop " + " ".join(self.stop))
        if not self.skip_special_tokens:
            extra.append("special tokens kept")
        extra.extend(f"{k}={v}" for k, v in self.chat_template_kwargs)
        return ", ".join([how, f"{self.max_new_tokens} tokens", *extra])


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


COORDINATES = {
    "abs": "pixels of the image the model is given",
    "abs_smart_resize": "pixels of the image the model is given",
    "rel1000": "0-1000 of the image",
    "rel999": "0-999 of the image",
    "rel1": "0-1 of the image",
}


@dataclass(frozen=True)
class Preset:
    """`source`: where each part was read (repository, file, commit as the reference gives);
    `notes`: disagreements between sources and which one was taken, and why."""

    name: str
    family: str
    prompt: prompts.Prompt
    preprocess: Preprocess
    extractors: tuple[str, ...]
    transform: str
    decoding: Decoding = field(default_factory=Decoding)
    refusal: str | None = None
    source: str = ""
    notes: str = ""
    origin: str = "built-in"  # built-in | conftest | the TOML file's path

    @property
    def coordinates(self) -> str:
        """The coordinate system in words: `yx_swap+rel1000` -> "0-1000 of the image, y first"."""
        parts = split_transform(self.transform)
        words = [COORDINATES.get(p, p) for p in parts if p != "yx_swap"]
        text = ", ".join(words) or "pixels of the image the model is given"
        if "yx_swap" in parts:
            text += ", y first"
        if self.preprocess.kind == "canvas":
            text += " (the canvas)"
        return text

    def parse(self, answer: str | None, frame: Any, meta: dict[str, Any]) -> Any:
        """A model's answer in `frame` as a Prediction in the original image's pixels, as this
        preset reads it (its extractors, coordinate transform and refusal): the one place every
        model detector and `rescore` parse through."""
        return answer_to_prediction(
            answer, frame, extractors=self.extractors, transform=self.transform, refusal=self.refusal, meta=meta
        )

    def describe(self) -> dict[str, Any]:
        info = asdict(self)
        info["preprocess"] = self.preprocess.describe()
        info["extractors"] = list(self.extractors)
        info["decoding"]["stop"] = list(self.decoding.stop)
        info["decoding"]["chat_template_kwargs"] = dict(self.decoding.chat_template_kwargs)
        info["decoding"]["thinking"] = self.decoding.thinking  # issue 56: on, off, or None (the template's default)
        info["coordinates"] = self.coordinates
        return info


def preset_headline(preset: Preset) -> str:
    """The preset in the summary header: name, preprocessing, decoding."""
    pre = preset.preprocess.describe()
    sizes = ", ".join(f"{k} {v}" for k, v in pre.items() if k != "kind")
    return f"preset {preset.name}, {pre['kind']}" + (f" {sizes}" if sizes else "") + f", {preset.decoding.summary()}"
