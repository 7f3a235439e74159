"""Coordinate frames a model may really answer in, and the fit that names one from answers and their
targets (issue 46). The same fit reads the frame check's calibration answers before a run
(detectors/frame_check.py) and a run's records after it (analysis/misses.py); `rescore --frame`
decodes stored answers in the frame it names. Pure: no pytest, no I/O.

An answer to fit is the preset's decoded click (original pixels), the model's own two numbers
(`meta.model_coordinates`; for an answer no model gave here, a replayed file's, the stored click's
own numbers), the original image's size and the size of the image the model was given
(`meta.model_image`); an agent's click on a crop names the crop (`meta.model_view`) and is
decoded on it. Every frame maps that to a click in original pixels:

- `as-preset`: the preset's own decoding;
- `original-pixels`: the numbers are pixels of the original image (a server or model that saw the
  full-size screen while the preset resized it, or a preset that expected 0-1000);
- `rel1000` / `rel1`: the numbers are thousandths / shares of the image;
- `swapped`: the numbers are (y, x) in the preset's own frame;
- `resized-by-server:max_pixels=N` (or `:long_edge=L`, `:scale=S`): the server shrank the image the preset sent
  before the model saw it (Qwen's resize to a pixel budget, a cap on the long edge), and the model
  answered in pixels of that smaller image; the factor changes with the screen's size;
- `offset:DX,DY`: the preset's click, shifted by a constant.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

Point = tuple[float, float]
Size = tuple[int, int]
Rect = tuple[float, float, float, float]

AS_PRESET = "as-preset"
UNKNOWN = "unknown"
FRAME_NAMES = (AS_PRESET, "original-pixels", "rel1000", "rel1", "swapped", "resized-by-server", "offset", UNKNOWN)
SERVER_FACTOR = 28  # Qwen2-VL's processor: sides in multiples of 28 (vlm/preprocess.smart_resize)
SERVER_MIN_PIXELS = 4 * 28 * 28


@dataclass(frozen=True)
class Answer:
    """One answer to fit: the preset's click, the model's numbers, the sizes, the target box."""

    point: Point | None
    values: Point | None
    original: Size
    model: Size | None
    target: Rect
    # the part of the screen the numbers are on (an agent's crop, screen px; None: the whole
    # screen): `original` is then that part's size and the point lies inside it
    region: Rect | None = None

    @property
    def centre(self) -> Point:
        x1, y1, x2, y2 = self.target
        return (x1 + x2) / 2.0, (y1 + y2) / 2.0


def distance(rect: Rect, point: Point) -> float:
    """From a point to a box (0 inside or on the edge), as core.types.Box.distance_to."""
    x1, y1, x2, y2 = rect
    dx = max(x1 - point[0], 0.0, point[0] - x2)
    dy = max(y1 - point[1], 0.0, point[1] - y2)
    return math.hypot(dx, dy)


def near_tolerance(size: Size) -> float:
    """How far from its box a click is a near miss: the larger of 10 px and 1% of the short side."""
    return max(10.0, 0.01 * min(size))


def qwen_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """(height, width) after Qwen2-VL's smart_resize: rounded to multiples of `factor`, then scaled
    down (floor) or up (ceil) by the same ratio on both sides when the area leaves [min, max]. The
    one copy: detectors/vlm/preprocess.smart_resize checks the aspect ratio and calls it."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def server_resize(size: Size, max_pixels: int) -> Size:
    """(width, height) after a Qwen-style server resize to a pixel budget."""
    height, width = qwen_resize(size[1], size[0], SERVER_FACTOR, SERVER_MIN_PIXELS, max_pixels)
    return width, height


def shrunk_by(size: Size, params: Mapping[str, float]) -> Size:
    """The image a server made of `size`: a Qwen pixel budget, a cap on the long edge, or a constant scale."""
    if "max_pixels" in params:
        return server_resize(size, int(params["max_pixels"]))
    if "long_edge" in params:
        return edge_resize(size, int(params["long_edge"]))
    scale = float(params["scale"])
    return max(1, round(size[0] * scale)), max(1, round(size[1] * scale))


def edge_resize(size: Size, long_edge: int) -> Size:
    """(width, height) after a server caps the long edge (LM Studio's 500 px, Claude's 1568 px)."""
    width, height = size
    scale = long_edge / max(width, height)
    if scale >= 1:
        return size
    return max(1, round(width * scale)), max(1, round(height * scale))


