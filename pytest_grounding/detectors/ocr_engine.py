"""RapidOCR as the `ocr` detector runs it: the engine settings, one engine per distinct settings
and one parse per screen for the whole process (`shared_parse`: an LRU cache keyed by the settings
and the pixels' digest), the execution providers read back from its sessions. rapidocr and
onnxruntime are imported when an engine is loaded, never at import of the package."""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from ..core.types import Query
from .devices import cores_share
from .ocr_text import ParsedScreen, screen_texts, words_by_line
from .textmatch import Label

CUDA = "CUDAExecutionProvider"
_FONT = Path(__file__).resolve().parent.parent / "datasets" / "synth" / "fonts" / "DejaVuSans.ttf"
# onnxruntime's logger severity when nothing has changed it (it has no getter to save it with).
_ORT_DEFAULT_SEVERITY = 2


# (option, least, most): what a machine can have; 0 of threads/rec_streams means "decide" (resolved()).
LIMITS = (
    ("threads", 0, 1024),
    ("rec_streams", 0, 1024),
    ("line_cache", 0, 10_000_000),
    ("max_side", 32, 65_536),
    ("det_side", 32, 65_536),
    ("rec_batch", 1, 4096),
    ("rec_width", 8, 65_536),
)


@dataclass(frozen=True)
class EngineSettings:
    """What changes RapidOCR's output or speed; one engine (and one parse per screen) per distinct value.

    `det_side`/`det_limit` are RapidOCR's `Det.limit_side_len`/`Det.limit_type` (the detection
    model's input size); `rec_batch` is `Rec.rec_batch_num`; `rec_width` is the width of
    `Rec.rec_img_shape`, the least width every text line is padded to before recognition;
    `threads` is ONNX Runtime's intra-op threads (0 = `default_threads()`); `rec_streams` the
    text lines recognised at once, each on one thread (0 = `threads` when it is set, else the
    cores shared out between xdist workers, whatever the load; 1 = one line at a time on `threads`
    threads); `spin` is ONNX
    Runtime's `session.intra_op.allow_spinning`; `line_cache` the recognised text lines kept by
    their pixels (0 = none).
    """

    threads: int = 0
    device: str = "auto"
    text_score: float = 0.5
    max_side: int = 2000
    det_side: int = 736
    det_limit: str = "min"
    # RapidOCR's 6 and 320 pad every line to the widest of its batch and to at least 320 px: most
    # UI labels are short, so that padding was most of the recognition time (README, "OCR speed").
    rec_batch: int = 1
    rec_width: int = 48
    # Text lines are small: one ONNX Runtime thread per line, several lines at once, keeps the
    # cores busier than several threads on one line (0 = `threads`, or the worker's share of the cores).
    rec_streams: int = 0
    # ONNX Runtime's intra-op threads busy-wait between operators by default; on a machine shared
    # with other work that spinning takes the cores the other threads wait for (figures.md).
    spin: bool = True
    # Screens of one app share their toolbars and menus pixel for pixel (27% of the text lines of the
    # ScreenAgent dev screens were read on an earlier screen): a line read once is read from here.
    line_cache: int = 4096

    def resolved(self) -> EngineSettings:
        """The settings with `threads` and `rec_streams` made concrete (so equal engines share one
        cache entry)."""
        if self.device not in ("auto", "cpu"):
            raise ValueError(f"ocr: device must be 'auto' or 'cpu', not {self.device!r}")
        if self.det_limit not in ("min", "max"):
            raise ValueError(f"ocr: det_limit must be 'min' or 'max', not {self.det_limit!r}")
        # Bounded before anything is built: a thread count or a size no machine has would start that
        # many threads, or ask ONNX Runtime for that many, and hang the run's start.
        for name, low, high in LIMITS:
            number = int(getattr(self, name))
            if not low <= number <= high:
                raise ValueError(
                    f"ocr: {name}={number if len(str(number)) < 30 else '(a huge number)'} "
                    f"must be between {low:,} and {high:,}"
                )
        threads = int(self.threads) or default_threads()
        # As many as the threads asked for; when they are not, the worker's share of the cores, not
        # cut to one on a busy machine as `threads` is: a one-thread session has no threads to spin,
        # and two lines at once beat one line at a time there too (figures.md).
        streams = int(self.rec_streams) or int(self.threads) or default_threads(load=0.0)
        return replace(self, threads=threads, rec_streams=streams)


