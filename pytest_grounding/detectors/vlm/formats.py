"""The coordinate formats a model can be asked to answer in (issue 56, `--grounding-perturb format`):
the same samples asked in absolute pixels of the image sent, [0,1] shares, 0-1000 `(x, y)` and
0-1000 `{"point_2d": [x, y]}`, each answer parsed in the format it was asked for. The prompted format
moves API models by 12 to 63 points, in opposite directions (GUI-Agent-Harness, 2026-07): a preset
pins one; this axis shows which one a model answers best.

A format replaces the preset's prompt, extractors and transform; its preprocessing (the image sent)
and decoding stay the preset's. Pure."""

from __future__ import annotations

import dataclasses
from typing import Any

from .prompts import Prompt

FORMATS = ("pixels", "rel1", "rel1000", "point_2d")

_ASK = "Find the user interface element this instruction refers to: {instruction}\n"
PROMPTS = {
    "pixels": _ASK + "The image is {width}x{height} pixels. Answer with the click point only, as (x, y) in pixels "
    "of this image: x from 0 (left) to {width} (right), y from 0 (top) to {height} (bottom).",
    "rel1": _ASK + "Answer with the click point only, as (x, y) with x and y between 0 and 1: x a share of the "
    "image's width from the left, y of its height from the top (for example (0.25, 0.5)).",
    "rel1000": _ASK + "Answer with the click point only, as (x, y) with x and y between 0 and 1000: x in "
    "thousandths of the image's width from the left, y of its height from the top.",
    "point_2d": _ASK + 'Answer with JSON only: {"point_2d": [x, y]}, x and y between 0 and 1000 (thousandths of '
    "the image's width from the left and of its height from the top).",
}
EXTRACTORS = {
    "pixels": ("paren_last",),
    "rel1": ("paren_last",),
    "rel1000": ("paren_last",),
    "point_2d": ("point_2d", "paren_last"),
}
TRANSFORMS = {"pixels": "abs", "rel1": "rel1", "rel1000": "rel1000", "point_2d": "rel1000"}


def check(name: str) -> str:
    if name not in FORMATS:
        raise ValueError(f"unknown answer format {name!r}; one of {', '.join(FORMATS)}")
    return name


def in_format(preset: Any, name: str) -> Any:
    """`preset` asked in the format `name`: its prompt, extractors and transform replaced, its
    preprocessing and decoding kept (the request's fields are the preset's)."""
    check(name)
    return dataclasses.replace(
        preset,
        name=f"{preset.name}@{name}",
        prompt=Prompt(user=PROMPTS[name]),
        extractors=EXTRACTORS[name],
        transform=TRANSFORMS[name],
        refusal=None,
    )


def own_format(preset: Any) -> str:
    """The format the preset's own prompt asks for, in the axis's names ("other": none of them,
    a y-first or a canvas frame)."""
    transform = str(getattr(preset, "transform", ""))
    if "yx_swap" in transform:
        return "other"
    if "rel1000" in transform:
        return "point_2d" if "point_2d" in getattr(preset, "extractors", ()) else "rel1000"
    if "rel1" in transform.split("+"):
        return "rel1"
    if transform in ("", "abs", "abs_smart_resize"):
        return "pixels"
    return "other"