@dataclass(frozen=True)
class Frame:
    """A frame by name and its parameters; `spec` is how `rescore --frame` and the report write it."""

    name: str
    params: tuple[tuple[str, float], ...] = ()

    @property
    def spec(self) -> str:
        if self.name == "offset":
            p = dict(self.params)
            return f"offset:{_num(p['dx'])},{_num(p['dy'])}"
        if self.params:
            return self.name + ":" + ",".join(f"{k}={_num(v)}" for k, v in self.params)
        return self.name

    def decode(self, answer: Answer) -> Point | None:
        if answer.region is not None:  # decoded on the crop, then placed on the screen
            ox, oy = answer.region[0], answer.region[1]
            p = answer.point
            local = Answer(None if p is None else (p[0] - ox, p[1] - oy), answer.values, answer.original, answer.model,
                           answer.target)  # fmt: skip
            found = self.decode(local)
            return None if found is None else (found[0] + ox, found[1] + oy)
        p, v = answer.point, answer.values
        W, H = answer.original
        params = dict(self.params)
        if self.name == AS_PRESET:
            return p
        if self.name == "original-pixels":
            return v
        if self.name in ("rel1000", "rel1"):
            scale = 1000.0 if self.name == "rel1000" else 1.0
            return None if v is None else (v[0] / scale * W, v[1] / scale * H)
        if self.name == "swapped":  # the preset's per-axis scale, read off its own decoding
            if p is None or v is None or v[0] == 0 or v[1] == 0:
                return None
            ax, ay = p[0] / v[0], p[1] / v[1]
            return ax * v[1], ay * v[0]
        if self.name == "resized-by-server":
            if p is None or answer.model is None:
                return None
            model = answer.model
            shrunk = shrunk_by(model, params)
            return p[0] * model[0] / shrunk[0], p[1] * model[1] / shrunk[1]
        if self.name == "offset":
            return None if p is None else (p[0] + params["dx"], p[1] + params["dy"])
        raise ValueError(f"unknown frame {self.name!r}")


def _num(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


_SPEC = re.compile(r"^(?P<name>[a-z0-9-]+)(?::(?P<params>.*))?$")


MAX_OFFSET = 1e6  # pixels: far past any screen
MAX_FRAME_PARAMETER = 1e12  # max_pixels of a 1e6 x 1e6 image


def _finite(text: str, bound: float) -> float:
    """A frame's number: finite and at most `bound` in size (inf, nan, 1e400 are ValueErrors)."""
    if len(text.strip()) > 40:
        raise ValueError(text[:40])
    value = float(text)
    if not math.isfinite(value) or abs(value) > bound:
        raise ValueError(text)
    return value


def parse_frame(spec: str) -> Frame:
    """`rel1000`, `swapped`, `resized-by-server:max_pixels=1003520`, `offset:12,-8`; ValueError names
    the frames known."""
    found = _SPEC.match(spec.strip())
    known = (
        "as-preset, original-pixels, rel1000, rel1, swapped, resized-by-server:max_pixels=N|long_edge=L|scale=S, "
        "offset:DX,DY"
    )
    if not found or found["name"] not in FRAME_NAMES or found["name"] == UNKNOWN:
        raise ValueError(f"unknown frame {spec!r}; known: {known}")
    name, raw = found["name"], found["params"]
    try:
        if name == "offset":
            dx, dy = (_finite(part, MAX_OFFSET) for part in (raw or "").split(","))
            return Frame(name, (("dx", dx), ("dy", dy)))
        if name == "resized-by-server":
            key, _, value = (raw or "").partition("=")
            number = _finite(value, MAX_FRAME_PARAMETER)
            if key == "scale" and 0 < number < 1:
                return Frame(name, ((key, number),))
            if key not in ("max_pixels", "long_edge") or number < 1:
                raise ValueError
            return Frame(name, ((key, float(int(number))),))
    except (ValueError, OverflowError):
        raise ValueError(f"frame {spec!r}: parameters as in {known}") from None
    if raw:
        raise ValueError(f"frame {name!r} takes no parameters")
    return Frame(name)


FIXED = tuple(Frame(name) for name in ("original-pixels", "rel1000", "rel1", "swapped"))


@dataclass(frozen=True)
class Rule:
    """When a fit names a frame. `tolerance(answer)`: how far from its box a click still counts as
    on it. A frame is named when its share of the readable answers on their targets reaches
    `min_share`, it puts at least `min_gain` (a share) more of them there than the preset's own
    decoding, and at least twice as many. `preset_tolerance` (default: `tolerance`): how far from
    its box a click still supports the preset's own frame: the diagnosis after a run counts near
    misses as support (issue 56), as the check before the run does, so both say the same of a model
    whose clicks sit just beside their targets."""

    min_readable: int
    min_share: float
    min_gain: float
    tolerance: Callable[[Answer], float]
    preset_tolerance: Callable[[Answer], float] | None = None


CHECK_RULE = Rule(min_readable=4, min_share=0.6, min_gain=0.34, tolerance=lambda a: near_tolerance(a.original))
DIAGNOSIS_RULE = Rule(
    min_readable=5,
    min_share=0.15,
    min_gain=0.1,
    tolerance=lambda a: 0.0,
    preset_tolerance=lambda a: near_tolerance(a.original),
)


@dataclass(frozen=True)
class Finding:
    """What a fit found: `name` (FRAME_NAMES), the frame itself where one fits, its evidence (the
    counts on target under each frame tried, the fitted scale or offset) and the `rescore` arguments
    that decode stored answers in it."""

    name: str
    frame: Frame | None
    readable: int
    answers: int
    on_target: Mapping[str, int] = field(default_factory=dict)
    evidence: str = ""
    fitted: Mapping[str, Any] = field(default_factory=dict)

    @property
    def mismatch(self) -> bool:
        return self.name not in (AS_PRESET, UNKNOWN)

    @property
    def suggestion(self) -> list[str]:
        return ["--frame", self.frame.spec] if self.mismatch and self.frame is not None else []

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "frame": self.frame.spec if self.frame is not None else None,
            "evidence": self.evidence,
            "suggestion": self.suggestion,
            "readable": self.readable,
            "answers": self.answers,
            "on_target": dict(self.on_target),
            "fitted": dict(self.fitted),
        }


