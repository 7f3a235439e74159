"""The running page's cost (render/live.py): the same served run with and without it, side by side.

A loopback OpenAI-compatible stub (tests/helpers.LoopbackServer, in this process's threads) answers
every request at once with a fixed point; a Pointerbench-layout set of N samples (1,000 by default)
on small drawn screens is written to a temporary folder. The suite runs against it twice per
round, in its own process, both times with --grounding-html and --grounding-json: once as shipped
(the page written at the start and every 3 s), once with the running page switched off (a conftest
that makes ControllerSession.start_live do nothing). Printed: each round's wall times and the
share the running page added; the target is under 2% of the run's wall time. On a loaded machine
the two runs' difference is mostly noise, so the page's own work is also timed directly: one write
of the page and its sidecar, and one record counted, times the writes and records of a run of that
wall time (a write every 3 s), as a share of it.

    python benchmarks/bench_live.py                 # 1,000 samples, 3 rounds
    python benchmarks/bench_live.py --samples 300 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

CONFTEST = """
import os

if os.environ.get("BENCH_LIVE") == "off":
    from pytest_grounding.plugin.controller.controller_session import ControllerSession

    ControllerSession.start_live = lambda self, total: None
"""


def dataset(root: Path, samples: int, screens: int = 50) -> Path:
    from PIL import Image

    folder = root / "bench" / "data" / "test"
    folder.mkdir(parents=True)
    for s in range(screens):
        Image.new("RGB", (320, 200), (40 + s, 80, 120)).save(folder / f"screen{s}.png")
    rows = [
        {
            "file_name": f"screen{i % screens}.png",
            "id": f"t{i:04d}",
            "instruction": f"target {i}",
            "bbox": [10 + i % 200, 10 + i % 120, 40 + i % 200, 40 + i % 120],
            "image_size": [320, 200],
        }
        for i in range(samples)
    ]
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "bench"


def run(home: Path, data: Path, url: str, live: bool, out: Path) -> float:
    spec = f"openai:base_url={url},model=m,concurrency=8"
    command = [sys.executable, "-m", "pytest", "-q", f"--dataset={data}", "--detector", spec]
    command += ["--grounding-html", str(out / "page.html"), "--grounding-json", str(out / "report.json")]
    env = {**os.environ, "BENCH_LIVE": "on" if live else "off", "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(done.stdout[-3000:] + done.stderr[-3000:])
    return wall


def direct_share(samples: int, wall: float, root: Path) -> tuple[float, float, float]:
    """(ms per write, us per record, the share of `wall` they take in a run of `samples`)."""
    from pytest_grounding.render.live import EVERY_S, LivePage

    page = LivePage(root / "direct.html", every=float("inf"))
    page.start(samples)
    started = time.perf_counter()
    for _ in range(samples):
        page.add({"outcome": "hit"})
    per_record = (time.perf_counter() - started) / samples
    started = time.perf_counter()
    for _ in range(50):
        page.write()
    per_write = (time.perf_counter() - started) / 50
    writes = 1 + wall / EVERY_S
    return per_write * 1e3, per_record * 1e6, (writes * per_write + samples * per_record) / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from helpers import SUITE, LoopbackServer

    def answer(handler: object) -> tuple[int, dict[str, object]]:
        return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "(80,60)"}}]}

    server = LoopbackServer(answer)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = dataset(root, args.samples)
        home = root / "project"
        home.mkdir()
        (home / "conftest.py").write_text(CONFTEST)
        (home / "test_suite.py").write_text(SUITE.read_text())
        (home / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
        print(f"{args.samples} samples against a loopback stub; load {os.getloadavg()[0]:.2f}")
        print(f"{'round':>5}  {'without (s)':>11}  {'with (s)':>9}  {'added':>7}")
        shares = []
        for k in range(args.rounds):
            out = root / f"out{k}"
            out.mkdir()
            without = run(home, data, server.url, False, out)
            with_live = run(home, data, server.url, True, out)
            shares.append((with_live - without) / without)
            print(f"{k + 1:>5}  {without:>11.2f}  {with_live:>9.2f}  {shares[-1] * 100:>+6.1f}%")
        shares.sort()
        print(f"median added share: {shares[len(shares) // 2] * 100:+.1f}% (target: under 2%)")
        write_ms, record_us, share = direct_share(args.samples, without, root)
        print(
            f"timed directly: {write_ms:.2f} ms per write, {record_us:.1f} us per record: "
            f"{share * 100:.3f}% of a {without:.0f} s run"
        )
    server.close()


if __name__ == "__main__":
    main()
