"""The default run's published figures: `pytest suites/` once, and every figure of it that README.md
and docs/ print, rendered from its JSON report (the terminal summary's own renderer for the summary
examples), so that they can be compared with the published text.

    python benchmarks/bench_default.py                  # run `pytest suites/`, print its figures
    python benchmarks/bench_default.py --check          # ... and compare with README.md and docs/ (exit 1 on a diff)
    python benchmarks/bench_default.py --write          # ... and rewrite the published figures from this run
    python benchmarks/bench_default.py -n 2 --check     # the same run on 2 xdist workers
    python benchmarks/bench_default.py --report R.json --check   # a report already written: no run
    python benchmarks/bench_default.py --keep DIR       # keep the run's report, predictions and terminal output

Checked: the summary examples (README.md, docs/getting-started.md) line by line, except the lines that
depend on the machine (the detector's versions and load time, latency: `--write` leaves them as they are);
the `ocr` rows and sentences of docs/figures.md, docs/synthetic.md, docs/ci.md and the README's
headline table that give the default set's accuracy. Exit status: 0 the same, 1 a figure differs, 2
the run could not be made or compared (the message says why).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_grounding.analysis.result import RunResult, View  # noqa: E402
from pytest_grounding.core.numbers import pct  # noqa: E402
from pytest_grounding.core.record import Outcome  # noqa: E402
from pytest_grounding.render.terminal import summary_lines  # noqa: E402

DETECTOR = "ocr"  # the default detector when its extra is installed; the published figures are its
SUMMARY_DOCS = ("README.md", "docs/getting-started.md")
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


class Unusable(Exception):
    """The run or the report cannot be compared (exit 2)."""


# -- the run ------------------------------------------------------------------------------------


def run_default(workdir: Path, workers: int) -> Path:
    """`pytest suites/` (no --dataset, no --detector: the default run), its report kept in `workdir`."""
    report = workdir / "report.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "suites/",
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "-rN",
        "--color=no",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(workdir / "predictions.jsonl"),
        *(["-n", str(workers)] if workers else []),
    ]
    print(f"$ {' '.join(['pytest', *command[3:]])}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, **OFFLINE, "PYTHONPATH": path}  # this checkout's code, whatever is installed
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    (workdir / "terminal.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    print(f"  exit {done.returncode} after {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    if done.returncode not in (0, 1) or not report.is_file():  # 1: some samples missed
        raise Unusable(f"pytest exited {done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}")
    return report


def read_report(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    if DETECTOR not in document.get("summary", {}):
        ran = ", ".join(document.get("summary", {})) or "none"
        raise Unusable(
            f"{path}: the run's detectors are {ran}, the published figures are {DETECTOR}'s "
            f"(the default detector needs the {DETECTOR} extra)"
        )
    datasets = document["run"]["datasets"]
    if len(datasets) != 1 or datasets[0].get("limit") is not None:
        raise Unusable(f"{path}: not a whole run of the default dataset ({len(datasets)} datasets, or a limit)")
    return document


def instruction_forms(document: Mapping[str, Any]) -> dict[str, str]:
    """id -> the synthetic generator's instruction form (literal: quotes the label; functional)."""
    from pytest_grounding.datasets.synth import default_dataset_dir

    metadata = next(Path(default_dataset_dir()).rglob("metadata.jsonl"))
    forms = {}
    for line in metadata.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        forms[row["id"]] = row.get("synth", {}).get("instruction_form", "")
    return forms


# -- what the run says ------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """The default run as the docs quote it."""

    document: Mapping[str, Any]
    forms: Mapping[str, str]

    @property
    def block(self) -> Mapping[str, Any]:
        return self.document["summary"][DETECTOR]

    def slice(self, key: str, value: str) -> Mapping[str, Any]:
        rows = {row["value"]: row for row in self.block["by"][key]}
        if value not in rows:
            raise Unusable(f"no {key}={value} in the report")
        return rows[value]

    def summary(self, top_apps: int | None) -> list[str]:
        """The terminal summary's lines for the default run (the plugin's own renderer)."""
        shown = RunResult.of_report(
            self.document, records=(), notes=(), partial=False, resumed=0, view=View(top_apps=top_apps)
        )
        return summary_lines(shown)

    def text_share(self, form: str) -> str:
        """Hit rate on text targets whose instruction has this form, in whole percent."""
        records = [
            r
            for r in self.document["samples"]
            if r["detector"] == DETECTOR and r["element_type"] == "text" and self.forms.get(r["id"]) == form
        ]
        return f"{100 * sum(r['outcome'] == Outcome.HIT for r in records) / len(records):.0f}" if records else "-"


