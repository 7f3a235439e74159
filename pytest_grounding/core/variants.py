"""--grounding-perturb: what a variant sample and its record carry. Pure: no I/O.

A variant of a sample is the same target under a named perturbation (a zoom, a downscale, an
overlay, a reworded instruction): its uid and id are the original's with `~LABEL` appended
(`syn_00001~zoom70`, so `-k zoom70` selects it), its `extra["variant"]` says which, and its
record carries `variant` (the label), `axis` (the axis's name), `perturbation` (the variant's
full spec, enough to rebuild it) and `original_uid`. The original sample's record carries none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .types import Sample

SEPARATOR = "~"
RECORD_FIELDS = ("variant", "axis", "perturbation", "original_uid")


def variant_of(sample: Sample) -> Mapping[str, Any] | None:
    """The variant's description (label, axis, spec, original uid, its own parameters), or None."""
    value = sample.extra.get("variant") if isinstance(sample.extra, Mapping) else None
    return value if isinstance(value, Mapping) else None


def record_fields(sample: Sample) -> dict[str, Any]:
    """The fields a variant's record carries ({} for an original sample)."""
    found = variant_of(sample)
    if found is None:
        return {}
    return {
        "variant": found["label"],
        "axis": found["axis"],
        "perturbation": found["spec"],
        "original_uid": found["original_uid"],
    }


def original_uid(uid: str, variant: Any) -> str:
    """The uid of the sample a variant's uid was made from (`syn_00001~zoom70` -> `syn_00001`)."""
    suffix = f"{SEPARATOR}{variant}"
    if isinstance(variant, str) and variant and uid.endswith(suffix):
        return uid[: -len(suffix)]
    return uid


def suffixed(value: str, label: str) -> str:
    return f"{value}{SEPARATOR}{label}"


def base_uid(record: Mapping[str, Any]) -> str:
    """The uid of the dataset's sample behind a record: its epoch's and its variant's suffixes off."""
    from .types import sample_uid

    return original_uid(sample_uid(str(record.get("uid")), record.get("epoch")), record.get("variant"))


def row_key(record: Mapping[str, Any]) -> str:
    """A row of a dataset named apart from rows that share its id (`<id>-<app>-<type>[-dupN]`): its base uid
    less the dataset's name, which a run and an `audit --diff` of the same folder may spell differently.
    `audit --diff --unchanged-ids` writes it in place of an id that names two rows of one version."""
    uid = base_uid(record)
    prefix = f"{record.get('dataset')}-"
    return uid[len(prefix) :] if uid.startswith(prefix) else uid
