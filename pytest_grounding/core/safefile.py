"""The one reader of a file a user names (reports, predictions, baselines, presets, errata, dataset
annotations, cache entries): a regular file only, read up to a limit, so that a link to /dev/zero
is refused instead of read until memory runs out, and a FIFO is refused instead of waited on.

The file is opened with O_NONBLOCK (opening a FIFO with no writer returns at once instead of
blocking), then its kind is taken from the opened descriptor (fstat: no window between a check
and the open), and at most `limit` bytes are read, whatever the size the file claims.

Pure but for the one file it is given."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

MAX_FILE_BYTES = 4 << 30  # 4 GiB: safejson's longest document at four UTF-8 bytes a character
CHUNK_BYTES = 1 << 20  # what one read asks for: memory follows the file's length, not the limit
GROWTH_BYTES = 64 << 20  # read past the size a file claims (a file appended to while read; /proc's 0)


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a file was expected."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class FileTooLarge(ValueError):
    """A file longer than its reader's limit."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_regular(path: Path | str, follow_links: bool) -> int:
    """A descriptor of `path` opened non-blocking, a regular file's only (NotRegularFile otherwise)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise NotRegularFile(errno.ELOOP, "is a link", str(path)) from None
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing
            raise NotRegularFile(errno.ENXIO, "not a regular file", str(path)) from None
        raise
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError:
        os.close(descriptor)
        raise
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise NotRegularFile(errno.EINVAL, f"{_kind(mode)}, not a regular file", str(path))
    return descriptor


def read_bytes(path: Path | str, *, limit: int = MAX_FILE_BYTES, follow_links: bool = True) -> bytes:
    """At most `limit` bytes of a regular file: NotRegularFile (an OSError) for anything else,
    FileTooLarge (a ValueError) past the limit, OSError as opening raises it. `follow_links=False`:
    a link itself is refused (O_NOFOLLOW; the cache's entries)."""
    descriptor = _open_regular(path, follow_links)
    with os.fdopen(descriptor, "rb", buffering=0) as file:
        return _bounded(file, path, limit)


def chunks(path: Path | str, *, limit: int | None = None) -> Iterator[bytes]:
    """A regular file's bytes CHUNK_BYTES at a time, for a reader that keeps none of them (a digest of a
    multi-gigabyte weights or parquet file in bounded memory): NotRegularFile for anything else,
    FileTooLarge once past `limit` (None: any length) or past the size the file claims (see _pieces)."""
    descriptor = _open_regular(path, True)
    with os.fdopen(descriptor, "rb", buffering=0) as file:
        yield from _pieces(file, path, limit)


def sha256(path: Path | str) -> str:
    """The hex sha256 of a regular file, read in chunks (memory never follows the file's length)."""
    digest = hashlib.sha256()
    for chunk in chunks(path):
        digest.update(chunk)
    return digest.hexdigest()


def _too_large(path: Path | str, limit: int) -> FileTooLarge:
    return FileTooLarge(f"{path} holds more than {limit:,} bytes, more than this tool reads from it")


def _bounded(file: object, path: Path | str, limit: int) -> bytes:
    """The file's bytes, read as _pieces reads them."""
    pieces = list(_pieces(file, path, limit))
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _pieces(file: object, path: Path | str, limit: int | None) -> Iterator[bytes]:
    """The file's bytes CHUNK_BYTES at a time, FileTooLarge as soon as they pass `limit` (None: any
    length), or pass the size the file claims by more than GROWTH_BYTES (a /proc file claims 0 bytes
    and may never end: memory and time follow what the file says it holds, never the limit)."""
    size = os.fstat(file.fileno()).st_size  # type: ignore[attr-defined]
    if limit is not None and size > limit:
        raise _too_large(path, limit)
    most = size + GROWTH_BYTES if limit is None else min(limit, size + GROWTH_BYTES)
    total = 0
    while True:
        chunk = file.read(min(CHUNK_BYTES, most + 1 - total))  # type: ignore[attr-defined]
        if not chunk:
            return
        total += len(chunk)
        if total > most:
            if most == limit:
                raise _too_large(path, limit)
            raise FileTooLarge(
                f"{path} holds more than the {size:,} bytes it claims (past {GROWTH_BYTES:,} more: a file that "
                "grows while read, or a /proc file that never ends): not read"
            )
        yield chunk


def read_text(path: Path | str, *, limit: int = MAX_FILE_BYTES, follow_links: bool = True) -> str:
    """read_bytes decoded as UTF-8 (UnicodeDecodeError, a ValueError, for other bytes)."""
    return read_bytes(path, limit=limit, follow_links=follow_links).decode("utf-8")
