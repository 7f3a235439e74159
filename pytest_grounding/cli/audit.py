"""`audit`: a dataset's labels checked (findings ranked, JSON and an HTML page), and `audit --diff OLD NEW`.

The reading lives here: the dataset through the plugin's catalog, each screen decoded once and read
once by the `ocr` detector's engine (its process-wide parse cache), a difference hash of it, the
runs' clicks from their reports. The findings come from analysis/audit.py, the diff from
analysis/dataset_diff.py."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core import safefile, safejson
from ..core.safetext import terminal_line
from .curation.loading import AuditError, load

SCHEMA_VERSION = 1


def add_command(commands: Any) -> None:
    from ..analysis.audit import CONSENSUS_RADIUS, KINDS

    audit = commands.add_parser(
        "audit",
        help="find label errors in a dataset (geometry, ambiguity, OCR text, typos, run consensus, metadata), "
        "or diff two versions of it",
        description="A ranked list of findings, each with the sample's id, a kind, a score and its evidence. "
        "Kinds: "
        + "; ".join(f"{k}: {v}" for k, v in KINDS.items())
        + ". Each screen is read once by the ocr detector's engine (the ocr extra; --no-ocr skips the text "
        "kinds). With --diff OLD NEW: the two versions matched row by row and what changed. Exit 0 with the "
        "findings (or the diff); 2 when a dataset or a run cannot be read.",
    )
    audit.add_argument("--dataset", metavar="DATASET", help="the dataset, as --grounding-dataset takes it")
    audit.add_argument(
        "--runs",
        nargs="+",
        type=Path,
        default=[],
        metavar="REPORT",
        help="reports of runs on the same dataset (--grounding-json or a predictions JSONL, one run per "
        "detector): the consensus kind",
    )
    audit.add_argument("--json", type=Path, metavar="OUT", help="write the findings (or the diff) as JSON here")
    audit.add_argument("--html", type=Path, metavar="OUT", help="write a page with each finding's screen crop here")
    audit.add_argument(
        "--kinds",
        default=",".join(KINDS),
        metavar="K,K",
        help=f"the kinds to look for (default all: {','.join(KINDS)})",
    )
    audit.add_argument("--no-ocr", action="store_true", help="do not read the screens' text (no text_mismatch, typo)")
    audit.add_argument(
        "--dictionary",
        type=Path,
        metavar="FILE",
        help="a word list (one word a line) the typo kind accepts besides the screens' text and the dataset's "
        "own frequent words",
    )
    audit.add_argument(
        "--radius",
        type=float,
        default=CONSENSUS_RADIUS,
        metavar="PX",
        help=f"consensus: clicks within PX of their centre are one place (default {CONSENSUS_RADIUS:g})",
    )
    audit.add_argument("--limit", type=int, default=40, metavar="N", help="print at most N findings (default 40)")
    audit.add_argument(
        "--diff", nargs=2, metavar=("OLD", "NEW"), help="match two versions of a dataset and count what changed"
    )
    audit.add_argument(
        "--unchanged-ids",
        type=Path,
        metavar="OUT",
        help="with --diff: write the unchanged rows as pairs 'OLD<TAB>NEW' (each version's own id of the "
        "row) under a header naming both versions' fingerprints, for compare --only-ids",
    )


def run(args: argparse.Namespace) -> int:
    try:
        if args.diff:
            return run_diff(args.diff[0], args.diff[1], args.json, args.unchanged_ids)
        if not args.dataset:
            return _fail("audit needs --dataset DATASET (or --diff OLD NEW)")
        return run_audit(args)
    except AuditError as exc:
        return _fail(str(exc))


def _fail(message: str) -> int:
    print(f"error: {terminal_line(message)}", file=sys.stderr)
    return 2


def difference_hash(image: Any) -> int:
    """64-bit dHash: near-identical screens (re-encoded, re-captured) differ in a few bits."""
    small = image.convert("L").resize((9, 8))
    pixels = small.tobytes()
    value = 0
    for row in range(8):
        for col in range(8):
            value = (value << 1) | (pixels[row * 9 + col] > pixels[row * 9 + col + 1])
    return value


class Progress:
    """One line on stderr, rewritten in place on a terminal, every few seconds otherwise."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.start = time.perf_counter()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self.last < (0.2 if self.tty else 15.0):
            return
        self.last = now
        rate = (now - self.start) / max(done, 1)
        line = f"audit: {self.what} {done}/{total} ({rate:.2f} s each, {now - self.start:.0f} s)"
        print(("\r" + line) if self.tty else line, end="" if self.tty and done < total else "\n", file=sys.stderr)


