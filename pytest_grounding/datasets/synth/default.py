"""The embedded default set: where it lives and, on first use, its generation. Apart from the
generator so that finding the cached set (every run, every xdist worker) imports no drawing code."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ...core.cache import cache_root as default_cache_root
from .identity import DEFAULT_COUNT, DEFAULT_SEED, GENERATOR_VERSION, METADATA, SPLIT

__all__ = ["DEFAULT_COUNT", "DEFAULT_SEED", "GENERATOR_VERSION", "METADATA", "SPLIT", "default_dataset_dir"]


def cache_root_dir(cache_root=None) -> Path:
    if cache_root is not None:
        return Path(cache_root)
    return default_cache_root()


def source_digest(root: Path | None = None) -> str:
    """A digest of the generator's code (every module under `root`, by default this package,
    archetypes/ included): an edited generator never reuses a set another one made."""
    root = root or Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:8]


def default_dataset_dir(cache_root=None, on_generate=None) -> Path:
    """The folder of the default synthetic set, generated on first use. It is written to a temporary
    folder and renamed into place, so concurrent processes (xdist workers, parallel runs) never see
    a half-written set: the first rename wins, the others drop their copy. `on_generate(folder)` is
    called before a set is generated, so a caller can say why the first run takes longer."""
    root = cache_root_dir(cache_root)
    final = root / f"synthetic-v{GENERATOR_VERSION}-{source_digest()}-seed{DEFAULT_SEED}-n{DEFAULT_COUNT}"
    if final.joinpath(*SPLIT, METADATA).is_file():
        return final
    if on_generate is not None:
        on_generate(final)
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=root))
    try:
        from .generator import generate  # the drawing code: only when the set is not cached yet

        generate(scratch, DEFAULT_COUNT, DEFAULT_SEED)
        try:
            os.rename(scratch, final)
        except OSError:
            if not final.joinpath(*SPLIT, METADATA).is_file():
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return final
