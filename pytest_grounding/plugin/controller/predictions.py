"""The controller's predictions file (--grounding-predictions): held by this run alone from
before it is read to resume until the run ends, opened before the first sample runs (a resumed
run rewrites what it keeps first), one line per record as records arrive."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.record import Record
from ...store.reports import OutputError, PredictionsHold, PredictionsWriter
from ..common.settings import SettingError


@dataclass
class PredictionsStream:
    path: Path | None
    held: bool = True  # False: a file in the run's own folder (no other run writes there), made on first write
    _writer: PredictionsWriter | None = None
    _hold: PredictionsHold | None = None

    def hold(self, args: Sequence[str], started: float) -> None:
        """Taken for this run before it is read or written (a SettingError naming the run that
        holds it); let go when the run ends."""
        if self.path is None or self._hold is not None or not self.held:
            return
        when = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started))
        holder = f"pid {os.getpid()} on {socket.gethostname()}, started {when}: pytest {' '.join(args)}"[:1000]
        try:
            self._hold = PredictionsHold(self.path, holder)
        except OutputError as exc:
            raise SettingError(f"--grounding-predictions: {exc}") from None

    def let_go(self) -> None:
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    def open(self, kept: Iterable[Record] = ()) -> None:
        if self.path is not None and self._writer is None:
            self._writer = PredictionsWriter(self.path)
            for record in kept:
                self._writer.write(record)

    def write(self, record: Record) -> None:
        if self.path is not None:
            self.open()
            assert self._writer is not None
            self._writer.write(record)

    def close(self) -> str | None:
        """Closed at the run's end; what went wrong writing it, if anything."""
        if self._writer is None:
            return None
        self._writer.close()
        return self._writer.error
