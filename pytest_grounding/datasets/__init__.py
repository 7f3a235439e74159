"""Dataset formats behind a small registry.

`load_dataset("PATH")` recognises the format from the folder or file; `load_dataset("FORMAT:PATH")`
forces one. Loaders read annotations only (never decode images) and convert every box to absolute
pixels x1, y1, x2, y2. A row that cannot be scored becomes a Sample with `defect` set, so that its
test item reports it; a file that cannot be read at all is a DatasetError naming it.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..core.paths import unusable
from ..core.registry import Registry, UnknownName
from ..core.types import Sample
from ._common import DatasetError, Format, Loaded, name_slug, slug

ENTRY_POINT_GROUP = "pytest_grounding.formats"

BUILTIN = {
    "harness": "pytest_grounding.datasets.harness:FORMAT",
    "hf": "pytest_grounding.datasets.hf:FORMAT",
    "pointerbench": "pytest_grounding.datasets.pointerbench:FORMAT",
    "screenspot-pro": "pytest_grounding.datasets.screenspot_pro:FORMAT",
    "screenspot": "pytest_grounding.datasets.screenspot:FORMAT",
    "screenspot-v2-variants": "pytest_grounding.datasets.screenspot_variants:FORMAT",
    "osworld-g": "pytest_grounding.datasets.osworld_g:FORMAT",
    "ui-vision": "pytest_grounding.datasets.uivision:FORMAT",
    "mmbench-gui": "pytest_grounding.datasets.mmbench_gui:FORMAT",
    "showdown-clicks": "pytest_grounding.datasets.showdown:FORMAT",
    "cuactspot": "pytest_grounding.datasets.cuactspot:FORMAT",
    "venusbench-gd": "pytest_grounding.datasets.venusbench_gd:FORMAT",
    "windeskground": "pytest_grounding.datasets.windeskground:FORMAT",
    "cagui-grounding": "pytest_grounding.datasets.cagui:FORMAT",
}


@dataclass(frozen=True)
class Dataset:
    name: str
    format: str
    path: Path
    samples: tuple[Sample, ...]
    fingerprint: str
    problems: tuple[str, ...] = ()

    def summary(self) -> dict:
        return {
            "name": self.name,
            "format": self.format,
            "path": str(self.path),
            "samples": len(self.samples),
            "fingerprint": self.fingerprint,
            "defects": sum(1 for s in self.samples if s.defect),
            "problems": list(self.problems),
        }


def builtin_registry() -> Registry:
    registry = Registry("dataset format")
    for name, target in BUILTIN.items():
        registry.register(name, target)
    return registry


def split_spec(spec: str, known_formats: Iterable[str]) -> tuple[str | None, str]:
    """`FORMAT:PATH` when the prefix names a known format (so `C:\\data` or a path with a
    colon still works as a plain path)."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in set(known_formats):
        return prefix, rest
    return None, spec


def load_dataset(
    spec: str, *, base: Path | None = None, registry: Registry | None = None, name: str | None = None
) -> Dataset:
    registry = registry or builtin_registry()
    format_name, raw_path = split_spec(spec, registry.names())
    fmt: Format | None = _format(spec, format_name, registry) if format_name is not None else None
    path = Path(raw_path).expanduser()
    opener = getattr(fmt, "open", None)  # a user's own format object may have no `open`
    by_spec = opener is not None  # e.g. hf:NAME:SPLIT, read by the format itself
    if by_spec:
        path = path if path.is_absolute() or base is None else base / path
    else:
        if base is not None and not path.is_absolute():
            path = base / path
        path = path.resolve()
        problem = unusable(path)
        if problem is not None:
            raise DatasetError(f"dataset {spec[:200]!r}: {str(path)[:200]}: {problem}")
        if not path.exists():
            raise DatasetError(f"dataset {spec!r}: {path} does not exist")
        if format_name is None:
            format_name = sniff_format(path, registry)
            fmt = _format(spec, format_name, registry)
    assert fmt is not None and format_name is not None
    with gc_paused():
        loaded = opener(raw_path, base) if opener is not None else fmt.load(path)
        if not loaded.samples:
            files = ", ".join(str(f) for f in loaded.files) or str(path)
            raise DatasetError(f"dataset {spec!r} ({format_name}): no samples in {files}")
        dataset_name = name_slug(name or loaded.name)
        samples = assign_uids(dataset_name, loaded.samples)
    return Dataset(
        name=dataset_name,
        format=format_name,
        path=loaded.path or path,
        samples=samples,
        fingerprint=loaded.fingerprint or fingerprint(loaded.files),
        problems=tuple(loaded.problems),
    )


