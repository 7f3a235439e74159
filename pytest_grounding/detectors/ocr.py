"""The `ocr` detector: read the screen's text with RapidOCR (PP-OCR models on ONNX Runtime), pick
the text the instruction names (`pytest_grounding.detectors.textmatch`), answer with its box.

A screen is parsed once per process and reused for every instruction on it, and by every detector
that asks for it with the same engine settings (`shared_parse`: an LRU cache keyed by the settings
and the pixels' digest). rapidocr, onnxruntime, torch and transformers are imported when the detector
is built, never at import of the package.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.types import Box, Prediction, Query
from .textmatch import MAX_LABEL_WORDS, Label, MiniLmEmbedder, Thresholds, choose, label_similarities

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

CUDA = "CUDAExecutionProvider"
_FONT = Path(__file__).resolve().parent.parent / "datasets" / "synth" / "fonts" / "DejaVuSans.ttf"
# onnxruntime's logger severity when nothing has changed it (it has no getter to save it with).
_ORT_DEFAULT_SEVERITY = 2

Quad = Sequence[Sequence[float]]
# Lines of more words are running text (a sentence, a paragraph), not a row of labels.


@dataclass(frozen=True)
class ScreenText:
    """A text read on the screen: a whole OCR line, one word of it, or a run of its words."""

    text: str
    box: Box
    confidence: float
    kind: str  # line | word | span
    line_words: int = 1  # words in the OCR line it was read in


@dataclass(frozen=True)
class ParsedScreen:
    texts: tuple[ScreenText, ...]
    labels: tuple[Label, ...]
    ocr_seconds: float


@dataclass(frozen=True)
class EngineSettings:
    """What changes RapidOCR's output or speed; one engine (and one parse per screen) per distinct value.

    `det_side`/`det_limit` are RapidOCR's `Det.limit_side_len`/`Det.limit_type` (the detection
    model's input size); `rec_batch` is `Rec.rec_batch_num`; `rec_width` is the width of
    `Rec.rec_img_shape`, the least width every text line is padded to before recognition;
    `threads` is ONNX Runtime's intra-op threads (0 = `default_threads()`).
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

    def resolved(self) -> EngineSettings:
        """The settings with `threads` made concrete (so equal engines share one cache entry)."""
        if self.device not in ("auto", "cpu"):
            raise ValueError(f"ocr: device must be 'auto' or 'cpu', not {self.device!r}")
        if self.det_limit not in ("min", "max"):
            raise ValueError(f"ocr: det_limit must be 'min' or 'max', not {self.det_limit!r}")
        return replace(self, threads=int(self.threads) or default_threads())


def quad_box(quad: Quad) -> Box:
    xs = [float(p[0]) for p in quad]
    ys = [float(p[1]) for p in quad]
    return Box(min(xs), min(ys), max(xs), max(ys))


def _union(boxes: Sequence[Box]) -> Box:
    return Box(min(b.x1 for b in boxes), min(b.y1 for b in boxes), max(b.x2 for b in boxes), max(b.y2 for b in boxes))


def screen_texts(
    lines: Sequence[tuple[str, Quad, float]],
    words: Sequence[Sequence[tuple[str, float, Quad]]],
    max_span_words: int = 3,
) -> tuple[ScreenText, ...]:
    """Candidates from OCR output: every line; for a line of several words, each word and, in
    lines of labels (menus, toolbars: at most MAX_LABEL_WORDS words), each run of
    2..max_span_words words ("Save As" inside "File Save As Print"). `words[i]` holds line i's
    words (empty when RapidOCR gave none)."""
    texts: list[ScreenText] = []
    for (line_text, quad, confidence), line_words in zip(lines, words, strict=True):
        count = max(1, len(line_words))
        texts.append(ScreenText(line_text.strip(), quad_box(quad), float(confidence), "line", count))
        if count < 2:
            continue
        word_boxes = [quad_box(q) for _, _, q in line_words]
        for (word, word_conf, _), box in zip(line_words, word_boxes, strict=True):
            texts.append(ScreenText(word, box, float(word_conf), "word", count))
        if count > MAX_LABEL_WORDS:
            continue
        for size in range(2, min(max_span_words, count - 1) + 1):
            for start in range(count - size + 1):
                run = line_words[start : start + size]
                texts.append(
                    ScreenText(
                        " ".join(w for w, _, _ in run),
                        _union(word_boxes[start : start + size]),
                        min(float(c) for _, c, _ in run),
                        "span",
                        count,
                    )
                )
    return tuple(t for t in texts if t.text)


