"""`audit --diff OLD NEW`: two versions of a dataset matched row by row, and what changed (pure).

Identical rows (same screen, instruction and box) are matched first, then rows by id where the id
names the same screen in both versions (not where the loader made the ids up from row positions),
else on the same screen (its file name) by box overlap and instruction similarity, never two rows
that share neither. Each matched pair is one of: unchanged, instruction rewritten (same box), box
moved (same instruction), both changed, retargeted (the same id on another element of the same
screen: neither box nor instruction kept); unmatched rows are dropped or added.
Slice labels (element type, app, category, platform) are compared on every matched pair apart.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from ..core.types import Sample
from ..core.variants import row_key
from .audit import iou

SAME_BOX_IOU = 0.9  # a box redrawn by a pixel or two is the same box
SAME_ELEMENT_IOU = 0.3  # below this and with another instruction: another element
SIMILAR_TEXT = 0.6
SLICES = ("element_type", "app", "app_category", "platform")
CATEGORIES = ("unchanged", "rewritten", "moved", "rewritten_and_moved", "retargeted", "dropped", "added")
TITLES = {
    "unchanged": "unchanged (same screen, instruction and box)",
    "rewritten": "instruction rewritten, same box",
    "moved": "box moved, same instruction",
    "rewritten_and_moved": "instruction and box changed",
    "retargeted": "another target on the same screen",
    "dropped": "dropped (in OLD only)",
    "added": "added (in NEW only)",
}


@dataclass(frozen=True)
class Pair:
    category: str
    old: Sample | None
    new: Sample | None
    slices: tuple[str, ...] = ()  # the slice fields whose label changed

    def as_dict(self) -> dict[str, Any]:
        def side(s: Sample | None) -> dict[str, Any] | None:
            if s is None:
                return None
            return {"id": s.id, "image": s.image.name, "instruction": s.instruction, "bbox": s.bbox.as_list()}

        return {"category": self.category, "old": side(self.old), "new": side(self.new), "slices": list(self.slices)}


@dataclass(frozen=True)
class Diff:
    pairs: tuple[Pair, ...]
    old_rows: int
    new_rows: int
    slice_changes: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        found = Counter(p.category for p in self.pairs)
        return {c: found[c] for c in CATEGORIES}

    def unchanged_ids(self) -> list[tuple[str, str]]:
        """(old id, new id) of each unchanged row; an id that names two rows of its version is replaced by
        the row's key (core/variants.row_key: `<id>-<app>-<type>[-dupN]`), so no line names two rows."""
        repeated = {
            side: {i for i, n in Counter(s.id for s in rows).items() if n > 1}
            for side, rows in (
                ("old", [p.old for p in self.pairs if p.old]),
                ("new", [p.new for p in self.pairs if p.new]),
            )
        }

        def name(sample: Sample, side: str) -> str:
            if sample.id in repeated[side]:
                return row_key({"uid": sample.uid, "dataset": sample.dataset})
            return sample.id

        return [
            (name(p.old, "old"), name(p.new, "new"))
            for p in self.pairs
            if p.category == "unchanged" and p.old and p.new
        ]

    def summary(self) -> dict[str, Any]:
        counts = self.counts()
        changed = sum(n for c, n in counts.items() if c not in ("unchanged", "added"))
        return {
            "old_rows": self.old_rows,
            "new_rows": self.new_rows,
            "counts": counts,
            "slice_changes": dict(self.slice_changes),
            "changed_share_of_old": round(changed / self.old_rows, 4) if self.old_rows else None,
        }


def _screen_keys(old: Sequence[Sample], new: Sequence[Sample]) -> dict[int, str]:
    """id() of each row -> its screen as both versions name it: the file name, so that a version that moves
    its screens to another folder still matches them; where one version holds two screens of that name
    (`chrome/screenshot.png`, `word/screenshot.png`), the path below the version's own folder of screens,
    in both versions (a name alone would match rows of different screens)."""
    ambiguous: set[str] = set()
    for rows in (old, new):
        paths: dict[str, set[Path]] = defaultdict(set)
        for sample in rows:
            paths[sample.image.name].add(sample.image)
        ambiguous |= {name for name, found in paths.items() if len(found) > 1}
    keys: dict[int, str] = {}
    for rows in (old, new):
        clashing = [s for s in rows if s.image.name in ambiguous]
        try:
            root = os.path.commonpath([str(s.image.parent) for s in clashing]) if clashing else ""
        except ValueError:  # relative and absolute paths mixed, or two drives: the whole path is the key
            root = ""
        for sample in rows:
            if sample.image.name in ambiguous:
                keys[id(sample)] = Path(os.path.relpath(sample.image, root) if root else sample.image).as_posix()
            else:
                keys[id(sample)] = sample.image.name
    return keys


