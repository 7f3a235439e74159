"""Thumbnails for the gallery: each screen is decoded once and gives one small overview; each
target region on it gives one crop, shared by every detector that missed that target. JPEG,
capped in size, embedded once in the page's style sheet and drawn on by SVG (the boxes and points
are not burned into the pixels, so one crop serves every detector)."""

from __future__ import annotations

import base64
import io
import queue
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.record import OUTSIDE_DATASET

CROP_MAX = (300, 190)  # the crop's thumbnail, px (never larger than the region itself)
OVERVIEW_MAX = (200, 130)  # the whole screen, px
MIN_REGION = (240, 150)  # the least screen area shown around a target, px
QUALITY = 72
Region = tuple[int, int, int, int]
# Why an image is not read for a record's thumbnail (None: it may be read); see Thumbnails.
Withhold = Callable[[Mapping[str, Any]], "str | None"]
REFUSED_BY_RUN = "not shown: the run refused this image: it leads outside the dataset folder"


def region_of(target: Any, image_size: tuple[int, int]) -> Region:
    """The screen area around a target: the box with a margin as large as its longer side (at
    least 40 px), grown to MIN_REGION, moved (not cut) to lie inside the image."""
    width, height = image_size
    try:
        x1, y1, x2, y2 = (float(v) for v in target)
    except (TypeError, ValueError):
        return (0, 0, width, height)
    if not (x2 > x1 and y2 > y1):
        return (0, 0, width, height)
    margin = max(x2 - x1, y2 - y1, 40.0)
    box = [x1 - margin, y1 - margin, x2 + margin, y2 + margin]
    for axis, least, limit in ((0, MIN_REGION[0], width), (1, MIN_REGION[1], height)):
        size = box[axis + 2] - box[axis]
        if size < least:
            box[axis] -= (least - size) / 2
            box[axis + 2] += (least - size) / 2
        size = min(box[axis + 2] - box[axis], limit)
        start = min(max(box[axis], 0.0), limit - size)
        box[axis], box[axis + 2] = start, start + size
    return (round(box[0]), round(box[1]), round(box[2]), round(box[3]))


def fit(size: tuple[int, int], limit: tuple[int, int]) -> tuple[int, int]:
    """`size` scaled (up or down) to fit `limit`, aspect kept: how large a thumbnail is shown."""
    scale = min(limit[0] / max(size[0], 1), limit[1] / max(size[1], 1))
    return max(1, round(size[0] * scale)), max(1, round(size[1] * scale))


@dataclass
class Screen:
    """One screenshot: its overview (CSS class `s<index>`) and its crops by region."""

    index: int
    path: Path
    targets: list[Any] = field(default_factory=list)
    size: tuple[int, int] | None = None
    problem: str | None = None
    overview: str | None = None  # data URI
    crops: dict[Region, str] = field(default_factory=dict)  # data URIs


