"""Crop geometry for the cropping strategies: windows around a point, padding to a minimum size,
splitting elongated patches, mapping answers back, Gaussian voting and NMS. Pure: boxes in absolute
pixels of the frame they are given in, nothing imported but `types`."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...core.types import Box, Point


def clamp_window(x1: float, y1: float, width: float, height: float, frame: tuple[float, float]) -> Box:
    """A width x height window with top-left (x1, y1), slid (never shrunk) to lie inside the frame;
    a window larger than the frame becomes the frame's full extent on that axis."""
    frame_w, frame_h = frame
    width, height = min(width, frame_w), min(height, frame_h)
    x1 = min(max(x1, 0.0), frame_w - width)
    y1 = min(max(y1, 0.0), frame_h - height)
    return Box(x1, y1, x1 + width, y1 + height)


def window_around(point: Point, size: tuple[float, float], frame: tuple[float, float]) -> Box:
    """The size[0] x size[1] window centred on the point, slid inside the frame (so a point near an
    edge keeps the whole window, off centre, rather than a smaller one)."""
    width, height = size
    return clamp_window(point[0] - width / 2.0, point[1] - height / 2.0, width, height, frame)


def integral(box: Box, frame: tuple[float, float]) -> Box:
    """The box on whole pixels (what PIL crops), inside the frame, at least one pixel each way.
    Both edges round half up, so a window of whole-pixel size keeps its size wherever it lies."""
    frame_w, frame_h = frame
    x1 = min(max(math.floor(box.x1 + 0.5), 0), max(int(frame_w) - 1, 0))
    y1 = min(max(math.floor(box.y1 + 0.5), 0), max(int(frame_h) - 1, 0))
    x2 = max(min(math.floor(box.x2 + 0.5), int(frame_w)), x1 + 1)
    y2 = max(min(math.floor(box.y2 + 0.5), int(frame_h)), y1 + 1)
    return Box(float(x1), float(y1), float(x2), float(y2))


def pad_to(box: Box, min_size: tuple[float, float], frame: tuple[float, float]) -> Box:
    """Grow the box about its centre to at least min_size (no larger than the frame), slid inside
    the frame. A side already long enough keeps its extent (clipped to the frame)."""
    frame_w, frame_h = frame
    width = max(box.width, min(min_size[0], frame_w))
    height = max(box.height, min(min_size[1], frame_h))
    cx, cy = box.center
    return clamp_window(cx - width / 2.0, cy - height / 2.0, width, height, frame)


def split_long(box: Box, max_aspect: float, parts: int = 2) -> list[Box]:
    """A patch longer than max_aspect : 1 split into `parts` equal pieces along its long side; any
    other patch unchanged. (A very wide toolbar patch padded to a screen-shaped crop would hold
    mostly unrelated pixels; pieces keep each crop screen-shaped.)"""
    if box.width <= 0 or box.height <= 0:
        return [box]
    if box.width / box.height > max_aspect:
        step = box.width / parts
        return [Box(box.x1 + i * step, box.y1, box.x1 + (i + 1) * step, box.y2) for i in range(parts)]
    if box.height / box.width > max_aspect:
        step = box.height / parts
        return [Box(box.x1, box.y1 + i * step, box.x2, box.y1 + (i + 1) * step) for i in range(parts)]
    return [box]


def candidate_patches(
    anchor: Box, min_size: tuple[float, float], max_aspect: float, frame: tuple[float, float]
) -> list[Box]:
    """ScreenSeekeR's patch for one grounded reference: a small box padded to the minimum crop; a
    large elongated one split in two, each piece padded; a large screen-shaped one kept."""
    if anchor.width < min_size[0] and anchor.height < min_size[1]:
        return [pad_to(anchor, min_size, frame)]
    return [pad_to(piece, min_size, frame) for piece in split_long(anchor, max_aspect)]


def shift(box: Box, dx: float, dy: float) -> Box:
    return Box(box.x1 + dx, box.y1 + dy, box.x2 + dx, box.y2 + dy)


def to_frame(point: Point, crop: Box, scale: float = 1.0) -> Point:
    """A point answered in a crop (resized by `scale`) back in the frame the crop was cut from."""
    return (crop.x1 + point[0] / scale, crop.y1 + point[1] / scale)


def box_to_frame(box: Box, crop: Box, scale: float = 1.0) -> Box:
    x1, y1 = to_frame((box.x1, box.y1), crop, scale)
    x2, y2 = to_frame((box.x2, box.y2), crop, scale)
    return Box(x1, y1, x2, y2)


def gaussian_vote(patch: Box, point: Point, sigma: float = 0.3) -> float:
    """A vote's weight for a patch: exp(-d^2 / 2 sigma^2), d the distance from the patch centre in
    patch-normalised units (0.5 at an edge's middle); 0 outside the patch."""
    if patch.width <= 0 or patch.height <= 0 or not patch.contains(point):
        return 0.0
    dx = (point[0] - patch.x1) / patch.width - 0.5
    dy = (point[1] - patch.y1) / patch.height - 0.5
    return math.exp(-(dx * dx + dy * dy) / (2.0 * sigma * sigma))


def patch_scores(patches: Sequence[Box], votes: Sequence[Point], sigma: float = 0.3) -> list[float]:
    """Each patch's score: the sum of every vote's Gaussian weight in it."""
    return [sum(gaussian_vote(patch, vote, sigma) for vote in votes) for patch in patches]


def nms(patches: Sequence[Box], scores: Sequence[float], iou: float = 0.5) -> list[int]:
    """Indices kept, best score first (ties: the earlier patch): a patch overlapping a kept one
    at IoU >= `iou` is dropped."""
    order = sorted(range(len(patches)), key=lambda i: (-scores[i], i))
    kept: list[int] = []
    for index in order:
        if all(patches[index].iou(patches[k]) < iou for k in kept):
            kept.append(index)
    return kept


def shrink_toward(point: Point, window: Box, factor: float, min_side: float, frame: tuple[float, float]) -> Box:
    """The next window of iterative narrowing: `factor` times the current window's sides (never
    below min_side, never above the frame), centred on the point and slid inside the frame."""
    width = max(window.width * factor, min(min_side, frame[0]))
    height = max(window.height * factor, min(min_side, frame[1]))
    return window_around(point, (min(width, window.width), min(height, window.height)), frame)