def on_target(frame: Frame, answers: Sequence[Answer], rule: Rule) -> int:
    return _score(frame, answers, rule)[0]


def _score(frame: Frame, answers: Sequence[Answer], rule: Rule) -> tuple[int, float]:
    """Answers on target under `frame`, and their summed distance to the targets' centres (what
    breaks a tie between parameters that put the same answers on target)."""
    count, spread = 0, 0.0
    for answer in answers:
        point = frame.decode(answer)
        on = point is not None and all(math.isfinite(c) for c in point)
        if on and point is not None and distance(answer.target, point) <= rule.tolerance(answer):
            count += 1
            spread += math.hypot(point[0] - answer.centre[0], point[1] - answer.centre[1])
    return count, spread


def _readable(answers: Iterable[Answer]) -> list[Answer]:
    return [a for a in answers if a.point is not None or a.values is not None]


def _server_candidates(answers: Sequence[Answer]) -> list[Frame]:
    """Budgets (and long edges) the clicks imply, each answer's `target / click` ratio applied to
    the image the model was given; a few around their median (a server's budget is one number)."""
    budgets: list[float] = []
    edges: list[float] = []
    scales: list[float] = []
    for a in answers:
        if a.point is None or a.model is None or min(a.point) <= 0:
            continue
        rx, ry = a.point[0] / a.centre[0], a.point[1] / a.centre[1]
        if not (0.05 < rx < 0.98 and 0.05 < ry < 0.98):
            continue  # not shrunk (or nonsense): no budget to read
        w, h = a.model
        budgets.append(w * h * rx * ry)
        edges.append(max(w, h) * math.sqrt(rx * ry))
        scales.append(math.sqrt(rx * ry))
    frames: list[Frame] = []
    if budgets:
        middle = statistics.median(budgets)
        seen: set[int] = set()
        for step in range(-15, 16):
            budget = int(round(middle * 1.01**step / 784)) * 784
            if budget >= SERVER_MIN_PIXELS and budget not in seen:
                seen.add(budget)
                frames.append(Frame("resized-by-server", (("max_pixels", float(budget)),)))
        edge = statistics.median(edges)
        for step in range(-12, 13):
            frames.append(Frame("resized-by-server", (("long_edge", float(max(16, round(edge * 1.01**step)))),)))
        scale = statistics.median(scales)
        for step in range(-8, 9):
            frames.append(Frame("resized-by-server", (("scale", round(scale * 1.01**step, 3)),)))
    return frames


def _offset_candidate(answers: Sequence[Answer], rule: Rule) -> Frame | None:
    """The median shift from clicks to target centres, when it is systematic: at least two thirds
    of the clicks lie within the near tolerance of it (near misses on every side are not an offset)."""
    shifted = [(a, a.centre[0] - a.point[0], a.centre[1] - a.point[1]) for a in answers if a.point is not None]
    if len(shifted) < rule.min_readable:
        return None
    dx = statistics.median(s[1] for s in shifted)
    dy = statistics.median(s[2] for s in shifted)
    agree = sum(math.hypot(x - dx, y - dy) <= near_tolerance(a.original) for a, x, y in shifted)
    if agree < 2 * len(shifted) / 3:
        return None
    return Frame("offset", (("dx", round(dx, 1)), ("dy", round(dy, 1))))


