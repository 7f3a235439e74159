"""Every file the plugin writes: the predictions stream and the JSON report."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, IO, Optional

SCHEMA_VERSION = 1


class PredictionsWriter:
    """JSONL `{"id", "point", "detector", "dataset"}` (Pointerbench-Pro's scorer reads id and
    point), one line flushed per finished sample, so a run that dies keeps what it did."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Optional[IO[str]] = None

    def write(self, record: Dict[str, Any]) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("w", encoding="utf-8")
        line = {"id": record["id"], "point": record["point"], "detector": record["detector"],
                "dataset": record["dataset"], "outcome": record["outcome"]}
        self._file.write(json.dumps(line) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def write_json(path: Path, document: Dict[str, Any]) -> None:
    """Written to a temporary file and renamed, so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