def with_counts(row: Mapping[str, Any]) -> str:
    return f"{pct(row['accuracy'])} ({row['hits']}/{row['scored']})"


def whole_pct(row: Mapping[str, Any]) -> str:
    return f"{100 * row['accuracy']:.0f}"


# -- where the docs print them ----------------------------------------------------------------

Render = Callable[[re.Match[str], Figures], dict[str, str]]


@dataclass(frozen=True)
class Claim:
    """Figures in running text: each named group of `pattern` is one, rendered from the run."""

    path: str
    pattern: str
    render: Render
    label: str


OCR_ROW = r"^\| `ocr` \(RapidOCR[^|\n]*\| "
CELL = r"[^|\n]+?"

CLAIMS = (
    Claim(
        "README.md",
        OCR_ROW + rf"(?P<overall>{CELL}) \|",
        lambda m, f: {"overall": pct(f.block["accuracy"])},
        "headline table, synthetic default",
    ),
    Claim(
        "docs/figures.md",
        OCR_ROW + rf"(?P<overall>{CELL}) \| (?P<text>{CELL}) \| (?P<icon>{CELL}) \| (?P<other>{CELL}) \|$",
        lambda m, f: {
            "overall": with_counts(f.block),
            **{kind: pct(f.slice("element_type", kind)["accuracy"]) for kind in ("text", "icon", "other")},
        },
        "the embedded default, per detector",
    ),
    Claim(
        "docs/figures.md",
        rf"^\| (?P<kind>text|icon|other|all) \| {CELL} \| {CELL} \| (?P<ocr>{CELL}) \| {CELL} \|$",
        lambda m, f: {"ocr": with_counts(f.block if m["kind"] == "all" else f.slice("element_type", m["kind"]))},
        "accuracy by element type, synthetic default: ocr",
    ),
    Claim(
        "docs/figures.md",
        r"on the synthetic set (?P<wrong>\d+) of (?P<samples>\d+) \(mean IoU (?P<iou>[\d.]+|-)\)",
        lambda m, f: {
            "wrong": str(f.block["wrong_format"]),
            "samples": str(f.block["samples"]),
            "iou": "-" if f.block["mean_iou"] is None else f"{f.block['mean_iou']:.2f}",
        },
        "answered nothing, mean IoU",
    ),
    *(
        Claim(
            path,
            OCR_ROW + rf"(?P<overall>{CELL}) \| (?P<text>{CELL}) \| (?P<icon>{CELL}) \| (?P<other>{CELL}) \|$",
            lambda m, f: {
                "overall": pct(f.block["accuracy"]),
                **{kind: pct(f.slice("element_type", kind)["accuracy"]) for kind in ("text", "icon", "other")},
            },
            "the embedded default, per detector",
        )
        for path in ("docs/synthetic.md",)
    ),
    *(
        Claim(
            path,
            r"(?P<mid>\d+)% of targets of 32-100 px against (?P<small>\d+)% of those\s+under 32 px",
            lambda m, f: {"mid": whole_pct(f.slice("size", "32-100")), "small": whole_pct(f.slice("size", "<32"))},
            "by target size",
        )
        for path in ("docs/figures.md", "docs/synthetic.md")
    ),
    *(
        Claim(
            path,
            r"finds (?P<literal>\d+)% of the\s+text\s+targets\s+whose\s+instruction\s+quotes\s+the\s+label\s+and\s+"
            r"(?P<functional>\d+)% of those\s+asked\s+for\s+by\s+function",
            lambda m, f: {"literal": f.text_share("literal"), "functional": f.text_share("functional")},
            "text targets by instruction form",
        )
        for path in ("docs/figures.md", "docs/synthetic.md")
    ),
    Claim(
        "docs/figures.md",
        r"On synthetic text targets, `ocr` finds (?P<literal>\d+)% of those\s+whose\s+instruction\s+quotes\s+the\s+"
        r"label\s+and\s+(?P<functional>\d+)% of those\s+asked\s+for\s+by\s+function",
        lambda m, f: {"literal": f.text_share("literal"), "functional": f.text_share("functional")},
        "text targets by instruction form",
    ),
    Claim(
        "docs/ci.md",
        r"gate passed: detector ocr overall: accuracy (?P<overall>\S+) of (?P<samples>\d+) >= threshold 20\.0%",
        lambda m, f: {"overall": pct(f.block["accuracy"]), "samples": str(f.block["scored"])},
        "gate example",
    ),
    Claim(
        "docs/ci.md",
        r"gate FAILED: detector ocr element_type=icon: accuracy (?P<icon>\S+) of (?P<n>\d+) < threshold 5\.0%",
        lambda m, f: {
            "icon": pct(f.slice("element_type", "icon")["accuracy"]),
            "n": str(f.slice("element_type", "icon")["scored"]),
        },
        "gate example",
    ),
    Claim(
        "docs/ci.md",
        r"`ocr` (?P<overall>\S+) overall, (?P<text>\S+) on text targets\s+\((?P<literal>\d+)% when the instruction "
        r"quotes the label, (?P<functional>\d+)% when it says what the control does\)",
        lambda m, f: {
            "overall": pct(f.block["accuracy"]),
            "text": pct(f.slice("element_type", "text")["accuracy"]),
            "literal": f.text_share("literal"),
            "functional": f.text_share("functional"),
        },
        "reference figures for thresholds",
    ),
)


