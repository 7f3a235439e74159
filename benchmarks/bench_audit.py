"""What an `audit` costs next to an `ocr` run over the same screens (the target: at most 1.5x).

In one process, with one warmed OCR engine: the `ocr` detector answering every sample of the
dataset (each screen decoded once, as a run's screen reader does), and the audit (each screen
decoded once, read once by the same engine, hashed, then every check). Before each pass the
parse cache and the engine's line cache are emptied, so both read every screen from scratch;
the passes alternate (ocr, audit, audit, ocr, ...) so both see the same machine load.

    python benchmarks/bench_audit.py                         # ScreenAgent dev (../shared/data), 2 rounds
    python benchmarks/bench_audit.py --dataset DIR --rounds 3 --limit 20   # the first 20 screens of DIR
    python benchmarks/bench_audit.py --diff-scaling          # audit --diff: one screen of 300, 1,200, 4,800 rows

The diff check counts the box overlaps and instruction similarities computed on one screen of many rows,
in shapes an index finds hard (one box for every row, one instruction, panels, a cluster, tiny and huge
boxes, identical rows, the crowded screen of the tests): for 4x the rows at most 8x (linear 4x, pair by
pair 16x), or exit 1.

Prints the seconds of each pass, the medians and their ratio, and the load average.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO.parent / "shared" / "data" / "screenagent-dev"


def forget(engine: Any) -> None:
    """Empty the parse cache and the recognised-line cache: the next pass reads every screen anew."""
    from pytest_grounding.detectors.ocr_engine import SHARED_PARSES

    SHARED_PARSES.clear()
    clear = getattr(engine.rapid.text_rec, "clear", None)
    if clear is not None:
        clear()


def ocr_pass(samples: list[Any]) -> float:
    from PIL import Image

    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors.ocr import OcrDetector

    detector = OcrDetector(cache_size=4)
    started = time.perf_counter()
    images: dict[str, Any] = {}
    for sample in samples:
        key = str(sample.image)
        if key not in images:
            images.clear()  # a run keeps a few screens; one is enough here (samples are sorted by screen)
            with Image.open(key) as opened:
                images[key] = opened.convert("RGB")
        detector.predict(Query(images[key], sample.instruction))
    return time.perf_counter() - started


def audit_pass(samples: list[Any]) -> float:
    from pytest_grounding.analysis.audit import audit
    from pytest_grounding.cli.audit import read_screens

    started = time.perf_counter()
    screens, _ = read_screens(samples, ocr=True)
    audit(samples, screens)
    return time.perf_counter() - started


# -- audit --diff: the comparisons of one crowded screen against its rows ------------------------------

SHAPES = ("one-box", "one-text", "panels", "cluster", "mixed", "identical")
MOST_PER_4X = 8  # comparisons for 4x the rows: linear is 4x, pair by pair 16x


def shaped_screen(n: int, shape: str, seed: int = 0) -> tuple[list[Any], list[Any]]:
    """A screen of n rows laid out as `shape`, and its next version: the first row removed, a third of the
    rest reworded and moved a little. Shapes an index by box or by text finds hard: every row on one box,
    one instruction for every row, panels larger than the screen's median, a cluster where every box
    overlaps every other, tiny and huge boxes mixed, and every row identical."""
    import random

    from pytest_grounding.core.types import Box, Sample

    rng = random.Random(seed)

    def row(i: int, text: str, box: tuple[float, float, float, float]) -> Any:
        return Sample("d", f"r{i}", f"r{i}", Path("/x/one.png"), text, Box(*box))

    old = []
    for i in range(n):
        x, y = rng.randrange(0, 1800), rng.randrange(0, 1000)
        word = "".join(rng.choice("abcdefgh") for _ in range(8))
        box, text = {
            "one-box": ((100, 100, 140, 120), f"label {word} {i}"),
            "one-text": ((x, y, x + 30, y + 20), "click the button"),
            "panels": ((x, y, x + 600, y + 500), f"open item {i}"),
            "cluster": ((x % 60, y % 40, x % 60 + 30, y % 40 + 20), f"icon {i} {word}"),
            "mixed": ((x, y, x + (900 if i % 2 else 4), y + (700 if i % 2 else 4)), f"thing {word}"),
            "identical": ((10, 10, 50, 30), "click save"),
        }[shape]
        old.append(row(i, text, box))
    new = []
    for i, o in enumerate(old[1:]):
        b = o.bbox
        if i % 3 == 0:
            new.append(row(i, o.instruction + " now", (b.x1 + 3, b.y1, b.x2 + 3, b.y2)))
        else:
            new.append(row(i, o.instruction, (b.x1, b.y1, b.x2, b.y2)))
    return old, new


def diff_cost(n: int, shape: str) -> tuple[int, float, dict[str, int]]:
    """(box overlaps and instruction similarities computed, seconds, the diff's counts) of one screen's diff."""
    from pytest_grounding.analysis import dataset_diff

    old, new = shaped_screen(n, shape)
    counted = [0]
    iou, similarity = dataset_diff.iou, dataset_diff.similarity

    def counting_iou(*args: Any) -> float:
        counted[0] += 1
        return iou(*args)

    def counting_similarity(*args: Any) -> float:
        counted[0] += 1
        return similarity(*args)

    dataset_diff.iou, dataset_diff.similarity = counting_iou, counting_similarity  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        found = dataset_diff.diff(old, new, ids=False)
        seconds = time.perf_counter() - started
    finally:
        dataset_diff.iou, dataset_diff.similarity = iou, similarity  # type: ignore[assignment]
    return counted[0], seconds, found.counts()


def diff_scaling(sizes: list[int]) -> int:
    """The table of each shape's comparisons and seconds per size, and the ratio per 4x the rows; exit 1
    when a shape's comparisons grow more than MOST_PER_4X for 4x the rows (quadratic is 16x)."""
    print("| shape | rows | comparisons | seconds | dropped | added | comparisons / previous |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for shape in SHAPES:
        before = None
        for n in sizes:
            comparisons, seconds, counts = diff_cost(n, shape)
            growth = "" if before is None else f"{comparisons / before[1]:.2f}x for {n / before[0]:.0f}x rows"
            if before is not None:
                exponent = math.log(comparisons / before[1]) / math.log(n / before[0])
                worst = max(worst, 4**exponent)  # the growth for 4x the rows at this pace
            tally = f"{counts['dropped']} | {counts['added']}"
            print(f"| {shape} | {n} | {comparisons} | {seconds:.2f} | {tally} | {growth} |")
            before = (n, comparisons)
    print(f"\nthe most for 4x the rows: {worst:.2f}x (linear 4x, pair by pair 16x; the check: <= {MOST_PER_4X}x)")
    return 0 if worst <= MOST_PER_4X else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DEFAULT), help="a dataset, as --grounding-dataset takes it")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of passes (default 2)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N screens")
    parser.add_argument(
        "--diff-scaling",
        nargs="*",
        type=int,
        metavar="ROWS",
        help="instead: time `audit --diff` on one screen of ROWS rows (default 300 1200 4800) in several shapes",
    )
    args = parser.parse_args()
    if args.diff_scaling is not None:
        return diff_scaling(args.diff_scaling or [300, 1_200, 4_800])
    from pytest_grounding.cli.audit import load
    from pytest_grounding.detectors.ocr_engine import EngineSettings, ocr_engine

    dataset = load(args.dataset)
    samples = sorted(dataset.samples, key=lambda s: (str(s.image), s.id))
    if args.limit:
        keep = sorted({str(s.image) for s in samples})[: args.limit]
        samples = [s for s in samples if str(s.image) in keep]
    screens = len({str(s.image) for s in samples})
    engine = ocr_engine(EngineSettings())  # loaded and warmed before any pass is timed
    times: dict[str, list[float]] = {"ocr": [], "audit": []}
    for round_ in range(args.rounds):
        order = ("ocr", "audit") if round_ % 2 == 0 else ("audit", "ocr")
        for name in order:
            forget(engine)
            seconds = ocr_pass(samples) if name == "ocr" else audit_pass(samples)
            times[name].append(seconds)
            print(f"  round {round_ + 1}: {name} {seconds:.1f} s", file=sys.stderr)
    ocr_median, audit_median = statistics.median(times["ocr"]), statistics.median(times["audit"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("| dataset | samples | screens | ocr run | audit | audit / ocr |")
    print("|---|---:|---:|---:|---:|---:|")
    print(
        f"| {dataset.name} | {len(samples)} | {screens} | {ocr_median:.1f} s | {audit_median:.1f} s | "
        f"{audit_median / ocr_median:.2f}x |"
    )
    print(f"\nmedians of {args.rounds} passes each, {os.cpu_count()} cores, load average {load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
