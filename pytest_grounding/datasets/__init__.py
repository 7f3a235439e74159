"""Dataset formats behind a small registry.

`load_dataset("PATH")` recognises the format from the folder or file; `load_dataset("FORMAT:PATH")`
forces one. Loaders read annotations only (never decode images) and convert every box to absolute
pixels x1, y1, x2, y2. A row that cannot be scored becomes a Sample with `defect` set, so that its
test item reports it; a file that cannot be read at all is a DatasetError naming it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

from ..registry import Registry, UnknownName
from ..types import Sample
from ._common import DatasetError, Format, name_slug, slug

ENTRY_POINT_GROUP = "pytest_grounding.formats"

BUILTIN = {
    "harness": "pytest_grounding.datasets.harness:FORMAT",
    "pointerbench": "pytest_grounding.datasets.pointerbench:FORMAT",
    "screenspot-pro": "pytest_grounding.datasets.screenspot_pro:FORMAT",
    "screenspot": "pytest_grounding.datasets.screenspot:FORMAT",
}


@dataclass(frozen=True)
class Dataset:
    name: str
    format: str
    path: Path
    samples: Tuple[Sample, ...]
    fingerprint: str
    problems: Tuple[str, ...] = ()

    def summary(self) -> dict:
        return {"name": self.name, "format": self.format, "path": str(self.path),
                "samples": len(self.samples), "fingerprint": self.fingerprint,
                "defects": sum(1 for s in self.samples if s.defect), "problems": list(self.problems)}


def builtin_registry() -> Registry:
    registry = Registry("dataset format")
    for name, target in BUILTIN.items():
        registry.register(name, target)
    return registry


def split_spec(spec: str, known_formats: Iterable[str]) -> Tuple[Optional[str], str]:
    """`FORMAT:PATH` when the prefix names a known format (so `C:\\data` or a path with a
    colon still works as a plain path)."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in set(known_formats):
        return prefix, rest
    return None, spec


def load_dataset(spec: str, *, base: Optional[Path] = None, registry: Optional[Registry] = None,
                 name: Optional[str] = None) -> Dataset:
    registry = registry or builtin_registry()
    format_name, raw_path = split_spec(spec, registry.names())
    path = Path(raw_path).expanduser()
    if base is not None and not path.is_absolute():
        path = base / path
    path = path.resolve()
    if not path.exists():
        raise DatasetError(f"dataset {spec!r}: {path} does not exist")
    if format_name is None:
        format_name = sniff_format(path, registry)
    try:
        fmt: Format = registry.get(format_name).load()
    except UnknownName as exc:
        raise DatasetError(f"dataset {spec!r}: {exc}") from None
    loaded = fmt.load(path)
    if not loaded.samples:
        files = ", ".join(str(f) for f in loaded.files) or str(path)
        raise DatasetError(f"dataset {spec!r} ({format_name}): no samples in {files}")
    dataset_name = name_slug(name or loaded.name)
    samples = assign_uids(dataset_name, loaded.samples)
    return Dataset(name=dataset_name, format=format_name, path=path, samples=samples,
                   fingerprint=fingerprint(loaded.files), problems=tuple(loaded.problems))


def sniff_format(path: Path, registry: Registry) -> str:
    matches = [entry.name for entry in registry.entries() if entry.load().sniff(path)]
    if not matches:
        raise DatasetError(
            f"{path}: not a dataset this plugin recognises (looked for: "
            "data/test/metadata.jsonl or metadata.jsonl (pointerbench), screenspot_*.json (screenspot), "
            "annotations/*.json (screenspot-pro), annotations.json (harness)); "
            f"force one with FORMAT:PATH, formats: {', '.join(registry.names())}")
    # The built-in sniffers are exclusive by construction; the first wins if a plugin's overlaps.
    return matches[0]


def assign_uids(dataset_name: str, samples: Sequence[Sample]) -> Tuple[Sample, ...]:
    """Test-id slugs from dataset, id, app and element type; sorted for identical collection on
    every xdist worker; made unique deterministically (pytest would suffix duplicates silently)."""
    ordered = sorted(samples, key=lambda s: (s.id, str(s.image), s.instruction))
    seen: dict = {}
    out: List[Sample] = []
    for sample in ordered:
        base = "-".join([dataset_name] + [slug(part) for part in (sample.id, sample.app, sample.element_type)])
        count = seen.get(base, 0) + 1
        seen[base] = count
        uid = base if count == 1 else f"{base}-dup{count}"
        out.append(dataclasses.replace(sample, dataset=dataset_name, uid=uid))
    return tuple(out)


def fingerprint(files: Iterable[Path]) -> str:
    digest = hashlib.sha256()
    for file in sorted(files):
        digest.update(file.name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


__all__ = ["Dataset", "DatasetError", "Format", "load_dataset", "builtin_registry", "split_spec", "slug"]
