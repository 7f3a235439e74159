"""`python -m pytest_grounding export REPORT`: a report's results where the field publishes them
(analysis/publish.py): the Hugging Face Hub's `.eval_results/*.yaml` (`--hf-eval-results DIR`),
ScreenSpot-Pro's official results file (`--screenspot-pro DIR`) and Every Eval Ever's aggregate
and samples files (`--eee DIR`, analysis/eee.py), both of which `replay` reads back."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DESCRIPTION = (
    "--hf-eval-results DIR writes DIR/.eval_results/<benchmark>.yaml for each benchmark the report scored that "
    "is a registered Hugging Face Hub benchmark (today: ScreenSpot-Pro, likaixin/ScreenSpot-Pro), in the Hub's "
    "documented layout (https://huggingface.co/docs/hub/eval-results); the other benchmarks are named, not "
    "written. --screenspot-pro DIR writes ScreenSpot-Pro's official results JSON (details + metrics) of each "
    "ScreenSpot-Pro dataset in the report. --eee DIR writes Every Eval Ever files (schema 0.3.0): per detector "
    "and dataset (and per --grounding-perturb variant) an aggregate "
    "DIR/data/<benchmark>/<developer>/<model>/<uuid>.json and its samples sidecar <uuid>_samples.jsonl, as the EEE "
    "datastore lays them out. A report of several detectors needs --detector. Exit 0: written; "
    "1: nothing to write (every benchmark said why); 2: the report cannot be read, or the request not met."
)


def add_command(commands: Any) -> None:
    export = commands.add_parser(
        "export", help="a report's results as the Hub's eval-results files or ScreenSpot-Pro's results file",
        description=DESCRIPTION,
    )  # fmt: skip
    export.add_argument("report", type=Path, metavar="REPORT", help="a --grounding-json report (or a merged one)")
    export.add_argument("--hf-eval-results", type=Path, metavar="DIR", help="the model repository's folder")
    export.add_argument("--screenspot-pro", type=Path, metavar="DIR", help="write the official results JSON here")
    export.add_argument("--eee", type=Path, metavar="DIR", help="write Every Eval Ever aggregate and samples files")
    export.add_argument(
        "--eee-organization", metavar="NAME", default="unknown", help="EEE: who publishes the result (default unknown)"
    )
    export.add_argument(
        "--eee-relationship", default="other", choices=("first_party", "third_party", "collaborative", "other"),
        help="EEE: the evaluator's relationship to the model's developer (default other)",
    )  # fmt: skip
    export.add_argument("--detector", metavar="SPEC", help="the detector to publish (a report of several)")
    export.add_argument("--source-url", metavar="URL", help="eval results: where the result can be checked")
    export.add_argument("--source-name", metavar="TEXT", help="eval results: the source's display name")
    export.add_argument("--source-user", metavar="USER", help="eval results: the Hub user or organisation")
    export.add_argument(
        "--allow-partial",
        action="store_true",
        help="also a partial run, a selection (-k, --lf, a shard), --grounding-limit (eval results: in the notes)",
    )


def _error(message: object) -> int:
    from ..core.safetext import terminal_line

    print(f"error: {terminal_line(message)}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from ..analysis import publish
    from ..core.safetext import terminal_line
    from ..render.publish import eval_results_yaml, screenspot_pro_json
    from ..store.reports import OutputError, read_report, write_atomic

    if args.hf_eval_results is None and args.screenspot_pro is None and args.eee is None:
        return _error("nothing to write: give --hf-eval-results DIR, --screenspot-pro DIR and/or --eee DIR")
    try:
        document = read_report(args.report)
        detector = publish.pick_detector(document, args.detector)
    except (OutputError, publish.PublishError) as exc:
        return _error(exc)
    written: list[Path] = []
    said: list[str] = []
    try:
        if args.hf_eval_results is not None:
            source = (args.source_url, args.source_name, args.source_user)
            entries, skipped = publish.eval_results(document, detector, source=source, allow_partial=args.allow_partial)
            said += [f"{s.dataset}: {s.reason}" for s in skipped]
            files: dict[str, list[publish.EvalResult]] = {}
            for entry in entries:
                files.setdefault(entry.file, []).append(entry)
            for name, group in files.items():
                path = args.hf_eval_results / ".eval_results" / name
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, eval_results_yaml(group))
                written.append(path)
        if args.screenspot_pro is not None:
            datasets = [d for d in document["run"]["datasets"] if publish.benchmark_key(d) == "screenspot-pro"]
            if not datasets:
                said.append("no ScreenSpot-Pro dataset in the report: no official results file")
            for dataset in datasets:
                why = publish.incomplete(document, dataset, detector)
                if why is not None and not args.allow_partial:
                    said.append(f"{dataset['name']}: {why}: not the benchmark's figure (--allow-partial writes it)")
                    continue
                results = publish.screenspot_pro_results(document, detector, dataset)
                if not results["details"]:
                    said.append(f"{dataset['name']}: {detector} scored no sample of it")
                    continue
                args.screenspot_pro.mkdir(parents=True, exist_ok=True)
                path = args.screenspot_pro / f"{publish.slug(dataset['name'])}-{publish.slug(detector)}.json"
                write_atomic(path, screenspot_pro_json(results))
                written.append(path)
        if args.eee is not None:
            written += _write_eee(args, document, detector, said)
    except publish.PublishError as exc:
        return _error(exc)
    except OSError as exc:
        return _error(f"not written: {exc.strerror or exc}")
    for line in said:
        print(f"not written: {terminal_line(line)}")
    for path in written:
        print(f"wrote {terminal_line(path)}")
    return 0 if written else 1


def _write_eee(args: argparse.Namespace, document: Any, detector: str, said: list[str]) -> list[Path]:
    """--eee DIR: each file's sidecar, then its aggregate (with the sidecar's checksum)."""
    import time

    from ..analysis import eee
    from ..store.reports import write_atomic

    files, skipped = eee.eee_files(
        document, detector, retrieved=str(int(time.time())), organization=args.eee_organization,
        relationship=args.eee_relationship, allow_partial=args.allow_partial,
    )  # fmt: skip
    said += [f"{s.dataset}: {s.reason}" for s in skipped]
    written = []
    for file in files:
        text = eee.samples_text(file.samples)
        samples = args.eee / file.samples_path
        samples.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(samples, text)
        aggregate = args.eee / file.aggregate_path
        write_atomic(aggregate, json.dumps(eee.with_checksum(file, text), indent=2, ensure_ascii=False) + "\n")
        written += [aggregate, samples]
    return written