@dataclass(frozen=True)
class Difference:
    path: str
    line: int  # 1-based, where the published text starts
    label: str
    published: str
    produced: str

    def describe(self) -> str:
        diff = difflib.unified_diff(
            self.published.splitlines(), self.produced.splitlines(), "published", "produced", lineterm="", n=1
        )
        return f"{self.path}:{self.line}: {self.label}\n" + "\n".join(f"    {line}" for line in list(diff)[2:])


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def claim_edits(text: str, claim: Claim, figures: Figures) -> list[tuple[int, int, str, str]]:
    """(start, end, published, produced) of each passage of the claim found in `text` whose
    figures are not this run's."""
    edits = []
    for match in re.finditer(claim.pattern, text, flags=re.MULTILINE):
        passage = match[0]
        values = claim.render(match, figures)
        for group in sorted(values, key=match.start, reverse=True):  # right to left: offsets stay true
            start, end = match.start(group) - match.start(), match.end(group) - match.start()
            passage = passage[:start] + values[group] + passage[end:]
        if passage != match[0]:
            edits.append((match.start(), match.end(), match[0], passage))
    return edits


def whole_lines(text: str, start: int, end: int, replacement: str) -> tuple[str, str]:
    """The lines holding text[start:end], before and after the replacement."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    last = len(text) if last < 0 else last
    return text[first:last], text[first:start] + replacement + text[end:last]


# The summary examples: every line is compared but these, which say what the machine did (left
# as published by --write too: a figure of one machine's load, not of the code).
VOLATILE = (re.compile(r"^detector \S+  \("), re.compile(r"^  latency ms "), re.compile(r"^=+ grounding summary =+$"))
# value, n, scored, hits, accuracy, its 95% interval (absent in summaries before intervals), wrong, errors, IoU
TABLE_ROW = re.compile(
    r"^  (?P<value>.+?)\s+\d+\s+\d+\s+\d+\s+(?:\S+%|-)(?:\s+(?:[\d.]+-[\d.]+|-))?\s+\d+\s+\d+\s+\S+$"
)


def line_keys(lines: Sequence[str]) -> list[tuple[str, ...] | None]:
    """A key per summary line (the same line of another run has the same key); None: blank."""
    keys: list[tuple[str, ...] | None] = []
    table = ""
    for line in lines:
        if not line.strip():
            keys.append(None)
        elif line.rstrip().endswith("IoU") and " n scored " in re.sub(r"\s+", " ", line):
            table = re.split(r"\s{2,}", line.strip())[0]
            keys.append(("header", table))
        elif line.startswith("  ... "):
            keys.append(("more", table))
        elif TABLE_ROW.match(line):
            keys.append(("row", table, TABLE_ROW.match(line)["value"]))  # type: ignore[index]
        else:
            keys.append(("line", line.split()[0]))  # dataset, detector, accuracy, samples, latency
    return keys


def summary_block(text: str) -> tuple[int, list[str]] | None:
    """(offset of its first line, its lines) of the ```text block holding the grounding summary."""
    match = re.search(r"^```text\n(=+ grounding summary =+\n.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return None if match is None else (match.start(1), match[1].splitlines())


def expected_block(published: Sequence[str], figures: Figures) -> list[str]:
    """The published block with each line as this run prints it: the tables the block shows, as many
    apps as it shows; a line the run does not print is dropped (the diff shows it)."""
    keys = line_keys(published)
    apps = sum(1 for key in keys if key and key[0] == "row" and key[1] == "app")
    produced = figures.summary(apps or None)
    by_key = {key: line for key, line in zip(line_keys(produced), produced, strict=True) if key is not None}
    out = []
    for line, key in zip(published, keys, strict=True):
        if key is None or any(p.match(line) for p in VOLATILE):
            out.append(line)
        elif key in by_key:
            out.append(by_key[key])
    return out


def compare(figures: Figures) -> tuple[list[Difference], dict[str, str]]:
    """The differences, and each published file's text as this run would have it."""
    differences: list[Difference] = []
    rewritten: dict[str, str] = {}
    for path in sorted({c.path for c in CLAIMS} | set(SUMMARY_DOCS)):
        text = (REPO / path).read_text(encoding="utf-8")
        edits = []
        if path in SUMMARY_DOCS:
            found = summary_block(text)
            if found is None:
                raise Unusable(f"{path}: no ```text block with the grounding summary")
            offset, published = found
            expected = expected_block(published, figures)
            if expected != published:
                old, new = "\n".join(published), "\n".join(expected)
                edits.append((offset, offset + len(old), old, new))
                differences.append(Difference(path, line_of(text, offset), "summary example", old, new))
        for claim in (c for c in CLAIMS if c.path == path):
            found_any = re.search(claim.pattern, text, flags=re.MULTILINE) is not None
            if not found_any:
                raise Unusable(f"{path}: the {claim.label} figures are not where this script looks (pattern changed?)")
            for start, end, old, new in claim_edits(text, claim, figures):
                edits.append((start, end, old, new))
                differences.append(
                    Difference(path, line_of(text, start), claim.label, *whole_lines(text, start, end, new))
                )
        for start, end, _, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        rewritten[path] = text
    return sorted(differences, key=lambda d: (d.path, d.line)), rewritten


def figure_lines(figures: Figures) -> list[str]:
    """What this run says, in the docs' words."""
    block = figures.block
    lines = ["The default run (`pytest suites/`), as the summary prints it:", "", "```text"]
    lines += figures.summary(6)
    lines += ["```", ""]
    text = figures.slice("element_type", "text")
    lines.append(
        f"| `ocr` | {with_counts(block)} | "
        + " | ".join(pct(figures.slice("element_type", k)["accuracy"]) for k in ("text", "icon", "other"))
        + " |"
    )
    lines.append(
        f"text targets: {with_counts(text)}; quoting the label {figures.text_share('literal')}%, "
        f"by function {figures.text_share('functional')}%; 32-100 px {whole_pct(figures.slice('size', '32-100'))}%, "
        f"<32 px {whole_pct(figures.slice('size', '<32'))}%"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with README.md and docs/; exit 1 on a diff")
    parser.add_argument("--write", action="store_true", help="rewrite the published figures from this run")
    parser.add_argument("-n", dest="workers", type=int, default=0, help="xdist workers (default: serial)")
    parser.add_argument("--report", type=Path, help="a --grounding-json report of the default run: no run")
    parser.add_argument("--keep", type=Path, help="keep the run's report, predictions and terminal output here")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-default-") as tmp:
            if args.report is not None:
                report = args.report
            else:
                workdir = args.keep or Path(tmp)
                workdir.mkdir(parents=True, exist_ok=True)
                report = run_default(workdir, args.workers)
            document = read_report(report)
            figures = Figures(document, instruction_forms(document))
            print("\n".join(figure_lines(figures)))
            differences, rewritten = compare(figures)
    except Unusable as problem:
        print(f"bench_default: {problem}", file=sys.stderr)
        return 2
    if args.write:
        for path, text in rewritten.items():
            if (REPO / path).read_text(encoding="utf-8") != text:
                (REPO / path).write_text(text, encoding="utf-8")
                print(f"rewrote {path}", file=sys.stderr)
        return 0
    if not args.check:
        return 0
    if differences:
        print(
            f"\n{len(differences)} published figure(s) of the default run differ from what the code produces "
            f"(fix the code, or regenerate them: python benchmarks/bench_default.py --write):\n",
            file=sys.stderr,
        )
        print("\n\n".join(d.describe() for d in differences), file=sys.stderr)
        return 1
    print("\nthe published figures of the default run match this run", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
