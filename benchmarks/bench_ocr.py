"""Figures for the `ocr` detector, printed as Markdown for the README.

- Speed, by default: the detector next to the plain engine it wraps (`RapidOCR()`, its defaults),
  on the same screens in one process, interleaved screen by screen (which goes first alternates),
  so both see the same machine load: per-screen time p50 / p95 of each, the ratio of the medians,
  and the detector's accuracy on the real set and on the synthetic default. `--variant` adds
  detectors with other options to the same interleaving (to measure one lever at a time).
- Accuracy by element type, `ocr` next to the `center` floor, on a real set (ScreenAgent dev by
  default) and on the synthetic default set: whole `pytest suites/` runs read back through
  `--grounding-json`.
- Latency per 1024x768 screenshot (p50, p95): the OCR parse, the first instruction on a screen
  and the later ones (served from the parse cache), measured in this process.
- Wall time of a whole default run (`pytest suites/ --detector ocr`), serial and with `-n N`.

    python benchmarks/bench_ocr.py                      # speed, side by side: all screens of both sets
    python benchmarks/bench_ocr.py --quick              # the same on 16 + 8 screens (accuracy on those only)
    python benchmarks/bench_ocr.py --quick --variant "ocr:threads=2" --variant "ocr:rec_width=320"
    python benchmarks/bench_ocr.py --only latency       # or: accuracy, runs (whole pytest runs), all
    python benchmarks/bench_ocr.py --predictions before.jsonl                      # every answer on the real set
    python benchmarks/bench_ocr.py --predictions after.jsonl --against before.jsonl  # exit 1 if one changed

Timings depend on what else the machine runs: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from pytest_grounding.core.record import Outcome
from pytest_grounding.evaluate import scoring

REPO = Path(__file__).resolve().parent.parent
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
SCREEN_SIZE = (1024, 768)


# -- whole runs through pytest --------------------------------------------------------------------


def run_suite(options: Sequence[str], workdir: Path, label: str) -> tuple[float, dict[str, Any]]:
    """Run `pytest suites/` with the options; (wall seconds, the --grounding-json document)."""
    json_path = workdir / f"{label}.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "suites/",
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=no",
        "-rN",
        "--grounding-json",
        str(json_path),
        *options,
    ]
    print(f"$ {' '.join(command[1:])}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env={**os.environ, **OFFLINE}, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1) or not json_path.is_file():  # 1: some samples missed
        tail = (done.stdout + done.stderr)[-3000:]
        raise SystemExit(f"pytest {' '.join(options)} exited {done.returncode}:\n{tail}")
    return seconds, json.loads(json_path.read_text(encoding="utf-8"))


def element_rows(document: dict[str, Any], detector: str) -> dict[str, dict[str, Any]]:
    summary = document["summary"][detector]
    rows = {row["value"]: row for row in summary["by"]["element_type"]}
    rows["all"] = summary
    return rows


def cell(row: dict[str, Any] | None) -> str:
    if not row or row.get("accuracy") is None:
        return "-"
    return f"{100 * row['accuracy']:.1f}% ({row['hits']}/{row['scored']})"


def accuracy_table(title: str, ocr: dict[str, Any], center: dict[str, Any]) -> list[str]:
    ocr_rows, center_rows = element_rows(ocr, "ocr"), element_rows(center, "center")
    kinds = [*sorted(k for k in set(ocr_rows) | set(center_rows) if k != "all"), "all"]
    summary = ocr["summary"]["ocr"]
    lines = [f"**{title}**", "", "| element type | ocr | center (floor) |", "|---|---|---|"]
    lines += [f"| {kind} | {cell(ocr_rows.get(kind))} | {cell(center_rows.get(kind))} |" for kind in kinds]
    iou = summary.get("mean_iou")
    lines += [
        "",
        f"ocr: {summary['wrong_format']} of {summary['scored']} answered nothing (wrong format / no match); "
        f"errors {summary['errors']}; mean IoU of its boxes "
        f"{'-' if iou is None else f'{iou:.3f}'} over {summary['with_box']} boxes.",
        "",
    ]
    return lines


def accuracy_figures(real: Path, workdir: Path) -> tuple[list[str], dict[str, Any]]:
    """Accuracy tables; also returns the serial default run (its time is a figure of its own)."""
    _, real_doc = run_suite(["--dataset", str(real), "--detector", "ocr", "--detector", "center"], workdir, "real")
    serial_s, synth_ocr = run_suite(["--detector", "ocr"], workdir, "default-ocr-serial")
    _, synth_center = run_suite(["--detector", "center"], workdir, "default-center")
    lines = accuracy_table(f"{real.name} (real screens)", real_doc, real_doc)
    lines += accuracy_table("synthetic default", synth_ocr, synth_center)
    return lines, {"seconds": serial_s, "document": synth_ocr}


def run_figures(workers: int, workdir: Path, serial: dict[str, Any] | None) -> list[str]:
    if serial is None:
        seconds, document = run_suite(["--detector", "ocr"], workdir, "default-ocr-serial")
        serial = {"seconds": seconds, "document": document}
    parallel_s, parallel_doc = run_suite(["--detector", "ocr", "-n", str(workers)], workdir, "default-ocr-parallel")
    lines = [
        "| `pytest suites/ --detector ocr` | wall time | samples | screens | OCR parses | accuracy | "
        "per-sample latency p50 / p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, seconds, document in (
        ("serial", serial["seconds"], serial["document"]),
        (f"`-n {workers}`", parallel_s, parallel_doc),
    ):
        summary = document["summary"]["ocr"]
        latency = summary["latency_ms"]
        records = [r for r in document["samples"] if r["detector"] == "ocr"]
        screens = len({r["image"] for r in records})
        parses = sum(1 for r in records if r["meta"].get("parse_cached") is False)
        lines.append(
            f"| {label} | {seconds:.0f} s | {summary['samples']} | {screens} | {parses} | {cell(summary)} | "
            f"{latency['p50']:.0f} / {latency['p95']:.0f} ms |"
        )
    return [*lines, ""]


# -- latency in process ---------------------------------------------------------------------------


def screens_of_size(folder: Path, size: tuple[int, int], limit: int) -> list[tuple[Path, list[str]]]:
    """Images of the given size in a Pointerbench-Pro folder, each with its instructions."""
    metadata = next(folder.rglob("metadata.jsonl"))
    by_image: dict[Path, list[str]] = {}
    for line in metadata.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if tuple(row.get("image_size") or ()) == size:
            by_image.setdefault(metadata.parent / row["file_name"], []).append(row["instruction"])
    return sorted(by_image.items())[:limit]


def percentiles(seconds: Sequence[float]) -> str:
    from pytest_grounding.analysis.metrics import percentile

    if not seconds:
        return "- / -"
    return f"{1000 * percentile(seconds, 50):.0f} / {1000 * percentile(seconds, 95):.0f} ms"


def latency_figures(folders: dict[str, Path], limit: int) -> list[str]:
    os.environ.update(OFFLINE)
    from PIL import Image

    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors.ocr import OcrDetector

    started = time.perf_counter()
    detector = OcrDetector()
    load_s = time.perf_counter() - started
    info = detector.describe()
    lines = [
        f"Detector load {load_s:.1f} s; providers {', '.join(info['providers'])}; "
        f"{info['threads']} threads; {os.cpu_count()} cores.",
        "",
        "| 1024x768 screens | screens | OCR parse p50 / p95 | first instruction p50 / p95 | "
        "later instructions p50 / p95 | instructions per screen |",
        "|---|---|---|---|---|---|",
    ]
    for name, folder in folders.items():
        screens = screens_of_size(folder, SCREEN_SIZE, limit)
        parse_s, first_s, later_s = [], [], []
        for path, instructions in screens:
            with Image.open(path) as opened:
                image = opened.convert("RGB")
            detector.close()  # a cold cache, so the first instruction pays for the parse
            t0 = time.perf_counter()
            detector.predict(Query(image, instructions[0]))
            first_s.append(time.perf_counter() - t0)
            parse_s.append(detector.parse(Query(image, "")).ocr_seconds)
            for instruction in instructions[1:]:
                t0 = time.perf_counter()
                detector.predict(Query(image, instruction))
                later_s.append(time.perf_counter() - t0)
        per_screen = sum(len(i) for _, i in screens) / len(screens) if screens else 0
        lines.append(
            f"| {name} | {len(screens)} | {percentiles(parse_s)} | {percentiles(first_s)} | "
            f"{percentiles(later_s)} | {per_screen:.1f} |"
        )
    return [*lines, ""]


# -- speed: the detector next to the plain engine, interleaved ------------------------------------

PLAIN = "plain RapidOCR()"


@dataclass
class Contender:
    """The plain engine (`detector` None) or a detector built from a spec, with its timings."""

    label: str
    detector: Any = None
    engine: Any = None
    parse_s: dict[str, list[float]] = field(default_factory=dict)  # per set: RapidOCR's call
    screen_s: dict[str, list[float]] = field(default_factory=dict)  # per set: every instruction of a screen
    hits: dict[str, list[bool]] = field(default_factory=dict)
    lines: dict[str, list[int]] = field(default_factory=dict)  # per set: [text lines, read from the line cache]

    @property
    def line_cache(self) -> Any:
        """The detector's line cache (None for the plain engine, or with `line_cache=0`)."""
        from pytest_grounding.detectors.ocr_engine import LineCache

        rec = self.detector._engine.rapid.text_rec if self.detector is not None else None
        return rec if isinstance(rec, LineCache) else None


