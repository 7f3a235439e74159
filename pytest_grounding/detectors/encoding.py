"""Images as PNG data URLs for served models, encoded once per screen: several instructions on one
screenshot (the synthetic set: 300 samples on 64 screens) share one encoding, found by the digest
of the pixels. The encoding runs in the thread that prepares a request, before it takes a place
in flight, so encoding never holds a request slot."""

from __future__ import annotations

import base64
import hashlib
import io
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

CACHED_SCREENS = 32  # a data URL of a 4K screen is a few MB: a bounded number of them


def data_url(image: Any) -> str:
    """The image as a base64 PNG data URL (lossless: the model sees our pixels)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def image_digest(image: Any) -> str:
    """The pixels' digest (with the size and mode): equal screens read twice are one screen."""
    digest = hashlib.blake2b(image.tobytes(), digest_size=16)
    digest.update(f"{image.mode}:{image.size[0]}x{image.size[1]}".encode())
    return digest.hexdigest()


class EncodingCache:
    """key -> value, computed once even when several threads ask for the same key at once (the
    others wait for the first), least recently used dropped past `size`. Counts its hits."""

    def __init__(self, size: int = CACHED_SCREENS) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._pending: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        while True:
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    self.hits += 1
                    return self._values[key]
                waiting = self._pending.get(key)
                if waiting is None:
                    self._pending[key] = threading.Event()
                    self.misses += 1
                    break
            waiting.wait()  # another thread is encoding this screen; an encoding that failed is retried
        try:
            value = compute()
            with self._lock:
                self._values[key] = value
                while len(self._values) > self.size:
                    self._values.popitem(last=False)
            return value
        finally:
            with self._lock:
                self._pending.pop(key).set()
