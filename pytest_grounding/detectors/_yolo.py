"""Pure geometry of the OmniParser icon detector (an Ultralytics YOLO exported to ONNX): letterbox
in, decode the raw `[1, 5, N]` output, NMS, and OmniParser's merge of icon boxes with OCR text
boxes. numpy (and OpenCV's NMS) only; no onnxruntime, no pytest.

Boxes are numpy float arrays of rows x1, y1, x2, y2 in pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from PIL.Image import Image

PAD_VALUE = 114  # Ultralytics' letterbox grey (114/255 once scaled to 0..1)
MAX_DETECTIONS = 300  # Ultralytics' max_det


@dataclass(frozen=True)
class Letterbox:
    """How an image of `width` x `height` sits in the square `size` x `size` model input:
    scaled by `gain` (aspect kept), then padded by `left` / `top` pixels (centred)."""

    width: int
    height: int
    size: int
    gain: float
    new_width: int
    new_height: int
    left: int
    top: int

    @classmethod
    def fit(cls, width: int, height: int, size: int = 640) -> Letterbox:
        """Ultralytics' LetterBox(auto=False, center=True): the split of an odd padding and the
        rounding of the scaled size are theirs, so boxes map back exactly as their scale_boxes does."""
        gain = min(size / height, size / width)
        new_width, new_height = int(round(width * gain)), int(round(height * gain))
        pad_x, pad_y = (size - new_width) / 2.0, (size - new_height) / 2.0
        return cls(width, height, size, gain, new_width, new_height, int(round(pad_x - 0.1)), int(round(pad_y - 0.1)))

    def to_original(self, boxes: np.ndarray) -> np.ndarray:
        """Boxes in the letterboxed frame -> pixels of the original image, clipped to it."""
        out = np.asarray(boxes, dtype=np.float64).reshape(-1, 4).copy()
        out[:, [0, 2]] = (out[:, [0, 2]] - self.left) / self.gain
        out[:, [1, 3]] = (out[:, [1, 3]] - self.top) / self.gain
        out[:, [0, 2]] = out[:, [0, 2]].clip(0, self.width)
        out[:, [1, 3]] = out[:, [1, 3]].clip(0, self.height)
        return out

    def to_letterbox(self, boxes: np.ndarray) -> np.ndarray:
        out = np.asarray(boxes, dtype=np.float64).reshape(-1, 4).copy()
        out[:, [0, 2]] = out[:, [0, 2]] * self.gain + self.left
        out[:, [1, 3]] = out[:, [1, 3]] * self.gain + self.top
        return out


def letterbox_image(image: Image, size: int = 640) -> tuple[np.ndarray, Letterbox]:
    """The model input (float32 [1, 3, size, size], RGB, 0..1) and the letterbox that made it.
    Resized with OpenCV's bilinear, as Ultralytics does (PIL's bilinear antialiases when it
    shrinks, which shifts the detector's scores)."""
    import cv2

    rgb = np.asarray(image.convert("RGB"))
    box = Letterbox.fit(rgb.shape[1], rgb.shape[0], size)
    if (box.new_width, box.new_height) != (box.width, box.height):
        rgb = cv2.resize(rgb, (box.new_width, box.new_height), interpolation=cv2.INTER_LINEAR)
    canvas = np.full((size, size, 3), PAD_VALUE, dtype=np.uint8)
    canvas[box.top : box.top + box.new_height, box.left : box.left + box.new_width] = rgb
    tensor = canvas.transpose(2, 0, 1)[None].astype(np.float32) / 255.0
    return np.ascontiguousarray(tensor), box


