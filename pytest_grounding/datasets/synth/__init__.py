"""A deterministic generator of screens that look like dense professional software, with exact
ground truth, written in the Pointerbench-Pro imagefolder layout; and the embedded default set
that `pytest suites/` runs when no dataset is given."""

from .generator import (
    DEFAULT_COUNT,
    DEFAULT_SEED,
    GENERATOR_VERSION,
    ScreenPlan,
    choose_targets,
    default_dataset_dir,
    generate,
    plan_screen,
    render_screen,
    screens_for,
)

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