def default_threads(cores: int | None = None, workers: int | None = None, load: float | None = None) -> int:
    """ONNX Runtime's intra-op threads for one process: the cores shared out between xdist workers,
    and one when the machine is already busy (1-minute load average at least the cores), where
    more threads only wait for each other (measured: README, "OCR speed")."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return 1 if load >= cores else cores_share(cores, workers)


@dataclass(frozen=True)
class OcrEngine:
    """One RapidOCR pipeline and the execution providers its sessions really use."""

    settings: EngineSettings
    rapid: Any
    providers_requested: tuple[str, ...]
    providers: tuple[str, ...]
    rec_streams: int = 1  # text lines recognised at once (1 on CUDA whatever the settings say)

    @classmethod
    def load(cls, settings: EngineSettings) -> OcrEngine:
        import onnxruntime as ort
        from rapidocr import RapidOCR

        use_cuda = settings.device == "auto" and CUDA in ort.get_available_providers()
        rapid = RapidOCR(
            params={
                "Global.use_cls": False,  # UI text is upright; the classifier turned "Edit" upside down
                "Global.text_score": settings.text_score,
                "Global.max_side_len": settings.max_side,
                "Global.log_level": "error",
                "Det.limit_side_len": settings.det_side,
                "Det.limit_type": settings.det_limit,
                "Rec.rec_batch_num": settings.rec_batch,
                "Rec.rec_img_shape": [3, 48, settings.rec_width],
                "EngineConfig.onnxruntime.use_cuda": use_cuda,
                "EngineConfig.onnxruntime.intra_op_num_threads": settings.threads,
            }
        )
        # A CUDA provider that is listed but cannot run (no device, no CUDA libraries) falls back
        # to CPU with loud error lines; the providers read back below say what really runs.
        ort.set_default_logger_severity(4)
        try:
            rapid(_warmup_image())  # builds the detection and recognition sessions
        finally:
            ort.set_default_logger_severity(_ORT_DEFAULT_SEVERITY)
        engines: Any = (rapid.text_det, rapid.text_rec)  # both built by the warm-up call above
        # On CUDA the lines stay one at a time (what a GPU does with two small lines at once is not measured).
        on_cpu = engines[1].session.session.get_providers()[0] == "CPUExecutionProvider"
        streams = settings.rec_streams if on_cpu else 1
        rebuilt = False
        for engine, threads in ((engines[0], settings.threads), (engines[1], 1 if streams > 1 else settings.threads)):
            if threads != settings.threads or not settings.spin:
                engine.session.session = _rebuilt(engine.session.session, threads, settings.spin)
                rebuilt = True
        if streams > 1:
            rapid.text_rec = ParallelRecognizer(engines[1], streams)  # type: ignore[assignment]
        if settings.line_cache:
            rapid.text_rec = LineCache(rapid.text_rec, settings.line_cache)  # type: ignore[assignment]
        if rebuilt:
            rapid(_warmup_image())  # the rebuilt sessions' first run
        sessions = [engine.session.session for engine in engines]
        used = tuple(dict.fromkeys(s.get_providers()[0] for s in sessions))
        requested = (CUDA, "CPUExecutionProvider") if use_cuda else ("CPUExecutionProvider",)
        return cls(settings, rapid, requested, used, streams)

    def read(self, image: Any) -> ParsedScreen:
        """Parse one screen (a PIL image): every text line, its words and runs of words."""
        started = time.perf_counter()
        result = self.rapid(image.convert("RGB"), return_word_box=True)
        elapsed = time.perf_counter() - started
        line_texts = list(getattr(result, "txts", None) or ())  # None (or no attribute) when nothing was read
        lines = list(zip(line_texts, result.boxes if line_texts else (), result.scores or (), strict=False))
        words = words_by_line(line_texts, result.word_results if line_texts else ())
        texts = screen_texts(lines, words)
        return ParsedScreen(texts, tuple(Label.of(t.text, t.line_words) for t in texts), elapsed)


class WrappedRecognizer:
    """Stands in for RapidOCR's text recogniser (`rapid.text_rec`): its session and every other
    attribute are the wrapped recogniser's; subclasses change how lines reach it."""

    def __init__(self, recognizer: Any) -> None:
        self.recognizer = recognizer

    @property
    def session(self) -> Any:
        return self.recognizer.session

    def __getattr__(self, name: str) -> Any:  # the rest of RapidOCR's recogniser, as it is
        return getattr(self.recognizer, name)

    @staticmethod
    def lines_of(args: Any) -> list[Any]:
        """The line images of a `TextRecInput` (one image or a list)."""
        return [args.img] if not isinstance(args.img, (list, tuple)) else list(args.img)