def words_by_line(
    line_texts: Sequence[str], word_groups: Sequence[Sequence[tuple[str, float, Quad]]]
) -> list[Sequence[tuple[str, float, Quad]]]:
    """RapidOCR drops the word groups of some lines (and then its groups no longer line up with
    its lines): give each line the next group whose words spell it, or none."""

    def letters(text: str) -> str:
        return "".join(text.split())

    aligned: list[Sequence[tuple[str, float, Quad]]] = []
    position = 0
    for line in line_texts:
        group = word_groups[position] if position < len(word_groups) else ()
        if group and letters("".join(w for w, _, _ in group)) == letters(line):
            aligned.append(group)
            position += 1
        else:
            aligned.append(())
    return aligned


LABEL_LINE_WORDS = 3  # a run of more words under the click is running text: answer the word
NEAR_TEXT_PX = 16.0  # a click this close to a text (padding around a label) still means that text
ITEM_GAP = 0.6  # a gap between words wider than this share of the line height separates two items


def text_at(texts: Sequence[ScreenText], point: tuple[float, float], near: float = NEAR_TEXT_PX) -> ScreenText | None:
    """The element-at-click answer from text alone. The OCR line under the point (else the
    nearest within `near` px) is cut into items where its words are far apart (a menu bar reads as
    one line "File Edit View"); the item nearest the point is the answer, unless it is running
    text (more than LABEL_LINE_WORDS words), where the word under the point is."""
    lines = _lines_with_words(texts)
    if not lines:
        return None
    distance = [line.box.distance_to(point) for line, _ in lines]
    best = min(range(len(lines)), key=lambda i: (distance[i], lines[i][0].box.area))
    if distance[best] > near:
        return None
    line, words = lines[best]
    if not words:
        return line
    items = line_items(line, words)
    item = min(items, key=lambda run: _union([w.box for w in run]).distance_to(point))
    if len(item) > LABEL_LINE_WORDS:
        item = [min(item, key=lambda w: w.box.distance_to(point))]
    if len(item) == 1:
        return item[0]
    if len(item) == len(words):
        return line
    return ScreenText(
        " ".join(w.text for w in item),
        _union([w.box for w in item]),
        min(w.confidence for w in item),
        "span",
        line.line_words,
    )


def line_items(line: ScreenText, words: Sequence[ScreenText]) -> list[list[ScreenText]]:
    """A line's words (left to right) cut where they are far apart: "File Edit View" is three items."""
    items: list[list[ScreenText]] = [[words[0]]]
    for word in words[1:]:
        if word.box.x1 - items[-1][-1].box.x2 > ITEM_GAP * line.box.height:
            items.append([])
        items[-1].append(word)
    return items


def listed_texts(texts: Sequence[ScreenText]) -> list[tuple[str, Box]]:
    """The screen's texts as elements to annotate: each line cut into items (`line_items`), items of
    more than MAX_LABEL_WORDS words (running text, not something to click) left out."""
    out: list[tuple[str, Box]] = []
    for line, words in _lines_with_words(texts):
        if not words:
            if len(line.text.split()) <= MAX_LABEL_WORDS:
                out.append((line.text, line.box))
            continue
        for item in line_items(line, words):
            if len(item) <= MAX_LABEL_WORDS:
                out.append((" ".join(w.text for w in item), _union([w.box for w in item])))
    return out


def _lines_with_words(texts: Sequence[ScreenText]) -> list[tuple[ScreenText, list[ScreenText]]]:
    """Each line with its words left to right (`screen_texts` lists a line's words after it)."""
    lines: list[tuple[ScreenText, list[ScreenText]]] = []
    for text in texts:
        if text.kind == "line":
            lines.append((text, []))
        elif text.kind == "word" and lines:
            lines[-1][1].append(text)
    for _, words in lines:
        words.sort(key=lambda w: w.box.x1)
    return lines