def screens_of(folder: Path, limit: int) -> list[tuple[Path, list[Any]]]:
    """The dataset's screens, each with its samples; `limit` > 0 keeps that many, evenly spread."""
    from pytest_grounding.datasets import load_dataset

    by_image: dict[Path, list[Any]] = {}
    for sample in load_dataset(str(folder)).samples:
        if not sample.defect:
            by_image.setdefault(sample.image, []).append(sample)
    screens = sorted(by_image.items())
    if 0 < limit < len(screens):
        step = len(screens) / limit
        screens = [screens[int(i * step)] for i in range(limit)]
    return screens


def build_contenders(specs: Sequence[str]) -> list[Contender]:
    from rapidocr import RapidOCR

    from pytest_grounding.detectors import parse_spec
    from pytest_grounding.detectors.ocr import OcrDetector

    plain = Contender(PLAIN, engine=RapidOCR(params={"Global.log_level": "error"}))
    plain.engine(Image.new("RGB", (160, 48), "white"))  # builds its sessions, as the detector's warm-up does
    contenders = [plain]
    for spec in specs:
        name, options = parse_spec(spec)
        if name != "ocr":
            raise SystemExit(f"--variant {spec!r}: only ocr[:options] variants are timed here")
        contenders.append(Contender(spec, detector=OcrDetector(**options)))
    return contenders