LANGUAGE_FIELDS = {"cn": "instruction_cn"}  # --grounding-language -> the Sample.extra key holding it


def with_language(dataset: Dataset, language: str) -> Dataset:
    """The dataset asked in `language` (`--grounding-language`): each sample's instruction taken
    from its translation (ScreenSpot-Pro's instruction_cn, VenusBench-GD's instruction_zh); a row
    without one becomes that sample's defect. The fingerprint changes with the language, so a
    baseline or a resumed file of the English run is never mixed with it. "en" returns the dataset
    unchanged."""
    key = LANGUAGE_FIELDS.get(language)
    if key is None:
        return dataset
    if not any(isinstance(s.extra.get(key), str) and s.extra[key].strip() for s in dataset.samples):
        raise DatasetError(
            f"dataset {dataset.name} ({dataset.format}, {dataset.path}) has no {key} in any row: "
            f"--grounding-language {language} needs a dataset with {language} instructions "
            "(ScreenSpot-Pro, VenusBench-GD)"
        )
    samples = []
    for sample in dataset.samples:
        translated = sample.extra.get(key)
        if isinstance(translated, str) and translated.strip():
            samples.append(dataclasses.replace(sample, instruction=translated.strip()))
        else:
            samples.append(dataclasses.replace(sample, defect=sample.defect or f"no {key} in this row"))
    return dataclasses.replace(dataset, samples=tuple(samples), fingerprint=f"{dataset.fingerprint}-{language}")


def format_of(registered: object, name: str) -> Format:
    """What a registry entry holds, as a Format: the object itself (anything with `sniff` and
    `load`), or a factory called with no arguments that returns one (a class, a function)."""
    looks_done = hasattr(registered, "sniff") and hasattr(registered, "load")
    if isinstance(registered, type) or (not looks_done and callable(registered)):
        registered = registered()
    if not (callable(getattr(registered, "sniff", None)) and callable(getattr(registered, "load", None))):
        raise DatasetError(
            f"dataset format {name!r} is registered as {type(registered).__name__}, not a Format: register "
            "Format(name, sniff, load), a callable returning one, or a 'module:attr' string naming one"
        )
    return cast(Format, registered)


def _format(spec: str, format_name: str, registry: Registry) -> Format:
    try:
        return format_of(registry.get(format_name).load(), format_name)
    except UnknownName as exc:
        raise DatasetError(f"dataset {spec!r}: {exc}") from None


def sniff_format(path: Path, registry: Registry) -> str:
    matches = [entry.name for entry in registry.entries() if format_of(entry.load(), entry.name).sniff(path)]
    if not matches:
        raise DatasetError(
            f"{path}: not a dataset this plugin recognises (looked for: "
            "data/test/metadata.jsonl or metadata.jsonl (pointerbench), screenspot_*.json (screenspot), "
            "annotations/*.json (screenspot-pro), annotations.json (harness), OSWorld-G.json (osworld-g), "
            "annotations/element_grounding/element_grounding_*.json (ui-vision), L2_annotations.json (mmbench-gui), "
            "{desktop,mobile,web}.json (screenspot-v2-variants), data.csv (showdown-clicks), "
            "<image_id>.json with polygons (cuactspot), instruction/<task>.json (venusbench-gd), "
            "test.json (windeskground), cap.jsonl / ocr.jsonl (cagui-grounding), *.parquet or *.arrow (hf)); "
            f"force one with FORMAT:PATH, formats: {', '.join(registry.names())}"
        )
    # The built-in sniffers are exclusive by construction; the first wins if a plugin's overlaps.
    return matches[0]


