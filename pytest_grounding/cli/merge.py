"""`python -m pytest_grounding merge A.json B.json ... --json OUT.json`: the shard reports of one
run put back together (pytest_grounding.analysis.merge), written as JSON (and HTML, predictions), the
summary printed as a run prints it, the exit status the gates' verdict."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

DESCRIPTION = (
    "One report from the JSON reports of the shards of a run (--grounding-shard K/N): the same figures as one run "
    "of the whole set. Refuses reports of other datasets, detectors, score-changing settings or scoring versions, "
    "and a report whose records its own claims do not hold (each record re-scored from its answer). "
    "A missing shard: the report is marked partial and names it. The same report twice counts once; a shard "
    "run again replaces its earlier report (the latest wins). Exit 0: merged and every gate passed; 1: a gate "
    "or the error share failed, or the merge is partial; 2: a report cannot be read or merged."
)


def add_command(commands: Any) -> None:
    merge = commands.add_parser(
        "merge", help="merge the JSON reports of a run's shards (--grounding-shard) into one", description=DESCRIPTION
    )
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json", help="the shards' --grounding-json")
    merge.add_argument("--json", required=True, type=Path, metavar="PATH", help="write the merged report here")
    merge.add_argument("--html", type=Path, metavar="PATH", help="also the HTML page (as --grounding-html)")
    merge.add_argument(
        "--predictions", type=Path, metavar="PATH", help="also the predictions JSONL, dataset by dataset"
    )
    merge.add_argument(
        "--min-accuracy",
        action="append",
        metavar="SPEC",
        help="accuracy gate as --grounding-min-accuracy (repeatable); default: the gates the shards ran with",
    )
    merge.add_argument("--max-errors", metavar="AMOUNT", help="as --grounding-max-errors; default: the shards' setting")
    merge.add_argument(
        "--published", type=Path, metavar="PATH", help="published figures as --grounding-published (reproduction)"
    )


def run(args: argparse.Namespace) -> int:
    from ..analysis import gates as gates_mod
    from ..analysis import reproduce
    from ..analysis.merge import MergeError, Part, merged_document, ranges
    from ..core.safetext import terminal_line
    from ..plugin.common.environment import registered_preset
    from ..plugin.common.options import share
    from ..render import terminal as report
    from ..sections import sections
    from ..store.reports import OutputError, interrupts_held, read_report

    try:
        parts = [Part(str(path), i, read_report(path)) for i, path in enumerate(args.reports)]
        gates = None
        if args.min_accuracy:
            gates = [gates_mod.parse_gate(spec, "--min-accuracy") for spec in args.min_accuracy]
        max_errors = share(args.max_errors, "--max-errors") if args.max_errors is not None else None
        table = reproduce.shipped_table()
        if args.published is not None:
            table = table.merged(reproduce.read_table(args.published)).check(str(args.published))
        targets = TargetsReadAgain.of(parts)
        document, figures = merged_document(
            parts,
            gates=gates,
            max_errors=max_errors,
            published=table,
            args=["merge", *(str(path) for path in args.reports), "--json", str(args.json)],
            registered=registered_preset,
            rescore=targets.rescore,
            notes=targets.notes,
            sections=sections(),
        )
    except (OutputError, MergeError, ValueError) as exc:  # PublishedError is a ValueError
        print(f"error: {terminal_line(exc)}", file=sys.stderr)
        return 2
    taken: list[int] = []
    with interrupts_held(taken):  # Ctrl-C now is taken once every output is whole
        written = _write_outputs(args, document)
    if written is None:
        return 2
    problems = written
    if taken:
        problems.append("interrupted (Ctrl-C) while the outputs were written: they were completed first")
    partial = bool(document["partial"])
    verdicts = list(figures.verdicts) if figures else []
    if figures is not None:
        for line in report.document_lines(document):  # the merged document's lines, as a run prints them
            print(terminal_line(line))  # notes and record fields come from the reports: escaped
    else:
        for note in document["notes"]:
            print(f"note: {terminal_line(note)}")
    kept = sum(1 for r in document["merge"]["reports"] if r["used"])
    print()
    print(
        terminal_line(f"merged {kept} of {document['merge']['count']} shards: {len(document['samples'])} records -> ")
        + terminal_line(args.json)
    )
    for problem in problems:
        print(f"merge output FAILED: {terminal_line(problem)}")
    failed = [v for v in verdicts if not v.passed]
    if partial:
        missing = sum(d["missing"] for d in document["merge"]["missing_samples"])
        shards = ranges(document["merge"]["missing"]) or "none"  # ranges: short however many are missing
        print(f"verdict: partial merge, no verdict (missing shards: {shards}; {missing} samples not scored)")
        return 1
    gated = bool(document["run"]["settings"]["gates"])
    if gated or failed:
        total = sum(1 for v in verdicts if hasattr(v, "gate"))
        if failed:
            print(f"verdict: {len(failed)} of {len(verdicts)} checks FAILED")
        else:
            print(f"verdict: all {total} gates passed")
    else:
        print("verdict: no gates (give --min-accuracy, or run the shards with --grounding-min-accuracy)")
    return 1 if failed or problems else 0


class TargetsReadAgain:
    """What merge re-scores each record against: its sample in its dataset read again here (as
    `report --html` reads it: format and absolute path from run.datasets, no image opened) when that
    dataset has the reports' fingerprint; else the record's own target, and a note says so."""

    def __init__(self, samples: dict[tuple[str, str], Any], notes: list[str], profile: Any = None) -> None:
        self.samples = samples
        self.profile = profile  # core.profiles.Profile: the reports' scoring rule
        self.read = {name for name, _ in samples}  # datasets read again: each record must be one of theirs
        self.notes = notes

    @classmethod
    def of(cls, parts: Any) -> TargetsReadAgain:
        from .images import read_again

        entries: dict[str, Any] = {}
        for part in parts:
            for entry in part.document.get("run", {}).get("datasets", []):
                entries.setdefault(str(entry.get("name")), entry)
        found = read_again({"run": {"datasets": list(entries.values())}})
        samples: dict[tuple[str, str], Any] = {}
        notes = []
        for name, entry in entries.items():
            same = [d for d in found.datasets.get(name, ()) if d.fingerprint == entry.get("fingerprint")]
            if not same:
                why = found.unreadable.get(name) or "its fingerprint here is not the reports'"
                notes.append(f"dataset {name}: records re-scored against the targets the reports give ({why})")
                continue
            samples.update(((name, sample.uid), sample) for sample in same[0].samples)
        from ..core.profiles import get_profile, profile_of

        profile = get_profile(profile_of(parts[0].document)) if parts else None  # unknown: a ValueError, exit 2
        return cls(samples, notes, profile)

    def rescore(self, record: Any, where: str) -> tuple[Any, str | None]:
        """evaluate.resume's re-scoring, as analysis.merge takes it (analysis imports no evaluate)."""
        from ..core.types import as_epoch, sample_uid
        from ..core.variants import base_uid
        from ..evaluate.resume import rescore_record
        from ..perturb import variant_again

        epoch = record.get("epoch")
        known = (str(record.get("dataset")), base_uid(record))
        if known[0] in self.read and known not in self.samples:
            return None, f"{where}: no sample {known[1][:80]!r} in dataset {known[0]} read again"
        sample = self.samples.get(known)
        if sample is not None and record.get("variant"):  # --grounding-perturb: the variant made again
            sample = variant_again(sample, str(record.get("perturbation")), str(record["variant"]))
        if sample is not None and sample_uid(str(record.get("uid")), epoch) != str(record.get("uid")):
            sample = as_epoch(sample, epoch)  # --grounding-epochs: the record's epoch of that sample
        rescored = rescore_record(record, where, sample, self.profile)
        return rescored.record, rescored.note


