"""Robustness sweeps (--grounding-perturb): every sample also runs under named perturbations.

Axes are registered like detectors and strategies: the built-ins here by lazy path, a project's
through `pytest_grounding_register_perturbations` (plugin/common/hookspecs.py) or the entry-point group
`pytest_grounding.perturbations`. A registered axis is a factory `variants(**options)` returning
one Perturbation (perturb/base.py) per variant. Specs: `AXIS[:key=value,...]`, several
comma-separated (`downscale,zoom:scale=0.7,jpeg:quality=30`): a comma followed by `key=value`
continues the axis before it.

Pure but for the image headers read for screen sizes the dataset does not give; the variant's
pixels are made by images.py when an item first reads them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..core.registry import Registry
from ..core.types import Sample
from .base import Perturbation

ENTRY_POINT_GROUP = "pytest_grounding.perturbations"

BUILTIN = {
    "downscale": (
        "pytest_grounding.perturb.axes:Downscale.variants",
        "the screen resized to a pixel budget or long-edge cap (max_pixels=921600 | long_edge=N)",
    ),
    "zoom": (
        "pytest_grounding.perturb.axes:Zoom.variants",
        "browser zoom around the screen's centre, the screen size kept (scale; default 0.7 and 1.25)",
    ),
    "invert": ("pytest_grounding.perturb.axes:Invert.variants", "every colour inverted: dark for light themes"),
    "jpeg": ("pytest_grounding.perturb.axes:Jpeg.variants", "JPEG compression (quality; default 30 and 70)"),
    "occlude": (
        "pytest_grounding.perturb.axes:Occlude.variants",
        "a window-like overlay away from the target (size: share of each side, default 0.3)",
    ),
    "paraphrase": (
        "pytest_grounding.perturb.axes:Paraphrase.variants",
        "instructions reworded from a JSONL of id -> instruction (file=PATH, name=LABEL)",
    ),
    "format": (
        "pytest_grounding.perturb.axes:Format.variants",
        "the same samples asked in each coordinate format (pixels, rel1, rel1000, point_2d; default all four): "
        "served detectors",
    ),
}
FORMAT_AXIS = "format"


def builtin_registry() -> Registry:
    registry = Registry("perturbation")
    for name, (target, help_text) in BUILTIN.items():
        registry.register(name, target, help=help_text)
    return registry


def split_specs(values: Iterable[str]) -> list[str]:
    """`zoom:scale=0.7,invert,jpeg:quality=30` -> ["zoom:scale=0.7", "invert", "jpeg:quality=30"]."""
    from ..detectors.vlm.formats import FORMATS

    specs: list[str] = []
    for value in values:
        for piece in (p.strip() for p in str(value).split(",")):
            if not piece:
                continue
            if specs and "=" in piece and ":" not in piece.partition("=")[0]:
                specs[-1] += f",{piece}"  # key=value: the previous axis's option
            elif specs and specs[-1].startswith(f"{FORMAT_AXIS}:formats=") and piece in FORMATS:
                specs[-1] += f"+{piece}"  # format:pixels,rel1: the format axis's next format
            elif piece.startswith(f"{FORMAT_AXIS}:") and "=" not in piece:
                specs.append(f"{FORMAT_AXIS}:formats={piece.partition(':')[2]}")
            else:
                specs.append(piece)
    return specs


def parse(specs: Sequence[str], registry: Registry) -> list[Perturbation]:
    """Every variant the specs name, in order; a ValueError naming the spec for an unknown axis,
    a bad option or two variants with one label."""
    from ..core.registry import UnknownName
    from ..detectors import parse_spec

    found: list[Perturbation] = []
    for spec in specs:
        try:
            name, options = parse_spec(spec, raw=True)
            made = registry.get(name).load()(**options)
        except (UnknownName, ValueError, TypeError) as exc:
            raise ValueError(f"perturbation {spec!r}: {exc}") from None
        found.extend(made)
    labels = [p.label for p in found]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError(f"two perturbations give the variant {twice[0]!r}: name them apart")
    return found


def size_of(sample: Sample, sizes: dict[str, tuple[int, int] | None]) -> tuple[int, int] | None:
    """The screen's size: the dataset's word, else the file's header (read once per screen)."""
    if sample.image_size is not None:
        return sample.image_size
    key = str(sample.image)
    if key not in sizes:
        try:
            from PIL import Image

            with Image.open(sample.image) as image:
                sizes[key] = image.size
        except Exception:  # an unreadable screen: its original item says why; no variants
            sizes[key] = None
    return sizes[key]


def with_variants(samples: Iterable[Sample], perturbations: Sequence[Perturbation]) -> list[Sample]:
    """Each sample followed by its variants, in the perturbations' order (one screen's items stay
    together). A sample with a defect or an unreadable screen has none."""
    if not perturbations:
        return list(samples)
    sizes: dict[str, tuple[int, int] | None] = {}
    out: list[Sample] = []
    for sample in samples:
        out.append(sample)
        size = None if sample.defect else size_of(sample, sizes)
        if size is None:
            continue
        out.extend(v for p in perturbations if (v := p.derive(sample, size)) is not None)
    return out


def describe(perturbations: Sequence[Perturbation]) -> list[dict[str, Any]]:
    """The run's settings entry: each variant's label, axis and spec."""
    return [{"label": p.label, "axis": p.axis, "spec": p.spec} for p in perturbations]


def variant_again(sample: Sample, spec: str, label: str, registry: Registry | None = None) -> Sample | None:
    """A record's variant of `sample` rebuilt from the spec it names (merge re-scores a variant's
    answer against the target mapped again); None where the spec no longer makes that variant."""
    try:
        made = parse([spec], registry or builtin_registry())
    except ValueError:
        return None
    for perturbation in made:
        if perturbation.label == label:
            size = size_of(sample, {})
            return perturbation.derive(sample, size) if size is not None else None
    return None
