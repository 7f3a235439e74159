"""`audit`: what may be wrong with a grounding dataset's labels, as a ranked list of findings (pure).

Input: the samples, what was read of each screen (its size, its OCR texts, a perceptual hash), and
optionally the clicks of several runs on the same samples. Output: `Finding`s, each with the
sample's id, a kind, a score in [0, 1] (how sure the finding is: the ranking) and its evidence.
The CLI (cli/audit.py) does the reading; nothing here opens a file.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.types import Box, Sample

KINDS: dict[str, str] = {
    "geometry": "the box has no or a tiny area, lies across the image's edge, covers most of the screen, "
    "or the declared size differs from the image",
    "ambiguous": "one instruction on one screen (or on near-identical screens) with boxes that disagree",
    "duplicate": "one box on one screen under different instructions",
    "text_mismatch": "the text the instruction names is not read inside the box but is read elsewhere on the screen",
    "typo": "an instruction word that is no word of the screen or the dictionary, one or two edits from one that is",
    "consensus": "most runs miss the sample with their clicks clustered at one place outside the box",
    "metadata": "a slice label that contradicts the rest of the row",
}
KIND_ORDER = tuple(KINDS)

TINY_SIDE = 4.0  # px: a box narrower than this cannot be clicked on purpose
MOST_OF_SCREEN = 0.5  # share of the screen: a region, not an element
NEAR_SCREEN_BITS = 4  # of 64 hash bits: the same screen re-captured or re-encoded
SAME_BOX_IOU = 0.9
CONFLICTING_IOU = 0.5
CONSENSUS_RADIUS = 60.0  # px: clicks within this of their centre are one place (field notes, section 1.3)
WEB = "web"
# Words of an instruction that say what to do, not what to find.
_STOP_TEXT = (
    "a an the to of on in at for and or with by from into onto this that it its is be then click tap "
    "press select choose open close go show hide view toggle enable disable turn switch check uncheck "
    "button icon menu tab item link option field box bar window panel page dialog list entry label text "
    "double right left top bottom first second last new please you your my me "
)
STOPWORDS = frozenset(_STOP_TEXT.split())
WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*[A-Za-z]|[A-Za-z]")
QUOTED = re.compile(r"[\"“”‘’']([^\"“”‘’']{2,60})[\"“”‘’']")


@dataclass(frozen=True)
class ScreenRead:
    """What the CLI read of one screen: its real size (None: unreadable), its OCR texts as
    (text, (x1, y1, x2, y2)), its 64-bit difference hash (None: not computed)."""

    size: tuple[int, int] | None
    texts: tuple[tuple[str, tuple[float, float, float, float]], ...] = ()
    phash: int | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Run:
    """One run's clicks on the dataset's samples, by sample id (None: no usable click); `detector`
    its spec as the report names it (which parser it shares with another run)."""

    name: str
    points: Mapping[str, tuple[float, float] | None]
    detector: str = ""


@dataclass(frozen=True)
class Finding:
    id: str
    uid: str
    kind: str
    score: float
    message: str
    image: str
    instruction: str
    bbox: tuple[float, float, float, float]
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "uid": self.uid,
            "kind": self.kind,
            "score": round(self.score, 4),
            "message": self.message,
            "image": self.image,
            "instruction": self.instruction,
            "bbox": [round(v, 2) for v in self.bbox],
            "evidence": dict(self.evidence),
        }


def _finding(sample: Sample, kind: str, score: float, message: str, **evidence: Any) -> Finding:
    b = sample.bbox
    return Finding(
        sample.id,
        sample.uid,
        kind,
        max(0.0, min(1.0, score)),
        message,
        str(sample.image),
        sample.instruction,
        (b.x1, b.y1, b.x2, b.y2),
        evidence,
    )


def iou(a: Box, b: Box) -> float:
    w = min(a.x2, b.x2) - max(a.x1, b.x1)
    h = min(a.y2, b.y2) - max(a.y1, b.y1)
    if w <= 0 or h <= 0:
        return 1.0 if a == b else 0.0
    inter = w * h
    union = max(a.width, 0) * max(a.height, 0) + max(b.width, 0) * max(b.height, 0) - inter
    return inter / union if union > 0 else 0.0


def words(text: str) -> list[str]:
    return [w.lower().strip("'-") for w in WORD.findall(text)]


def norm(text: str) -> str:
    return " ".join(words(text))


def edits(a: str, b: str, limit: int = 2) -> int:
    """Optimal-string-alignment distance (a swap of neighbours is one edit), cut at limit + 1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