def _write_outputs(args: argparse.Namespace, document: dict[str, Any]) -> list[str] | None:
    """The merged JSON (None: not written, said), then the predictions and the page (what failed)."""
    from ..analysis.merge import prediction_order
    from ..core.safetext import terminal_line
    from ..store.reports import PredictionsWriter, write_json

    try:
        write_json(args.json, document)
    except (OSError, ValueError) as exc:
        print(f"error: {terminal_line(f'merged report {args.json} not written: {exc}')}", file=sys.stderr)
        return None
    problems = []
    if args.predictions is not None:
        writer = PredictionsWriter(args.predictions)
        for record in sorted(document["samples"], key=prediction_order):
            writer.write(record)
        writer.close()
        if writer.error:
            problems.append(writer.error)
    if args.html is not None:
        from ..render.html import write_html
        from .images import dataset_images

        own = dataset_images(document)  # as `report --html`: thumbnails only of the datasets' own images
        for note in own.notes():
            print(f"note: {terminal_line(note)}", file=sys.stderr)
        try:
            write_html(document, args.html, base=args.json.resolve().parent, withhold=own.withhold)
        except Exception as exc:  # the JSON is written; a page that fails is said, not a crash
            problems.append(f"HTML report {args.html} not written: {type(exc).__name__}: {exc}")
    return problems