_WORDS = re.compile(r"\w+")


def norm(text: str) -> str:
    """An instruction as the diff compares it: case and punctuation aside, every word kept, numbers and
    any script included ("click row 3" is not "click row 4"; a Chinese instruction is not empty)."""
    return " ".join(_WORDS.findall(text.casefold()))


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, norm(a), norm(b)).ratio()


def classify(old: Sample, new: Sample) -> str:
    same_text = norm(old.instruction) == norm(new.instruction)
    overlap = iou(old.bbox, new.bbox)
    same_box = overlap >= SAME_BOX_IOU
    if same_text and same_box:
        return "unchanged"
    if same_box:
        return "rewritten"
    if same_text:
        return "moved"
    if overlap >= SAME_ELEMENT_IOU or similarity(old.instruction, new.instruction) >= SIMILAR_TEXT:
        return "rewritten_and_moved"
    return "retargeted"


def _changed_slices(old: Sample, new: Sample) -> tuple[str, ...]:
    return tuple(f for f in SLICES if str(getattr(old, f)) != str(getattr(new, f)))


FULL_SCAN = 4096  # pairs of one screen compared one by one up to this many; past it, through the indexes
TEXT_CANDIDATES = 8  # per row: the rows sharing the most rare words and trigrams with it
BOX_CANDIDATES = 8  # per row: the rows whose boxes overlap it most
SCAN = 64  # per row and index, the most rows looked at (a crowded cell, many rows of one box or one text)
QUERY_CELLS = 256  # a box over more cells of a level than this overlaps none of that level's boxes enough
ROUNDS = 4  # passes over the rows still free on both sides of a screen (most screens need one)
RARE = 24  # a word or trigram of more rows than this tells them apart too little to be looked up


def _box(sample: Sample) -> tuple[float, float, float, float]:
    b = sample.bbox
    return (b.x1, b.y1, b.x2, b.y2)


def _near(left: Sequence[Sample], right: Sequence[Sample]) -> Iterator[tuple[Sample, Sample]]:
    """The pairs of one screen worth scoring: every pair on a small screen; on a crowded one, each row's
    few closest boxes (a grid per box size) and closest instructions (an index of their rare words and
    trigrams, and the same text), each index looking at no more than SCAN rows per row, so that the work
    grows with the rows, whatever their boxes and texts (one box or one instruction for every row
    included), never with their square (a screen of 1,200 rows took minutes pair by pair)."""
    if len(left) * len(right) <= FULL_SCAN:
        yield from ((s, t) for s in left for t in right)
        return
    seen: set[tuple[int, int]] = set()
    for s, t in (*_overlapping(left, right), *_alike(left, right)):
        key = (id(s), id(t))
        if key not in seen:
            seen.add(key)
            yield s, t