# -- geometry ---------------------------------------------------------------------------------------


def geometry(sample: Sample, screen: ScreenRead | None) -> list[Finding]:
    if getattr(sample.target, "kind", None) == "absent":
        return []  # no box: the element is not on the screen
    out = []
    b = sample.bbox
    size = screen.size if screen else None
    declared = tuple(sample.image_size) if sample.image_size else None
    if size and declared and tuple(size) != declared:
        out.append(
            _finding(
                sample,
                "geometry",
                0.95,
                f"declared size {declared[0]}x{declared[1]}, image is {size[0]}x{size[1]}",
                problem="size",
                declared=list(declared),
                size=list(size),
            )
        )
    if b.width <= 0 or b.height <= 0:
        why = sample.defect or "the box has no area"
        return [*out, _finding(sample, "geometry", 1.0, why, problem="degenerate")]
    if min(b.width, b.height) < TINY_SIDE:
        out.append(
            _finding(
                sample, "geometry", 0.9, f"the box is {b.width:g}x{b.height:g} px: too thin to aim at", problem="tiny"
            )
        )
    frame = size or declared
    if frame:
        w, h = frame
        if b.x1 < 0 or b.y1 < 0 or b.x2 > w or b.y2 > h:
            inside = max(0.0, min(b.x2, w) - max(b.x1, 0)) * max(0.0, min(b.y2, h) - max(b.y1, 0))
            share_out = 1.0 - inside / b.area if b.area > 0 else 1.0
            where = "outside" if share_out >= 1.0 else "across"
            out.append(
                _finding(
                    sample,
                    "geometry",
                    0.7 + 0.3 * share_out,
                    f"the box lies {where} the image's edge ({share_out:.0%} of it outside {w}x{h})",
                    problem=where,
                )
            )
        share = b.area / (w * h) if w * h > 0 else 0.0
        if share > MOST_OF_SCREEN:
            out.append(
                _finding(
                    sample,
                    "geometry",
                    0.5 + 0.5 * share,
                    f"the box covers {share:.0%} of the screen",
                    problem="oversized",
                    share=round(share, 4),
                )
            )
    return out


# -- duplicates and ambiguity -----------------------------------------------------------------------


def near_screens(hashes: Mapping[str, int], bits: int = NEAR_SCREEN_BITS) -> list[tuple[str, str, int]]:
    """Pairs of distinct screens whose hashes differ in at most `bits` bits."""
    items = sorted(hashes.items())
    out = []
    for i, (a, ha) in enumerate(items):
        for b, hb in items[i + 1 :]:
            distance = (ha ^ hb).bit_count()
            if distance <= bits:
                out.append((a, b, distance))
    return out


def duplicates(samples: Sequence[Sample], screens: Mapping[str, ScreenRead]) -> list[Finding]:
    usable = [s for s in samples if not s.defect and s.bbox.is_valid]
    by_screen: dict[str, list[Sample]] = defaultdict(list)
    for s in usable:
        by_screen[str(s.image)].append(s)
    out: list[Finding] = []
    for image, group in by_screen.items():
        out += _conflicts(group, f"on {image.rsplit('/', 1)[-1]}")
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if norm(a.instruction) != norm(b.instruction) and iou(a.bbox, b.bbox) >= SAME_BOX_IOU:
                    for s, other in ((a, b), (b, a)):
                        out.append(
                            _finding(
                                s,
                                "duplicate",
                                0.4,
                                f"the same box as {other.id!r} ({other.instruction!r})",
                                other=other.id,
                                other_instruction=other.instruction,
                            )
                        )
    hashes = {image: r.phash for image, r in screens.items() if r.phash is not None}
    for first, second, distance in near_screens(hashes):
        pair = [*by_screen.get(first, []), *by_screen.get(second, [])]
        out += [
            f
            for f in _conflicts(pair, f"on near-identical screens ({distance} of 64 hash bits differ)")
            if f.evidence.get("other_image") != f.image
        ]
    return out


def _conflicts(group: Sequence[Sample], where: str) -> list[Finding]:
    by_text: dict[str, list[Sample]] = defaultdict(list)
    for s in group:
        by_text[norm(s.instruction)].append(s)
    out = []
    for same in by_text.values():
        for s in same:
            others = [o for o in same if o is not s and iou(o.bbox, s.bbox) < CONFLICTING_IOU]
            if others:
                o = others[0]
                out.append(
                    _finding(
                        s,
                        "ambiguous",
                        0.85,
                        f"the same instruction {where} has another box: {o.id!r} at {_box_text(o.bbox)}",
                        others=[x.id for x in others],
                        other_bbox=list(o.bbox.as_list()),
                        other_image=str(o.image),
                    )
                )
    return out


