"""Hugging Face tables on disk: parquet and arrow files read with pyarrow (memory-mapped, in
batches), and the image cache: screenshots embedded in a table written once to
`$PYTEST_GROUNDING_CACHE/hf/<fingerprint>/` (a temporary folder renamed into place: concurrent
xdist workers never see half of it); later loads read its manifest only. hf.py reads the rows."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..core import safejson
from ..core.cache import cache_root as core_cache_root
from ._common import DatasetError

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
INSTALL_HINT = "the hf extra is not installed: pip install 'pytest-grounding[hf]'"


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        raise DatasetError(INSTALL_HINT) from None
    return pyarrow


# ---- reading -------------------------------------------------------------------------------


def read_table(file: Path, columns: Sequence[str] | None = None):
    """One parquet or arrow file as a pyarrow Table (arrow: memory-mapped, stream or file format)."""
    pa = _pyarrow()
    try:
        if file.suffix == ".parquet":
            return pa.parquet.read_table(file, columns=list(columns) if columns is not None else None, memory_map=True)
        source = pa.memory_map(str(file))
        try:
            table = pa.ipc.open_stream(source).read_all()
        except pa.ArrowInvalid:
            table = pa.ipc.open_file(source).read_all()
        return table.select(list(columns)) if columns is not None else table
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"{file}: cannot read as {file.suffix[1:]}: {exc}") from None


def schema_of(file: Path):
    pa = _pyarrow()
    try:
        if file.suffix == ".parquet":
            return pa.parquet.read_schema(file, memory_map=True)
        return read_table(file).schema  # memory-mapped: no column is read
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"{file}: cannot read as {file.suffix[1:]}: {exc}") from None


def embedded(field_type) -> bool:
    """An image column holding bytes: the datasets Image feature (struct of bytes, path) or binary."""
    pa = _pyarrow()
    if pa.types.is_struct(field_type):
        return field_type.get_field_index("bytes") >= 0
    return bool(pa.types.is_binary(field_type) or pa.types.is_large_binary(field_type))


def image_batches(file: Path, column: str, rows: int = 32) -> Iterator[list[Any]]:
    """The image column in small batches (a parquet file of screenshots is gigabytes)."""
    pa = _pyarrow()
    try:
        if file.suffix == ".parquet":
            for batch in pa.parquet.ParquetFile(file, memory_map=True).iter_batches(batch_size=rows, columns=[column]):
                yield batch.column(0).to_pylist()
        else:
            array = read_table(file, [column]).column(0)
            for start in range(0, len(array), rows):
                yield array.slice(start, rows).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"{file}: cannot read column {column!r}: {exc}") from None


# ---- the image cache -----------------------------------------------------------------------


def cache_root() -> Path:
    return core_cache_root() / "hf"


MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8", ".jpg"), (b"GIF8", ".gif"), (b"BM", ".bmp"))


def suffix_of(data: bytes, hint: Any) -> str:
    if isinstance(hint, str) and Path(hint).suffix.lower() in (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"):
        return Path(hint).suffix.lower()
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return next((ext for magic, ext in MAGIC if data.startswith(magic)), ".img")


def header_size(data: bytes) -> list[int] | None:
    """The image's size from its header (Pillow reads no pixels until asked)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            return list(image.size)
    except Exception:  # Pillow raises many types for bad bytes; validate reports the file
        return None


def extract_images(files: Sequence[Path], column: str, folder: Path) -> list[Any]:
    """Per row: [file name, width, height] (width/height None when the header is unreadable), or
    {"path": P} for a row that refers to a file instead of holding bytes, or None (no image).
    Each distinct screenshot is written once, named by its digest."""
    manifest = folder / MANIFEST
    if manifest.is_file():
        return read_manifest(manifest)
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        rows: list[Any] = []
        written: dict[str, list[Any]] = {}
        for file in files:
            for batch in image_batches(file, column):
                for value in batch:
                    data, hint = (value.get("bytes"), value.get("path")) if isinstance(value, dict) else (value, None)
                    if not data:
                        rows.append({"path": hint} if isinstance(hint, str) and hint else None)
                        continue
                    digest = hashlib.sha256(data).hexdigest()[:24]
                    if digest not in written:
                        name = digest + suffix_of(data, hint)
                        (scratch / name).write_bytes(data)
                        size = header_size(data)
                        written[digest] = [name, *(size or (None, None))]
                    rows.append(written[digest])
        (scratch / MANIFEST).write_text(json.dumps({"version": MANIFEST_VERSION, "rows": rows}))
        try:
            os.rename(scratch, folder)
        except OSError:  # another process (an xdist worker) renamed its copy first
            if not manifest.is_file():
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return read_manifest(manifest)


def read_manifest(manifest: Path) -> list[Any]:
    try:
        document = safejson.read_path(manifest)
        if document.get("version") != MANIFEST_VERSION or not isinstance(document.get("rows"), list):
            raise ValueError(f"not a version {MANIFEST_VERSION} manifest")
    except (OSError, ValueError, AttributeError) as exc:
        raise DatasetError(f"{manifest}: unreadable image cache ({exc}); delete {manifest.parent}") from None
    return document["rows"]
