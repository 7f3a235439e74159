"""A served run of 1,581 samples (ScreenSpot-Pro's size), then the same run with the answer cache
filled (--grounding-cache): wall times side by side, the requests the server saw, and whether the
records agree. A third run with the `center` detector (no model, no cache) is the harness's own
floor for as many items: what a cached rerun cannot go below.

The server is bench_served.py's paced loopback model (its own process: a fixed latency per answer,
64 at once); the dataset is the synthetic generator's at 1,581 samples (generated once into the
cache folder). Each run is a whole `pytest suites/` process, interpreter start-up included.

    python benchmarks/bench_cache.py                          # 1,581 samples, 0.5 s an answer, 32 in flight
    python benchmarks/bench_cache.py --limit 300 --latency 0.2 -n 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = 1581
FOREIGN_PLUGINS = ("hypothesispytest", "anyio")  # as bench_served.py: plugins a user's install does not have


def dataset(count: int) -> Path:
    from pytest_grounding.core.cache import cache_root
    from pytest_grounding.datasets.synth.generator import generate

    folder = cache_root() / f"bench-cache-synthetic-n{count}"
    if not (folder / "data" / "test" / "metadata.jsonl").is_file():
        print(f"generating {count} synthetic samples into {folder} (once)", flush=True)
        generate(folder, count, seed=0)
    return folder


def stats(url: str, path: str) -> dict:
    import httpx

    return httpx.get(url.removesuffix("/v1") + path, timeout=10, trust_env=False).json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=SAMPLES, help=f"samples (default {SAMPLES:,})")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per answer (default 0.5)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("-n", dest="workers", default=None, help="xdist workers for both runs")
    args = parser.parse_args()

    folder = dataset(args.limit)
    work = Path(tempfile.mkdtemp(prefix="bench_cache."))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    port_file = work / "url"
    serve = ["--serve", str(port_file), "--latency", str(args.latency), "--capacity", "64"]
    server = subprocess.Popen([sys.executable, str(REPO / "benchmarks" / "bench_served.py"), *serve], env=env)
    try:
        for _ in range(400):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        url = port_file.read_text()
        spec = f"openai:base_url={url},model=paced,retries=0,concurrency={args.concurrency}"
        suite = [sys.executable, "-m", "pytest", "suites/", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
        suite += [arg for name in FOREIGN_PLUGINS for arg in ("-p", f"no:{name}")]
        suite += [f"--dataset=pointerbench:{folder}", "--detector", spec, "--grounding-misses", "xfail"]
        suite += ["--grounding-cache", str(work / "answers")] + (["-n", args.workers] if args.workers else [])
        print(
            f"{args.limit:,} samples, server {args.latency:g} s an answer, concurrency {args.concurrency}, "
            f"workers {args.workers or 'none'}; load average {os.getloadavg()[0]:.1f} (2 cores here)"
        )
        rows = []
        for name in ("first run (cache empty)", "cached rerun"):
            stats(url, "/reset")
            report = work / f"{len(rows)}.json"
            started = time.perf_counter()
            done = subprocess.run(
                [*suite, "--grounding-json", str(report)],
                capture_output=True,
                text=True,
                env=env,
                cwd=REPO,
                timeout=3600,
            )
            wall = time.perf_counter() - started
            if not report.is_file():
                sys.exit(f"{name}: no report\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
            document = json.loads(report.read_text())
            cache = next(iter(document["summary"].values())).get("cache") or {}
            rows.append((name, wall, stats(url, "/stats")["chats"], cache, document["samples"]))
        # the harness's own floor: the same items with a detector that answers at once (no model, no cache)
        floor = [
            a.replace(spec, "center") for a in suite if "--grounding-cache" not in a and a != str(work / "answers")
        ]
        started = time.perf_counter()
        subprocess.run(floor, capture_output=True, text=True, env=env, cwd=REPO, timeout=3600)
        rows.append(("floor: center, no model", time.perf_counter() - started, 0, {}, []))
        print(f"{'':26} {'wall s':>8} {'requests':>9} {'hits':>6} {'stored':>7}")
        for name, wall, chats, cache, _ in rows:
            print(f"{name:26} {wall:8.1f} {chats:9,} {cache.get('hits', 0):6,} {cache.get('stored', 0):7,}")
        keep = ("uid", "outcome", "point", "raw")
        same = [{k: r.get(k) for k in keep} for r in rows[0][4]] == [{k: r.get(k) for k in keep} for r in rows[1][4]]
        print(f"records identical (uid, outcome, point, raw answer): {same}; speed-up {rows[0][1] / rows[1][1]:.1f}x")
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