def _span(box: tuple[float, float, float, float], size: float) -> tuple[range, range] | None:
    """The grid cells (columns, rows) of side `size` a box covers; None for a box with a coordinate that is
    no finite number (it overlaps nothing)."""
    x1, x2 = sorted(box[0::2])
    y1, y2 = sorted(box[1::2])
    try:
        return range(int(x1 // size), int(x2 // size) + 1), range(int(y1 // size), int(y2 // size) + 1)
    except (OverflowError, ValueError):
        return None


def _level(box: tuple[float, float, float, float]) -> int | None:
    """The box's size class: its longer side in [2^k, 2^(k+1)) (the side 1 and below: class 0)."""
    side = max(abs(box[2] - box[0]), abs(box[3] - box[1]))
    if not math.isfinite(side):
        return None
    return max(0, math.frexp(side)[1] - 1)


def _overlapping(left: Sequence[Sample], right: Sequence[Sample]) -> list[tuple[Sample, Sample]]:
    """Each left row with the BOX_CANDIDATES right rows its box overlaps most (IoU >= SAME_ELEMENT_IOU).
    The right rows sit in one grid per size class (cells of 2^k for boxes of a side in [2^k, 2^(k+1)):
    each box in at most 3 x 3 cells), so a row looks only where an overlapping box can be; a level whose
    cells the row's box would cover by the hundred holds boxes too small to overlap it by IoU 0.3. Rows
    of the very same box are looked at first."""
    grids: dict[int, dict[tuple[int, int], list[int]]] = defaultdict(lambda: defaultdict(list))
    exact: dict[tuple[float, float, float, float], list[int]] = defaultdict(list)
    for k, t in enumerate(right):
        box = _box(t)
        level = _level(box)
        cells = None if level is None else _span(box, float(2**level))
        if level is None or cells is None:
            continue  # no finite box: paired by its instruction only
        exact[box].append(k)
        for i in cells[0]:
            for j in cells[1]:
                grids[level][(i, j)].append(k)
    out = []
    for q, s in enumerate(left):
        box = _box(s)
        scores: dict[int, float] = {}  # in the order looked at: among equal overlaps, the first looked wins
        for k in _window(exact.get(box, ()), q, SCAN):
            scores[k] = iou(s.bbox, right[k].bbox)
        looked = 0
        for level, grid in sorted(grids.items()):
            cells = _span(box, float(2**level))
            if cells is None or len(cells[0]) * len(cells[1]) > QUERY_CELLS:
                continue
            for i in cells[0]:
                for j in cells[1]:
                    for k in _window(grid.get((i, j), ()), q, SCAN - looked):
                        if k not in scores:
                            looked += 1
                            scores[k] = iou(s.bbox, right[k].bbox)
        best = sorted((k for k, v in scores.items() if v >= SAME_ELEMENT_IOU), key=lambda k: -scores[k])
        out += [(s, right[k]) for k in best[:BOX_CANDIDATES]]
    return out


def _window(rows: Sequence[int], start: int, count: int) -> Iterator[int]:
    """At most `count` of `rows`, from position `start` on (wrapping): the q-th row asking a crowded list
    (many rows of one box, one cell or one text) is shown other rows than the row before it, so rows that
    are alike are spread over each other instead of all asking the same few."""
    if count <= 0 or not rows:
        return
    first = start % len(rows)
    for offset in range(min(count, len(rows))):
        yield rows[(first + offset) % len(rows)]


def _keys(text: str) -> list[str]:
    """The instruction's keys (its whole text, words, trigrams), in one order on every run (a set's order
    changes with the hash seed, and ties between candidates would with it)."""
    said = norm(text)
    padded = f"  {said} "
    found = {f"={said}", *(f"w{w}" for w in said.split()), *(f"t{padded[i : i + 3]}" for i in range(len(padded) - 2))}
    return sorted(found)


def _alike(left: Sequence[Sample], right: Sequence[Sample]) -> list[tuple[Sample, Sample]]:
    """Each left row with the TEXT_CANDIDATES right rows sharing the most rare words and trigrams with its
    instruction (a key of more than RARE rows is skipped), and up to SCAN rows of the very same text."""
    postings: dict[str, list[int]] = defaultdict(list)
    for k, t in enumerate(right):
        for key in _keys(t.instruction):
            postings[key].append(k)
    out = []
    for q, s in enumerate(left):
        shared: Counter[int] = Counter()
        for key in _keys(s.instruction):
            found = postings.get(key, ())
            if key.startswith("="):
                shared.update({k: 1000 for k in _window(found, q, SCAN)})  # the same text first
            elif len(found) <= RARE:
                shared.update(found)
        out += [(s, right[k]) for k, _ in shared.most_common(TEXT_CANDIDATES)]
    return out


def diff(old: Sequence[Sample], new: Sequence[Sample], *, ids: bool = True) -> Diff:
    """Matched in three passes: identical rows (same screen, instruction and box) first, whatever their ids;
    then by id on the same screen (`ids` False: the loader made the ids up from row positions, and they name
    other rows once rows move); then, on each screen, the closest rows first, only pairs with overlapping
    boxes or similar instructions. A row left over is dropped or added."""
    screens = _screen_keys(old, new)

    def _screen(sample: Sample) -> str:
        return screens[id(sample)]

    matched: list[tuple[Sample, Sample]] = []
    taken: set[int] = set()  # id() of the new rows matched
    used_old: set[int] = set()

    def pair(s: Sample, t: Sample) -> None:
        matched.append((s, t))
        used_old.add(id(s))
        taken.add(id(t))

    # Identical rows: among the rows of the same text, its own id first, then the closest box of IoU >= 0.9;
    # a text of more than SCAN rows: the very same box through a dict (its own id first), and a row with no
    # twin of its very box is left to the last pass (which finds the same text and the closest box).
    same_text: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    same_box: dict[tuple[Any, ...], list[Sample]] = defaultdict(list)
    own: dict[tuple[Any, ...], Sample] = {}
    for t in new:
        said = (_screen(t), norm(t.instruction))
        same_text[said].append(t)
        same_box[(said, _box(t))].append(t)
        own.setdefault((said, _box(t), t.id), t)
    for group in same_box.values():
        group.reverse()  # popped from the end: the new version's order
    for s in old:
        said = (_screen(s), norm(s.instruction))
        texts = same_text.get(said, [])
        if len(texts) <= SCAN:
            twins = [t for t in texts if id(t) not in taken and iou(s.bbox, t.bbox) >= SAME_BOX_IOU]
            if twins:  # its own id first, then the closest box
                pair(s, max(twins, key=lambda t: (t.id == s.id, iou(s.bbox, t.bbox))))
            continue
        mine = own.get((said, _box(s), s.id))
        if mine is not None and id(mine) not in taken:
            pair(s, mine)
            continue
        group = same_box.get((said, _box(s))) or []
        while group and id(group[-1]) in taken:
            group.pop()
        if group:
            pair(s, group.pop())
    if ids:
        new_by_id = {t.id: t for t in new}
        for s in old:
            twin = new_by_id.get(s.id)
            if id(s) not in used_old and twin is not None and id(twin) not in taken and _screen(twin) == _screen(s):
                pair(s, twin)
    # On each screen, the closest pairs first (same box and text, then the box, then the text); the rows
    # a round leaves on both sides of a screen are offered each other again (a crowded screen's candidates
    # are a few per row: a row whose few were all taken finds its partner among the rows still free).
    again: set[str] | None = None  # the screens where the last round paired a row (None: every screen)
    for _ in range(ROUNDS):
        by_screen: dict[str, list[Sample]] = defaultdict(list)
        for t in new:
            if id(t) not in taken and (again is None or _screen(t) in again):
                by_screen[_screen(t)].append(t)
        olds: dict[str, list[Sample]] = defaultdict(list)
        for s in old:
            if id(s) not in used_old and _screen(s) in by_screen:
                olds[_screen(s)].append(s)
        candidates = []
        for screen, left in olds.items():
            for s, t in _near(left, by_screen[screen]):
                overlap, alike = iou(s.bbox, t.bbox), similarity(s.instruction, t.instruction)
                if overlap >= SAME_ELEMENT_IOU or alike >= SIMILAR_TEXT:  # one row changed, not one dropped, one added
                    candidates.append((-(2.0 * overlap + alike), s.id, t.id, s, t))
        again = set()
        for _, _, _, s, t in sorted(candidates, key=lambda c: c[:3]):
            if id(s) not in used_old and id(t) not in taken:
                pair(s, t)
                again.add(_screen(s))
        if not again:
            break
    pairs = [Pair(classify(a, b), a, b, _changed_slices(a, b)) for a, b in matched]
    pairs += [Pair("dropped", s, None) for s in old if id(s) not in used_old]
    pairs += [Pair("added", None, t) for t in new if id(t) not in taken]
    slice_changes = Counter(f for p in pairs for f in p.slices)
    return Diff(tuple(pairs), len(old), len(new), {f: slice_changes[f] for f in SLICES if slice_changes[f]})


def table_lines(found: Diff) -> list[str]:
    counts = found.counts()
    lines = [f"{'rows':>6}  {'share':>6}  what changed (OLD {found.old_rows} rows -> NEW {found.new_rows} rows)"]
    for category in CATEGORIES:
        base = found.new_rows if category == "added" else found.old_rows
        share = f"{counts[category] / base:.1%}" if base else "-"
        lines.append(f"{counts[category]:>6}  {share:>6}  {TITLES[category]}")
    for name, n in found.slice_changes.items():
        lines.append(f"{n:>6}  {'':>6}  {name} label changed (on matched rows)")
    summary = found.summary()
    if summary["changed_share_of_old"] is not None:
        lines.append(f"        {summary['changed_share_of_old']:.1%} of OLD's rows differ in NEW")
    return lines
