"""Scale figures, printed as Markdown for the README.

- Collection (`pytest suites/ --dataset DIR --detector center --co -q`) of generated N-row
  Pointerbench datasets: wall and CPU seconds, peak RSS; next to pytest's own floor, a bare test
  parametrized with N ids (no plugin work at all).
- The harness against a bare Python loop that decodes the same images and scores them with the
  same `center` click: whole-process ratio and per-sample ratio (the slope between two sizes,
  which leaves out interpreter start-up and imports); with pytest-benchmark on and off.
- Serial vs `-n 2` wall time for `center` (2,000 samples) and `ocr` (the real dev screens), and
  OCR parses per screen under `-n 2` with `--dist load` (the default) and `--dist loadgroup` (a
  screen's samples on one worker).

    python benchmarks/bench_scale.py                 # everything (about 10 min on 2 idle cores)
    python benchmarks/bench_scale.py --quick         # no ocr runs, smaller harness sizes
    python benchmarks/bench_scale.py --only collect  # or: harness, xdist, parses

Timings depend on what else the machine runs: the load average is printed with them, and CPU
seconds (less sensitive to other processes than wall time) next to wall time. `--repo DIR` runs
another checkout (before/after comparisons); the last ones, with their numbers, are in
docs/figures.md ("Collection at scale").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "data" / "screenagent-dev"
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
APPS = [
    ("Excel", "office"),
    ("VS Code", "development"),
    ("Photoshop", "creative"),
    ("AutoCAD", "cad"),
    ("Word", "office"),
    ("Blender", "creative"),
    ("MATLAB", "scientific"),
]
SCREEN = (1024, 768)

# The bare loop the harness is compared with: read the rows, decode each image, click the centre,
# score the click against the box. Nothing else.
BARE_LOOP = r"""
import json, sys
from pathlib import Path
from PIL import Image
meta = Path(sys.argv[1])
hits = 0
for line in meta.read_text(encoding="utf-8").splitlines():
    row = json.loads(line)
    with Image.open(meta.parent / row["file_name"]) as handle:
        image = handle.convert("RGB")
        image.load()
    x, y = image.size[0] / 2.0, image.size[1] / 2.0
    x1, y1, x2, y2 = (float(v) for v in row["bbox"])
    hits += x1 <= x <= x2 and y1 <= y <= y2
print(hits)
"""

FLOOR_TEST = """
import pytest
N = {n}
@pytest.mark.parametrize("index", range(N), ids=[f"ds-s{{i:06d}}-excel-icon" for i in range(N)])
def test_floor(index):
    pass
"""


# -- datasets ---------------------------------------------------------------------------------------


def make_screens(folder: Path, count: int) -> list[str]:
    """`count` 1024x768 JPEG screenshots with some structure (decoding cost like a real one)."""
    from PIL import Image, ImageDraw

    rng = random.Random(7)
    names = []
    for index in range(count):
        image = Image.new("RGB", SCREEN, (rng.randint(200, 250),) * 3)
        draw = ImageDraw.Draw(image)
        for _ in range(60):
            x, y = rng.randint(0, SCREEN[0] - 60), rng.randint(0, SCREEN[1] - 30)
            colour = tuple(rng.randint(0, 255) for _ in range(3))
            draw.rectangle([x, y, x + rng.randint(20, 200), y + rng.randint(10, 60)], fill=colour)
            draw.text((x + 4, y + 4), f"Button {rng.randint(0, 999)}", fill=(0, 0, 0))
        name = f"screen_{index:04d}.jpg"
        image.save(folder / name, quality=90)
        names.append(name)
    return names


def make_dataset(root: Path, rows: int, screens: int = 8) -> Path:
    """A Pointerbench folder of `rows` rows (the fields of the real set) over `screens` images.
    Row i is on screen i % screens, so consecutive ids are on different screens."""
    folder = root / f"rows{rows}-screens{screens}" / "data" / "test"
    meta = folder / "metadata.jsonl"
    if meta.is_file():
        return folder.parent.parent
    folder.mkdir(parents=True)
    names = make_screens(folder, screens)
    rng = random.Random(rows)
    with meta.open("w", encoding="utf-8") as out:
        for index in range(rows):
            app, category = APPS[index % len(APPS)]
            kind = ("icon", "text")[index % 2]
            x, y = rng.randint(0, 900), rng.randint(0, 700)
            box = [x, y, x + rng.randint(10, 120), y + rng.randint(10, 60)]
            row = {
                "file_name": names[index % screens],
                "id": f"gen_{index:06d}",
                "instruction": f"Click the {kind} number {index} in the {app} window.",
                "bbox": box,
                "point": [(box[0] + box[2]) // 2, (box[1] + box[3]) // 2],
                "answer_type": "point",
                "eval": {"type": "point_in_bbox", "bbox": box},
                "data_type": kind,
                "element_type": kind,
                "app": app,
                "app_slug": app.lower().replace(" ", "_"),
                "app_category": category,
                "platform": "Windows desktop",
                "source_id": f"gen/{index:06d}#a0",
                "image_size": list(SCREEN),
            }
            out.write(json.dumps(row) + "\n")
    return folder.parent.parent


# -- measuring one process --------------------------------------------------------------------------


def measure(command: Sequence[str], *, cwd: Path | None = None, env: dict | None = None) -> dict[str, Any]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one child process."""
    started = time.perf_counter()
    environment = {**os.environ, **OFFLINE, "PYTHONPATH": str(REPO), **(env or {})}
    child = subprocess.Popen(
        list(command), cwd=cwd or REPO, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    output = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
        "code": code,
        "output": output,
    }