def fit(answers: Sequence[Answer], rule: Rule) -> Finding:
    """The frame that puts the most answers on their targets, named only on real evidence (Rule):
    a constant answer, a random model or a model that is simply wrong names none."""
    readable = _readable(answers)
    n = len(readable)
    if n < rule.min_readable:
        return Finding(
            UNKNOWN,
            None,
            n,
            len(answers),
            evidence=f"{n} of {len(answers)} answers could be read (at least {rule.min_readable} are needed)",
        )
    support = rule if rule.preset_tolerance is None else replace(rule, tolerance=rule.preset_tolerance)
    base = on_target(Frame(AS_PRESET), readable, support)  # near misses included where the rule says so
    counts = {AS_PRESET: base}
    best: tuple[int, float, Frame] | None = None
    candidates: list[Frame] = list(FIXED) + _server_candidates(readable)
    offset = _offset_candidate(readable, rule)
    if offset is not None:
        candidates.append(offset)
    for frame in candidates:
        if all(frame.decode(a) is None for a in readable):
            continue  # it needs what these answers lack (the model's own numbers, the image it was given)
        hits, spread = _score(frame, readable, rule)
        counts[frame.name] = max(counts.get(frame.name, 0), hits)
        if best is None or hits > best[0] or (hits == best[0] and spread < best[1] - 1e-6):
            best = (hits, spread, frame)  # ties keep the earlier, simpler frame unless closer
    summary = ", ".join(f"{name} {count}/{n}" for name, count in counts.items())
    if best is not None:
        hits, _, frame = best
        gain_needed = max(1, math.ceil(rule.min_gain * n))
        if hits >= rule.min_share * n and hits - base >= gain_needed and hits >= 2 * base:
            return Finding(
                frame.name,
                frame,
                n,
                len(answers),
                counts,
                evidence=f"{_explain(frame, readable)}; answers on target: {summary}",
                fitted=dict(frame.params),
            )
    if base >= rule.min_share * n:
        return Finding(AS_PRESET, Frame(AS_PRESET), n, len(answers), counts, evidence=f"answers on target: {summary}")
    return Finding(
        UNKNOWN, None, n, len(answers), counts, evidence=f"no frame puts enough answers on target: {summary}"
    )


def _explain(frame: Frame, answers: Sequence[Answer]) -> str:
    """The fitted numbers in words: the scale per screen size for a server resize, the offset."""
    if frame.name == "resized-by-server":
        factors: dict[Size, float] = {}
        for a in answers:
            if a.model is not None and a.model not in factors:
                shrunk = shrunk_by(a.model, dict(frame.params))
                factors[a.original] = shrunk[0] / a.model[0]
        by_size = ", ".join(f"{w}x{h}: x{f:.2f}" for (w, h), f in sorted(factors.items()))
        return f"the server shrank the image before the model saw it ({frame.spec}; scale by screen {by_size})"
    if frame.name == "offset":
        p = dict(frame.params)
        return f"every click is off by a constant ({_num(p['dx'])}, {_num(p['dy'])}) px"
    words = {
        "original-pixels": "the numbers are pixels of the original screen, not of the image the preset sends",
        "rel1000": "the numbers are thousandths of the image (0-1000)",
        "rel1": "the numbers are shares of the image (0-1)",
        "swapped": "the numbers are (y, x), not (x, y)",
    }
    return words[frame.name]


def suggestion_text(finding: Finding, preset: str | None = None) -> str:
    """What to try, in words, for the message that stops a run."""
    name = finding.name
    if name == "rel1000":
        return "use a preset whose transform is rel1000 (e.g. uitars-1.0, qwen3-vl), or rescore with --frame rel1000"
    if name == "rel1":
        return "use a preset whose transform is rel1, or rescore with --frame rel1"
    if name == "swapped":
        return "use a preset with the yx_swap transform (the model writes y first), or rescore with --frame swapped"
    if name == "original-pixels":
        return (
            "the model saw the screen at its original size: give the preset the server's real resize "
            "(a preset with max_pixels), or rescore with --frame original-pixels"
        )
    if name == "resized-by-server":
        budget = dict(finding.fitted).get("max_pixels")
        setting = (
            f"--mm-processor-kwargs '{{\"max_pixels\": ...}}' at least the preset's budget (found {int(budget)})"
            if budget
            else "the server's image cap (LM Studio, Ollama resize images)"
        )
        return f"start the server so it keeps the image the preset sends ({setting}, or --image-min-tokens)"
    if name == "offset":
        return "check the preprocessing (a canvas or padding the preset does not know of)"
    return "check the preset" + (f" {preset}" if preset else "")


