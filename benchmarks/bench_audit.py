"""What an `audit` costs next to an `ocr` run over the same screens (the target: at most 1.5x).

In one process, with one warmed OCR engine: the `ocr` detector answering every sample of the
dataset (each screen decoded once, as a run's screen reader does), and the audit (each screen
decoded once, read once by the same engine, hashed, then every check). Before each pass the
parse cache and the engine's line cache are emptied, so both read every screen from scratch;
the passes alternate (ocr, audit, audit, ocr, ...) so both see the same machine load.

    python benchmarks/bench_audit.py                         # ScreenAgent dev (../shared/data), 2 rounds
    python benchmarks/bench_audit.py --dataset DIR --rounds 3 --limit 20   # the first 20 screens of DIR

Prints the seconds of each pass, the medians and their ratio, and the load average.
"""

from __future__ import annotations

import argparse
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DEFAULT), help="a dataset, as --grounding-dataset takes it")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of passes (default 2)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N screens")
    args = parser.parse_args()
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