def pytest_command(*options: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *options]


def checked(result: dict[str, Any], allowed: Sequence[int] = (0, 1)) -> dict[str, Any]:
    if result["code"] not in allowed:
        raise SystemExit(f"exit {result['code']}:\n{result['output'][-3000:]}")
    return result


def load_note() -> str:
    return "load average {:.1f} {:.1f} {:.1f} on {} cores".format(*os.getloadavg(), os.cpu_count())


# -- figures ----------------------------------------------------------------------------------------


def collection_figures(work: Path, sizes: Sequence[int]) -> list[str]:
    lines = [
        "**Collection** (`pytest suites/ --dataset DIR --detector center --co -q`), against pytest's floor "
        "(one bare test parametrized with N ids)",
        "",
        "| rows | wall s | CPU s | peak RSS MB | floor: wall s | CPU s | peak RSS MB |",
        "|---|---|---|---|---|---|---|",
    ]
    for rows in sizes:
        dataset = make_dataset(work, rows)
        run = checked(
            measure(pytest_command("suites/", "--dataset", str(dataset), "--detector", "center", "--co", "-q")), (0,)
        )
        expected = f"{rows} tests collected"
        if expected not in run["output"]:
            raise SystemExit(f"expected '{expected}':\n{run['output'][-2000:]}")
        floor_dir = work / f"floor{rows}"
        floor_dir.mkdir(exist_ok=True)
        (floor_dir / "test_floor.py").write_text(FLOOR_TEST.format(n=rows))
        floor = checked(measure(pytest_command("test_floor.py", "--co", "-q"), cwd=floor_dir), (0,))
        lines.append(
            f"| {rows:,} | {run['wall']:.1f} | {run['cpu']:.1f} | {run['rss']:.0f} "
            f"| {floor['wall']:.1f} | {floor['cpu']:.1f} | {floor['rss']:.0f} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return [*lines, "", load_note(), ""]


def harness_run(dataset: Path, *options: str) -> dict[str, Any]:
    return checked(
        measure(
            pytest_command(
                "suites/",
                "--dataset",
                str(dataset),
                "--detector",
                "center",
                "-q",
                "--tb=no",
                "-rN",
                "--grounding-misses",
                "xfail",
                *options,
            )
        )
    )


def harness_figures(work: Path, small: int, large: int) -> list[str]:
    """The harness vs the bare loop, both as whole processes, at two sizes."""
    rows: dict[str, dict[int, float]] = {}
    variants = {"bare loop": None, "plugin": ("-p", "no:benchmark"), "plugin + pytest-benchmark": ()}
    for size in (small, large):
        dataset = make_dataset(work, size)
        meta = dataset / "data" / "test" / "metadata.jsonl"
        for label, options in variants.items():
            if options is None:
                run = checked(measure([sys.executable, "-c", BARE_LOOP, str(meta)]), (0,))
            else:
                run = harness_run(dataset, *options)
            rows.setdefault(label, {})[size] = run["wall"]
            print(f"{label} {size}: {run['wall']:.2f} s", file=sys.stderr, flush=True)
    bare = rows["bare loop"]
    slope = {label: (t[large] - t[small]) / (large - small) * 1000 for label, t in rows.items()}
    lines = [
        f"**Harness vs a bare loop** (decode + `center` + score; {large:,} samples on 8 JPEG screens "
        "1024x768; misses as xfail)",
        "",
        f"| run | wall s ({small:,}) | wall s ({large:,}) | ratio ({large:,}) | ms per sample | per-sample ratio |",
        "|---|---|---|---|---|---|",
    ]
    for label, times in rows.items():
        lines.append(
            f"| {label} | {times[small]:.2f} | {times[large]:.2f} | {times[large] / bare[large]:.2f}x "
            f"| {slope[label]:.2f} | {slope[label] / slope['bare loop']:.2f}x |"
        )
    slope_note = "per sample: (wall(large) - wall(small)) / (large - small), which leaves out start-up."
    return [*lines, "", slope_note, load_note(), ""]


def suite_run(options: Sequence[str], json_path: Path) -> tuple[float, dict[str, Any]]:
    run = checked(
        measure(
            pytest_command(
                "suites/",
                "-q",
                "--tb=no",
                "-rN",
                "--grounding-misses",
                "xfail",
                "--grounding-json",
                str(json_path),
                *options,
            )
        )
    )
    return run["wall"], json.loads(json_path.read_text(encoding="utf-8"))


def totals(document: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((name, s["samples"], s["hits"], s["errors"]) for name, s in sorted(document["summary"].items()))


def xdist_figures(work: Path, quick: bool) -> list[str]:
    lines = [
        "**Serial vs `-n 2`** (wall seconds of the whole `pytest` process)",
        "",
        "| detector | samples | serial s | -n 2 s | speed-up | same totals |",
        "|---|---|---|---|---|---|",
    ]
    cases = [("center", make_dataset(work, 2000), [])]
    if not quick and REAL.is_dir():
        cases.append(("ocr", REAL, []))
    for detector, dataset, extra in cases:
        options = ["--dataset", str(dataset), "--detector", detector, *extra]
        serial, serial_doc = suite_run(options, work / f"{detector}-serial.json")
        parallel, parallel_doc = suite_run([*options, "-n", "2"], work / f"{detector}-n2.json")
        count = sum(s["samples"] for s in serial_doc["summary"].values())
        lines.append(
            f"| {detector} | {count:,} | {serial:.1f} | {parallel:.1f} | {serial / parallel:.2f}x "
            f"| {totals(serial_doc) == totals(parallel_doc)} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return [*lines, "", load_note(), ""]


def parses_per_screen(document: dict[str, Any]) -> Counter:
    """OCR parses per image: records whose answer did not come from the detector's screen cache."""
    return Counter(
        r["image"]
        for r in document["samples"]
        if r["outcome"] != "error" and not (r.get("meta") or {}).get("parse_cached", True)
    )


def parse_figures(work: Path, screens: int = 16, per_screen: int = 4) -> list[str]:
    dataset = make_dataset(work, screens * per_screen, screens=screens)
    lines = [
        f"**OCR parses per screen under `-n 2`** ({screens} screens x {per_screen} instructions, "
        "consecutive ids on different screens)",
        "",
        "| --dist | wall s | parses | parses per screen (max) |",
        "|---|---|---|---|",
    ]
    for label, options in (("load (default)", ["--dist", "load"]), ("loadgroup", ["--dist", "loadgroup"])):
        wall, document = suite_run(
            ["--dataset", str(dataset), "--detector", "ocr", "-n", "2", *options],
            work / f"parses-{options[-1] if options else 'default'}.json",
        )
        parses = parses_per_screen(document)
        lines.append(
            f"| {label} | {wall:.1f} | {sum(parses.values())} | "
            f"{sum(parses.values()) / screens:.2f} ({max(parses.values(), default=0)}) |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return [*lines, "", load_note(), ""]


def main(argv: Sequence[str] | None = None) -> None:
    global REPO
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="no ocr runs; harness at 300/1,000 samples")
    parser.add_argument("--only", choices=["collect", "harness", "xdist", "parses"], action="append")
    parser.add_argument("--sizes", default="20000,50000,100000", help="collection sizes (comma-separated)")
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="checkout whose suites/ and package run (before/after comparisons)"
    )
    parser.add_argument("--work", type=Path, help="folder for the generated datasets (default: a temporary one)")
    args = parser.parse_args(argv)
    REPO = args.repo.resolve()
    only = set(args.only or ["collect", "harness", "xdist", "parses"])
    if args.quick:
        only.discard("parses")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        out: list[str] = []
        if "collect" in only:
            out += collection_figures(work, [int(n) for n in args.sizes.split(",")])
        if "harness" in only:
            out += harness_figures(work, *((300, 1000) if args.quick else (500, 2000)))
        if "xdist" in only:
            out += xdist_figures(work, args.quick)
        if "parses" in only:
            out += parse_figures(work)
        print("\n".join(out))


if __name__ == "__main__":
    main()
