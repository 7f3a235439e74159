"""Every file the plugin writes (the predictions stream and the JSON report) and reads back (a
predictions file to resume from). Both are strict JSON: a non-finite float becomes null, never
NaN, which strict parsers reject."""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import IO, Any

from . import safejson

SCHEMA_VERSION = 1
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

    def write(self, record: dict[str, Any]) -> None:
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


def read_predictions(path: Path) -> list[tuple[int, Any]]:
    """(line number, parsed line) for each line; a torn last line (the run died while writing it)
    is dropped, a bad line elsewhere is an OutputError."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
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
        document = safejson.loads(path.read_text(encoding="utf-8"))
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
    return document


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Written to a temporary file and renamed, so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
