"""Figures for the `omniparser` detector on the element-at-click task (and its parse latency),
printed as Markdown: for each sample, the detector gets the screenshot and the click point (the
dataset's `point`, else the box centre; never the box) and answers through the retry driver of
`pytest_grounding.evaluate.locate`. Rows: omniparser with the OCR merge, icons only (ocr=false), and the
`center` floor (a 32 px box around the point).

    python benchmarks/bench_omniparser.py                                  # ScreenAgent dev, 24 samples
    python benchmarks/bench_omniparser.py --dataset PATH --limit 0         # a whole pointerbench set
    python benchmarks/bench_omniparser.py --model PATH --threshold 0.5

Timings depend on what else the machine runs: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pytest_grounding.analysis import metrics  # noqa: E402
from pytest_grounding.datasets.pointerbench import load  # noqa: E402
from pytest_grounding.evaluate.runner import evaluate_locate  # noqa: E402

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "screenagent-dev"
DEFAULT_MODEL = REPO.parent / "shared" / "models" / "omniparser-v2-icon-detect-640.onnx"


def run(detector: Any, samples: Sequence[Any], threshold: float) -> dict[str, Any]:
    """The plugin's own path (runner.evaluate_locate, metrics.summarize): the same figures as
    `pytest suites/ --grounding-task locate`, without pytest around them."""
    records: list[dict[str, Any]] = [
        evaluate_locate(sample, detector, detector_name="bench", threshold=threshold).record for sample in samples
    ]
    return next(iter(metrics.summarize(records).values()))


def row(label: str, block: dict[str, Any]) -> str:
    figures, lat = block["locate"], block["latency_ms"]
    breakdown = ", ".join(f"{k} {v['samples']} ({v['hits']} hits)" for k, v in figures["by_transform"].items())
    iou = "-" if block["mean_iou"] is None else f"{block['mean_iou']:.3f}"
    return (
        f"| {label} | {block['scored']} | {100 * figures['detection_rate']:.1f}% | {100 * block['accuracy']:.1f}% "
        f"| {iou} | {100 * figures['false_positive_rate']:.1f}% | {figures['mean_attempts']:.2f} "
        f"| {lat['p50'] / 1000:.2f} / {lat['p95'] / 1000:.2f} | {block['errors']} | {breakdown} |"
    )


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--limit", type=int, default=24, help="first N samples (0: all)")
    parser.add_argument("--threshold", type=float, default=0.5, help="IoU for a hit")
    parser.add_argument("--only", choices=("ocr", "icons", "floor"), action="append")
    args = parser.parse_args(list(argv) or None)

    from pytest_grounding.detectors.floors import CenterDetector
    from pytest_grounding.detectors.omniparser import OmniParserDetector

    samples = sorted(load(args.dataset).samples, key=lambda s: s.uid)
    if args.limit:
        samples = samples[: args.limit]
    makers = {
        "ocr": ("omniparser (icons + OCR merge)", lambda: OmniParserDetector(model=str(args.model), semantic=False)),
        "icons": ("omniparser:ocr=false (icons only)", lambda: OmniParserDetector(model=str(args.model), ocr=False)),
        "floor": ("center floor (32 px box)", CenterDetector),
    }
    print(
        f"dataset {args.dataset} ({len(samples)} samples), IoU threshold {args.threshold}, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n"
    )
    print(
        "| detector | scored | detection | hit@IoU | mean IoU (found) | FP rate | attempts"
        " | latency s p50 / p95 | errors | by transform |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in args.only or list(makers):
        label, make = makers[key]
        detector = make()
        print(row(label, run(detector, samples, args.threshold)), flush=True)
        close = getattr(detector, "close", None)
        if close:
            close()


if __name__ == "__main__":
    main()
