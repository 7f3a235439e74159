"""The `omniparser` detector: OmniParser v2's parse step on ONNX Runtime (its YOLO icon detector,
exported to ONNX, merged with the `ocr` detector's RapidOCR texts by OmniParser's overlap rules),
then the element the instruction names (`pytest_grounding.detectors.textmatch`), answered with its box.

The icon detector is AGPL-3.0 and never ships with this package: the model file is looked for at
`model=PATH`, else $PYTEST_GROUNDING_OMNIPARSER_MODEL, else
$PYTEST_GROUNDING_CACHE/models/omniparser-v2-icon-detect-640.onnx (cache default
~/.cache/pytest-grounding). onnxruntime, rapidocr, OpenCV, torch and transformers are imported when
the detector is built, never at import of the package. The pure geometry is in `_yolo`.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.cache import cache_root
from ..core.redact import register_env
from ..core.types import Box, Point, Prediction, Query, image_digest
from ..evaluate.locate import LocateQuery
from . import _yolo
from .textmatch import MAX_LABEL_WORDS, Label, Thresholds, choose, label_similarities

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
MODEL_FILE = "omniparser-v2-icon-detect-640.onnx"
MODEL_ENV = "PYTEST_GROUNDING_OMNIPARSER_MODEL"
_ORT_DEFAULT_SEVERITY = 2  # onnxruntime's logger severity when nothing changed it (it has no getter)
# Lines of more words are running text, not a row of labels (as the ocr detector counts them).
# Instructions naming a control that sits beside its label rather than around it.
_TOGGLE_WORDS = re.compile(r"\b(check ?box(es)?|tick|untick|check|uncheck|radio|toggle|switch)\b", re.I)

BoxT = tuple[float, float, float, float]


def model_candidates(model: str | None = None) -> list[tuple[Path, str]]:
    """Where the model is looked for, in order, each with where that place came from."""
    if model:
        return [(Path(model).expanduser(), "model= option")]
    env = os.environ.get(MODEL_ENV)
    if env:
        return [(Path(env).expanduser(), f"${MODEL_ENV}")]
    return [
        (
            cache_root() / "models" / MODEL_FILE,
            "the cache folder ($PYTEST_GROUNDING_CACHE or ~/.cache/pytest-grounding)",
        )
    ]


def resolve_model(model: str | None = None) -> Path:
    """The model file, or a FileNotFoundError that says where it looked and how to make the file."""
    for path, _source in model_candidates(model):
        if path.is_file():
            return path
    path, source = model_candidates(model)[0]
    raise FileNotFoundError(
        f"omniparser: no icon detector model at {path} (from {source}). Make it from OmniParser v2's "
        f"weights/icon_detect/model.pt (AGPL-3.0, not shipped here) on a machine with PyTorch and torchvision: "
        f"`yolo export model=model.pt format=onnx imgsz=640`, then put it there, set ${MODEL_ENV}, "
        f"or pass --detector omniparser:model=PATH"
    )


def create_session(path: Path, device: str = "auto", threads: int = 1) -> tuple[Any, list[str], list[str]]:
    """An onnxruntime session on the model: CUDA asked for when onnxruntime lists it (and device is
    auto), CPU otherwise. Returns (session, providers requested, providers really used, read back).
    A listed CUDA provider that cannot run falls back to CPU with loud logger lines: they are
    silenced for the creation only, and the read-back says what runs."""
    import onnxruntime as ort

    if device not in ("auto", "cpu"):
        raise ValueError(f"omniparser: device must be 'auto' or 'cpu', not {device!r}")
    requested = [CUDA, CPU] if device == "auto" and CUDA in ort.get_available_providers() else [CPU]
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, int(threads))
    options.log_severity_level = 3
    ort.set_default_logger_severity(4)
    try:
        session = ort.InferenceSession(str(path), sess_options=options, providers=requested)
    finally:
        ort.set_default_logger_severity(_ORT_DEFAULT_SEVERITY)
    return session, requested, list(session.get_providers())


def provider_note(requested: Sequence[str], used: Sequence[str]) -> str | None:
    missing = [p for p in requested if p not in used and p != CPU]
    if not missing:
        return None
    return (
        f"onnxruntime lists {', '.join(missing)} but could not use it here; the icon detector runs on {', '.join(used)}"
    )


# --- the parsed screen and the choices made on it (pure) ----------------------------------------


@dataclass(frozen=True)
class OcrText:
    """An OCR text as this module uses it: what ScreenText gives, kept to the fields read here."""

    text: str
    box: BoxT
    kind: str  # line | word | span
    line_words: int = 1


@dataclass(frozen=True)
class ParsedElements:
    elements: tuple[_yolo.Element, ...]
    texts: tuple[OcrText, ...]  # every OCR candidate (lines, words, runs of words)
    labels: tuple[Label, ...]  # texts[i] prepared for matching
    icons_found: int  # icon boxes after NMS, before the merge
    icon_seconds: float
    ocr_seconds: float

    @property
    def icons(self) -> tuple[_yolo.Element, ...]:
        return tuple(e for e in self.elements if e.type == "icon")


def merge_elements(
    icon_boxes: Sequence[BoxT],
    icon_scores: Sequence[float],
    texts: Sequence[OcrText],
    iou: float = 0.7,
    inside: float = 0.8,
) -> list[_yolo.Element]:
    """OmniParser's merge with the OCR lines as its text boxes (OmniParser merges the boxes its OCR
    reads, lines or segments; words and runs of words stay candidates for matching only)."""
    lines = [(t.box, t.text) for t in texts if t.kind == "line"]
    return _yolo.merge(icon_boxes, lines, iou=iou, inside=inside, icon_scores=icon_scores)


def snap(
    text_box: BoxT, instruction: str, icons: Sequence[_yolo.Element], snap_area: float = 4.0, inside: float = 0.8
) -> tuple[BoxT, str]:
    """The box to answer for a matched text: the smallest icon around it (a label inside a button:
    the button), when that icon is at most `snap_area` times the text's area and the text sits in
    its middle (a sidebar row with an icon, then its label, is not a button); else, when the
    instruction names a toggle (checkbox, radio, switch...), the nearest small square icon on the
    same row just left or right of it; else the text's own box. Returns (box, how) with how in
    inside | beside | text."""
    text_area = _yolo.area(text_box)
    text_cx = (text_box[0] + text_box[2]) / 2.0
    around = [
        e
        for e in icons
        if _yolo.inside_share(text_box, e.box) > inside
        and _yolo.area(e.box) <= snap_area * max(text_area, 1.0)
        and abs((e.box[0] + e.box[2]) / 2.0 - text_cx) <= 0.25 * (e.box[2] - e.box[0])
    ]
    if around:
        return min(around, key=lambda e: _yolo.area(e.box)).box, "inside"
    if _TOGGLE_WORDS.search(instruction):
        height = text_box[3] - text_box[1]
        cy = (text_box[1] + text_box[3]) / 2.0
        best: tuple[float, BoxT] | None = None
        for e in icons:
            w, h = e.box[2] - e.box[0], e.box[3] - e.box[1]
            if not (0.6 <= w / max(h, 1e-6) <= 1.6 and 0.5 * height <= h <= 2.5 * height):
                continue
            if abs((e.box[1] + e.box[3]) / 2.0 - cy) > 0.5 * max(height, h):
                continue
            gap = text_box[0] - e.box[2] if e.box[2] <= (text_box[0] + text_box[2]) / 2 else e.box[0] - text_box[2]
            if -0.25 * height <= gap <= 2.0 * height and (best is None or gap < best[0]):
                best = (gap, e.box)
        if best is not None:
            return best[1], "beside"
    return text_box, "text"


def element_at(point: Point, parsed: ParsedElements, radius: float = 4.0) -> tuple[BoxT, str, str | None] | None:
    """The element under a click point: the smallest element containing it (edges included);
    for a text line of labels (a menu bar read as one line), the word under the point; else the
    nearest element within `radius` px. Returns (box, type, content) or None."""

    def contains(box: BoxT) -> bool:
        return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]

    under = [e for e in parsed.elements if contains(e.box)]
    if under:
        element = min(under, key=lambda e: _yolo.area(e.box))
        if element.type == "text":
            line = [t for t in parsed.texts if t.kind == "line" and t.box == element.box]
            if line and 1 < line[0].line_words <= MAX_LABEL_WORDS:
                words = [
                    t
                    for t in parsed.texts
                    if t.kind == "word" and contains(t.box) and _yolo.inside_share(t.box, element.box) > 0.8
                ]
                if words:
                    word = min(words, key=lambda t: _yolo.area(t.box))
                    return word.box, "text", word.text
        return element.box, element.type, element.content
    near = [(Box(*e.box).distance_to(point), i) for i, e in enumerate(parsed.elements)]
    near = [(d, i) for d, i in near if d <= radius]
    if not near:
        return None
    element = parsed.elements[min(near)[1]]
    return element.box, element.type, element.content


# --- the optional selector model (OpenAI-compatible chat endpoint) ------------------------------

SELECTOR_KEY_ENV = "PYTEST_GROUNDING_SELECTOR_API_KEY"
_ELEMENT_ID = re.compile(r"\b(?:id|box|element)?\s*#?\s*(\d+)\b", re.I)


def element_listing(elements: Sequence[_yolo.Element]) -> str:
    """The numbered element list the selector reads, OmniParser's way ("ID 3, icon: Save As")."""
    return "\n".join(f"ID {i}, {e.type}: {e.content or '(no text)'}" for i, e in enumerate(elements))


