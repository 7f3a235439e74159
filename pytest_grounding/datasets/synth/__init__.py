"""A deterministic generator of screens that look like dense professional software, with exact
ground truth, written in the Pointerbench-Pro imagefolder layout; and the embedded default set
that `pytest suites/` runs when no dataset is given."""

from typing import TYPE_CHECKING, Any

from .default import DEFAULT_COUNT, DEFAULT_SEED, GENERATOR_VERSION, default_dataset_dir

if TYPE_CHECKING:
    from .generator import ScreenPlan, choose_targets, generate, plan_screen, render_screen, screens_for

_DRAWING = {"ScreenPlan", "choose_targets", "generate", "plan_screen", "render_screen", "screens_for"}


def __getattr__(name: str) -> Any:
    # The drawing code is imported on first use: a run on the cached default set never needs it.
    if name in _DRAWING:
        from . import generator

        return getattr(generator, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_COUNT",
    "DEFAULT_SEED",
    "GENERATOR_VERSION",
    "ScreenPlan",
    "choose_targets",
    "default_dataset_dir",
    "generate",
    "plan_screen",
    "render_screen",
    "screens_for",
]