def _box_text(b: Box) -> str:
    return f"[{b.x1:.0f}, {b.y1:.0f}, {b.x2:.0f}, {b.y2:.0f}]"


# -- text --------------------------------------------------------------------------------------------


def named_text(instruction: str) -> tuple[list[str], bool]:
    """The words the instruction names as the target's text, and whether they were quoted."""
    quoted = QUOTED.findall(instruction)
    if quoted:
        return words(" ".join(quoted)), True
    return [w for w in words(instruction) if w not in STOPWORDS and len(w) > 1], False


def _inside(box: tuple[float, float, float, float], target: Box, pad: float = 3.0) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return target.x1 - pad <= cx <= target.x2 + pad and target.y1 - pad <= cy <= target.y2 + pad


def text_mismatch(sample: Sample, screen: ScreenRead | None) -> list[Finding]:
    if not screen or not screen.texts or sample.defect or not sample.bbox.is_valid:
        return []
    named, quoted = named_text(sample.instruction)
    if not named:
        return []
    inside = {w for text, box in screen.texts if _inside(box, sample.bbox) for w in words(text)}
    if set(named) & inside:
        return []
    phrase = " ".join(named)
    places = [(t, b) for t, b in screen.texts if not _inside(b, sample.bbox) and _has_phrase(norm(t), phrase)]
    if not places:
        return []
    text, box = min(places, key=lambda p: len(p[0]))
    found_inside = sorted(inside)[:8]
    return [
        _finding(
            sample,
            "text_mismatch",
            0.9 if quoted else 0.75,
            f"{phrase!r} is not read in the box ({', '.join(found_inside) or 'nothing read there'}) but at "
            f"{_box_text(Box(*box))}",
            named=phrase,
            place=[round(v, 1) for v in box],
            place_text=text,
            read_in_box=found_inside,
            places=len(places),
        )
    ]


def _has_phrase(text: str, phrase: str) -> bool:
    return f" {phrase} " in f" {text} "


def vocabulary(samples: Sequence[Sample], screens: Mapping[str, ScreenRead], least_rows: int = 3) -> set[str]:
    """The dataset's own dictionary: words in at least `least_rows` instructions and every word read on its screens."""
    rows = Counter(w for s in samples for w in set(words(s.instruction)))
    known = {w for w, n in rows.items() if n >= least_rows}
    known |= {w for r in screens.values() for text, _ in r.texts for w in words(text)}
    return known


def typos(sample: Sample, screen: ScreenRead | None, dictionary: set[str]) -> list[Finding]:
    if sample.defect or not screen or not screen.texts:
        return []
    on_screen = {w for text, _ in screen.texts for w in words(text) if len(w) >= 3}
    out = []
    for word in dict.fromkeys(words(sample.instruction)):
        if len(word) < 4 or word in dictionary or word in STOPWORDS:
            continue
        limit = 1 if len(word) < 6 else 2
        near = sorted((edits(word, w, limit), w) for w in on_screen if abs(len(w) - len(word)) <= limit)
        # An inflection ("train" on a screen of "trains", "sorted" beside "Sort") is no typo.
        near = [(d, w) for d, w in near if d <= limit and not (w.startswith(word) or word.startswith(w))]
        if near:
            distance, correction = near[0]
            out.append(
                _finding(
                    sample,
                    "typo",
                    0.8 if distance == 1 else 0.65,
                    f"{word!r} is no word of the screen or the dictionary; the screen reads {correction!r}",
                    word=word,
                    correction=correction,
                    edits=distance,
                )
            )
    return out


# -- consensus of runs ------------------------------------------------------------------------------


def _in_box(point: tuple[float, float], b: Box) -> bool:
    return b.x1 <= point[0] <= b.x2 and b.y1 <= point[1] <= b.y2


# Detectors whose answers come from another's parser: `omniparser` takes its text matches from the
# same OCR engine as `ocr`, so their agreement on a text target is one reading, not two.
SHARED_PARSERS: dict[str, str] = {"omniparser": "ocr", "ocr": "ocr"}
COINCIDE_PX = 3.0  # clicks this close are the same click
COINCIDE_SHARE = 0.8  # two runs whose clicks coincide on this share of their common samples are one opinion
COINCIDE_LEAST = 3  # ... counted on at least this many common samples (fewer: only clicks alike on all of them)