def time_screen(contender: Contender, set_name: str, image: Any, samples: Sequence[Any], score: bool) -> None:
    """Time one screen; with `score`, also keep whether each answer hit (answers do not change
    between rounds: the models are deterministic on CPU)."""
    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors.ocr import SHARED_PARSES

    if contender.detector is None:
        started = time.perf_counter()
        contender.engine(image)
        elapsed = time.perf_counter() - started
        contender.parse_s.setdefault(set_name, []).append(elapsed)
        contender.screen_s.setdefault(set_name, []).append(elapsed)
        return
    SHARED_PARSES.clear()  # a cold screen: the first instruction pays for the parse
    contender.detector.close()
    hits = contender.hits.setdefault(set_name, [])
    cache = contender.line_cache
    before = (cache.lines, cache.hits) if cache is not None else (0, 0)
    started = time.perf_counter()
    for sample in samples:
        asked = time.perf_counter()
        prediction = contender.detector.predict(Query(image, sample.instruction))
        record = scoring.score(
            sample, prediction, detector="ocr", image_size=image.size, latency_ms=1000 * (time.perf_counter() - asked)
        )
        if score:
            hits.append(record["outcome"] == Outcome.HIT)
        if record["meta"].get("parse_cached") is False:
            contender.parse_s.setdefault(set_name, []).append(record["meta"]["ocr_s"])
    contender.screen_s.setdefault(set_name, []).append(time.perf_counter() - started)
    if cache is not None:
        counts = contender.lines.setdefault(set_name, [0, 0])
        counts[0] += cache.lines - before[0]
        counts[1] += cache.hits - before[1]


def median(values: Sequence[float]) -> float:
    from pytest_grounding.analysis.metrics import percentile

    return percentile(values, 50) if values else float("nan")


