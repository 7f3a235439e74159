"""The run's stop from a verdict that comes while samples run: the frame check's, sent beside the
first samples (controller/startup.py). The controller says `stop(message)` once; each process that
predicts asks `stopped()` before an item starts (plugin/worker/prefetch.py): from then on no item
starts, the loop ends, and the items left are the run's not run. Serially the two sides share this
object; under xdist the controller's word reaches its workers as a file (its path sent in
wire.WorkerInput), made only when a verdict is still pending as the workers start."""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

FILE = "stop"


class Halt:
    def __init__(self, folder: str | None = None) -> None:
        self._message: str | None = None
        self._lock = threading.Lock()
        self._folder = Path(folder) if folder else None  # a worker's: the controller's shared folder
        self._made: Path | None = None  # the controller's: the folder it made for its workers

    def stop(self, message: str) -> None:
        """The controller: the run stops with `message` (the first word stands)."""
        with self._lock:
            if self._message is not None:
                return
            self._message = message
            if self._made is not None:
                _write(self._made, message)

    @property
    def message(self) -> str | None:
        return self._message

    def stopped(self) -> str | None:
        """The message once the run is to stop, else None (a worker: one stat of the shared file)."""
        if self._message is None and self._folder is not None:
            try:
                self._message = (self._folder / FILE).read_text(encoding="utf-8") or None
            except OSError:
                return None
        return self._message

    def share(self) -> str | None:
        """The controller, as a worker starts: the folder its workers read the stop from (made once;
        the stop itself written there at once if it came already)."""
        with self._lock:
            if self._made is None:
                self._made = Path(tempfile.mkdtemp(prefix="grounding-halt-"))
                if self._message is not None:
                    _write(self._made, self._message)
            return str(self._made)

    def close(self) -> None:
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)


def _write(folder: Path, message: str) -> None:
    """Whole or not at all: a worker never reads half a message."""
    partial = folder / (FILE + ".part")
    partial.write_text(message, encoding="utf-8")
    partial.replace(folder / FILE)
