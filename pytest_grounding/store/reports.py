"""Every file the plugin writes (the predictions stream and the JSON report) and reads back (a
predictions file to resume from). Both are strict JSON: a non-finite float becomes null, never
NaN, which strict parsers reject."""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from ..core import safefile, safejson
from ..core.record import SCHEMA_VERSION
from ..core.safetext import terminal_line

# Leading keys of a predictions line: what Pointerbench-Pro's scorer reads (id, point) first.
PREDICTION_KEYS = ("id", "point", "detector", "dataset", "outcome")


class OutputError(Exception):
    """An output path that cannot be written, or a predictions file that cannot be read back."""


def strict(value: Any) -> Any:
    """The same structure with every non-finite float replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


def dumps(document: Any, **options: Any) -> str:
    return json.dumps(strict(document), allow_nan=False, **options)


def check_writable(path: Path) -> None:
    """Before the first sample runs: the folder can be made and written, the path is no folder."""
    if path.is_dir():
        raise OutputError(f"{path} is a directory, expected a file path")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the folder {parent}: {exc.strerror or exc}") from None
    probe = parent / f".{path.name}.{os.getpid()}.probe"
    try:
        probe.write_text("", encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write in {parent}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()


class PredictionsWriter:
    """JSONL, one line flushed per finished sample, so a run that dies keeps what it did. A line is
    the whole record plus the dataset's fingerprint (what --grounding-resume needs), led by
    `id` and `point` (what Pointerbench-Pro's scorer reads). A write that fails is remembered in
    `error` and stops the stream; it never stops the run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        self.lines = 0
        self._file: IO[str] | None = None

    def write(self, record: Mapping[str, Any]) -> None:
        if self.error is not None:
            return
        line = {key: record.get(key) for key in PREDICTION_KEYS}
        line.update(record)
        try:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("w", encoding="utf-8")
            self._file.write(dumps(line) + "\n")
            self._file.flush()
            self.lines += 1
        except (OSError, ValueError) as exc:
            self.error = f"predictions file {self.path}: writing stopped after {self.lines} lines: {exc}"

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError as exc:
                self.error = self.error or f"predictions file {self.path}: {exc}"
            self._file = None


class PredictionsHold:
    """A predictions file held by one run at a time: an exclusive lock on `.<name>.lock` beside it
    (flock: two runs on one machine, or two shards on a shared volume, never write or resume one
    file at once), the lock file naming its holder. Taken before the file is read to resume and
    kept until the run ends; `OutputError` naming the other run when it holds the file. A path
    that is no regular file (/dev/null, a FIFO) is not held; neither where flock does not exist."""

    def __init__(self, path: Path, holder: str) -> None:
        self.path = Path(path)
        self.lock_path = self.path.parent / f".{self.path.name}.lock"
        self._fd: int | None = None
        if self.path.exists() and not self.path.is_file():
            return
        try:
            import fcntl
        except ImportError:  # Windows: no flock; one run at a time is the user's care
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    other = os.read(fd, 4096).decode("utf-8", "replace").strip() or "another run"
                    os.close(fd)
                    raise OutputError(
                        f"{self.path} is being written by another run ({terminal_line(other)[:300]}): give each "
                        "run (each shard) its own --grounding-predictions file"
                    ) from None
                if os.path.exists(self.lock_path) and os.stat(self.lock_path).st_ino == os.fstat(fd).st_ino:
                    break  # the lock file is still the one at the path (not one a finishing run removed)
                os.close(fd)
            os.ftruncate(fd, 0)
            os.write(fd, holder.encode("utf-8"))
            self._fd = fd
        except OSError as exc:  # a folder we cannot write: the writer says so when it opens the file
            raise OutputError(f"cannot lock {self.path}: {exc.strerror or exc}") from None

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.lock_path.unlink()  # while still held: a run waiting on it sees the file gone and retries
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd = None


@contextlib.contextmanager
def interrupts_held(taken: list[int]) -> Iterator[None]:
    """Ctrl-C while the final outputs are written is held until they are whole (a report that every
    sample ran for is not lost to a late key press): each SIGINT is appended to `taken`, for the
    caller to say and to end with. Only the main thread can hold signals; elsewhere a no-op."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda number, frame: taken.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def read_predictions(path: Path) -> list[tuple[int, Any]]:
    """(line number, parsed line) for each line; a torn last line (the run died while writing it)
    is dropped, a bad line elsewhere is an OutputError."""
    try:
        text = safefile.read_text(path, limit=safejson.MAX_DOCUMENT_CHARS)  # a regular file, bounded
    except (OSError, ValueError) as exc:
        raise OutputError(f"cannot read {path}: {exc}") from None
    rows = text.splitlines()
    out = []
    for lineno, line in enumerate(rows, start=1):
        if not line.strip():
            continue
        try:
            out.append((lineno, safejson.loads(line)))
        except ValueError as exc:
            if lineno == len(rows) and not text.endswith("\n"):
                break
            raise OutputError(f"{path}:{lineno}: not JSON ({exc})") from None
    return out


def read_report(path: Path) -> dict[str, Any]:
    """A JSON report written by --grounding-json, or an OutputError saying why it is not one."""
    try:
        document = safejson.read_path(path)  # its size checked before it is read
    except (OSError, UnicodeDecodeError) as exc:
        raise OutputError(f"cannot read {path}: {exc}") from None
    except ValueError as exc:
        raise OutputError(f"{path} is not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("tool") != "pytest-grounding" or "summary" not in document:
        raise OutputError(f"{path} is not a pytest-grounding JSON report (--grounding-json)")
    if document.get("schema_version") != SCHEMA_VERSION:
        raise OutputError(
            f"{path} has report schema version {document.get('schema_version')!r}; this version reads {SCHEMA_VERSION}"
        )
    from .reportcheck import describe, problems

    found = problems(document)  # before anything renders it: a crafted report puts text where numbers go
    if found:
        raise OutputError(f"{path} does not match the report schema: {describe(found)}")
    check_records(path, document.get("samples"))
    from .reportcheck import more_than_run

    extra = more_than_run(document)
    if extra:
        raise OutputError(f"{path} does not hold together: {extra}")
    return document


def check_records(path: Path, records: Any) -> None:
    """The one check every reader of records makes (a report's, a predictions file's): no record is the
    same sample, epoch, variant and detector twice (a record copied would count its hit again). An
    OutputError naming the file and the record."""
    from .reportcheck import duplicate_record

    copied = duplicate_record(records)
    if copied:
        raise OutputError(f"{path} does not hold together: {copied}")


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Written whole (write_atomic), so a reader never sees half a report."""
    write_atomic(path, dumps(document, indent=1, sort_keys=False) + "\n")


def write_atomic(path: Path, data: str | bytes, *, sync: bool = False) -> None:
    """Every file the package replaces whole (reports, pages, baselines, annotations, previews):
    written to a temporary file beside it with an unpredictable name (mkstemp: a link planted at a
    guessable name is never followed), given the mode the file had (or a new file's), then renamed
    over it. Something that is not a regular file (/dev/null, a FIFO, a device) is written into,
    never replaced. `sync`: flushed to disk before the rename (a file a person edits by hand)."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if path.exists() and not path.is_file() and not path.is_dir():
        with open(path, "wb") as handle:
            handle.write(payload)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _mode_for(path))
            handle.write(payload)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    """The replaced file's permission bits; a new file's (0666 less the umask), not mkstemp's 0600."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(path.stat().st_mode)
    mask = os.umask(0o022)  # read back (no other way to read it); restored at once
    os.umask(mask)
    return 0o666 & ~mask