@dataclass(frozen=True)
class Opinion:
    """Runs that count as one opinion (one run alone, or runs that agree by construction), and why."""

    runs: tuple[str, ...]
    why: str = ""

    @property
    def name(self) -> str:
        return " = ".join(self.runs)


def parser_of(detector: str) -> str | None:
    """The parser a detector's answers come from (None: its own): `omniparser:...` -> `ocr`."""
    base = detector.split(":", 1)[0].split("+", 1)[0].strip().lower()
    return SHARED_PARSERS.get(base)


def coincidence(a: Run, b: Run) -> tuple[int, int]:
    """(samples where both runs' clicks coincide, samples both answered): no usable click on both
    counts as alike."""
    common = set(a.points) & set(b.points)
    alike = 0
    for sid in common:
        p, q = a.points[sid], b.points[sid]
        alike += (p is None and q is None) or (p is not None and q is not None and math.dist(p, q) <= COINCIDE_PX)
    return alike, len(common)


def opinions(runs: Sequence[Run]) -> list[Opinion]:
    """The runs grouped into independent opinions: runs whose clicks coincide on most of their
    common samples, or that share a parser, are one (union of the pairs; in the runs' order)."""
    parent = list(range(len(runs)))
    why: dict[int, list[str]] = defaultdict(list)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(runs):
        for j in range(i + 1, len(runs)):
            b = runs[j]
            alike, common = coincidence(a, b)
            reason = ""
            if common and (alike == common or (common >= COINCIDE_LEAST and alike >= COINCIDE_SHARE * common)):
                reason = f"{a.name} and {b.name} click alike on {alike} of {common} samples"
            elif parser_of(a.detector) is not None and parser_of(a.detector) == parser_of(b.detector):
                reason = f"{a.name} and {b.name} read the screen with the same parser ({parser_of(a.detector)})"
            if reason:
                ra, rb = root(i), root(j)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
                why[min(ra, rb)].append(reason)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(runs)):
        groups[root(i)].append(i)
    out = []
    for members in (groups[key] for key in sorted(groups)):
        reasons = [r for i in members for r in why.get(i, [])]
        out.append(Opinion(tuple(runs[i].name for i in members), "; ".join(dict.fromkeys(reasons))))
    return out


def opinion_lines(found: Sequence[Opinion]) -> list[str]:
    """One line per group of runs counted as one opinion, naming them and why."""
    return [
        f"{' and '.join(o.runs)} count as one opinion: {o.why} (consensus needs independent runs)"
        for o in found
        if len(o.runs) > 1
    ]


def consensus(
    sample: Sample, runs: Sequence[Run], radius: float = CONSENSUS_RADIUS, groups: Sequence[Opinion] | None = None
) -> list[Finding]:
    """Most independent opinions miss, and a majority of them clicked within `radius` px of one place
    outside the box. `groups`: the runs' opinions (opinions(runs); None: each run its own)."""
    if len(runs) < 2 or sample.defect or not sample.bbox.is_valid:
        return []
    by_name = {r.name: r for r in runs}
    if groups is None:
        groups = [Opinion((r.name,)) for r in runs]
    answered: list[tuple[str, tuple[float, float] | None]] = []
    members: dict[str, tuple[str, ...]] = {}
    for group in groups:  # an opinion's click: its first run's that answered the sample
        voter = next((n for n in group.runs if n in by_name and sample.id in by_name[n].points), None)
        if voter is not None:
            answered.append((voter, by_name[voter].points[sample.id]))
            members[voter] = group.runs
    if len(answered) < 2:
        return []
    misses = [(name, p) for name, p in answered if p is None or not _in_box(p, sample.bbox)]
    need = max(2, math.ceil(len(answered) * 2 / 3))
    if len(misses) < need:
        return []
    clicks = [(name, p) for name, p in misses if p is not None]
    best: list[tuple[str, tuple[float, float]]] = []
    for _, centre in clicks:
        near = [(n, p) for n, p in clicks if math.dist(p, centre) <= radius]
        if len(near) > len(best):
            best = near
    if len(best) < need:
        return []
    cx = sum(p[0] for _, p in best) / len(best)
    cy = sum(p[1] for _, p in best) / len(best)
    spread = max(math.dist(p, (cx, cy)) for _, p in best)
    b = sample.bbox
    gap = math.hypot(max(b.x1 - cx, 0, cx - b.x2), max(b.y1 - cy, 0, cy - b.y2))
    # Models agreeing is evidence about the label, not a label error seen in the data: below the kinds
    # the data shows itself (ambiguous 0.85, typo 0.8), higher the more independent opinions agree.
    score = 0.4 + 0.25 * len(best) / len(answered) + 0.1 * min(1.0, (len(best) - 1) / 3) + 0.05 * (1 - spread / radius)
    agreeing = [name for voter, _ in best for name in members[voter]]
    shown = {n: list(p) for n in agreeing if (p := by_name[n].points.get(sample.id)) is not None}
    merged = [" = ".join(members[v]) for v, _ in best if len(members[v]) > 1]
    one = f" ({'; '.join(merged)}: one opinion each)" if merged else ""
    return [
        _finding(
            sample,
            "consensus",
            score,
            f"{len(best)} of {len(answered)} independent runs click within {spread:.0f} px of ({cx:.0f}, {cy:.0f}), "
            f"{gap:.0f} px from the box{one}",
            place=[round(cx, 1), round(cy, 1)],
            runs=agreeing,
            opinions=len(best),
            clicks=shown,
            distance=round(gap, 1),
        )
    ]