@contextmanager
def gc_paused():
    """Loading makes millions of small containers and no reference cycles; the cyclic collector
    would walk the growing heap again and again (about half the load time of 100,000 rows)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def assign_uids(dataset_name: str, samples: Sequence[Sample]) -> tuple[Sample, ...]:
    """Test-id slugs from dataset, id, app and element type; sorted for identical collection on
    every xdist worker; made unique deterministically (pytest would suffix duplicates silently).
    Values that repeat across rows (apps, platforms, image paths) are shared, not held once per
    sample: the loaders' JSON parsing makes a new string for every row."""
    ordered = sorted(samples, key=lambda s: (s.id, str(s.image), s.instruction))
    shared: dict = {}
    slugs: dict = {}
    seen: dict = {}
    out: list[Sample] = []
    for sample in ordered:
        app = shared.setdefault(sample.app, sample.app)
        kind = shared.setdefault(sample.element_type, sample.element_type)
        if (app, kind) not in slugs:
            slugs[app, kind] = f"{slug(app)}-{slug(kind)}"
        base = f"{dataset_name}-{slug(sample.id)}-{slugs[app, kind]}"
        count = seen.get(base, 0) + 1
        seen[base] = count
        uid = base if count == 1 else f"{base}-dup{count}"
        out.append(
            dataclasses.replace(
                sample,
                dataset=dataset_name,
                uid=uid,
                app=app,
                element_type=kind,
                image=shared.setdefault(sample.image, sample.image),
                app_category=shared.setdefault(sample.app_category, sample.app_category),
                platform=shared.setdefault(sample.platform, sample.platform),
                image_size=shared.setdefault(sample.image_size, sample.image_size),
            )
        )
    return tuple(out)


def screen_groups(samples: Sequence[Sample], workers: int) -> list[str]:
    """A group name per sample: one group per screen (dataset and image), so that under xdist a
    detector's per-screen cache serves every instruction on a screen from one worker. A screen
    holding more than its share of the run (1 / (2 x workers) of the samples) is split into parts,
    so that one big screen cannot leave the other workers idle. Names are ASCII slugs (they end
    test ids under --dist loadgroup) and depend only on the samples, the same on every worker."""
    share = max(1, -(-len(samples) // (2 * max(1, workers))))
    names: dict = {}  # (dataset, image) -> group name
    taken: set = set()
    sizes: dict = {}
    out: list[str] = []
    for sample in samples:
        screen = (sample.dataset, sample.image)
        if screen not in names:
            name = f"{sample.dataset}-{slug(sample.image.name)}"
            suffix = 2
            while name in taken:  # same file name in another folder
                name = f"{sample.dataset}-{slug(sample.image.name)}-{suffix}"
                suffix += 1
            names[screen] = name
            taken.add(name)
        position = sizes.get(screen, 0)
        sizes[screen] = position + 1
        part = position // share
        out.append(names[screen] if part == 0 else f"{names[screen]}-part{part + 1}")
    return out


def fingerprint(files: Iterable[Path]) -> str:
    """The dataset's files' names and bytes digested, each read in chunks (a multi-gigabyte parquet file in
    bounded memory) by the bounded reader (a regular file only)."""
    from ..core import safefile

    digest = hashlib.sha256()
    for file in sorted(files):
        digest.update(file.name.encode())
        for chunk in safefile.chunks(file):
            digest.update(chunk)
    return digest.hexdigest()[:16]


__all__ = [
    "Dataset",
    "DatasetError",
    "Format",
    "Loaded",
    "builtin_registry",
    "load_dataset",
    "screen_groups",
    "slug",
    "split_spec",
    "with_language",
]
