"""The variants' screens, made when an item first reads one: the original decoded, the
perturbation rendered, written as PNG into the cache folder (a temporary file renamed into place,
so xdist workers and parallel runs never read half a file). Once a file exists it is reused by
every sample, process and later run that names it (its name keys the screen and the variant); a
small in-process memory of the made paths spares the existence check (the LRU of plugin/worker/screens.py
then decodes each variant screen once per process)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from ..core.types import Sample
from ..core.variants import variant_of

MADE_KEPT = 4096  # paths known to exist (strings: a few hundred KB at most)

_made: OrderedDict[str, None] = OrderedDict()
_lock = threading.Lock()  # the prefetch pipeline reads from threads


def materialize(sample: Sample) -> str | None:
    """Make the variant sample's screen if it is not there yet; None, or what went wrong (the
    item's read then reports the missing file as any unreadable screen is)."""
    found = variant_of(sample)
    if found is None or str(sample.image) == found.get("source"):
        return None  # an original, or a variant with the original's pixels (a reworded instruction)
    key = str(sample.image)
    with _lock:
        if key in _made:
            _made.move_to_end(key)
            return None
        if not sample.image.exists():
            problem = _make(sample, Path(str(found["source"])), found.get("perturbation"))
            if problem is not None:
                return problem
        _made[key] = None
        while len(_made) > MADE_KEPT:
            _made.popitem(last=False)
    return None


def _make(sample: Sample, source: Path, perturbation: object) -> str | None:
    from PIL import Image

    render = getattr(perturbation, "render", None)
    if not callable(render):
        return f"variant {sample.uid}: no perturbation to render it with"
    try:
        with Image.open(source) as opened:
            image = opened.convert("RGB")
        out = render(image, sample)
    except Exception as exc:  # the original's read says the same about a bad screen
        return f"variant {sample.uid}: {type(exc).__name__}: {exc}"
    target = sample.image
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".variant-", suffix=".png", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            out.save(stream, "PNG", compress_level=1)  # fast: these are a cache, not an archive
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return f"variant {sample.uid}: cannot write {target}: {exc}"
    return None
