"""Images as PNG data URLs for served models, encoded once per screen: several instructions on one
screenshot (the synthetic set: 300 samples on 64 screens) share one encoding, found by the digest
of the pixels. The encoding runs in the thread that prepares a request, before it takes a place
in flight, so encoding never holds a request slot."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator
from typing import Any

CACHED_SCREENS = 32  # a data URL of a 4K screen is a few MB: a bounded number of them


class ScreenSlots:
    """At most this process's share of the cores preparing screens (decoding, resizing, encoding)
    at once, the others waiting their turn (woken in the order they came): with 32 requests in
    flight, the first request goes out after one screen's work instead of after all the first
    screens' at once (they share the cores), and the server is fed in item order. A thread that
    holds a slot takes no second one (a preparation inside another never waits for itself). A thread
    that `yields` (the frame check's, its calibration screens sent beside the first samples) takes a
    slot only when no other thread waits for one: the samples' screens are never queued behind it."""

    def __init__(self, count: int | None = None) -> None:
        self.count = count  # None: this process's share of the cores, decided on first use
        self._free: int | None = None
        self._waiting: deque[tuple[bool, threading.Event]] = deque()  # (yields?, its turn), in order
        self._lock = threading.Lock()
        self._held = threading.local()

    def _acquire(self) -> None:
        with self._lock:
            if self._free is None:
                from .devices import cores_share

                self._free = self.count or cores_share()
            if self._free > 0:  # a free slot: nobody waits (a released slot goes to a waiter at once)
                self._free -= 1
                return
            turn = threading.Event()
            self._waiting.append((bool(getattr(self._held, "yields", False)), turn))
        turn.wait()  # the slot is handed over by its holder

    def _release(self) -> None:
        with self._lock:
            first = next((entry for entry in self._waiting if not entry[0]), None)
            if first is None and self._waiting:
                first = self._waiting[0]
            if first is None:
                assert self._free is not None
                self._free += 1
                return
            self._waiting.remove(first)
        first[1].set()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        if getattr(self._held, "inside", False):
            yield
            return
        self._acquire()
        self._held.inside = True
        try:
            yield
        finally:
            self._held.inside = False
            self._release()

    @contextlib.contextmanager
    def yielding(self) -> Iterator[None]:
        """This thread's preparations meanwhile wait while any other thread's wait."""
        self._held.yields = True
        try:
            yield
        finally:
            self._held.yields = False


SCREEN_SLOTS = ScreenSlots()


# Screens every run sends alike (the frame check's calibration screens, drawn anew each time):
# encoded once per process, whichever detector asks, under a key that holds all the encoding reads.
# The test suite runs hundreds of frame checks in one process; a user's runs of several detectors
# with one preset encode them once.
_SAME_IN_EVERY_RUN = "pytest_grounding.same_in_every_run"


def same_in_every_run(image: Any) -> Any:
    """The image, marked as one every run sends alike (`screens_for`)."""
    image.info[_SAME_IN_EVERY_RUN] = True
    return image


def screens_for(image: Any, own: EncodingCache, encoding: Hashable) -> tuple[EncodingCache, Hashable]:
    """The cache an image's encoding is kept in and its key there: the detector's own (`own`, by the
    screen's digest) or, for an image marked `same_in_every_run`, the process's (by the digest and
    `encoding`, what the detector's resize and encoding depend on)."""
    digest = image_digest(image)
    if image.info.get(_SAME_IN_EVERY_RUN):
        with contextlib.suppress(TypeError):  # an unhashable preprocess: the detector's own cache
            key = (digest, encoding)
            hash(key)
            return SAME_IN_EVERY_RUN, key
    return own, digest


def data_url(image: Any) -> str:
    """The image as a base64 PNG data URL (lossless: the model sees our pixels)."""
    return data_url_bytes(image).decode("ascii")


def data_url_bytes(image: Any) -> bytes:
    """`data_url` as ASCII bytes: what a request body carries, spliced in as it is (base64 needs
    no JSON escaping; `http.json_bytes`)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return b"data:image/png;base64," + base64.b64encode(buffer.getvalue())


_DIGESTS: dict[int, tuple[weakref.ref, str]] = {}  # id(image) -> (the image, its digest): one image shared by samples
_DIGESTS_LOCK = threading.Lock()


def file_digest(data: bytes, image: Any) -> str:
    """A decoded image's digest from its file's bytes (and the mode and size it was decoded to)."""
    digest = hashlib.blake2b(data, digest_size=16)
    digest.update(f"file:{image.mode}:{image.size[0]}x{image.size[1]}".encode())
    return digest.hexdigest()


def image_digest(image: Any) -> str:
    """The image's digest: equal screens read twice are one screen. The file's when the reader
    gave one (`remember_digest`), else the pixels' (hashed once per image object)."""
    key = id(image)
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
        if known is not None and known[0]() is image:
            return known[1]
    digest = hashlib.blake2b(image.tobytes(), digest_size=16)
    digest.update(f"{image.mode}:{image.size[0]}x{image.size[1]}".encode())
    found = digest.hexdigest()
    remember_digest(image, found)
    return found


def remember_digest(image: Any, digest: str) -> None:
    """`image_digest(image)` is `digest` while this image object lives. Kept by identity, not in
    `image.info`: PIL copies `info` into every crop, resize and copy, which are other pixels."""
    key = id(image)
    try:
        reference = weakref.ref(image, lambda _ref: _forget(key))
    except TypeError:  # an image type without weak references: hashed each time
        return
    with _DIGESTS_LOCK:
        _DIGESTS[key] = (reference, digest)


def _forget(key: int) -> None:
    with _DIGESTS_LOCK:
        _DIGESTS.pop(key, None)


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
        return self.get_timed(key, compute)[0]

    def get_timed(self, key: Hashable, compute: Callable[[], Any]) -> tuple[Any, float]:
        """The value, and the seconds spent waiting: for another thread computing it, or for a
        place among the screens being prepared (`SCREEN_SLOTS`)."""
        waited = 0.0
        while True:
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    self.hits += 1
                    return self._values[key], waited
                waiting = self._pending.get(key)
                if waiting is None:
                    self._pending[key] = threading.Event()
                    self.misses += 1
                    break
            started = time.monotonic()
            waiting.wait()  # another thread is encoding this screen; an encoding that failed is retried
            waited += time.monotonic() - started
        try:
            started = time.monotonic()
            with SCREEN_SLOTS.held():
                waited += time.monotonic() - started  # a place among the screens being prepared
                value = compute()
            with self._lock:
                self._values[key] = value
                while len(self._values) > self.size:
                    self._values.popitem(last=False)
            return value, waited
        finally:
            with self._lock:
                self._pending.pop(key).set()


SAME_IN_EVERY_RUN = EncodingCache()