def read_screens(samples: Sequence[Any], *, ocr: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each distinct screen decoded once: its size, its dHash and (with `ocr`) its OCR texts through
    the ocr detector's engine and parse cache. Returns (screens by image path, timing facts)."""
    from PIL import Image

    from ..analysis.audit import ScreenRead
    from ..core.types import Query

    engine_parse = None
    if ocr:
        from ..detectors.ocr_engine import EngineSettings, shared_parse

        # Resolved once: the threads follow the load when resolved, and one audit keeps one engine.
        settings = EngineSettings().resolved()

        def engine_parse(query: Any) -> Any:
            return shared_parse(query, settings)

    from ..datasets.validate import outside_dataset

    # A path that leads out of the dataset's folder is never opened (as in a run).
    images = sorted({str(s.image) for s in samples if not outside_dataset(s)})
    screens: dict[str, ScreenRead] = {}
    progress = Progress("screens read")
    ocr_seconds = 0.0
    for index, path in enumerate(images):
        try:
            with Image.open(path) as opened:
                image = opened.convert("RGB")
        except Exception as exc:  # a missing or undecodable screen is that screen's problem, not the audit's
            screens[path] = ScreenRead(None, problem=_why_unread(exc, path))
            progress(index + 1, len(images))
            continue
        texts: tuple[tuple[str, tuple[float, float, float, float]], ...] = ()
        if engine_parse is not None:
            began = time.perf_counter()
            parsed = engine_parse(Query(image, ""))
            ocr_seconds += time.perf_counter() - began
            texts = tuple((t.text, (t.box.x1, t.box.y1, t.box.x2, t.box.y2)) for t in parsed.texts)
        screens[path] = ScreenRead(image.size, texts, difference_hash(image))
        progress(index + 1, len(images))
    return screens, {"screens": len(images), "ocr_seconds": round(ocr_seconds, 3)}


def _why_unread(exc: BaseException, path: str) -> str:
    """`FileNotFoundError: no such file`: the error without the path the line already names."""
    said = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    said = said.replace(f"'{path}'", "").replace(path, "").strip(" :")
    return f"{type(exc).__name__}: {said.lower() if said else 'not read'}"


def unread_screens(samples: Sequence[Any], screens: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The screens the audit could not read (missing, undecodable, outside the dataset's folder), each
    with why and the ids of its samples: they got only the kinds that need no pixels."""
    from ..datasets.validate import outside_dataset

    found: dict[str, dict[str, Any]] = {}
    for sample in samples:
        path = str(sample.image)
        screen = screens.get(path)
        if outside_dataset(sample):
            problem = "outside the dataset's folder: never opened"
        elif screen is not None and screen.problem:
            problem = str(screen.problem)
        else:
            continue
        found.setdefault(path, {"image": path, "problem": problem, "samples": []})["samples"].append(sample.id)
    return sorted(found.values(), key=lambda entry: entry["image"])


def unread_lines(unread: Sequence[Mapping[str, Any]], most: int = 10) -> list[str]:
    """The terminal's lines for the screens not read: a count, then the first few."""
    if not unread:
        return []
    samples = sum(len(entry["samples"]) for entry in unread)
    lines = [
        f"  {len(unread)} screen{'' if len(unread) == 1 else 's'} not read ({samples} samples: only the kinds "
        "that need no pixels; the JSON's unread_screens lists them all):"
    ]
    for entry in unread[:most]:
        ids = ", ".join(entry["samples"][:3]) + (" ..." if len(entry["samples"]) > 3 else "")
        lines.append(f"    {entry['image']}: {entry['problem']} ({ids})")
    if len(unread) > most:
        lines.append(f"    and {len(unread) - most} more")
    return lines


def read_runs(paths: Sequence[Path], dataset: Any = None) -> list[Any]:
    """One Run per detector of each report (a --grounding-json report or a predictions JSONL). With the
    audited `dataset`: records of another dataset (their fingerprint, the annotation files' digest,
    differs) and ids that are none of its samples are left out and said; a run with nothing left is
    refused (its clicks would be judged against other rows' boxes)."""
    from ..analysis.audit import Run
    from ..store.reports import OutputError, read_report

    runs: list[Run] = []
    for path in paths:
        fingerprints: dict[str, str] = {}  # a report's datasets, for records that carry no fingerprint
        labels: dict[str, str] = {}  # a detector's label= (issue 51): the run keeps its name
        if path.suffix == ".json":
            try:
                report = read_report(path)
            except OutputError as exc:
                raise AuditError(str(exc)) from None
            records = list(report.get("samples") or [])
            labels = run_labels(report)
            for entry in (report.get("run") or {}).get("datasets") or []:
                if isinstance(entry, dict) and isinstance(entry.get("fingerprint"), str):
                    fingerprints[str(entry.get("name"))] = entry["fingerprint"]
        else:
            try:
                text = safefile.read_text(path, limit=safejson.MAX_DOCUMENT_CHARS)  # a regular file, bounded
                records = [safejson.loads(line) for line in text.splitlines() if line.strip()]
            except (OSError, ValueError) as exc:
                raise AuditError(f"run {path} cannot be read: {exc}") from None
        by_detector: dict[str, dict[str, tuple[float, float] | None]] = {}
        other: dict[tuple[str, str], int] = {}  # (dataset, fingerprint) of records of another dataset
        for record in records:
            if not isinstance(record, dict) or "id" not in record:
                continue
            if record.get("task", "grounding") != "grounding" or record.get("variant") is not None:
                continue
            made_on = record.get("fingerprint") or fingerprints.get(str(record.get("dataset")))
            if dataset is not None and isinstance(made_on, str) and made_on not in ("unknown", dataset.fingerprint):
                key = (str(record.get("dataset")), made_on)
                other[key] = other.get(key, 0) + 1
                continue
            name = str(record.get("detector") or path.stem)
            by_detector.setdefault(name, {})[str(record["id"])] = _point(record.get("point"))
        if dataset is not None:
            by_detector = _on_dataset(path, by_detector, other, dataset)
        for name, points in by_detector.items():
            label = labels.get(name) or (name if len(paths) == 1 or len(by_detector) > 1 else f"{path.stem}")
            runs.append(Run(label if label not in {r.name for r in runs} else f"{label} [{path}]", points, name))
    return runs


def run_labels(report: Mapping[str, Any]) -> dict[str, str]:
    """Each detector's label= as the report keeps it (`run.detectors[spec].label`)."""
    detectors = (report.get("run") or {}).get("detectors") or {}
    if not isinstance(detectors, dict):
        return {}
    return {
        str(spec): str(info["label"])
        for spec, info in detectors.items()
        if isinstance(info, dict) and isinstance(info.get("label"), str) and info["label"].strip()
    }


def _on_dataset(
    path: Path,
    by_detector: dict[str, dict[str, tuple[float, float] | None]],
    other: Mapping[tuple[str, str], int],
    dataset: Any,
) -> dict[str, dict[str, tuple[float, float] | None]]:
    """A run's clicks on the audited dataset's samples only: a run made on another dataset is refused,
    records of other datasets or ids of no sample are left out with a note."""
    audited = f"{dataset.name} (fingerprint {dataset.fingerprint})"
    elsewhere = ", ".join(f"{name} (fingerprint {made_on}): {n} records" for (name, made_on), n in other.items())
    if other and not by_detector:
        raise AuditError(
            f"run {path} was made on another dataset: {elsewhere}, not on {audited} (the fingerprint is the "
            "annotation files' digest): audit --runs takes runs of the audited dataset"
        )
    if other:
        _note(f"run {path}: records of other datasets left out ({elsewhere})")
    ids = {s.id for s in dataset.samples}
    unknown = sorted({sid for points in by_detector.values() for sid in points} - ids)
    if not unknown:
        return by_detector
    first = ", ".join(repr(u) for u in unknown[:5])
    if all(set(points) <= set(unknown) for points in by_detector.values()):
        raise AuditError(
            f"run {path}: none of its sample ids is a sample of {audited} (first: {first}): a run of another "
            "dataset? audit --runs takes runs of the audited dataset"
        )
    _note(f"run {path}: {len(unknown)} ids are no sample of {audited}, left out (first: {first})")
    return {name: {k: v for k, v in points.items() if k in ids} for name, points in by_detector.items()}


def _note(text: str) -> None:
    print(f"note: {terminal_line(text)}", file=sys.stderr)


def _point(value: Any) -> tuple[float, float] | None:
    try:
        return (float(value[0]), float(value[1]))
    except (TypeError, ValueError, IndexError):
        return None


def run_audit(args: argparse.Namespace) -> int:
    from ..analysis.audit import KINDS, audit, counts, opinion_lines, opinions, table_lines

    kinds = [k.strip() for k in str(args.kinds).split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        return _fail(f"--kinds: unknown {', '.join(unknown)} (known: {', '.join(KINDS)})")
    dictionary: list[str] = []
    if args.dictionary:
        try:
            data = safefile.read_bytes(args.dictionary, limit=safejson.MAX_DOCUMENT_CHARS)  # a regular file, bounded
            dictionary = data.decode("utf-8", errors="replace").split()
        except (OSError, ValueError) as exc:
            return _fail(f"--dictionary {args.dictionary}: {getattr(exc, 'strerror', None) or exc}")
    ocr = not args.no_ocr and bool({"text_mismatch", "typo"} & set(kinds))
    if ocr:
        from importlib.util import find_spec

        if find_spec("rapidocr") is None:
            print("note: rapidocr is not installed (the ocr extra): no text_mismatch or typo", file=sys.stderr)
            ocr = False
    started = time.perf_counter()
    dataset = load(args.dataset)
    runs = read_runs(args.runs, dataset)
    samples = list(dataset.samples)
    screens, timing = read_screens(samples, ocr=ocr)
    findings = audit(
        samples, screens, runs, dictionary=dictionary, kinds=kinds, radius=args.radius, progress=Progress("samples")
    )
    elapsed = time.perf_counter() - started
    flagged = len({f.id for f in findings})
    print(
        f"audit of {dataset.name} ({dataset.format}, {len(samples)} samples on {timing['screens']} screens"
        f"{', OCR ' + format(timing['ocr_seconds'], '.1f') + ' s' if ocr else ', no OCR'}"
        f"{', ' + str(len(runs)) + ' runs' if runs else ''}): {len(findings)} findings on {flagged} samples "
        f"in {elapsed:.1f} s"
    )
    tally = counts(findings)
    if tally:
        print("  " + ", ".join(f"{k} {n}" for k, n in tally.items()))
    groups = opinions(runs) if "consensus" in kinds else []
    for line in opinion_lines(groups):  # runs that agree by construction: one opinion, said once
        print(terminal_line("  " + line))
    unread = unread_screens(samples, screens)
    for line in unread_lines(unread):
        print(terminal_line(line))
    for line in table_lines(findings, args.limit):
        print(terminal_line(line))
    document = {
        "schema": SCHEMA_VERSION,
        "kind": "audit",
        "dataset": {
            "name": dataset.name,
            "format": dataset.format,
            "path": str(dataset.path),
            "fingerprint": dataset.fingerprint,
            "samples": len(samples),
        },
        "runs": [r.name for r in runs],
        "opinions": [{"runs": list(g.runs), "why": g.why} for g in groups],
        "ocr": ocr,
        "timing": {**timing, "seconds": round(elapsed, 3)},
        "counts": tally,
        "unread_screens": unread,
        "findings": [_with_context(f.as_dict(), screens, runs) for f in findings],
    }
    if args.json:
        if not _write(args.json, json.dumps(document, indent=1, ensure_ascii=False) + "\n"):
            return 2
        print(f"wrote {args.json}: {len(findings)} findings")
    if args.html:
        from ..render.audit_html import render

        if not _write(args.html, render(document)):
            return 2
        print(f"wrote {args.html}")
    return 0


def _with_context(finding: dict[str, Any], screens: Mapping[str, Any], runs: Sequence[Any]) -> dict[str, Any]:
    """A finding with what the page and the review show beside it: every run's click, the text read in the box."""
    clicks = {r.name: list(r.points[finding["id"]]) for r in runs if r.points.get(finding["id"]) is not None}
    if clicks:
        finding["clicks"] = clicks
    screen = screens.get(finding["image"])
    if screen is not None and screen.texts:
        x1, y1, x2, y2 = finding["bbox"]
        inside = [
            t
            for t, b in screen.texts
            if x1 - 3 <= (b[0] + b[2]) / 2 <= x2 + 3 and y1 - 3 <= (b[1] + b[3]) / 2 <= y2 + 3
        ]
        finding["ocr_in_box"] = sorted(set(inside), key=len)[:6]
    return finding


def _write(path: Path, text: str) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail(f"{path} not written: {exc.strerror or exc}")
        return False
    return True


def run_diff(old_spec: str, new_spec: str, json_out: Path | None, ids_out: Path | None) -> int:
    from ..analysis.compare import POSITIONAL_IDS
    from ..analysis.dataset_diff import diff, table_lines

    old, new = load(old_spec), load(new_spec)
    by_id = not {old.format, new.format} & POSITIONAL_IDS
    found = diff(old.samples, new.samples, ids=by_id)
    print(f"diff {old.name} ({old.fingerprint[:12]}) -> {new.name} ({new.fingerprint[:12]})")
    if not by_id:
        print("ids made up by the loader from row positions: rows matched by their content, not by id")
    for line in table_lines(found):
        print(terminal_line(line))
    if json_out:
        document = {
            "schema": SCHEMA_VERSION,
            "kind": "audit-diff",
            "old": {"name": old.name, "path": str(old.path), "fingerprint": old.fingerprint},
            "new": {"name": new.name, "path": str(new.path), "fingerprint": new.fingerprint},
            "matched_by_id": by_id,
            **found.summary(),
            "pairs": [p.as_dict() for p in found.pairs if p.category != "unchanged" or p.slices],
        }
        if not _write(json_out, json.dumps(document, indent=1, ensure_ascii=False) + "\n"):
            return 2
        print(f"wrote {json_out}")
    if ids_out:
        from ..analysis.compare import IDS_HEADER

        lines = [f"{a}\t{b}" for a, b in found.unchanged_ids()]
        header = [IDS_HEADER, f"# old {old.name} {old.fingerprint}", f"# new {new.name} {new.fingerprint}"]
        if not _write(ids_out, "".join(line + "\n" for line in [*header, *lines])):
            return 2
        print(f"wrote {ids_out}: {len(lines)} unchanged ids")
    return 0
