"""The suite against a served model, next to a bare client: does the harness keep the server busy?

A loopback OpenAI-compatible server (its own process) answers every chat request after a fixed
latency (0.5 s) and holds up to 64 at once (more wait, as vLLM's scheduler queues them). Against
it, on the default synthetic set (300 samples on 64 screens):

- a bare client: a thread pool at concurrency N that reads each screen, resizes and encodes it once
  (the UI-TARS preset's smart_resize, PNG data URL), posts every sample's request with httpx and
  parses the answer: the physical limit here;
- the suite serially: `pytest suites/ --detector openai:...,concurrency=N`;
- the suite under `-n 2`, each worker at N/2 (the same N in flight in all).

Printed: wall times (whole processes, interpreter start-up included for all three), the suite's
ratio to the bare client, and the most requests the server saw in flight during each.

    python benchmarks/bench_served.py                       # N=32, 300 samples (a few minutes)
    python benchmarks/bench_served.py --concurrency 16 --limit 100
    python benchmarks/bench_served.py --cold    # every process compiles its modules (no bytecode cache)

When a run takes more than a second from the last answer to its exit, the phases of each of its
processes and the stacks of those still alive are printed (`phase_probe.py`, loaded in every run);
`--phases` prints every run's (configure, the checks before the run, collection, the loop, the first
item, each process's end) with the moment the first dataset sample's request reached the server
(`first_sample_s`; the frame check's calibration requests are not samples). `--suite-args` adds
arguments to both suite runs and `--only serial|xdist` runs the bare client and one of them:

    python benchmarks/bench_served.py --latency 1 --phases --only serial --suite-args=--grounding-frame-check=off

Each suite run gets a fresh pytest temp root (PYTEST_DEBUG_TEMPROOT): under xdist the controller
makes pytest's numbered temp folder, and at its exit pytest deletes the older ones it finds there,
whatever made them; after this project's test suite (gigabytes of small files) that took 1 to 7 s,
a cost of what ran before, not of the run (`--shared-temp` keeps the machine's temp root).

Timings depend on the machine's load (printed with them): the images are encoded on the CPU.

Against a real engine (`--vllm MODEL`): the same three runs against a vLLM server this script starts
with the harness's own launch plan (detectors/vllm_server.py), prefix and multimodal caches off so
that a rerun on the same screens is not free. `--vllm tiny` builds the tiny random Qwen2.5-VL the
real-engine tests use (text head size 32, as vLLM's CPU attention needs); `--server` is vLLM's
Python or executable (default: the environment ci/engines/install.sh makes). The server's own
figures (peak in flight, phases) are not asked: only wall times and the ratio.

    bash ci/engines/install.sh vllm
    VLLM_CPU_KVCACHE_SPACE=1 python benchmarks/bench_served.py --vllm tiny --limit 60 --concurrency 8
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENGINES = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")
sys.path.insert(0, str(REPO / "tests"))


FOREIGN_PLUGINS = ("hypothesispytest", "anyio")


def serve(latency: float, capacity: int, port_file: Path) -> None:
    """The server process: the paced model plus /stats (peak in flight, chats) and /reset."""
    from paced_server import PacedModel

    from helpers import LoopbackServer

    model = PacedModel(latency=latency, capacity=capacity)

    def reply(handler):
        if handler.path.endswith("/stats"):
            with model.lock:
                found = {"peak": model.peak, "chats": len(model.chats), "first": model.first, "last": model.last}
                return 200, {**found, "first_sample": model.first_sample}
        if handler.path.endswith("/reset"):
            with model.lock:
                model.peak, model.chats, model.first, model.last = 0, [], None, None
                model.first_sample = None
            return 200, {}
        return model.reply(handler)

    server = LoopbackServer(reply)
    port_file.write_text(server.url)
    while True:
        time.sleep(3600)


def bare(url: str, concurrency: int, limit: int | None, model: str = "paced") -> None:
    """The bare client's process."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from pytest_grounding.datasets import load_dataset
    from pytest_grounding.datasets.synth import default_dataset_dir
    from pytest_grounding.detectors.encoding import data_url
    from pytest_grounding.detectors.vlm.parse import answer_to_prediction
    from pytest_grounding.detectors.vlm.presets import DEFAULT_PRESET, resolve_preset
    from pytest_grounding.evaluate.runner import read_image

    samples = load_dataset(f"pointerbench:{default_dataset_dir()}").samples[:limit]
    preset = resolve_preset(DEFAULT_PRESET)
    screens: dict[Path, tuple[str, object]] = {}
    locks: dict[Path, threading.Lock] = {path: threading.Lock() for path in {s.image for s in samples}}
    client = httpx.Client(limits=httpx.Limits(max_connections=concurrency + 4), timeout=120, trust_env=False)

    def one(sample):
        with locks[sample.image]:
            if sample.image not in screens:
                image, _ = read_image(sample)
                resized, frame = preset.preprocess.apply(image)
                screens[sample.image] = (data_url(resized), frame)
        url_image, frame = screens[sample.image]
        messages = preset.prompt.messages(sample.instruction, frame.model)  # type: ignore[attr-defined]
        from pytest_grounding.detectors.vlm.prompts import openai_messages

        body = {"model": model, "messages": openai_messages(messages, url_image), "max_tokens": 128, "temperature": 0.0}
        answer = client.post(url + "/chat/completions", json=body).json()["choices"][0]["message"]["content"]
        return answer_to_prediction(answer, frame, extractors=preset.extractors, transform=preset.transform)

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, samples))


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, wall clock at the start, the output's tail)."""
    clock, started = time.time(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    return time.perf_counter() - started, clock, done.stdout[-400:] + done.stderr[-400:]


def phases(wall: float, clock: float, stats: dict) -> tuple[float, float, float]:
    """(before the first request, while requests ran, after the last answer) in seconds."""
    if stats.get("first") is None:
        return wall, 0.0, 0.0
    before = stats["first"] - clock
    during = stats["last"] - stats["first"]
    return before, during, wall - before - during


SLOW_END_S = 1.0  # after the last answer: a run normally exits within ~0.2 s


def explain_slow_end(probe: Path, clock: float) -> str:
    """What phase_probe saw: each process's phases (seconds from the start) and the stacks of any
    process that was still alive a second after its session ended."""
    lines = []
    log = probe / "phases.log"
    for row in sorted(log.read_text().splitlines()) if log.exists() else []:
        stamp, who, phase = row.split(" ", 2)
        lines.append(f"  {float(stamp) - clock:7.2f} {who:<5} {phase}")
    for stacks in sorted(probe.glob("stacks-*.txt")):
        if stacks.stat().st_size:
            lines.append(f"  {stacks.name}:\n" + stacks.read_text()[-6000:])
    return "\n".join(lines) or "  (no phases: not a pytest run)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--limit", type=int, default=None, help="samples (default: all 300)")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--capacity", type=int, default=64)
    parser.add_argument(
        "--cold", action="store_true", help="compile every module in every process (PYTHONDONTWRITEBYTECODE as set)"
    )
    parser.add_argument(
        "--all-plugins",
        action="store_true",
        help="keep the pytest plugins of packages outside the card's dependencies that this environment has",
    )
    parser.add_argument(
        "--shared-temp",
        action="store_true",
        help="the suite runs use the machine's pytest temp root (an -n run's end deletes older temp folders)",
    )
    parser.add_argument("--phases", action="store_true", help="print every run's phases, not only a slow end's")
    parser.add_argument(
        "--suite-args", default="", help="more arguments for both suite runs (e.g. --grounding-frame-check=off)"
    )
    parser.add_argument("--only", choices=("serial", "xdist"), help="the bare client and this suite run only")
    parser.add_argument("--vllm", help="a real vLLM server for MODEL (a folder, a hub id, or `tiny`)")
    parser.add_argument("--server", default=str(ENGINES / "vllm" / "bin" / "python"), help="vLLM's python or exe")
    parser.add_argument("--server-args", default="--enforce-eager", help="more vLLM flags")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--bare", help=argparse.SUPPRESS)
    parser.add_argument("--model", default="paced", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.latency, args.capacity, args.serve)
    if args.bare:
        return bare(args.bare, args.concurrency, args.limit, args.model)

    import httpx

    from pytest_grounding.datasets.synth import default_dataset_dir
    from pytest_grounding.detectors.vlm.presets import DEFAULT_PRESET

    default_dataset_dir()  # generated before any timing
    paths = [str(REPO), str(REPO / "benchmarks"), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    if not args.cold:
        # As on a user's machine: bytecode (and pytest's rewritten-assertion bytecode of this plugin's
        # package, which pytest rewrites as a plugin's) is cached once, not compiled in every process.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        warm = [sys.executable, "-m", "pytest", "suites/", "--collect-only", "-q", "-p", "no:cacheprovider"]
        subprocess.run(warm, capture_output=True, env=env, cwd=REPO, timeout=600, check=False)
    if args.vllm:
        return real_engine(args, env)
    port_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_served.{os.getpid()}.url"
    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            str(port_file),
            "--latency",
            str(args.latency),
            "--capacity",
            str(args.capacity),
        ],
        env=env,
    )
    try:
        for _ in range(200):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        url = port_file.read_text()
        n = args.concurrency
        limit = ["--grounding-limit", str(args.limit)] if args.limit else []
        suite = [sys.executable, "-m", "pytest", "suites/", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *limit]
        suite += ["-p", "phase_probe", *args.suite_args.split()]  # each process's phases, its stacks if its end is slow
        if not args.all_plugins:
            # Plugins this machine has that a user of the card's dependencies does not: hypothesis's
            # (0.6 s a process) and anyio's, which probes the trio backend installed here (0.5 s).
            suite += [arg for name in FOREIGN_PLUGINS for arg in ("-p", f"no:{name}")]
        spec = f"openai:base_url={url},model=paced,preset={DEFAULT_PRESET},retries=0,concurrency="
        runs = [
            (
                f"bare client, {n} in flight",
                [sys.executable, __file__, "--bare", url, "--concurrency", str(n)]
                + (["--limit", str(args.limit)] if args.limit else []),
            ),
            (f"suite serial, concurrency={n}", [*suite, "--detector", f"{spec}{n}"]),
            (f"suite -n 2, concurrency={n // 2} per worker", [*suite, "--detector", f"{spec}{n // 2}", "-n", "2"]),
        ]
        if args.only:
            runs = [runs[0], runs[1 if args.only == "serial" else 2]]
        print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores here: other work slows every run)")
        print(f"server: {args.latency:g} s a request, {args.capacity} at once; samples: {args.limit or 300}")
        print(
            "pytest plugins: " + ("all installed" if args.all_plugins else f"not loaded: {', '.join(FOREIGN_PLUGINS)}")
        )
        print("bytecode: " + ("compiled in every process (--cold)" if args.cold else "cached, as on a user's machine"))
        print("pytest temp root: " + ("the machine's (--shared-temp)" if args.shared_temp else "a fresh one per run"))
        rows = []
        for name, command in runs:
            httpx.post(url + "/reset", trust_env=False)
            with tempfile.TemporaryDirectory(prefix="bench_served.") as probe:
                temp = {} if args.shared_temp else {"PYTEST_DEBUG_TEMPROOT": probe}
                wall, clock, tail = timed(command, {**env, "GROUNDING_PHASE_PROBE": probe, **temp})
                stats = httpx.get(url + "/stats", trust_env=False).json()
                stats["phases"] = [round(x, 2) for x in phases(wall, clock, stats)]
                rows.append((name, wall, stats))
                if stats.get("first_sample") is not None:
                    stats["first_sample_s"] = round(stats["first_sample"] - clock, 2)
                if stats["chats"] == 0:
                    print(f"{name}: no requests reached the server:\n{tail}")
                elif stats["phases"][2] > SLOW_END_S:
                    print(f"{name}: {stats['phases'][2]:.1f} s from the last answer to the exit:")
                    print(explain_slow_end(Path(probe), clock))
                elif args.phases:
                    print(f"{name}: first sample's request at {stats.get('first_sample_s')} s; phases:")
                    print(explain_slow_end(Path(probe), clock))
        bare_wall = rows[0][1]
        print(
            f"{'run':<42} {'wall s':>7} {'ratio':>6} {'requests':>8} {'max in flight':>13}"
            f" {'before':>7} {'serving':>7} {'after':>6}"
        )
        for name, wall, stats in rows:
            before, during, after = stats["phases"]
            print(
                f"{name:<42} {wall:7.1f} {wall / bare_wall:6.2f} {stats['chats']:8d} {stats['peak']:13d}"
                f" {before:7.1f} {during:7.1f} {after:6.1f}"
            )
        print("before: start to the first request; serving: first request to last answer; after: to the exit")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        print(
            json.dumps(
                {
                    name: {
                        "wall_s": round(wall, 2),
                        **{k: v for k, v in stats.items() if k not in ("first", "last", "first_sample")},
                    }
                    for name, wall, stats in rows
                }
            )
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
        port_file.unlink(missing_ok=True)


def real_engine(args: argparse.Namespace, env: dict[str, str]) -> None:
    """The suite and a bare client side by side on one real vLLM server (module docstring)."""
    sys.path.insert(0, str(REPO))
    from pytest_grounding.detectors.vllm_server import ServerProcess, free_port, launch_plan
    from pytest_grounding.detectors.vlm.presets import DEFAULT_PRESET, resolve_preset

    with tempfile.TemporaryDirectory(prefix="bench_served.") as scratch:
        model = args.vllm
        if model == "tiny":
            from pytest_grounding.testing.tiny import build_tiny_qwen25vl

            model = str(build_tiny_qwen25vl(Path(scratch) / "tiny-qwen2_5_vl", head_dim=32))
        flags = (
            f"{args.server_args} --no-enable-prefix-caching --mm-processor-cache-gb 0 --max-num-seqs {args.concurrency}"
        )
        plan = launch_plan(
            model, resolve_preset(DEFAULT_PRESET), port=free_port(), server=args.server, server_args=flags
        )
        server = ServerProcess(plan, Path(scratch) / "vllm.log")
        try:
            server.wait_ready(900, print)
            print(f"vLLM ready in {server.ready_s:.0f} s: {plan.describe()['command']}")
            n, url = args.concurrency, plan.base_url
            limit = ["--grounding-limit", str(args.limit)] if args.limit else []
            suite = [sys.executable, "-m", "pytest", "suites/", "-q", "-p", "no:cacheprovider", *limit]
            suite += [arg for name in FOREIGN_PLUGINS for arg in ("-p", f"no:{name}")]
            spec = f"openai:base_url={url},model={plan.served_name},preset={DEFAULT_PRESET},retries=0,concurrency="
            runs = [
                (
                    f"bare client, {n} in flight",
                    [sys.executable, __file__, "--bare", url, "--model", plan.served_name, "--concurrency", str(n)]
                    + (["--limit", str(args.limit)] if args.limit else []),
                ),
                (f"suite serial, concurrency={n}", [*suite, "--detector", f"{spec}{n}"]),
                (
                    f"suite -n 2, concurrency={n // 2} per worker",
                    [*suite, "--detector", f"{spec}{max(1, n // 2)}", "-n", "2"],
                ),
            ]
            print(f"load average before: {os.getloadavg()[0]:.1f}; samples: {args.limit or 300}")
            rows = []
            for name, command in runs:
                with tempfile.TemporaryDirectory(prefix="bench_served.") as temp:
                    wall, _, tail = timed(command, {**env, "PYTEST_DEBUG_TEMPROOT": temp})
                if "error" in tail.lower() and "0 error" not in tail.lower():
                    print(f"{name}: its output ends:\n{tail}")
                rows.append((name, wall))
            print(f"{'run':<42} {'wall s':>7} {'ratio':>6}")
            for name, wall in rows:
                print(f"{name:<42} {wall:7.1f} {wall / rows[0][1]:6.2f}")
            print(f"load average after: {os.getloadavg()[0]:.1f}")
            print(json.dumps({name: {"wall_s": round(wall, 2)} for name, wall in rows}))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
