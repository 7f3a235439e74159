"""agent=crop against a scripted loopback model: do episodes keep the server busy?

The scripted model of the tests (tests/scripted_agent.py) answers every request after a fixed pause
(0.2 s by default) with the next step of a nested script: a crop, a crop of that crop, then the
click (three turns a sample). On screens of 1280x720, each sample's episode runs through the suite
(`pytest suites/... --detector openai:...,agent=crop,concurrency=N`), serially and with `-n 2`
(N/2 each), and beside them a single shot of the same samples (one request each, the same pause:
start-up and the per-sample cost of the suite). Printed per run: wall time, requests, the most in
flight the server saw (never above N), requests per second, and the share of the ideal (N in flight
all the time: requests x pause / N); the turns of a sample are sequential, so N samples in flight
keep N requests in flight.

    python benchmarks/bench_agent.py                    # 48 samples, N=8 (about half a minute)
    python benchmarks/bench_agent.py --samples 96 --concurrency 16 --pause 0.1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

SUITE = (
    "def test_grounding(grounding_sample, grounding_detector, grounding_check):\n"
    "    grounding_check(grounding_sample, grounding_detector)\n"
)


def write_dataset(root: Path, samples: int, script: str, size: tuple[int, int] = (1280, 720)) -> None:
    from scripted_agent import pattern_screen

    (root / "annotations").mkdir(parents=True)
    (root / "images" / "app").mkdir(parents=True)
    screens = max(1, samples // 4)
    for s in range(screens):
        pattern_screen(size).save(root / "images" / "app" / f"s{s}.png")
    rows = []
    for i in range(samples):
        x, y = 40 + (97 * i) % (size[0] - 80), 40 + (61 * i) % (size[1] - 80)
        rows.append(
            {
                "img_filename": f"app/s{i % screens}.png",
                "bbox": [x - 1, y - 1, x + 1, y + 1],
                "instruction": f"target {x} {y} screen {size[0]} {size[1]} script {script}",
                "id": f"b{i:04d}",
                "application": "app",
                "platform": "linux",
                "img_size": list(size),
                "ui_type": "icon",
                "group": "Dev",
            }
        )
    (root / "annotations" / "app.json").write_text(json.dumps(rows))


def run(folder: Path, url: str, concurrency: int, workers: int, agent: bool = True) -> float:
    spec = (
        f"openai:base_url={url},model=scripted,probe=false,preprocess=none,transform=abs,extractors=paren,"
        f"concurrency={max(1, concurrency // max(1, workers))}" + (",agent=crop" if agent else "")
    )
    args = [sys.executable, "-m", "pytest", "test_suite.py", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    args += [
        f"--dataset={folder / ('set' if agent else 'single')}",
        "--detector",
        spec,
        "--grounding-json",
        str(folder / "r.json"),
    ]
    if workers:
        args += ["-n", str(workers)]
    started = time.monotonic()
    done = subprocess.run(args, cwd=folder, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    report = json.loads((folder / "r.json").read_text()) if (folder / "r.json").exists() else {"samples": []}
    hits = sum(r["outcome"] == "hit" for r in report["samples"])
    if hits != len(report["samples"]) or not report["samples"]:
        print(done.stdout[-2000:], done.stderr[-2000:])
        raise SystemExit("the scripted episodes did not all hit: see above")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--pause", type=float, default=0.2, help="seconds each answer takes")
    options = parser.parse_args()
    from scripted_agent import ScriptedAgent

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_suite.py").write_text(SUITE)
        write_dataset(folder / "set", options.samples, "nested")
        write_dataset(folder / "single", options.samples, "confirm")  # a click at once: the single-shot baseline
        for workers, agent in ((0, False), (0, True), (2, True)):
            model = ScriptedAgent(pause=options.pause, check=False)
            try:
                wall = run(folder, model.url, options.concurrency, workers, agent)
            finally:
                model.close()
            ideal = model.chats * options.pause / options.concurrency
            where = ("agent=crop " if agent else "one shot   ") + ("serially" if not workers else f"-n {workers}")
            print(
                f"{where:9} {options.samples} samples, {model.chats} requests in {wall:.1f} s "
                f"({model.chats / wall:.1f}/s), most in flight {model.most_in_flight} (N={options.concurrency}), "
                f"ideal {ideal:.1f} s of answering: {ideal / wall:.0%} of the wall time"
            )
            if agent and model.problems:
                print("  problems:", model.problems[:3])


if __name__ == "__main__":
    main()
