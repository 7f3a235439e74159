"""The `ocr` detector: read the screen's text with RapidOCR (PP-OCR models on ONNX Runtime), pick
the text the instruction names (`pytest_grounding.detectors.textmatch`), answer with its box.

A screen is parsed once per process and reused for every instruction on it, and by every detector
that asks for it with the same engine settings (`shared_parse` in `ocr_engine`). rapidocr,
onnxruntime, torch and transformers are imported when the detector is built, never at import of the
package. The engine and its caches are in `ocr_engine`, the reading of its output in `ocr_text`;
their public names are importable from here as before.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from functools import partial
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ..core.coverage import CANDIDATES, candidate_boxes
from ..core.types import Prediction, Query
from .ocr_engine import (
    CUDA,
    SHARED_PARSES,
    EngineSettings,
    OcrEngine,
    ParseCache,
    _ort_distribution,
    _parse,
    default_threads,
    ocr_engine,
    shared_parse,
)
from .ocr_text import (
    ITEM_GAP,
    LABEL_LINE_WORDS,
    NEAR_TEXT_PX,
    ParsedScreen,
    Quad,
    ScreenText,
    line_items,
    listed_texts,
    quad_box,
    screen_texts,
    text_at,
    words_by_line,
)
from .textmatch import MiniLmEmbedder, Thresholds, choose, label_similarities

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CUDA",
    "ITEM_GAP",
    "LABEL_LINE_WORDS",
    "NEAR_TEXT_PX",
    "SHARED_PARSES",
    "EngineSettings",
    "OcrDetector",
    "OcrEngine",
    "ParseCache",
    "ParsedScreen",
    "Quad",
    "ScreenText",
    "default_threads",
    "line_items",
    "listed_texts",
    "ocr_engine",
    "quad_box",
    "screen_texts",
    "shared_parse",
    "text_at",
    "words_by_line",
]

log = logging.getLogger(__name__)


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
    - ``rec_streams`` (0 = ``threads`` when it is set, else the cores shared out between xdist
      workers, whatever the load): text lines recognised at once, one ONNX Runtime thread each; 1
      recognises one line at a time on ``threads`` threads. The answers are the same.
    - ``spin`` (true): ONNX Runtime's intra-op threads busy-wait between operators (its
      default); false lets them sleep, which pays on a machine shared with other work.
    - ``line_cache`` (4096): recognised text lines kept by their pixels, so a line cut out of a
      screen exactly as on an earlier one (an app's toolbar and menus) is not recognised again;
      0 keeps none. The answers are the same.
    """

    name = "ocr"
    deterministic = True  # --grounding-epochs runs it once

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
        rec_streams: int = 0,
        spin: bool = True,
        line_cache: int = 4096,
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
            rec_streams=int(rec_streams),
            spin=bool(spin),
            line_cache=int(line_cache),
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
            log.info("ocr: %s", self.provider_note)  # `doctor` and the JSON say it; not every header
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
            # what the matcher chose among: the parser's coverage of the target (core/coverage.py)
            CANDIDATES: candidate_boxes(t.box.as_list() for t in screen.texts),
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
        # a provider onnxruntime lists but cannot use (CUDA on a CPU machine) is no news in every
        # header: the JSON keeps it (providers_requested, provider_note), and `doctor` says it
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
            "rec_streams": self._engine.rec_streams,
            "spin": self.settings.spin,
            "line_cache": self.settings.line_cache,
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