def decode(output: np.ndarray, conf: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Raw `[1, 5, N]` (cx, cy, w, h, score per anchor) -> (boxes x1y1x2y2, scores) of the anchors
    scoring above `conf` (strictly, as Ultralytics), still in the letterboxed frame."""
    rows = np.asarray(output, dtype=np.float32).reshape(5, -1).T
    rows = rows[rows[:, 4] > conf]
    half_w, half_h = rows[:, 2] / 2.0, rows[:, 3] / 2.0
    boxes = np.stack([rows[:, 0] - half_w, rows[:, 1] - half_h, rows[:, 0] + half_w, rows[:, 1] + half_h], axis=1)
    return boxes.astype(np.float64), rows[:, 4].astype(np.float64)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float, max_detections: int = MAX_DETECTIONS) -> np.ndarray:
    """Indices of the boxes kept by greedy NMS, best score first: a box goes when its IoU with a
    better kept box exceeds `iou`. OpenCV's `cv2.dnn.NMSBoxes` (OpenCV is already in the tree:
    RapidOCR requires it; torch has no NMS without torchvision, which has no CPU build here, and
    onnxruntime exposes none outside a graph). Its overlap is the plain IoU, w * h areas."""
    import cv2

    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if len(boxes) == 0:
        return np.zeros(0, dtype=np.int64)
    xywh = np.column_stack([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]])
    # score_threshold 0 (it keeps scores above it): the confidence filter is decode()'s, not this one's
    kept = cv2.dnn.NMSBoxes(xywh.tolist(), np.asarray(scores, dtype=np.float64).tolist(), 0.0, float(iou))
    keep = np.asarray(kept, dtype=np.int64).reshape(-1)
    order = keep[np.argsort(-np.asarray(scores)[keep], kind="stable")]
    return order[:max_detections]


def detections(
    output: np.ndarray, letterbox: Letterbox, conf: float = 0.05, iou: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """Decode, NMS in the letterboxed frame (as Ultralytics), map back: (boxes, scores) in pixels
    of the original image, best first; boxes that clip to nothing are dropped."""
    boxes, scores = decode(output, conf)
    keep = nms(boxes, scores, iou)
    boxes, scores = letterbox.to_original(boxes[keep]), scores[keep]
    valid = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    return boxes[valid], scores[valid]


# --- OmniParser's merge of icon and text boxes (its util/utils.py remove_overlap_new) ---------


def area(box: Sequence[float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def intersection(a: Sequence[float], b: Sequence[float]) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def overlap(a: Sequence[float], b: Sequence[float]) -> float:
    """OmniParser's "IoU" for the merge: the largest of the IoU and the share of either box that
    the other covers, so a small box inside a large one overlaps fully."""
    inter = intersection(a, b)
    area_a, area_b = area(a), area(b)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    return max(inter / (area_a + area_b - inter + 1e-6), inter / area_a, inter / area_b)


def inside_share(inner: Sequence[float], outer: Sequence[float]) -> float:
    """The share of `inner`'s area that lies inside `outer`."""
    inner_area = area(inner)
    return intersection(inner, outer) / inner_area if inner_area > 0 else 0.0


@dataclass(frozen=True)
class Element:
    """One parsed screen element: an OCR text, or an icon box with the OCR texts inside it as its
    content (None when it holds none). `texts` are the indices of those texts in the OCR list."""

    type: str  # text | icon
    box: tuple[float, float, float, float]
    content: str | None
    texts: tuple[int, ...] = ()
    score: float | None = None


def merge(
    icons: Sequence[Sequence[float]],
    texts: Sequence[tuple[Sequence[float], str]],
    iou: float = 0.7,
    inside: float = 0.8,
    icon_scores: Sequence[float] | None = None,
) -> list[Element]:
    """OmniParser's overlap rules:

    1. Of two icon boxes that overlap more than `iou` (OmniParser's overlap()), the larger goes.
    2. An OCR text more than `inside` of whose area lies in a kept icon becomes part of that
       icon's content and leaves the list of texts.
    3. A kept icon more than `inside` of whose area lies in an OCR text is dropped (the text
       stands for it).

    Returns the remaining texts (in OCR order) then the kept icons (in detector order).
    One deliberate difference: OmniParser scans the texts in order and, when rule 3 fires after
    rule 2 took texts for that icon, those texts are lost with it; here they stay texts."""
    icon_boxes = [tuple(float(v) for v in b) for b in icons]
    taken: dict = {}  # text index -> icon index
    kept_icons: list[tuple[int, tuple[int, ...]]] = []
    for i, box in enumerate(icon_boxes):
        if any(j != i and overlap(box, other) > iou and area(box) > area(other) for j, other in enumerate(icon_boxes)):
            continue
        claimed: list[int] = []
        dropped = False
        for t, (text_box, _) in enumerate(texts):
            if t in taken:
                continue
            if inside_share(text_box, box) > inside:
                claimed.append(t)
            elif inside_share(box, text_box) > inside:
                dropped = True
                break
        if dropped:
            continue
        for t in claimed:
            taken[t] = i
        kept_icons.append((i, tuple(claimed)))
    elements = [Element("text", _box4(box), text, (t,)) for t, (box, text) in enumerate(texts) if t not in taken]
    for i, inside_texts in kept_icons:
        content = " ".join(texts[t][1] for t in inside_texts) or None
        score = float(icon_scores[i]) if icon_scores is not None else None
        elements.append(Element("icon", _box4(icon_boxes[i]), content, inside_texts, score))
    return elements


def _box4(box: Sequence[float]) -> tuple[float, float, float, float]:
    return (float(box[0]), float(box[1]), float(box[2]), float(box[3]))
