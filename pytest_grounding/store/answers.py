"""The answer cache's store (--grounding-cache DIR): one small JSON file per key, written to a
temporary file beside it and renamed over it (store/reports.py's write_atomic).

Why files and not SQLite: the writers are xdist workers on one machine and shards on shared
storage (NFS, Lustre) on many. SQLite's locking is unreliable on network file systems and its WAL
mode needs shared memory on one host (sqlite.org/wal.html: "WAL does not work over a network
filesystem"); a rename within a folder is atomic on POSIX and NFS alike, so a reader sees a whole
entry or none, two writers of one key leave one whole entry (the same answer), and nothing is
locked. A file that cannot be read, is not JSON or holds another key is a miss, never a crash;
the next complete answer replaces it."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FORMAT = 1
ENTRY_LIMIT = 1_000_000  # characters: an answer is kept whole up to core.record.RAW_LIMIT, far below


class FileAnswerStore:
    """Entries under DIR/answers/ab/<key>.json (256 folders: no folder grows past what file
    systems list quickly). `put` and `get` never raise: a store that cannot be written is counted
    and the run goes on asking the model."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.write_errors = 0
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        return self.folder / "answers" / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        from ..core import safejson

        try:
            entry = safejson.loads(self._read(self.path(key)), max_chars=ENTRY_LIMIT)
        except (OSError, ValueError):  # absent, unreadable, not JSON, too large or deep: a miss
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
            return None
        return entry

    def _inside(self, path: Path) -> None:
        """OSError unless the entry's folder is the store's own (answers/ab linked elsewhere is refused:
        never read from nor written through)."""
        answers = (self.folder / "answers").resolve()
        if path.parent.is_symlink() or path.parent.resolve().parent != answers:
            raise OSError(f"{path.parent} leads outside the cache")

    def _read(self, path: Path) -> str:
        """An entry's text: a regular file inside the store only (a link, a FIFO, a device or a
        folder linked out of the store is OSError: a miss), at most ENTRY_LIMIT characters read."""
        from ..core import safefile

        self._inside(path)
        try:  # UTF-8: at most four bytes a character; a link itself is refused (O_NOFOLLOW)
            data = safefile.read_bytes(path, limit=ENTRY_LIMIT * 4, follow_links=False)
        except safefile.FileTooLarge as exc:
            raise ValueError(str(exc)) from None
        return data.decode("utf-8")

    @staticmethod
    def _clear(path: Path) -> None:
        """An entry that is not a regular file (a link, a FIFO, a device node) is removed before a
        write, never written through (write_atomic writes into a FIFO: it would wait for a reader)."""
        import os
        import stat

        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISREG(mode):
            os.unlink(path)  # a folder there: OSError, counted as a write error

    def put(self, key: str, entry: Mapping[str, Any]) -> bool:
        import json

        from .reports import write_atomic

        try:
            self._inside(self.path(key))  # an entry folder linked out of the store: never written through
            self._clear(self.path(key))
            write_atomic(self.path(key), json.dumps({"format": FORMAT, "key": key, **entry}, sort_keys=True))
        except (OSError, TypeError, ValueError):
            with self._lock:
                self.write_errors += 1
            return False
        return True


def check_folder(folder: Path) -> None:
    """Before any sample: DIR can be made and written (OSError names what is wrong)."""
    import tempfile

    answers = Path(folder) / "answers"
    answers.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=answers, prefix=".check-", delete=True):
        pass


def open_store(folder: Path | None) -> FileAnswerStore | None:
    return None if folder is None else FileAnswerStore(folder)
