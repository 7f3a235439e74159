"""`python -m pytest_grounding` (or `pytest-grounding`): generate a synthetic benchmark, check a dataset."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    from .synth import DEFAULT_COUNT, DEFAULT_SEED

    parser = argparse.ArgumentParser(prog="pytest-grounding", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    generate = commands.add_parser(
        "generate",
        help="write a synthetic professional-app benchmark (Pointerbench-Pro layout)",
        description="Write DIR/data/test/metadata.jsonl and the screens' PNGs. The same --count and --seed give "
        "byte-identical files.",
    )
    generate.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    generate.add_argument(
        "--count",
        type=int,
        default=DEFAULT_COUNT,
        metavar="N",
        help=f"number of samples (targets), 3-7 per screen (default {DEFAULT_COUNT})",
    )
    generate.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="S", help=f"default {DEFAULT_SEED}")
    generate.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="W",
        help="processes drawing screens (default: one per CPU core for more than a few screens)",
    )
    validate = commands.add_parser(
        "validate",
        help="check a dataset for faults that make scores wrong",
        description="Boxes inside the image and non-degenerate, not implausibly large, ids unique, image files present "
        "and decodable, declared image size equal to the real one, recorded point inside its box, "
        "duplicate instructions on one image. Exit 0: clean or warnings only; 1: errors; 2: not loadable.",
    )
    validate.add_argument("path", metavar="PATH", help="dataset folder or file, or FORMAT:PATH")
    validate.add_argument(
        "--max-per-kind",
        type=int,
        default=None,
        metavar="N",
        help="print at most N lines per kind of problem (the counts stay complete)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "generate":
        return run_generate(args.out, args.count, args.seed, args.workers)
    from .validate import validate_path

    return validate_path(args.path, max_per_kind=args.max_per_kind)


def run_generate(out: Path, count: int, seed: int, workers: int | None) -> int:
    from .synth import generate, screens_for

    if count < 1:
        print("error: --count must be at least 1", file=sys.stderr)
        return 2
    start = time.perf_counter()
    generate(out, count, seed, workers=workers)
    elapsed = time.perf_counter() - start
    screens = len(screens_for(count, seed))
    print(f"wrote {count} samples on {screens} screens to {out / 'data' / 'test'} in {elapsed:.1f} s (seed {seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
