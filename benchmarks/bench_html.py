"""How long the HTML report takes to make and how large it is, printed as Markdown.

The page is made from a JSON report, as `--grounding-html` does at the end of a run and
`python -m pytest_grounding report` does later. Without `--report`, a report is made first by a real
run of the `center` floor on the embedded default (300 samples; every one a miss, so every sample
gets a gallery entry: more than any real detector).

    python benchmarks/bench_html.py                          # center on the embedded default
    python benchmarks/bench_html.py --report out/report.json --repeat 5

Timings depend on what else the machine runs: the load average and the CPU time are printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def make_report(folder: Path) -> Path:
    path = folder / "report.json"
    command = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-q", "-p", "no:cacheprovider"]
    command += ["--detector", "center", "--grounding-json", str(path), "--grounding-show-misses", "0"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    subprocess.run(command, cwd=folder, env=env, stdout=subprocess.DEVNULL, check=False)
    if not path.exists():
        raise SystemExit(f"the run wrote no report: {' '.join(command)}")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", type=Path, help="a JSON report (default: make one with center)")
    parser.add_argument("--repeat", type=int, default=3, help="pages made, each timed (default 3)")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from pytest_grounding.render.html import write_html

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        report = args.report or make_report(folder)
        document = json.loads(report.read_text(encoding="utf-8"))
        walls, cpus = [], []
        for _ in range(max(1, args.repeat)):
            wall, cpu = time.perf_counter(), time.process_time()
            written = write_html(document, folder / "page.html", base=report.resolve().parent)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"HTML report of {report} ({len(document.get('samples') or [])} records), {os.cpu_count()} CPUs, "
          f"load average {load:.1f}")  # fmt: skip
    print()
    print("| gallery entries | screens | page size | time p50 (min-max) | CPU time p50 |")
    print("|---|---|---|---|---|")
    print(
        f"| {written.entries} | {written.screens} | {written.bytes / 1e6:.1f} MB | "
        f"{statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f}) | {statistics.median(cpus):.2f} s |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