# -- metadata ---------------------------------------------------------------------------------------


def metadata(samples: Sequence[Sample]) -> list[Finding]:
    """An `app` (ScreenSpot's data_source) or `app_category` value that belongs to the web platform on a
    row of another platform, when the dataset's other values of that field keep to one platform."""
    out: list[Finding] = []
    for field_name in ("app", "app_category"):
        platforms: dict[str, Counter[str]] = defaultdict(Counter)
        for s in samples:
            value = str(getattr(s, field_name))
            if value not in ("unknown", "") and s.platform not in ("unknown", ""):
                platforms[value][s.platform] += 1
        if len({p for c in platforms.values() for p in c}) < 2:
            continue
        exclusive = sum(1 for c in platforms.values() if len(c) == 1)
        if exclusive < 2 / 3 * len(platforms):
            continue  # the field does not follow the platform in this dataset: nothing contradicts it
        for s in samples:
            value = str(getattr(s, field_name))
            seen = platforms.get(value)
            if not seen or len(seen) < 2 or s.platform == _home(seen):
                continue
            out.append(
                _finding(
                    s,
                    "metadata",
                    0.7,
                    f"{field_name} {value!r} is a {_home(seen)} label on a {s.platform} row",
                    field=field_name,
                    value=value,
                    platforms=dict(seen),
                )
            )
    return out


def _home(seen: Counter[str]) -> str:
    return WEB if WEB in seen else seen.most_common(1)[0][0]


# -- the audit ---------------------------------------------------------------------------------------


def audit(
    samples: Sequence[Sample],
    screens: Mapping[str, ScreenRead],
    runs: Sequence[Run] = (),
    *,
    dictionary: Iterable[str] = (),
    kinds: Iterable[str] = KIND_ORDER,
    radius: float = CONSENSUS_RADIUS,
    progress: Callable[[int, int], None] | None = None,
) -> list[Finding]:
    """Every finding of the wanted kinds, ranked: highest score first, then by kind and id."""
    wanted = set(kinds)
    known = vocabulary(samples, screens) | {w.lower() for w in dictionary}
    groups = opinions(runs) if "consensus" in wanted else None
    out: list[Finding] = []
    for index, sample in enumerate(samples):
        screen = screens.get(str(sample.image))
        if "geometry" in wanted:
            out += geometry(sample, screen)
        if "text_mismatch" in wanted:
            out += text_mismatch(sample, screen)
        if "typo" in wanted:
            out += typos(sample, screen, known)
        if "consensus" in wanted:
            out += consensus(sample, runs, radius, groups)
        if progress is not None:
            progress(index + 1, len(samples))
    if wanted & {"ambiguous", "duplicate"}:
        out += [f for f in duplicates(samples, screens) if f.kind in wanted]
    if "metadata" in wanted:
        out += metadata(samples)
    return rank(out)


def rank(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (-f.score, KIND_ORDER.index(f.kind), f.id))


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    found = Counter(f.kind for f in findings)
    return {k: found[k] for k in KIND_ORDER if found[k]}


def table_lines(findings: Sequence[Finding], limit: int | None = None) -> list[str]:
    """The ranked findings as text rows: rank, score, kind, id, what was found."""
    shown = findings if limit is None else findings[:limit]
    lines = [f"{'#':>4}  {'score':>5}  {'kind':<13}  {'id':<24}  finding"]
    for i, f in enumerate(shown, 1):
        lines.append(f"{i:>4}  {f.score:5.2f}  {f.kind:<13}  {f.id[:24]:<24}  {f.message}")
    if limit is not None and len(findings) > limit:
        lines.append(f"      ... {len(findings) - limit} more (--json has them all)")
    return lines
