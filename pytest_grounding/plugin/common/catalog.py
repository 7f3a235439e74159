"""The run's datasets, loaded once per process and named uniquely within the run (the same folder
given twice is one dataset, run once), and the samples each process collects from them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.registry import Registry
from ...core.targets import Absent
from ...datasets import Dataset, load_dataset, with_language

DEFAULT_DATASET_NAME = "synthetic"


@dataclass
class Catalog:
    formats: Registry
    language: str
    note: Callable[[str], None]  # the run's notes: said once, in the header and the summary
    _loaded: dict[tuple[str, str], Dataset] = field(default_factory=dict)
    _elements: dict[tuple[str, str], list[list[float]]] | None = None  # (dataset, image) -> its samples' boxes

    def elements_of(self, record: Mapping[str, Any]) -> list[list[float]]:
        """The boxes of every sample on the record's screen (a miss inside another is a wrong_element)."""
        if self._elements is None:
            self._elements = {}
            for dataset in self.all():
                for sample in dataset.samples:
                    if sample.defect is None and sample.bbox.is_valid and not isinstance(sample.target, Absent):
                        boxes = self._elements.setdefault((dataset.name, str(sample.image)), [])
                        if sample.bbox.as_list() not in boxes:
                            boxes.append(sample.bbox.as_list())
        return self._elements.get((str(record.get("dataset")), str(record.get("image"))), [])

    def all(self) -> list[Dataset]:
        """Each dataset once, in the order loaded."""
        return list({id(d): d for d in self._loaded.values()}.values())

    def fingerprints(self) -> dict[str, str]:
        return {d.name: d.fingerprint for d in self.all()}

    def fingerprint_of(self, dataset_name: str) -> str | None:
        return next((d.fingerprint for d in self._loaded.values() if d.name == dataset_name), None)

    def load(self, spec: str, base: Path) -> Dataset:
        key = (spec, str(base))
        if key in self._loaded:
            return self._loaded[key]
        dataset = with_language(load_dataset(spec, base=base, registry=self.formats), self.language)
        same = next((d for d in self._loaded.values() if _identity(d) == _identity(dataset)), None)
        if same is not None:
            self.note(f"dataset {spec!r} is {same.name} ({same.path}) given again: it runs once")
            self._loaded[key] = same
            return same
        taken = {d.name for d in self._loaded.values()}
        if dataset.name in taken:
            suffix = 2
            while f"{dataset.name}-{suffix}" in taken:
                suffix += 1
            dataset = with_language(
                load_dataset(spec, base=base, registry=self.formats, name=f"{dataset.name}-{suffix}"), self.language
            )
        self._note_duplicate_ids(dataset)
        self._loaded[key] = dataset
        self._elements = None
        return dataset

    def default(self, on_generate: Callable[[Path], None] | None = None) -> Dataset:
        from ...datasets.synth import default_dataset_dir

        path = default_dataset_dir(on_generate=on_generate)
        key = ("<default>", str(path))
        if key not in self._loaded:
            self._elements = None
            self._loaded[key] = with_language(
                load_dataset(f"pointerbench:{path}", registry=self.formats, name=DEFAULT_DATASET_NAME), self.language
            )
        return self._loaded[key]

    def for_suite(self, pinned: Sequence[str], base: Path, run_specs: Sequence[str], run_base: Path) -> list[Dataset]:
        """A suite's pinned datasets (paths relative to its file), else the run's, else the default."""
        if pinned:
            found = [self.load(spec, base) for spec in pinned]
        elif run_specs:
            found = [self.load(spec, run_base) for spec in run_specs]
        else:
            found = [self.default()]
        return list({id(d): d for d in found}.values())

    def summaries(self) -> dict[str, dict[str, Any]]:
        return {d.name: d.summary() for d in self.all()}

    def _note_duplicate_ids(self, dataset: Dataset) -> None:
        seen: set[str] = set()
        repeated = []
        for sample in dataset.samples:
            if sample.id in seen:
                repeated.append(sample.id)
            seen.add(sample.id)
        if repeated:
            self.note(
                f"dataset {dataset.name}: {len(repeated)} samples reuse an id (first: {repeated[0]!r}); their "
                f"predictions lines share it (python -m pytest_grounding validate {dataset.path} lists them)"
            )


def _identity(dataset: Dataset) -> tuple[str, str, str]:
    """Two specs name the same dataset when they read the same annotations for the same images
    (a folder and its metadata.jsonl, a path through a symlink)."""
    return (dataset.format, dataset.fingerprint, str(dataset.samples[0].image.resolve()))
