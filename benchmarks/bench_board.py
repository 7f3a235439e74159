"""The board at ScreenSpot-Pro's scale: 1,581 samples x 10 models in one benchmark column.

Synthetic records (each model's hits drawn at its own accuracy, 20% to 74%, on 300 screens) go
through analysis/board.build (tiers: 45 pairs, McNemar and the clustered difference each) and the
HTML board is written; where chromium is installed, the page is opened headless, filtered to the
samples every model misses, and the rows its script drew are counted. Printed: build time, page
size, the tiers, the browser's time and what it drew.

    python benchmarks/bench_board.py
    python benchmarks/bench_board.py --samples 300 --models 4
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    from pytest_grounding.analysis import board as board_mod
    from pytest_grounding.render.html.board import write_board

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1581)
    parser.add_argument("--models", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(1)
    column = board_mod.Benchmark("screenspot-pro", "screenspot-pro", "synthetic")
    found = []
    for m in range(args.models):
        accuracy = 0.2 + 0.06 * m
        records = tuple(
            {
                "detector": f"m{m}",
                "dataset": column.name,
                "uid": f"u{i}",
                "id": f"pro_{i}",
                "instruction": f"click item {i} in the toolbar",
                "image": f"s{i % 300}.png",
                "outcome": "hit" if rng.random() < accuracy else "miss",
                "fingerprint": "synthetic",
            }
            for i in range(args.samples)
        )
        run = board_mod.Run(f"m{m}.json", None, accuracy, None, args.samples, "accuracy", records=records)
        found.append((board_mod.Config(f"m{m}"), column, run))
    started = time.perf_counter()
    board = board_mod.build(found, reports=args.models)
    built = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "board.html"
        size = write_board(board, page)
        tiers = [r.tier for r in board.tiers[column].ranked]
        print(f"{args.samples} samples x {args.models} models: built in {built:.2f} s, page {size / 1e3:.0f} kB")
        print(f"tiers, best first: {tiers}; every model misses {board.matrices[column].all_miss()} samples")
        browser = shutil.which("chromium")
        if browser is None:
            print("no chromium: the page was not opened")
            return
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "--dump-dom", page.as_uri() + "#matrix=all-miss"], capture_output=True, text=True, timeout=120
        )
        shown = re.search(r'<b class="count">(\d+)</b>', done.stdout)
        print(
            f"chromium: {time.perf_counter() - started:.1f} s to load and run the script, "
            f"{done.stdout.count('<tr data-id=')} rows drawn, count {shown.group(1) if shown else '?'}"
        )


if __name__ == "__main__":
    main()