class ParallelRecognizer(WrappedRecognizer):
    """RapidOCR's text recogniser with its lines dealt out to `streams` threads, each running the
    same session (ONNX Runtime's `run` is thread-safe and releases the GIL) on its own lines.
    Every line is still recognised alone at its own width, so the texts, scores and word boxes
    are the ones the recogniser gives line by line; they come back in the lines' order."""

    def __init__(self, recognizer: Any, streams: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        super().__init__(recognizer)
        self.streams = streams
        self._pool = ThreadPoolExecutor(streams, thread_name_prefix="ocr-rec")

    def __call__(self, args: Any) -> Any:
        from rapidocr.ch_ppocr_rec.typings import TextRecInput

        images = self.lines_of(args)
        if len(images) < 2:
            return self.recognizer(args)
        # By width (RapidOCR's own order), dealt round-robin: each stream gets as many pixels.
        order = sorted(range(len(images)), key=lambda i: images[i].shape[1] / float(images[i].shape[0]))
        shares = [order[k :: self.streams] for k in range(self.streams) if order[k :: self.streams]]
        started = time.perf_counter()
        outputs = list(
            self._pool.map(
                lambda share: self.recognizer(
                    TextRecInput(img=[images[i] for i in share], return_word_box=args.return_word_box)
                ),
                shares,
            )
        )
        txts: list[Any] = [None] * len(images)
        scores: list[Any] = [None] * len(images)
        words: list[Any] = [None] * len(images)
        for share, output in zip(shares, outputs, strict=True):
            for j, i in enumerate(share):
                txts[i], scores[i], words[i] = output.txts[j], output.scores[j], output.word_results[j]
        return replace(
            outputs[0],
            imgs=images,
            txts=tuple(txts),
            scores=tuple(scores),
            word_results=tuple(words),
            elapse=time.perf_counter() - started,
        )


class LineCache(WrappedRecognizer):
    """A recogniser that reads each distinct text line once: a line's text, score and word
    positions depend only on its pixels (each line is recognised alone at its own width), so a
    line cut out of a screen pixel for pixel as on an earlier one is answered from here, the same
    answer the recogniser would give. The least recently used of `size` lines go first."""

    def __init__(self, recognizer: Any, size: int) -> None:
        super().__init__(recognizer)
        self.size = int(size)
        self.lines = 0  # lines asked for
        self.hits = 0  # of those, answered from here
        self._kept: OrderedDict[tuple[bool, str], tuple[Any, Any, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._template: Any = None  # an output of the recogniser, to shape one made from kept lines

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def __call__(self, args: Any) -> Any:
        import copy
        import hashlib

        from rapidocr.ch_ppocr_rec.typings import TextRecInput

        started = time.perf_counter()
        images = self.lines_of(args)
        if not images:
            return self.recognizer(args)
        keys = [
            (bool(args.return_word_box), hashlib.blake2b(f"{i.shape}{i.dtype}".encode() + i.tobytes()).hexdigest())
            for i in images
        ]
        with self._lock:
            found = [self._kept.get(key) for key in keys]
            for key, line in zip(keys, found, strict=True):
                if line is not None:
                    self._kept.move_to_end(key)
        missing = [i for i, line in enumerate(found) if line is None]
        if missing:
            output = self.recognizer(
                TextRecInput(img=[images[i] for i in missing], return_word_box=args.return_word_box)
            )
            read = list(zip(output.txts, output.scores, output.word_results, strict=True))
            with self._lock:
                self._template = output
                for i, line in zip(missing, read, strict=True):
                    found[i] = line
                    self._kept[keys[i]] = copy.deepcopy(line)  # what the caller does with its copy stays there
                while len(self._kept) > self.size:
                    self._kept.popitem(last=False)
        with self._lock:
            self.lines += len(images)
            self.hits += len(images) - len(missing)
        fresh = set(missing)
        lines: list[tuple[Any, Any, Any]] = []
        for i, line in enumerate(found):
            assert line is not None  # kept, or read just above
            lines.append(line if i in fresh else copy.deepcopy(line))
        assert self._template is not None  # a kept line was read by an earlier call, which kept its output
        return replace(
            self._template,
            imgs=images,
            txts=tuple(line[0] for line in lines),
            scores=tuple(line[1] for line in lines),
            word_results=tuple(line[2] for line in lines),
            elapse=time.perf_counter() - started,
        )


def _rebuilt(session: Any, threads: int, spin: bool) -> Any:
    """The same model on the same providers with these intra-op threads (and spinning). RapidOCR
    builds its sessions itself, with one thread count for both models and no spinning setting, so
    the session is rebuilt with RapidOCR's own options (graph optimisation, arena) and these."""
    import onnxruntime as ort

    built = session.get_session_options()
    options = ort.SessionOptions()
    options.log_severity_level = built.log_severity_level
    options.enable_cpu_mem_arena = built.enable_cpu_mem_arena
    options.graph_optimization_level = built.graph_optimization_level
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = built.inter_op_num_threads
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    providers = session.get_providers()
    provider_options = session.get_provider_options()
    return ort.InferenceSession(
        session._model_path,
        sess_options=options,
        providers=providers,
        provider_options=[provider_options.get(p, {}) for p in providers],
    )


def _warmup_image() -> Any:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (160, 48), "white")
    ImageDraw.Draw(image).text((12, 12), "Warm up", fill="black", font=ImageFont.truetype(str(_FONT), 20))
    return image


class ParseCache:
    """Parsed screens by (engine settings, pixels' digest), least recently used dropped first."""

    def __init__(self, capacity: int = 16) -> None:
        self.capacity = max(1, int(capacity))
        self._screens: OrderedDict[tuple[EngineSettings, str], ParsedScreen] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, settings: EngineSettings, key: str) -> ParsedScreen | None:
        with self._lock:
            screen = self._screens.get((settings, key))
            if screen is not None:
                self._screens.move_to_end((settings, key))
            return screen

    def put(self, settings: EngineSettings, key: str, screen: ParsedScreen) -> None:
        with self._lock:
            self._screens[(settings, key)] = screen
            while len(self._screens) > self.capacity:
                self._screens.popitem(last=False)

    def __contains__(self, item: tuple[EngineSettings, str]) -> bool:
        return item in self._screens

    def clear(self) -> None:
        with self._lock:
            self._screens.clear()


# One engine per distinct settings and one parse per screen, for the whole process.
_ENGINES: dict[EngineSettings, OcrEngine] = {}
_ENGINES_LOCK = threading.Lock()
SHARED_PARSES = ParseCache(16)


def ocr_engine(settings: EngineSettings = EngineSettings()) -> OcrEngine:
    """The process's engine for these settings, loaded (and warmed up) on first use."""
    settings = settings.resolved()
    with _ENGINES_LOCK:
        engine = _ENGINES.get(settings)
        if engine is None:
            engine = _ENGINES[settings] = OcrEngine.load(settings)
        return engine


def shared_parse(query: Query, settings: EngineSettings = EngineSettings()) -> ParsedScreen:
    """The OCR parse of the query's screen, read at most once per process for equal settings.

    For detectors that need the screen's text (`ocr`, `omniparser`): calling this (or
    `OcrDetector.parse`, which uses it) with the same settings in one process runs RapidOCR once
    per screen. `SHARED_PARSES.capacity` (16 by default; an `OcrDetector` raises it to its
    `cache_size`) is how many screens are kept.
    """
    screen, _ = _parse(query, ocr_engine(settings), SHARED_PARSES)
    return screen


def _parse(query: Query, engine: OcrEngine, cache: ParseCache) -> tuple[ParsedScreen, bool]:
    """(the parse, whether it came from the cache)."""
    screen = cache.get(engine.settings, query.image_key)
    if screen is not None:
        return screen, True
    screen = engine.read(query.image)
    cache.put(engine.settings, query.image_key, screen)
    return screen, False


def _ort_distribution() -> str:
    """onnxruntime-gpu and onnxruntime install the same module: name the one that is there."""
    for name in ("onnxruntime-gpu", "onnxruntime"):
        try:
            metadata.version(name)
            return name
        except metadata.PackageNotFoundError:
            continue
    return "onnxruntime"
