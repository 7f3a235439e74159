"""No silent default for a served model: which preset reads its answers. `preset=NAME` is taken as
given; with no preset (or `preset=auto`) the model id picks one by its name, and the detector's
headline says so; a model id no preset matches is a usage error naming the closest presets, never
a run whose every answer is read in another model's frame. Pure."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

AUTO = "auto"

# (pattern on the model id, lower-cased; preset): the first that matches picks. More specific first.
MODEL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"ui-?tars-?1\.5", "uitars-1.5-point"),
    (r"ui-?tars", "uitars-1.0"),
    (r"os-?atlas", "os-atlas-7b"),
    (r"uground", "uground-v1"),
    (r"gta1", "gta1"),
    (r"ui-?venus-?1\.5", "ui-venus-1.5"),
    (r"ui-?venus", "ui-venus-ground"),
    (r"gui-?owl", "gui-owl-1.5"),
    (r"opencua", "opencua"),
    (r"holo-?1\.5", "holo1.5"),
    (r"holo-?2", "holo2"),
    (r"holo-?3", "holo3"),
    (r"showui", "showui"),
    (r"seeclick", "seeclick"),
    (r"aria-?ui", "aria-ui"),
    (r"mai-?ui", "mai-ui"),
    (r"evocua", "evocua"),
    (r"groundnext", "groundnext"),
    (r"kv-?ground", "kv-ground"),
    (r"qwen3\.5", "qwen3.5"),
    (r"qwen3-?vl", "qwen3-vl"),
    (r"qwen2\.5-?vl", "qwen2.5-vl"),
    (r"^(gpt-|o\d)", "gpt-box"),
    (r"claude", "claude"),
    (r"gemini", "gemini-point"),
)


@dataclass(frozen=True)
class Pick:
    name: str
    by_model: str | None = None  # the model id that picked it (preset=auto, or none given)

    @property
    def note(self) -> str:
        """For the detector's headline: how the preset was chosen (nothing when it was named)."""
        return f" (picked by the model id {self.by_model}; preset=NAME to choose)" if self.by_model else ""


class NoPresetMatches(ValueError):
    """A served model with no preset= and an id no preset matches."""


def by_model_id(model: str, known: list[str] | None = None) -> str | None:
    """The preset a model id names (`ByteDance-Seed/UI-TARS-1.5-7B` -> uitars-1.5-point), or None.
    A preset whose whole name is in the id (`known`, in order) wins over the patterns."""
    text = model.lower().rsplit("/", 1)[-1]
    for name in known or ():
        if name.lower() in text:
            return name
    for pattern, preset in MODEL_PATTERNS:
        if re.search(pattern, text):
            return preset
    return None


def closest(model: str, names: list[str], count: int = 4) -> list[str]:
    """The presets whose names are nearest the model id's (for the error); never empty."""
    text = model.lower().rsplit("/", 1)[-1]
    found = difflib.get_close_matches(text, names, n=count, cutoff=0.2)
    if len(found) < count:
        words = set(re.split(r"[-_.]", text))
        found += [n for n in names if n not in found and words & set(re.split(r"[-_.]", n))][: count - len(found)]
    return found or names[:count]


def pick(
    detector: str, preset: str | None, model: str | None, names: list[str], project: set[str] | None = None
) -> Pick | None:
    """The preset of a served detector: as named; by the model id when none is named or it is
    `auto` (a project's presets, `project`, by their names first); None when the
    model id is not known yet (the server's first model is asked first).
    NoPresetMatches for an id no preset matches."""
    if preset not in (None, "", AUTO):
        if str(preset) not in names:  # a usage error before any request, not a traceback in the checks
            nearest = ", ".join(closest(str(preset), names))
            raise NoPresetMatches(
                f"{detector}: unknown preset {str(preset)!r} (closest: {nearest}; every preset: "
                "`python -m pytest_grounding presets`)"
            )
        return Pick(str(preset))
    if not model:
        return None
    longest = sorted(names, key=len, reverse=True)
    found = by_model_id(
        model, [n for n in longest if n in (project or ())] + [n for n in longest if n not in (project or ())]
    )
    if found is not None:
        return Pick(found, by_model=model)
    nearest = ", ".join(closest(model, names))
    raise NoPresetMatches(
        f"{detector}: {'preset=auto' if preset == AUTO else 'no preset= given'} and no preset matches the model id "
        f"{model!r}, so its answers could not be "
        f"read in the right frame: name one with preset=NAME (closest: {nearest}; every preset: "
        "`python -m pytest_grounding presets`)"
    )