def rescore_command(suggestion: Sequence[str], source: str | None = None) -> str:
    """The whole `rescore` command that reads a run's stored answers in the frame found (issue 61):
    `source` the run's predictions or JSON report (None: a placeholder), the output beside it."""
    if not source:
        return f"python -m pytest_grounding rescore PREDICTIONS {' '.join(suggestion)} --json OUT.json"
    import shlex

    frame = suggestion[-1] if suggestion else "frame"
    stem, dot, _ = source.rpartition(".")
    base = stem if dot and "/" not in source[len(stem) :] else source
    tag = "".join(c if c.isalnum() or c in "-_" else "-" for c in frame)
    arguments = " ".join(shlex.quote(s) for s in suggestion)
    out = shlex.quote(f"{base}-{tag}.json")
    return f"python -m pytest_grounding rescore {shlex.quote(source)} {arguments} --json {out}"


def answer_of(record: Mapping[str, Any]) -> Answer | None:
    """A record's answer to fit: grounding, one target box, a click or the model's numbers."""
    target = record.get("target")
    size = record.get("image_size")
    if record.get("negative") or not _pair(size) or not (isinstance(target, list) and len(target) == 4):
        return None
    if record.get("task", "grounding") != "grounding" or record.get("outcome") == "error":
        return None
    meta = record.get("meta")
    meta = meta if isinstance(meta, Mapping) else {}
    point = pair(record.get("point"))
    model = pair(meta.get("model_image"))
    values = numbers_of(point, meta)
    original = pair(size)
    if (point is None and values is None) or original is None:
        return None
    region = view_of(meta)
    return Answer(
        point=point,
        values=values,
        original=(int(original[0]), int(original[1])) if region is None else region_size(region),
        model=(int(model[0]), int(model[1])) if model is not None else None,
        target=(float(target[0]), float(target[1]), float(target[2]), float(target[3])),
        region=region,
    )


def view_of(meta: Mapping[str, Any]) -> Rect | None:
    """The crop an agent's last click was on (`meta.model_view`, screen px), None for the screen."""
    found = meta.get("model_view")
    if isinstance(found, (list, tuple)) and len(found) == 4 and all(_number(v) for v in found):
        x1, y1, x2, y2 = (float(v) for v in found)
        return (x1, y1, x2, y2) if x2 > x1 and y2 > y1 else None
    return None


def region_size(region: Rect) -> Size:
    return int(round(region[2] - region[0])), int(round(region[3] - region[1]))


def decode_prediction_point(frame: Frame, point: Any, meta: Mapping[str, Any], size: Size) -> Point | None:
    """A stored answer's click in `frame` (`rescore --frame`): its preset's click, the model's numbers
    and the image it was given (meta), the original size. An answer no model gave here is read from
    its file's numbers (a click re-mapped before keeps them as `model_coordinates`): re-mapped once."""
    model = pair(meta.get("model_image"))
    values = numbers_of(pair(point), meta)
    region = view_of(meta)
    answer = Answer(
        point=pair(point) if "model_image" in meta else values,
        values=values,
        original=size if region is None else region_size(region),
        model=(int(model[0]), int(model[1])) if model is not None else None,
        target=(0.0, 0.0, 0.0, 0.0),
        region=region,
    )
    return frame.decode(answer)


def numbers_of(point: Point | None, meta: Mapping[str, Any]) -> Point | None:
    """The numbers a frame reads: the model's own (`meta.model_coordinates`), or, for an answer no
    model gave here (a replayed file, a detector without a preset: no `meta.model_image`), the
    stored click's, which are the numbers as the file wrote them."""
    values = values_of(meta.get("model_coordinates"))
    if values is None and "model_image" not in meta:
        return point
    return values


def values_of(numbers: Any) -> Point | None:
    """The model's two numbers (a box's four: its centre)."""
    if not isinstance(numbers, (list, tuple)) or not all(_number(n) for n in numbers):
        return None
    if len(numbers) == 2:
        return float(numbers[0]), float(numbers[1])
    if len(numbers) == 4:
        return (float(numbers[0]) + float(numbers[2])) / 2.0, (float(numbers[1]) + float(numbers[3])) / 2.0
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def pair(value: Any) -> Point | None:
    """Two finite numbers as a point, else None."""
    return (float(value[0]), float(value[1])) if _pair(value) else None


def _pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 2 and all(_number(v) for v in value)