def default_threads(cores: int | None = None, workers: int | None = None, load: float | None = None) -> int:
    """ONNX Runtime's intra-op threads for one process: the cores shared out between xdist workers,
    and one when the machine is already busy (1-minute load average at least the cores), where
    more threads only wait for each other (measured: README, "OCR speed")."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if workers is None:
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    share = max(1, cores // max(1, workers))
    return 1 if load >= cores else share


@dataclass(frozen=True)
class OcrEngine:
    """One RapidOCR pipeline and the execution providers its sessions really use."""

    settings: EngineSettings
    rapid: Any
    providers_requested: tuple[str, ...]
    providers: tuple[str, ...]

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
        sessions = [engine.session.session for engine in engines]
        used = tuple(dict.fromkeys(s.get_providers()[0] for s in sessions))
        requested = (CUDA, "CPUExecutionProvider") if use_cuda else ("CPUExecutionProvider",)
        return cls(settings, rapid, requested, used)

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


class OcrDetector:
    """Options (``--detector ocr:key=value,...``):

    - ``min_score`` (0.8): lexical score a quoted or named label needs.
    - ``min_semantic`` (0.5): cosine similarity the semantic tier needs.
    - ``semantic`` (true): use MiniLM when no label matches lexically.
    - ``cache_size`` (16): parsed screens kept.
    - ``shared`` (true): keep parses in the process-wide cache (`shared_parse`), so other
      detectors reading the same screen with the same engine settings reuse them.
    - ``threads`` (0 = `default_threads()`: the cores shared out between xdist workers, one on a busy
      machine): ONNX Runtime's intra-op threads and torch's threads.
    - ``device`` (auto): ``auto`` asks for CUDA when onnxruntime lists it, ``cpu`` never does.
      The providers reported are read back from the sessions either way.
    - ``text_score`` (0.5): RapidOCR's minimum recognition confidence for a line.
    - ``max_side`` (2000): RapidOCR scales a larger screenshot down to this longest side first.
    - ``det_side`` / ``det_limit`` (736 / min): the detection model's input size (RapidOCR's
      ``limit_side_len`` / ``limit_type``).
    - ``rec_batch`` (1): text lines recognised per model call (RapidOCR's default: 6).
    - ``rec_width`` (48): the least width (at height 48) a text line is padded to for recognition
      (RapidOCR's default: 320).
    """

    name = "ocr"

    def __init__(
        self,
        min_score: float = 0.8,
        min_semantic: float = 0.5,
        semantic: bool = True,
        cache_size: int = 16,
        threads: int = 0,
        device: str = "auto",
        text_score: float = 0.5,
        max_side: int = 2000,
        det_side: int = 736,
        det_limit: str = "min",
        rec_batch: int = 1,
        rec_width: int = 48,
        shared: bool = True,
    ) -> None:
        self.thresholds = Thresholds(lexical=float(min_score), semantic=float(min_semantic))
        self.cache_size = max(1, int(cache_size))
        self.settings = EngineSettings(
            threads=int(threads),
            device=device,
            text_score=float(text_score),
            max_side=int(max_side),
            det_side=int(det_side),
            det_limit=det_limit,
            rec_batch=max(1, int(rec_batch)),
            rec_width=max(8, int(rec_width)),
        ).resolved()
        self.threads = self.settings.threads
        self.device = device
        self.text_score = self.settings.text_score
        self.max_side = self.settings.max_side
        self.ocr_calls = 0
        if shared:
            SHARED_PARSES.capacity = max(SHARED_PARSES.capacity, self.cache_size)
        self._parses = SHARED_PARSES if shared else ParseCache(self.cache_size)
        self._embeddings: OrderedDict[str, np.ndarray] = OrderedDict()
        self._engine = ocr_engine(self.settings)
        self.providers_requested = list(self._engine.providers_requested)
        self.providers = list(self._engine.providers)
        self._embedder: MiniLmEmbedder | None = None
        if semantic:
            import torch

            torch.set_num_threads(self.threads)
            self._embedder = MiniLmEmbedder()
        if self.provider_note:
            log.warning("ocr: %s", self.provider_note)
        log.info("ocr: RapidOCR runs on %s", ", ".join(self.providers))

    @property
    def provider_note(self) -> str | None:
        """One line on an execution provider asked for and not obtained, else None."""
        missing = [p for p in self.providers_requested if p not in self.providers and p != "CPUExecutionProvider"]
        if not missing:
            return None
        return (
            f"onnxruntime lists {', '.join(missing)} but could not use it here; "
            f"RapidOCR runs on {', '.join(self.providers)}"
        )

    def is_parsed(self, query: Query) -> bool:
        return (self.settings, query.image_key) in self._parses

    def parse(self, query: Query) -> ParsedScreen:
        """The screen's texts, read once per distinct image (and settings)."""
        screen, cached = _parse(query, self._engine, self._parses)
        self.ocr_calls += not cached
        return screen

    def _remember(self, cache: OrderedDict[str, Any], key: str, value: Any) -> None:
        cache[key] = value
        while len(cache) > self.cache_size:
            cache.popitem(last=False)

    def _semantic_scores(self, key: str, screen: ParsedScreen, instruction: str) -> list[float]:
        """The screen's semantic scores (textmatch.label_similarities), its text vectors kept per screen."""
        assert self._embedder is not None
        scores, vectors = label_similarities(
            self._embedder, screen.texts, screen.labels, instruction, self._embeddings.get(key)
        )
        self._remember(self._embeddings, key, vectors)
        return scores

    def predict(self, query: Query) -> Prediction:
        cached = self.is_parsed(query)
        screen = self.parse(query)
        semantic = (
            partial(self._semantic_scores, query.image_key, screen, query.instruction)
            if self._embedder is not None
            else None
        )
        match = choose(query.instruction, screen.labels, semantic, self.thresholds)
        meta: dict[str, Any] = {
            "texts_on_screen": len(screen.texts),
            "ocr_s": round(screen.ocr_seconds, 4),
            "parse_cached": cached,
        }
        if match is None:
            return Prediction.no_answer(None, reason="no text on screen", **meta)
        chosen = screen.texts[match.index]
        meta.update(match.as_meta(), candidate=chosen.text, candidate_box=chosen.box.as_list(), kind=chosen.kind)
        if not match.accepted:
            return Prediction.no_answer(None, reason="no text matches well enough", **meta)
        return Prediction(point=chosen.box.center, box=chosen.box, raw=chosen.text, meta=meta)

    def locate(self, query: Any) -> Prediction:
        """The element-at-click task: the text under (or just beside) the click point."""
        screen = self.parse(query)
        found = text_at(screen.texts, query.point)
        meta: dict[str, Any] = {"texts_on_screen": len(screen.texts), "ocr_s": round(screen.ocr_seconds, 4)}
        if found is None:
            return Prediction.no_answer(None, reason="no text at the point", **meta)
        return Prediction(box=found.box, raw=found.text, meta={**meta, "kind": found.kind})

    def elements(self, image: Any) -> list[Any]:
        """The screen's texts as elements (`annotate`): label-like items of each OCR line."""
        from .base import ListedElement

        screen = self.parse(Query(image, ""))
        return [ListedElement(box, "text", text) for text, box in listed_texts(screen.texts)]

    def describe(self) -> dict[str, Any]:
        import onnxruntime as ort

        engine = f"rapidocr {metadata.version('rapidocr')}"
        runtime = f"{_ort_distribution()} {ort.__version__}"
        headline = f"{engine} on {runtime}, providers {', '.join(self.providers)}"
        missing = [p for p in self.providers_requested if p not in self.providers]
        if missing:
            headline += f" ({', '.join(missing)} listed by onnxruntime but not usable here)"
        return {
            "headline": headline,
            "engine": engine,
            "onnxruntime": runtime,
            "models": {
                stage: f"{cfg.ocr_version.value} {stage} {cfg.model_type.value} ({cfg.lang_type.value})"
                for stage, cfg in (("det", self._engine.rapid.cfg.Det), ("rec", self._engine.rapid.cfg.Rec))
            },
            "angle_classifier": False,
            "word_boxes": "rapidocr return_word_box",
            "providers_requested": self.providers_requested,
            "providers": self.providers,
            "provider_note": self.provider_note,
            "threads": self.threads,
            "max_side": self.max_side,
            "det_side": self.settings.det_side,
            "det_limit": self.settings.det_limit,
            "rec_batch": self.settings.rec_batch,
            "rec_width": self.settings.rec_width,
            "shared_parses": self._parses is SHARED_PARSES,
            "text_score": self.text_score,
            "min_score": self.thresholds.lexical,
            "min_semantic": self.thresholds.semantic,
            "semantic_model": self._embedder.describe() if self._embedder else None,
            "cache_size": self.cache_size,
        }

    def close(self) -> None:
        """Forget this detector's semantic vectors, and its parses when it keeps its own (the
        shared ones stay for other detectors: `SHARED_PARSES.clear()` drops them)."""
        if self._parses is not SHARED_PARSES:
            self._parses.clear()
        self._embeddings.clear()


def _ort_distribution() -> str:
    """onnxruntime-gpu and onnxruntime install the same module: name the one that is there."""
    for name in ("onnxruntime-gpu", "onnxruntime"):
        try:
            metadata.version(name)
            return name
        except metadata.PackageNotFoundError:
            continue
    return "onnxruntime"
