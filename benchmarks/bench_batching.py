"""In-process batching: throughput of `qwenvl` at batch 1, 8 and 16 (`batch=N`, `predict_batch`),
printed as Markdown for docs/detectors-vlm.md.

By default on the tiny random checkpoint that `pytest_grounding.testing.tiny` builds (no download), on
whatever device torch finds (CUDA when there is one, else CPU). Its weights repeat one token and never
write the end token, so every row writes exactly `--new-tokens` tokens: batch sizes are compared on
equal work. `--model DIR` times a real checkpoint instead (its answers then end where the model
stops). Each batch size runs the same queries (screens of mixed sizes, as a real set has them) after
one warm-up call, and its answers are checked against batch 1's.

    python benchmarks/bench_batching.py                      # tiny Qwen2.5-VL, 32 queries, batch 1/8/16
    python benchmarks/bench_batching.py --quick              # 16 queries, smaller screens
    python benchmarks/bench_batching.py --family qwen3_vl --batches 1,4,8,16,32
    python benchmarks/bench_batching.py --model ~/models/UI-TARS-1.5-7B --preset uitars-1.5-point

Timings depend on what else the machine runs: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# A preset with a short prompt per family: the time goes to the image and the answer, as in grounding.
PRESETS = {"qwen2_5_vl": "gta1", "qwen2_vl": "os-atlas-7b", "qwen3_vl": "qwen3-vl"}
# Screens of mixed sizes and aspect ratios (desktop, laptop, portrait phone, ultrawide), scaled by --scale.
SCREENS = [(1024, 768), (1280, 800), (540, 1170), (1600, 450), (800, 600)]


def queries(count: int, scale: float, seed: int = 0) -> list[Any]:
    from PIL import Image, ImageDraw

    from pytest_grounding.core.types import Query

    rng = random.Random(seed)
    made = []
    for index in range(count):
        width, height = SCREENS[index % len(SCREENS)]
        size = (max(56, int(width * scale)), max(56, int(height * scale)))
        image = Image.new("RGB", size, (245, 245, 245))
        draw = ImageDraw.Draw(image)
        for _ in range(12):  # some widgets, so screens differ
            x, y = rng.randrange(size[0] - 40), rng.randrange(size[1] - 20)
            draw.rectangle([x, y, x + 40, y + 20], fill=tuple(rng.randrange(256) for _ in range(3)))
        made.append(Query(image, f"click the button number {index}"))
    return made


def timed(detector: Any, asked: list[Any], repeat: int) -> tuple[float, float, list[Any]]:
    """The best of `repeat` runs: wall seconds, this process's CPU seconds, the predictions."""
    detector.predict_batch(asked[: detector.batch_size])  # warm-up: kernels, allocator, caches
    best: tuple[float, float, list[Any]] | None = None
    for _ in range(max(1, repeat)):
        if detector.device.startswith("cuda"):
            detector._torch.cuda.synchronize()
        wall, cpu = time.perf_counter(), time.process_time()
        predictions = detector.predict_batch(asked)
        if detector.device.startswith("cuda"):
            detector._torch.cuda.synchronize()
        run = (time.perf_counter() - wall, time.process_time() - cpu, predictions)
        best = run if best is None or run[0] < best[0] else best
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", default="qwen2_5_vl", choices=sorted(PRESETS))
    parser.add_argument("--model", help="a checkpoint folder (default: the tiny random one, built here)")
    parser.add_argument("--preset", help="default: a short-prompt preset of the family")
    parser.add_argument("--batches", default="1,8,16")
    parser.add_argument("--queries", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--scale", type=float, default=0.5, help="screen sizes x this (1 = full size)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--repeat", type=int, default=1, help="runs per batch size, the fastest kept")
    parser.add_argument("--quick", action="store_true", help="16 queries, screens x 0.35")
    args = parser.parse_args(argv)
    if args.quick:
        args.queries, args.scale = 16, 0.35
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    import transformers

    from pytest_grounding.detectors.qwenvl import QwenVLDetector

    batches = [int(b) for b in args.batches.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.model
        if folder is None:
            from pytest_grounding.testing.tiny import build_tiny_qwen25vl

            folder = str(build_tiny_qwen25vl(Path(scratch) / "tiny", family=args.family))
        preset = args.preset or PRESETS[args.family]
        asked = queries(args.queries, args.scale)
        rows = []
        reference: list[Any] | None = None
        for size in batches:
            detector = QwenVLDetector(
                model=folder,
                preset=preset,
                device=args.device,
                dtype=args.dtype,
                batch=size,
                max_new_tokens=args.new_tokens,
            )
            seconds, cpu, predictions = timed(detector, asked, args.repeat)
            reference = reference if reference is not None else predictions
            same = sum(p == r for p, r in zip(predictions, reference, strict=True))
            tokens = sum(int(p.meta["new_tokens"]) for p in predictions)
            rows.append((size, seconds, cpu, tokens, same))
            where = f"{detector.device} {detector.dtype}"
            detector.close()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    model = Path(args.model).name if args.model else f"tiny random {args.family} (2 layers, hidden 32)"
    print(f"## In-process batching: {model}, preset {preset}, on {where}\n")
    print(
        f"{args.queries} queries on screens of {len(SCREENS)} sizes x {args.scale:g} "
        f"(smart_resize'd per preset), {args.new_tokens} new tokens max; torch {torch.__version__}, "
        f"transformers {transformers.__version__}, {torch.get_num_threads()} CPU threads, load average {load:.1f}; "
        f"best of {max(1, args.repeat)}\n"
    )
    print("| batch | wall s | CPU s | samples/s | new tokens/s | vs batch 1 (wall) | answers equal to batch 1 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    base = rows[0][1]
    for size, seconds, cpu, tokens, same in rows:
        print(
            f"| {size} | {seconds:.2f} | {cpu:.2f} | {args.queries / seconds:.2f} | {tokens / seconds:.1f} | "
            f"{base / seconds:.2f}x | {same}/{args.queries} |"
        )
    return 0 if all(row[-1] == args.queries for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
