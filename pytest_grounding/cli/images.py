"""Which images `report REPORT.json --html` may read for its thumbnails.

A report can come from anywhere, and its records name image paths: read as they stand, a crafted
report would embed any file of the machine (a private screenshot, any image a path reaches) in
the page. So each dataset the report names is read again from the path it records, by its
format's loader (which refuses an image that leaves the dataset folder by an absolute path, `..`
or a symlink, and never opens it), and a record's image is read only when it is one of that
dataset's own images, not refused. A dataset that cannot be read again (moved, deleted, a hub
name rather than a folder, a folder that holds no dataset, such as `/`) gets no thumbnails: each
of its entries says why. The loaders read annotation files only; no image is opened here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.record import OUTSIDE_DATASET

FORMATS_GROUP = "pytest_grounding.formats"  # the entry points a project registers its formats by


@dataclass(frozen=True)
class DatasetImages:
    """Per dataset name: its own images (as the records write them), or why it could not be read."""

    paths: dict[str, str] = field(default_factory=dict)
    images: dict[str, frozenset[str]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    def withhold(self, record: Mapping[str, Any]) -> str | None:
        """Why the record's image must not be read; None when it is its dataset's own."""
        name = str(record.get("dataset") or "")
        image = str(record.get("image") or "")
        if name in self.unreadable:
            return (
                f"not shown: dataset {name} cannot be read again from {self.paths[name]} "
                f"to check that this image is its own ({self.unreadable[name]})"
            )
        if name not in self.images:
            return f"not shown: the report names no dataset {name!r} to check this image against"
        if image not in self.images[name]:
            return f"not shown: {image} is not an image of dataset {name} (read again from {self.paths[name]})"
        return None

    def notes(self) -> list[str]:
        return [
            f"dataset {name}: cannot be read again from {self.paths[name]}: its records get no thumbnails ({why})"
            for name, why in self.unreadable.items()
        ]


def dataset_images(document: Mapping[str, Any]) -> DatasetImages:
    """Each dataset of `run.datasets` read again by its format from its recorded absolute path."""
    found = read_again(document)
    result = DatasetImages(paths=found.paths, unreadable=found.unreadable)
    for name, datasets in found.datasets.items():
        result.images[name] = frozenset(
            str(s.image) for dataset in datasets for s in dataset.samples if OUTSIDE_DATASET not in str(s.defect or "")
        ) | variant_images(document, name, datasets)
    return result


def variant_images(document: Mapping[str, Any], name: str, datasets: Any) -> frozenset[str]:
    """--grounding-perturb: the variants' screens, each made again from its dataset's own sample and
    the spec its record names (the path a run would write): never a path the report merely states."""
    from ..core.variants import base_uid
    from ..perturb import variant_again

    samples = {s.uid: s for dataset in datasets for s in dataset.samples if not s.defect}
    found: set[str] = set()
    for record in document.get("samples") or []:
        sample = samples.get(base_uid(record)) if record.get("dataset") == name and record.get("variant") else None
        if sample is not None:
            made = variant_again(sample, str(record.get("perturbation")), str(record["variant"]))
            if made is not None:
                found.add(str(made.image))
    return frozenset(found)


@dataclass(frozen=True)
class DatasetsReadAgain:
    """Per dataset name of a report: the dataset as its loader reads it here, or why it could not be."""

    paths: dict[str, str] = field(default_factory=dict)
    datasets: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # datasets.Dataset, as each spec read it
    unreadable: dict[str, str] = field(default_factory=dict)


def read_again(document: Mapping[str, Any]) -> DatasetsReadAgain:
    """Each dataset of `run.datasets` read again by its format from its recorded absolute path (no
    image opened, no hub name downloaded); a dataset that cannot be, with why."""
    from ..datasets import builtin_registry, load_dataset

    registry = builtin_registry()
    registry.register_entry_points(FORMATS_GROUP)
    known = set(registry.names())
    result = DatasetsReadAgain()
    for entry in (document.get("run") or {}).get("datasets") or []:
        name, format_name, raw = (str(entry.get(key) or "") for key in ("name", "format", "path"))
        result.paths.setdefault(name, raw)
        why = None
        if format_name not in known:
            why = f"its format {format_name!r} is not known here"
        elif not Path(raw).is_absolute():
            why = "its path is not absolute"  # never a hub name: reading it again must not download
        elif not Path(raw).exists():
            why = "no such file or folder"
        else:
            # The recorded format first; then the format the folder is recognised as: a hub repository
            # of JSON files and images is recorded as `hf` but read by the format made for its files.
            for spec in (f"{format_name}:{raw}", raw):
                try:
                    dataset = load_dataset(spec, registry=registry, name=name or None)  # its uids as the run's
                except Exception as exc:  # any loader's failure: its entries say it, the page is written
                    why = why or f"{type(exc).__name__}: {str(exc)[:300]}"
                    continue
                result.datasets[name] = (*result.datasets.get(name, ()), dataset)
                break
        if why is not None and name not in result.datasets:
            result.unreadable[name] = why
    return result
