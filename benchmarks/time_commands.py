"""Time the commands the README and the docs quote a duration for, and write what was measured into
docs/_figures.json: the one source of those durations (docs/_hooks/grounding_docs.py renders them
into docs/figures.md; tests/test_docs_figures.py keeps every other page from quoting its own).

    python benchmarks/time_commands.py smoke              # time one entry, print it
    python benchmarks/time_commands.py smoke --write      # ... and record it in docs/_figures.json
    python docs/_hooks/grounding_docs.py                  # ... and its table in docs/figures.md

Each entry keeps its command; the run records the seconds, the machine (cores, GPU or not), the load
average before it started and the date, so a figure measured on a busy machine says so. An entry with
`collect` (a pytest command line) also counts the tests it selects (`--collect-only -q`) and writes
the count into its `what` (`what_template`, "{tests}" standing for the count); `--count-only` counts
without timing (a test tier's count stays current without running the tier)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIGURES = REPO / "docs" / "_figures.json"


def machine() -> str:
    gpu = "a GPU" if os.path.exists("/dev/nvidia0") else "no GPU"
    return f"{os.cpu_count()} cores, {gpu}"


def load() -> str:
    one, five, _ = os.getloadavg()
    state = "idle" if five < 1.5 else "busy"
    return f"{state} (load average {one:.1f} over 1 min, {five:.1f} over 5 min, before the run)"


def timed(command: str) -> float:
    """Wall seconds of the command run from the repository root (its own output discarded)."""
    started = time.perf_counter()
    done = subprocess.run(shlex.split(command), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: gates or misses, still a whole run
        raise SystemExit(f"{command!r} exited {done.returncode}: not a figure to publish")
    return took


def collected(command: str) -> int:
    """How many tests a pytest command line selects (its `--collect-only -q` summary line)."""
    done = subprocess.run(
        [*shlex.split(command), "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    last = (done.stdout.strip().splitlines() or [""])[-1]  # "1776/2302 tests collected (526 deselected) in 24.42s"
    words = last.split()
    if done.returncode != 0 or "collected" not in words:
        raise SystemExit(f"{command!r} --collect-only exited {done.returncode}: {last!r}")
    return int(words[0].split("/")[0])


def count(entry: dict) -> None:
    tests = collected(entry["collect"])
    entry["tests"] = tests
    entry["what"] = entry["what_template"].replace("{tests}", f"{tests:,}")
    print(f"{entry['key']}: {entry['collect']}: {tests:,} tests")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    document = json.loads(FIGURES.read_text(encoding="utf-8"))
    keys = [entry["key"] for entry in document["timings"]]
    parser.add_argument("keys", nargs="+", choices=keys, help="the entries to time")
    parser.add_argument("--write", action="store_true", help="record the measurements in docs/_figures.json")
    parser.add_argument("--count-only", action="store_true", help="count the tests of `collect` entries, time nothing")
    args = parser.parse_args(argv)
    for entry in document["timings"]:
        if entry["key"] not in args.keys:
            continue
        if "collect" in entry:
            count(entry)
        if args.count_only:
            continue
        before = load()
        seconds = timed(entry["command"])
        entry.update(
            seconds=round(seconds),
            machine=machine(),
            load=before,
            date=datetime.date.today().isoformat(),
            source="benchmarks/time_commands.py (wall time of the whole command)",
        )
        print(f"{entry['key']}: {entry['command']}: {seconds:.0f} s on {entry['machine']}, {before}")
    if args.write:
        FIGURES.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {FIGURES.relative_to(REPO)}; then `python docs/_hooks/grounding_docs.py` writes its table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