def selector_prompt(instruction: str, elements: Sequence[_yolo.Element]) -> str:
    return (
        "The screenshot shows numbered boxes around the elements of a screen, listed here:\n"
        f"{element_listing(elements)}\n\nWhich element should be clicked to do this: {instruction}\n"
        "Answer with the element's ID number only."
    )


def parse_element_id(answer: str, count: int) -> int | None:
    """The first number in the answer that is a valid element id, or None (wrong format)."""
    for match in _ELEMENT_ID.finditer(answer or ""):
        value = int(match.group(1))
        if 0 <= value < count:
            return value
    return None


def draw_elements(image: Any, elements: Sequence[_yolo.Element]) -> Any:
    """The screenshot with each element's box and id drawn (OmniParser's set-of-marks picture)."""
    from PIL import ImageDraw

    marked = image.convert("RGB").copy()
    draw = ImageDraw.Draw(marked)
    for i, e in enumerate(elements):
        colour = (230, 40, 40) if e.type == "icon" else (40, 90, 230)
        draw.rectangle(e.box, outline=colour, width=2)
        draw.text((e.box[0] + 2, max(0.0, e.box[1] - 11)), str(i), fill=colour)
    return marked


@dataclass(frozen=True)
class Selector:
    """A chat model behind an OpenAI-compatible endpoint picking an element id. The API key is read
    from the environment variable `key_env` at each call, never stored, printed or written."""

    base_url: str
    model: str
    key_env: str = SELECTOR_KEY_ENV
    timeout: float = 120.0

    def request(self, instruction: str, elements: Sequence[_yolo.Element], image: Any) -> dict[str, Any]:
        import base64
        import io

        buffer = io.BytesIO()
        draw_elements(image, elements).save(buffer, format="PNG")
        picture = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
        return {
            "model": self.model,
            "temperature": 0,
            "max_tokens": 16,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": selector_prompt(instruction, elements)},
                        {"type": "image_url", "image_url": {"url": picture}},
                    ],
                }
            ],
        }

    def answer(self, instruction: str, elements: Sequence[_yolo.Element], image: Any) -> str:
        import json
        import urllib.request

        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env)
        if key:
            register_env(self.key_env)  # a server that echoes the header back: masked in every output
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps(self.request(instruction, elements, image)).encode()
        url = self.base_url.rstrip("/") + "/chat/completions"
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=self.timeout) as reply:
            document = json.loads(reply.read().decode("utf-8"))
        return str(document["choices"][0]["message"]["content"] or "")

    def describe(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "model": self.model,
            "key_env": self.key_env,
            "key_set": bool(os.environ.get(self.key_env)),
        }


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
        from .ocr import default_threads  # the same rule as `ocr`, so that the two share one OCR parse

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
            log.warning("omniparser: %s", note)
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

        from .ocr import _ort_distribution

        runtime = f"{_ort_distribution()} {ort.__version__}"
        headline = (
            f"OmniParser v2 icon detector ({self.model_path.name}) on {runtime}, providers {', '.join(self.providers)}"
        )
        missing = [p for p in self.providers_requested if p not in self.providers]
        if missing:
            headline += f" ({', '.join(missing)} listed by onnxruntime but not usable here)"
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