def encode(image: Any, limit: tuple[int, int]) -> str:
    """`image` is resized in place: pass a copy (a crop is one)."""
    from PIL import Image

    image.thumbnail(limit, Image.Resampling.BILINEAR, reducing_gap=2.0)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=QUALITY)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def draw(screen: Screen) -> Screen:
    """Decode the screen once; make its overview and one crop per target region. A missing or
    unreadable file is recorded as the screen's problem, never raised."""
    from PIL import Image

    try:
        opened = Image.open(screen.path)
        try:
            opened.load()  # a path opened by Pillow: load() closes the file; the pixels stay
        except BaseException:
            opened.close()
            raise
        image = opened if opened.mode == "RGB" else opened.convert("RGB")
    except FileNotFoundError:
        screen.problem = f"image missing: {screen.path}"
        return screen
    except Exception as exc:  # any file that is not a readable image: shown as such, never raised
        screen.problem = f"image unreadable: {screen.path} ({type(exc).__name__})"
        return screen
    screen.size = image.size
    factor = max(1, min(image.width // (2 * OVERVIEW_MAX[0]), image.height // (2 * OVERVIEW_MAX[1])))
    screen.overview = encode(image.reduce(factor), OVERVIEW_MAX)  # reduce: a fast box filter first
    for target in screen.targets:
        region = region_of(target, image.size)
        if region not in screen.crops:
            screen.crops[region] = encode(image.crop(region), CROP_MAX)
    return screen


class Thumbnails:
    """Every screen of the records given, decoded in a few threads (Pillow releases the GIL).
    A record whose image the run refused as outside its dataset is never read, nor one that
    `withhold` gives a reason for (`report --html`: an image that is not its dataset's own);
    such a record's entry shows the reason instead of pixels."""

    def __init__(
        self,
        records: Iterable[Mapping[str, Any]],
        base: Path | None = None,
        workers: int = 4,
        withhold: Withhold | None = None,
    ) -> None:
        self.screens: dict[str, Screen] = {}
        self.withheld: dict[tuple[str, str], str] = {}  # (dataset, image) -> why it is not read
        for record in records:
            image = str(record.get("image") or "")
            if not image or image == "?":
                continue
            reason = REFUSED_BY_RUN if OUTSIDE_DATASET in str(record.get("error") or "") else None
            if reason is None and withhold is not None:
                reason = withhold(record)
            if reason is not None:
                self.withheld[_key(record)] = reason
                continue
            if image not in self.screens:
                path = Path(image)
                if not path.is_absolute() and base is not None:
                    path = base / path
                self.screens[image] = Screen(len(self.screens), path)
            self.screens[image].targets.append(record.get("target"))
        early = current()  # the screens the run drew as its non-hits came in (Prefetch)
        pending = [screen for screen in self.screens.values() if early is None or not early.reuse(screen)]
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            list(pool.map(draw, pending))
        self.crop_class: dict[tuple[str, Region], str] = {}
        for image, screen in self.screens.items():
            for number, region in enumerate(screen.crops):
                self.crop_class[(image, region)] = f"c{screen.index}-{number}"

    def withheld_reason(self, record: Mapping[str, Any]) -> str | None:
        return self.withheld.get(_key(record))

    def screen(self, record: Mapping[str, Any]) -> Screen | None:
        if _key(record) in self.withheld:
            return None  # the same path may be read for another record, whose dataset owns it
        return self.screens.get(str(record.get("image") or ""))

    def crop(self, record: Mapping[str, Any]) -> tuple[str, Region] | None:
        """(CSS class, region) of the record's crop, or None where the screen has no pixels."""
        screen = self.screen(record)
        if screen is None or screen.size is None:
            return None
        region = region_of(record.get("target"), screen.size)
        return self.crop_class[(str(record.get("image")), region)], region

    def css(self) -> str:
        """The images, each once: a class per overview and per crop."""
        rules = []
        for image, screen in self.screens.items():
            if screen.overview:
                rules.append(f".s{screen.index}{{background-image:url({screen.overview})}}")
            for region, uri in screen.crops.items():
                rules.append(f".{self.crop_class[(image, region)]}{{background-image:url({uri})}}")
        return "\n".join(rules)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


@dataclass(frozen=True)
class Drawn:
    """One screen drawn early: the file's (mtime, size) then, its size, overview and crops."""

    stamp: tuple[int, int]
    size: tuple[int, int]
    overview: str
    crops: Mapping[Region, str]


class Prefetch:
    """The run's page's screens drawn while the run goes (issue 60: the thumbnails were the run's
    last seconds). The controller hands it each record as it arrives; a non-hit's screen (the page
    shows those: `outcomes`, page.NON_HITS) is drawn once, in one background thread, with a crop for every target the
    run's samples have on it (`targets_of`: image -> the targets' boxes) and the record's own. At the
    run's end `close` stops it (what is queued is dropped, the screen being drawn is waited for) and
    `Thumbnails` takes a drawn screen where the file is unchanged and every crop it needs is there;
    the rest are drawn then, as before. The same images, read the same way: the page is the same.
    A record the run refused as outside its dataset is never read, as in `Thumbnails`."""

    JOIN_S = 5.0  # the most `close` waits for the screen being drawn (a hung file: drawn again at the end)

    def __init__(
        self, outcomes: Iterable[str], targets_of: Callable[[], Mapping[str, Sequence[Any]]] | None = None
    ) -> None:
        self._outcomes = frozenset(outcomes)  # the outcomes the page shows screens of (page.NON_HITS)
        self._targets_of = targets_of
        self._known: Mapping[str, Sequence[Any]] | None = None
        self._queue: queue.SimpleQueue[tuple[str, list[Any]] | None] = queue.SimpleQueue()
        self._seen: set[str] = set()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.done: dict[str, Drawn] = {}

    def add(self, record: Mapping[str, Any]) -> None:
        image = str(record.get("image") or "")
        if self._closed or record.get("outcome") not in self._outcomes or not image or image == "?":
            return
        if image in self._seen:
            return
        if OUTSIDE_DATASET in str(record.get("error") or ""):
            return
        if self._known is None:
            self._known = self._targets_of() if self._targets_of is not None else {}
        self._seen.add(image)
        self._queue.put((image, [*self._known.get(image, ()), record.get("target")]))
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="grounding-thumbnails", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None and not self._closed:
            image, targets = item
            path = Path(image)
            stamp = _stamp(path)
            screen = draw(Screen(0, path, targets))
            if stamp is not None and screen.size is not None and screen.overview is not None:
                self.done[str(path)] = Drawn(stamp, screen.size, screen.overview, dict(screen.crops))

    def close(self) -> None:
        self._closed = True
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(self.JOIN_S)

    def reuse(self, screen: Screen) -> bool:
        """`screen` given its early drawing: True where there is one for its file as it is now,
        with every crop its targets need (in their order, as `draw` makes them)."""
        drawn = self.done.get(str(screen.path))
        if drawn is None or _stamp(screen.path) != drawn.stamp:
            return False
        regions = [region_of(target, drawn.size) for target in screen.targets]
        if any(region not in drawn.crops for region in regions):
            return False
        screen.size, screen.overview = drawn.size, drawn.overview
        screen.crops = {region: drawn.crops[region] for region in regions}
        return True


_current: Prefetch | None = None  # the run's early drawing while its page is written (None: none)


def install(prefetch: Prefetch | None) -> None:
    global _current
    _current = prefetch


def current() -> Prefetch | None:
    return _current


def _key(record: Mapping[str, Any]) -> tuple[str, str]:
    return str(record.get("dataset") or ""), str(record.get("image") or "")
