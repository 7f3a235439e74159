"""What the 95% intervals cost: the summary of N records (default 100,000) with and without them,
and the width of the interval against an independent cluster bootstrap, printed as Markdown.

The records are made here (no detector, no images): N samples on N / 5 screens (1-9 samples each),
a screen's samples hit or miss together with some noise, over 40 apps, 6 categories, 3 platforms
and the size buckets, so every slice of the summary has many values.

    python benchmarks/bench_intervals.py                   # 100,000 samples
    python benchmarks/bench_intervals.py --samples 300 --repeat 5

Timings depend on what else the machine runs: the load average and the CPU time are printed with them.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_grounding.analysis import intervals, metrics
from pytest_grounding.core.record import SIZE_BUCKETS


def make_records(samples: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    records: list[dict[str, object]] = []
    screen = 0
    while len(records) < samples:
        size = rng.randint(1, 9)
        rate = 0.85 if rng.random() < 0.4 else 0.15
        app = rng.randrange(40)
        for k in range(min(size, samples - len(records))):
            records.append(
                {
                    "detector": "d",
                    "dataset": "set",
                    "uid": f"{screen}-{k}",
                    "id": f"{screen}-{k}",
                    "image": f"screens/{screen}.png",
                    "outcome": "hit" if rng.random() < rate else "miss",
                    "element_type": rng.choice(("text", "icon")),
                    "app": f"app{app}",
                    "app_category": f"category{app % 6}",
                    "platform": ("windows", "macos", "linux")[app % 3],
                    "size": rng.choice(SIZE_BUCKETS),
                    "latency_ms": rng.uniform(10, 100),
                    "iou": None,
                }
            )
        screen += 1
    return records


def timed(records: list[dict[str, object]], repeat: int) -> tuple[float, float]:
    """The best wall and CPU seconds of `repeat` summaries."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        metrics.summarize(records)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def bootstrap_width(records: list[dict[str, object]], resamples: int, seed: int) -> float:
    import numpy as np

    per_screen: dict[object, list[int]] = {}
    for record in records:
        slot = per_screen.setdefault(record["image"], [0, 0])
        slot[0] += record["outcome"] == "hit"
        slot[1] += 1
    hits = np.array([v[0] for v in per_screen.values()], float)
    sizes = np.array([v[1] for v in per_screen.values()], float)
    rng = np.random.default_rng(seed)
    shares = np.empty(resamples)
    for index in range(resamples):  # one resample at a time: 20,000 screens x 1,000 in one array is too much
        picks = rng.integers(0, len(hits), len(hits))
        shares[index] = hits[picks].sum() / sizes[picks].sum()
    low, high = np.quantile(shares, [0.025, 0.975])
    return float(high - low)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000, help="of the independent bootstrap")
    args = parser.parse_args()
    records = make_records(args.samples, args.seed)
    with_wall, with_cpu = timed(records, args.repeat)
    with (
        mock.patch.object(metrics, "with_intervals", lambda rows, found: rows),
        mock.patch.object(intervals.Outcomes, "of", lambda records: SimpleNamespace(records=())),
        mock.patch.object(intervals, "one_each", lambda outcomes, values: None),
        mock.patch.object(intervals, "by_group", lambda outcomes, found: {}),
        mock.patch.object(intervals, "proportion", lambda outcomes: None),
        mock.patch.object(intervals, "mean_of_groups", lambda outcomes, found: None),
    ):
        bare_wall, bare_cpu = timed(records, args.repeat)
    found = intervals.proportion(intervals.Outcomes.of(records))
    assert found is not None
    naive = intervals.wilson(found.estimate, found.samples)
    width = bootstrap_width(records, args.resamples, args.seed)
    screens = len({r["image"] for r in records})
    print(f"## Intervals on {len(records):,} samples, {screens:,} screens (load average {os.getloadavg()[0]:.2f})")
    print()
    print(f"| summary | wall s (best of {args.repeat}) | CPU s |")
    print("|---|---:|---:|")
    print(f"| without intervals | {bare_wall:.3f} | {bare_cpu:.3f} |")
    print(f"| with every interval | {with_wall:.3f} | {with_cpu:.3f} |")
    print(f"| the intervals' share | {with_wall - bare_wall:+.3f} | {with_cpu - bare_cpu:+.3f} |")
    print()
    print("| interval of the accuracy | low | high | width (points) |")
    print("|---|---:|---:|---:|")
    ours = 100 * (found.high - found.low)
    print(f"| cluster-robust Wilson (this harness) | {found.low:.4f} | {found.high:.4f} | {ours:.2f} |")
    plain = 100 * (naive[1] - naive[0])
    print(f"| naive Wilson (samples independent) | {naive[0]:.4f} | {naive[1]:.4f} | {plain:.2f} |")
    print(f"| cluster bootstrap ({args.resamples} resamples of screens) | | | {100 * width:.2f} |")
    print()
    print(f"accuracy {found.estimate:.4f}, effective sample size {found.effective:,.0f} of {found.samples:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
