"""The `omniparser` detector: OmniParser v2's parse step on ONNX Runtime (its YOLO icon detector,
exported to ONNX, merged with the `ocr` detector's RapidOCR texts by OmniParser's overlap rules),
then the element the instruction names (`pytest_grounding.detectors.textmatch`), answered with its box.

The icon detector is AGPL-3.0 and never ships with this package: the model file is looked for at
`model=PATH`, else $PYTEST_GROUNDING_OMNIPARSER_MODEL, else
$PYTEST_GROUNDING_CACHE/models/omniparser-v2-icon-detect-640.onnx (cache default
~/.cache/pytest-grounding). onnxruntime, rapidocr, OpenCV, torch and transformers are imported when
the detector is built, never at import of the package. The parts, each importable from here as before:
the model file and its session in `omniparser_session`, the pure choices on a parsed screen in
`omniparser_elements` (geometry in `_yolo`), the optional selector model in `omniparser_select`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from ..core.coverage import CANDIDATES, candidate_boxes
from ..core.types import Box, Prediction, Query, image_digest
from ..evaluate.locate import LocateQuery
from . import _yolo
from .ocr_engine import _ort_distribution
from .omniparser_elements import BoxT, OcrText, ParsedElements, element_at, merge_elements, snap
from .omniparser_select import (
    SELECTOR_KEY_ENV,
    Selector,
    draw_elements,
    element_listing,
    parse_element_id,
    selector_prompt,
)
from .omniparser_session import (
    CPU,
    CUDA,
    MODEL_ENV,
    MODEL_FILE,
    create_session,
    model_candidates,
    provider_note,
    resolve_model,
)
from .textmatch import Label, Thresholds, choose, label_similarities

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CPU",
    "CUDA",
    "MODEL_ENV",
    "MODEL_FILE",
    "SELECTOR_KEY_ENV",
    "BoxT",
    "OcrText",
    "OmniParserDetector",
    "ParsedElements",
    "Selector",
    "create_session",
    "draw_elements",
    "element_at",
    "element_listing",
    "merge_elements",
    "model_candidates",
    "parse_element_id",
    "provider_note",
    "resolve_model",
    "selector_prompt",
    "snap",
]

log = logging.getLogger(__name__)


class OmniParserDetector:
    """Options (``--detector omniparser:key=value,...``):

    - ``model`` (see the module doc): the icon detector ONNX file.
    - ``conf`` (0.05) and ``iou`` (0.1): the icon score threshold and the NMS IoU, OmniParser's.
    - ``merge_iou`` (0.7) and ``inside`` (0.8): OmniParser's merge of icons and texts.
    - ``ocr`` (true): merge the `ocr` detector's texts; false runs the icon detector alone (then
      nothing can be matched to an instruction, and `locate` answers icon boxes only).
    - ``semantic`` (true), ``min_score`` (0.8), ``min_semantic`` (0.5): the matching, as `ocr`.
    - ``snap_area`` (4): a matched text snaps to the icon around it up to this many times its area.
    - ``radius`` (4): `locate` takes the nearest element within this many px when none contains
      the point.
    - ``device`` (auto): ``auto`` asks for CUDA when onnxruntime lists it, ``cpu`` never does.
    - ``threads`` (0 = the cores shared out between xdist workers), ``cache_size`` (16 screens).
    - ``selector_url`` and ``selector_model``: an OpenAI-compatible endpoint (base URL, e.g.
      http://localhost:8000/v1) and model that pick the element id from the numbered list and the
      screenshot with the boxes drawn, instead of the text matching; the API key comes only from
      $PYTEST_GROUNDING_SELECTOR_API_KEY (or the variable named by ``selector_key_env``). Without
      them no network is touched.
    """

    name = "omniparser"
    deterministic = True  # --grounding-epochs runs it once

    def __init__(
        self,
        model: str | None = None,
        conf: float = 0.05,
        iou: float = 0.1,
        merge_iou: float = 0.7,
        inside: float = 0.8,
        ocr: bool = True,
        semantic: bool = True,
        min_score: float = 0.8,
        min_semantic: float = 0.5,
        snap_area: float = 4.0,
        radius: float = 4.0,
        device: str = "auto",
        threads: int = 0,
        cache_size: int = 16,
        selector_url: str | None = None,
        selector_model: str | None = None,
        selector_key_env: str = SELECTOR_KEY_ENV,
    ) -> None:
        if bool(selector_url) != bool(selector_model):
            raise ValueError("omniparser: selector_url and selector_model go together")
        self.selector = Selector(str(selector_url), str(selector_model), selector_key_env) if selector_url else None
        self.conf, self.iou = float(conf), float(iou)
        self.merge_iou, self.inside = float(merge_iou), float(inside)
        self.use_ocr = bool(ocr)
        self.thresholds = Thresholds(lexical=float(min_score), semantic=float(min_semantic))
        self.snap_area, self.radius = float(snap_area), float(radius)
        self.device = device
        from .ocr_engine import default_threads  # the same rule as `ocr`, so that the two share one OCR parse

        self.threads = int(threads) or default_threads()
        self.cache_size = max(1, int(cache_size))
        self.model_path = resolve_model(model)
        self._session, self.providers_requested, self.providers = create_session(self.model_path, device, self.threads)
        self._input = self._session.get_inputs()[0].name
        self._size = int(self._session.get_inputs()[0].shape[-1])
        self._screens: OrderedDict[str, ParsedElements] = OrderedDict()
        self._embeddings: OrderedDict[str, np.ndarray] = OrderedDict()
        self.parse_calls = 0
        self._ocr = None
        self._embedder = None
        if self.use_ocr:
            from .ocr import OcrDetector

            # Its own matcher is not used (semantic=False): the matching is done here, on the elements.
            self._ocr = OcrDetector(semantic=False, cache_size=self.cache_size, threads=self.threads, device=device)
            if semantic:
                import torch

                from .textmatch import MiniLmEmbedder

                torch.set_num_threads(self.threads)
                self._embedder = MiniLmEmbedder()
        note = provider_note(self.providers_requested, self.providers)
        if note:
            log.info("omniparser: %s", note)  # `doctor` and the JSON say it; not every header
        log.info("omniparser: the icon detector runs on %s", ", ".join(self.providers))

    # --- parsing ---------------------------------------------------------------------------
    def detect_icons(self, image: Any) -> tuple[np.ndarray, np.ndarray]:
        """Icon boxes (pixels of `image`) and scores, best first."""
        tensor, letterbox = _yolo.letterbox_image(image, self._size)
        (output,) = self._session.run(None, {self._input: tensor})
        return _yolo.detections(output, letterbox, self.conf, self.iou)

    def parse_image(self, image: Any, key: str) -> ParsedElements:
        parsed = self._screens.get(key)
        if parsed is not None:
            self._screens.move_to_end(key)
            return parsed
        started = time.perf_counter()
        boxes, scores = self.detect_icons(image)
        icon_seconds = time.perf_counter() - started
        texts: tuple[OcrText, ...] = ()
        labels: tuple[Label, ...] = ()
        ocr_seconds = 0.0
        if self._ocr is not None:
            started = time.perf_counter()
            screen = self._ocr.parse(Query(image, ""))
            ocr_seconds = time.perf_counter() - started
            texts = tuple(
                OcrText(t.text, (t.box.x1, t.box.y1, t.box.x2, t.box.y2), t.kind, t.line_words) for t in screen.texts
            )
            labels = tuple(screen.labels)
        elements = merge_elements(
            [tuple(b) for b in boxes.tolist()], scores.tolist(), texts, self.merge_iou, self.inside
        )
        parsed = ParsedElements(tuple(elements), texts, labels, len(boxes), icon_seconds, ocr_seconds)
        self.parse_calls += 1
        self._remember(self._screens, key, parsed)
        return parsed

    def parse(self, query: Query) -> ParsedElements:
        return self.parse_image(query.image, query.image_key)

    def _remember(self, cache: OrderedDict[str, Any], key: str, value: Any) -> None:
        cache[key] = value
        while len(cache) > self.cache_size:
            cache.popitem(last=False)

    def _semantic_scores(self, key: str, parsed: ParsedElements, instruction: str) -> list[float]:
        """The screen's semantic scores (textmatch.label_similarities), its text vectors kept per screen."""
        assert self._embedder is not None
        scores, vectors = label_similarities(
            self._embedder, parsed.texts, parsed.labels, instruction, self._embeddings.get(key)
        )
        self._remember(self._embeddings, key, vectors)
        return scores

    # --- the two tasks ---------------------------------------------------------------------
    def predict(self, query: Query) -> Prediction:
        cached = query.image_key in self._screens
        parsed = self.parse(query)
        meta: dict[str, Any] = {
            "elements": len(parsed.elements),
            "icons": len(parsed.icons),
            "icons_found": parsed.icons_found,
            "texts_on_screen": len(parsed.texts),
            "icon_s": round(parsed.icon_seconds, 4),
            "ocr_s": round(parsed.ocr_seconds, 4),
            "parse_cached": cached,
            # what the matcher or selector chose among: the parser's coverage (core/coverage.py)
            CANDIDATES: candidate_boxes([e.box for e in parsed.elements] + [t.box for t in parsed.texts]),
        }
        if self.selector is not None:
            return self._select(query, parsed, meta)
        semantic = None
        if self._embedder is not None:

            def semantic() -> list[float]:
                return self._semantic_scores(query.image_key, parsed, query.instruction)

        match = choose(query.instruction, parsed.labels, semantic, self.thresholds)
        if match is None:
            reason = "no text on screen" if self._ocr is not None else "icons only (ocr=false): nothing to match"
            return Prediction.no_answer(None, reason=reason, **meta)
        chosen = parsed.texts[match.index]
        meta.update(match.as_meta(), candidate=chosen.text, candidate_box=list(chosen.box))
        if not match.accepted:
            return Prediction.no_answer(None, reason="no text matches well enough", **meta)
        box, how = snap(chosen.box, query.instruction, parsed.icons, self.snap_area, self.inside)
        meta.update(snapped=how, element_type="text" if how == "text" else "icon")
        answer = Box(*box)
        return Prediction(point=answer.center, box=answer, raw=chosen.text, meta=meta)

    def _select(self, query: Query, parsed: ParsedElements, meta: dict[str, Any]) -> Prediction:
        assert self.selector is not None
        if not parsed.elements:
            return Prediction.no_answer(None, reason="no element on screen", **meta)
        answer = self.selector.answer(query.instruction, parsed.elements, query.image)
        index = parse_element_id(answer, len(parsed.elements))
        if index is None:
            return Prediction.no_answer(answer, reason="the selector's answer names no element", **meta)
        element = parsed.elements[index]
        box = Box(*element.box)
        meta.update(selected=index, element_type=element.type, candidate=element.content)
        return Prediction(point=box.center, box=box, raw=answer, meta=meta)

    def locate(self, query: LocateQuery) -> Prediction:
        parsed = self.parse_image(query.image, query.image_key)
        found = element_at(query.point, parsed, self.radius)
        meta = {"elements": len(parsed.elements), "icons": len(parsed.icons)}
        if found is None:
            return Prediction.no_answer(None, reason="no element at the point", **meta)
        box, kind, content = found
        return Prediction(box=Box(*box), raw=content, meta={**meta, "element_type": kind})

    def elements(self, image: Any) -> list[Any]:
        """The parsed screen's elements (`annotate`): icons (with the text inside them, if any) and texts."""
        from .base import ListedElement

        parsed = self.parse_image(image, image_digest(image))
        return [ListedElement(Box(*e.box), e.type, e.content) for e in parsed.elements]

    def describe(self) -> dict[str, Any]:
        import onnxruntime as ort

        runtime = f"{_ort_distribution()} {ort.__version__}"
        headline = (
            f"OmniParser v2 icon detector ({self.model_path.name}) on {runtime}, providers {', '.join(self.providers)}"
        )
        # a provider onnxruntime lists but cannot use (CUDA on a CPU machine) is no news in every
        # header: the JSON keeps it (providers_requested, provider_note), and `doctor` says it
        headline += "; + ocr merge" if self._ocr is not None else "; icons only (ocr=false)"
        return {
            "headline": headline,
            "model": str(self.model_path),
            "onnxruntime": runtime,
            "providers_requested": self.providers_requested,
            "providers": self.providers,
            "provider_note": provider_note(self.providers_requested, self.providers),
            "input_size": self._size,
            "conf": self.conf,
            "nms_iou": self.iou,
            "nms": "cv2.dnn.NMSBoxes",
            "merge_iou": self.merge_iou,
            "inside": self.inside,
            "ocr": self._ocr.describe() if self._ocr is not None else None,
            "semantic_model": self._embedder.describe() if self._embedder else None,
            "min_score": self.thresholds.lexical,
            "min_semantic": self.thresholds.semantic,
            "snap_area": self.snap_area,
            "selector": self.selector.describe() if self.selector else None,
            "radius": self.radius,
            "threads": self.threads,
            "cache_size": self.cache_size,
        }

    def close(self) -> None:
        self._screens.clear()
        self._embeddings.clear()
        if self._ocr is not None:
            self._ocr.close()