def speed_figures(sets: dict[str, tuple[Path, int]], rounds: int, variants: Sequence[str]) -> list[str]:
    """`sets`: name -> (folder, screens to use, 0 = all)."""
    from pytest_grounding.evaluate.runner import read_image

    os.environ.update(OFFLINE)
    contenders = build_contenders(variants)
    screens = {name: screens_of(folder, limit) for name, (folder, limit) in sets.items()}
    started = time.perf_counter()
    step = 0
    for round_index in range(rounds):
        for contender in contenders:  # every round reads its screens as a run does: once, in order
            if contender.line_cache is not None:
                contender.line_cache.clear()
        for set_name, set_screens in screens.items():
            for _, samples in set_screens:
                image, problem = read_image(samples[0])
                if image is None:
                    raise SystemExit(problem)
                turn = step % len(contenders)  # who goes first rotates, screen by screen
                for contender in contenders[turn:] + contenders[:turn]:
                    time_screen(contender, set_name, image, samples, score=round_index == 0)
                step += 1
        print(
            f"round {round_index + 1}/{rounds} done after {time.perf_counter() - started:.0f} s; "
            f"load {os.getloadavg()[0]:.1f}",
            file=sys.stderr,
            flush=True,
        )
    wall = time.perf_counter() - started
    plain = contenders[0]
    info = contenders[1].detector.describe() if len(contenders) > 1 else {}
    lines = [
        f"Side by side in one process, {rounds} round(s), the order rotating screen by screen; "
        f"{os.cpu_count()} cores; {wall:.0f} s. Per-screen times p50 / p95; ratio = the detector's "
        f"median / the plain engine's median on the same screens (parse: RapidOCR's call only; "
        f"screen: every instruction on the screen, matching included).",
        "",
        f"Plain engine: `RapidOCR()` with its defaults (angle classifier on, ONNX Runtime's own thread "
        f"count, Det.limit_side_len 736/min, Rec.rec_batch_num 6, width 320). Detector: "
        f"{info.get('headline', '-')}.",
        "",
        "| set | screens | samples | detector | plain p50 / p95 | detector parse p50 / p95 | parse ratio | "
        "detector screen p50 / p95 | screen ratio | accuracy | lines from the line cache |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for set_name, set_screens in screens.items():
        samples = sum(len(s) for _, s in set_screens)
        base = median(plain.parse_s[set_name])
        for contender in contenders[1:]:
            hits = contender.hits[set_name]
            parse, whole = contender.parse_s[set_name], contender.screen_s[set_name]
            read, cached = contender.lines.get(set_name, (0, 0))
            from_cache = f"{100 * cached / read:.0f}% ({cached}/{read})" if read else "-"
            lines.append(
                f"| {set_name} | {len(set_screens)} | {samples} | `{contender.label}` | "
                f"{percentiles(plain.parse_s[set_name])} | {percentiles(parse)} | "
                f"{median(parse) / base:.2f} | {percentiles(whole)} | {median(whole) / base:.2f} | "
                f"{100 * sum(hits) / len(hits):.1f}% ({sum(hits)}/{len(hits)}) | {from_cache} |"
            )
    for contender in contenders[1:]:
        info = contender.detector.describe()
        lines.append(
            f"\n`{contender.label}`: {info['threads']} ONNX Runtime thread(s), "
            f"{info['rec_streams']} text line(s) recognised at once, spin {str(info['spin']).lower()}."
        )
    return [*lines, ""]


# -- the detector's answers, to hold a change of its parse against ----------------------------------


def prediction_lines(folder: Path, limit: int, spec: str) -> list[str]:
    """One JSON line per sample of the set: the detector's point, box and answer text, rounded to
    the micro-pixel (a faster parse must give these same lines)."""
    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors import parse_spec
    from pytest_grounding.detectors.ocr import OcrDetector
    from pytest_grounding.evaluate.runner import read_image

    os.environ.update(OFFLINE)
    name, options = parse_spec(spec)
    if name != "ocr":
        raise SystemExit(f"--predictions: {spec!r} is not an ocr[:options] spec")
    detector = OcrDetector(**options)
    lines = []
    for _, samples in screens_of(folder, limit):
        image, problem = read_image(samples[0])
        if image is None:
            raise SystemExit(problem)
        for sample in samples:
            prediction = detector.predict(Query(image, sample.instruction))
            point = None if prediction.point is None else [round(float(v), 6) for v in prediction.point]
            box = None if prediction.box is None else [round(float(v), 6) for v in prediction.box.as_list()]
            lines.append(json.dumps({"id": sample.id, "point": point, "box": box, "raw": prediction.raw}))
    return lines


def check_predictions(lines: Sequence[str], against: Path) -> int:
    """0 when every line equals the file's, else 1 after naming the samples that differ."""
    before = against.read_text(encoding="utf-8").splitlines()
    differ = [f"{json.loads(a)['id']}: {a} != {b}" for a, b in zip(before, lines, strict=False) if a != b]
    if len(before) != len(lines):
        differ.append(f"{len(before)} samples in {against}, {len(lines)} now")
    print(f"{len(lines)} predictions, {len(differ)} differ from {against}", file=sys.stderr)
    for line in differ[:20]:
        print(f"  {line}", file=sys.stderr)
    return 1 if differ else 0


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--real",
        type=Path,
        default=REPO.parent / "shared" / "data" / "screenagent-dev",
        help="a real Pointerbench-Pro folder (default: ../shared/data/screenagent-dev)",
    )
    parser.add_argument("--workers", type=int, default=2, help="xdist workers for the parallel run")
    parser.add_argument("--screens", type=int, default=40, help="1024x768 screens per set for the latency figures")
    parser.add_argument(
        "--only",
        choices=("speed", "accuracy", "latency", "runs", "all"),
        default="speed",
        help="speed (default): side by side with the plain engine; accuracy, latency, runs: "
        "the README's tables from whole pytest runs; all: everything",
    )
    parser.add_argument("--quick", action="store_true", help="speed on 16 real and 8 synthetic screens")
    parser.add_argument("--limit", type=int, default=0, help="speed: screens per set (0 = all)")
    parser.add_argument("--rounds", type=int, default=1, help="speed: passes over the screens")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="speed: a detector spec to time (repeatable; default: ocr, the defaults)",
    )
    parser.add_argument(
        "--predictions",
        type=Path,
        help="write the default detector's (or the first --variant's) answers on the real set (--limit screens, "
        "0 = all) to this JSONL file and stop; with --against, exit 1 when they differ from that file's",
    )
    parser.add_argument("--against", type=Path, help="with --predictions: the answers before a change")
    args = parser.parse_args(argv)
    if args.predictions:
        sys.path.insert(0, str(REPO))
        lines = prediction_lines(args.real, args.limit, (args.variant or ["ocr"])[0])
        args.predictions.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        raise SystemExit(check_predictions(lines, args.against) if args.against else 0)
    if args.only == "all":
        args.only = None

    sys.path.insert(0, str(REPO))
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}", file=sys.stderr)
    out: list[str] = []
    serial = None
    with tempfile.TemporaryDirectory(prefix="bench-ocr-") as tmp:
        workdir = Path(tmp)
        if args.only in (None, "speed"):
            from pytest_grounding.datasets.synth import default_dataset_dir

            out += ["### Speed: the detector next to the plain engine", ""]
            real_limit, synth_limit = (16, 8) if args.quick else (args.limit, args.limit)
            sets = {args.real.name: (args.real, real_limit), "synthetic default": (default_dataset_dir(), synth_limit)}
            out += speed_figures(sets, args.rounds, args.variant or ["ocr"])
        if args.only in (None, "accuracy"):
            out += ["### Accuracy", ""]
            tables, serial = accuracy_figures(args.real, workdir)
            out += tables
        if args.only in (None, "latency"):
            from pytest_grounding.datasets.synth import default_dataset_dir

            out += ["### Latency per screenshot", ""]
            folders = {args.real.name: args.real, "synthetic default": default_dataset_dir()}
            out += latency_figures(folders, args.screens)
        if args.only in (None, "runs"):
            out += ["### Whole default run", ""]
            out += run_figures(args.workers, workdir, serial)
    out.append(
        f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())} (1, 5, 15 min; {os.cpu_count()} cores)"
    )
    print("\n".join(out))


if __name__ == "__main__":
    main()
