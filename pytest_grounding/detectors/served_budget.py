"""A served model resizes what it receives with its own processor: a Qwen2(.5)-VL server shrinks any
image over 12,845,056 pixels (28*28*16384, its processor's default) and answers in that shrunk
frame, which the harness does not know. So a served detector never sends more pixels than the
processor's default budget for the preset's patch size, unless `server_max_pixels=N` says the server
was started with a larger one (vLLM's `--mm-processor-kwargs '{"max_pixels": N}'`). Pure."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from .vlm.library import QWEN2_DEFAULTS, QWEN3_DEFAULTS
from .vlm.preprocess import SmartResize

# The processors' default max_pixels by smart_resize factor (the patch size times the merge size).
DEFAULT_BUDGETS = {QWEN2_DEFAULTS.factor: QWEN2_DEFAULTS.max_pixels, QWEN3_DEFAULTS.factor: QWEN3_DEFAULTS.max_pixels}
MAX_SERVER_PIXELS = 16384 * 16384  # past any screen: a larger server_max_pixels= is a typo (2**28)


def server_budget(preset: Any, server_max_pixels: Any = None) -> int | None:
    """The most pixels the server's processor leaves as they are, or None when it is not known."""
    if server_max_pixels not in (None, ""):
        try:
            number = float(server_max_pixels)
        except (TypeError, ValueError, OverflowError):
            number = math.nan
        if isinstance(server_max_pixels, bool) or not math.isfinite(number) or number != int(number):
            raise ValueError(f"server_max_pixels={str(server_max_pixels)[:40]!r} must be a whole number of pixels")
        if not 1 <= number <= MAX_SERVER_PIXELS:
            raise ValueError(
                f"server_max_pixels={int(number)} must be between 1 and {MAX_SERVER_PIXELS:,} pixels (16384 x 16384)"
            )
        return int(number)
    preprocess = preset.preprocess
    return DEFAULT_BUDGETS.get(preprocess.factor) if isinstance(preprocess, SmartResize) else None


def within_budget(preset: Any, budget: int | None) -> Any:
    """The preset with its smart_resize max_pixels capped at the server's budget."""
    preprocess = preset.preprocess
    if budget is None or not isinstance(preprocess, SmartResize) or preprocess.max_pixels <= budget:
        return preset
    capped = replace(preprocess, max_pixels=budget, min_pixels=min(preprocess.min_pixels, budget))
    return replace(preset, preprocess=capped)
