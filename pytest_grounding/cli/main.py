"""`python -m pytest_grounding` (or `pytest-grounding`): generate a synthetic benchmark, check a dataset,
make the HTML page and plots of a JSON report; print a report as markdown; compare saved runs; curate
a dataset of your own screens (annotate, review, record); list the model presets."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..core import safefile, safejson
from ..core.safetext import terminal_line


def build_parser() -> argparse.ArgumentParser:
    from ..datasets.synth import DEFAULT_COUNT, DEFAULT_SEED

    parser = argparse.ArgumentParser(prog="pytest-grounding", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    generate = commands.add_parser(
        "generate",
        help="write a synthetic professional-app benchmark (Pointerbench-Pro layout)",
        description="Write DIR/data/test/metadata.jsonl and the screens' PNGs. The same --count and --seed give "
        "byte-identical files.",
    )
    generate.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    generate.add_argument(
        "--count",
        type=int,
        default=DEFAULT_COUNT,
        metavar="N",
        help=f"number of samples (targets), 3-7 per screen (default {DEFAULT_COUNT})",
    )
    generate.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="S", help=f"default {DEFAULT_SEED}")
    generate.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="W",
        help="processes drawing screens (default: one per CPU core for more than a few screens)",
    )
    validate = commands.add_parser(
        "validate",
        help="check a dataset for faults that make scores wrong",
        description="Boxes inside the image and non-degenerate, not implausibly large, ids unique, image files present "
        "and decodable, declared image size equal to the real one, recorded point inside its box, "
        "duplicate instructions on one image. Exit 0: clean or warnings only; 1: errors; 2: not loadable.",
    )
    validate.add_argument("path", metavar="PATH", help="dataset folder or file, or FORMAT:PATH")
    validate.add_argument(
        "--max-per-kind",
        type=int,
        default=None,
        metavar="N",
        help="print at most N lines per kind of problem (the counts stay complete)",
    )
    report = commands.add_parser(
        "report",
        help="make the HTML page (and plots) of a JSON report written by --grounding-json",
        description="The same page as --grounding-html, from a report written earlier, and the run's summary "
        "lines as the run printed them. Each dataset the report "
        "names is read again from its recorded path, and a thumbnail is made only of an image that dataset lists "
        "as its own; any other image is not read, and its entry says why. Exit 0: written; 2: the report cannot "
        "be read, or nothing to write. Given no report and no --html or --plots, the newest run's page is written "
        "again beside its report (grounding-runs/<run>/report.html) and its path printed.",
    )
    report.add_argument(
        "json_path",
        type=Path,
        nargs="?",
        metavar="REPORT.json",
        help="a report written by --grounding-json (default: the newest run's in ./grounding-runs)",
    )
    report.add_argument("--html", type=Path, metavar="PATH", help="write the HTML page here")
    report.add_argument("--plots", type=Path, metavar="DIR", help="write the figures as PNGs here (plots extra)")
    summary = commands.add_parser(
        "summary",
        help="print a JSON report (--grounding-json) as markdown, e.g. for a CI job's summary page",
        description="The verdict, one row per detector, the gates and the baseline's regressions, improvements "
        "and slices beyond their tolerance, as GitHub-flavoured markdown. Exit 0 whatever the run's verdict "
        "(the pytest run is the gate); a missing report is said in the markdown; 2 when it cannot be read.",
    )
    summary.add_argument("report", type=Path, metavar="REPORT", help="the --grounding-json file")
    summary.add_argument(
        "--append",
        type=Path,
        metavar="PATH",
        help='append to this file instead of printing (in GitHub Actions: "$GITHUB_STEP_SUMMARY")',
    )
    compare = commands.add_parser(
        "compare",
        help="one comparison table from saved JSON reports (--grounding-json) of separate runs",
        description="The method matrix of a multi-detector run, from reports of separate runs: accuracy overall, "
        "by target size and element type, latency p50/p95, attempts and errors per detector, the best of each "
        "column marked, and each method against the first on the samples both scored: the difference with its "
        "95% interval clustered by screen, beside McNemar's exact test.",
    )
    compare.add_argument(
        "reports",
        nargs="*",
        type=Path,
        metavar="REPORT.json",
        help="JSON reports, baseline first (default: the two newest runs in ./grounding-runs, the older first)",
    )
    compare.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    compare.add_argument(
        "--samples",
        action="store_true",
        help="list the samples whose outcome changed between the two methods (fixed, broken) with the slice totals",
    )
    compare.add_argument(
        "--limit", type=int, default=None, metavar="N", help="with --samples: list at most N samples of each kind"
    )
    compare.add_argument(
        "--only-ids",
        type=Path,
        metavar="FILE",
        help="pair the runs only on these sample ids (audit --diff OLD NEW --unchanged-ids FILE): runs on two "
        "versions of a dataset, compared on the rows both share unchanged",
    )
    compare.add_argument(
        "--by-slice",
        action="store_true",
        help="each method against the first within each slice (element type, target size, app category, platform): "
        "the paired difference with its 95%% interval clustered by screen (a quantized model against its full weights)",
    )
    compare.add_argument(
        "--mixed-scoring",
        action="store_true",
        help="compare reports scored by different scoring profiles (said in a note); without it they are refused",
    )
    commands.add_parser(
        "doctor",
        help="for each detector, what it needs and whether this machine has it",
        description="Extras, torch and its CUDA devices, the onnxruntime providers that really load, models in the "
        "Hugging Face hub cache, the OmniParser model file, the server of $PYTEST_GROUNDING_OPENAI_BASE_URL. "
        "Downloads and loads nothing. Exit 0.",
    )
    presets = commands.add_parser(
        "presets",
        help="list the model presets of the VLM detectors (name, family, coordinate system, source)",
        description="The shipped presets and a TOML file's; --show NAME prints one preset whole (prompt, "
        "preprocessing, extractors, transform, decoding, refusal form, source) as JSON.",
    )
    presets.add_argument("--toml", type=Path, metavar="PATH", help="also a presets file (as --grounding-presets)")
    presets.add_argument("--show", metavar="NAME", help="print this preset whole, as JSON")
    from .audit import add_command as add_audit
    from .board import add_command as add_board
    from .curation.cli import add_commands
    from .export import add_command as add_export
    from .fake_server import add_command as add_fake_server
    from .merge import add_command as add_merge
    from .rescore import add_command as add_rescore
    from .submit import add_command as add_submit

    add_commands(commands)
    add_merge(commands)
    add_submit(commands)
    add_rescore(commands)
    add_board(commands)
    add_export(commands)
    add_fake_server(commands)
    add_audit(commands)
    return parser


def run_presets(toml: Path | None, show: str | None) -> int:
    import json

    from ..detectors.vlm.presets import get_preset, presets_from_toml, presets_listing, register_preset

    try:
        for preset in presets_from_toml(toml) if toml else []:
            register_preset(preset)
        if show:
            print(json.dumps(get_preset(show).describe(), indent=2))
        else:
            print(presets_listing(), end="")
    except (ValueError, LookupError) as exc:
        print(terminal_line(f"error: {exc}"), file=sys.stderr)
        return 2
    return 0


def run_summary(report: Path, append: Path | None) -> int:
    from ..render.markdown import report_markdown

    if not report.exists():  # pytest stopped before writing it (a usage error): its log says why
        text = f"## Grounding benchmark\n\n**FAILED**: no report at `{report}`: the run stopped early (see its log)\n"
    else:
        from ..store.reports import OutputError, read_report

        try:
            document = read_report(report)  # checked against the schema: `{}` is no report, never **passed**
        except OutputError as exc:
            print(f"error: {terminal_line(exc)}", file=sys.stderr)
            return 2
        text = report_markdown(document)
    if append is None:
        print(text, end="")
        return 0
    try:
        with append.open("a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:  # a full device, a folder, no permission: one line, a failed status
        print(f"error: {terminal_line(f'summary not appended to {append}: {exc.strerror or exc}')}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The commands' one entry point. Output piped into a reader that stops early (`| head`) ends
    the command quietly, as the Python docs' "Note on SIGPIPE" says: the rest of stdout goes to
    /dev/null (the interpreter's last flush would raise again), exit 1, no traceback."""
    try:
        code = _dispatch(argv)
        sys.stdout.flush()  # a pipe closed after the last print: raised here, not at exit
    except BrokenPipeError:
        _stdout_to_devnull()
        return 1
    except OSError as exc:  # a path no command's own check expected (a name too long): one line, not a traceback
        from ..core.paths import os_problem

        print(f"error: {os_problem(exc)}", file=sys.stderr)
        return 2
    return code


def _stdout_to_devnull() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout with no descriptor (a test's capture)
        pass


def _dispatch(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "doctor":
        from .doctor import run_doctor

        return run_doctor()
    if args.command == "generate":
        return run_generate(args.out, args.count, args.seed, args.workers)
    if args.command == "report":
        found = kept_runs([args.json_path] if args.json_path else [], 1)
        if found is None:
            return 2
        html = args.html
        if html is None and args.plots is None and args.json_path is None:  # the newest run: its own page again
            html = found[0].with_suffix(".html")
        return run_report(found[0], html, args.plots)
    if args.command == "summary":
        return run_summary(args.report, args.append)
    if args.command == "presets":
        return run_presets(args.toml, args.show)
    if args.command == "merge":
        from .merge import run as run_merge

        return run_merge(args)
    if args.command == "submit":
        from .submit import run as run_submit

        return run_submit(args)
    if args.command == "rescore":
        from .rescore import run as run_rescore

        return run_rescore(args)
    if args.command == "fake-server":
        from .fake_server import run as run_fake_server

        return run_fake_server(args)
    if args.command in ("board", "export"):
        from .board import run as run_board
        from .export import run as run_export

        return run_board(args) if args.command == "board" else run_export(args)
    if args.command == "audit":
        from .audit import run as run_audit

        return run_audit(args)
    if args.command == "compare":
        reports = kept_runs(args.reports, 2)
        if reports is None:
            return 2
        return run_compare(
            reports,
            markdown=args.markdown,
            samples=args.samples,
            limit=args.limit,
            mixed=args.mixed_scoring,
            only_ids=args.only_ids,
            by_slice=args.by_slice,
        )
    from .curation.cli import COMMANDS, run

    if args.command in COMMANDS:
        return run(args)
    from ..datasets.validate import validate_path

    return validate_path(args.path, max_per_kind=args.max_per_kind)


def kept_runs(given: Sequence[Path], newest: int) -> list[Path] | None:
    """The reports given, else the `newest` runs' reports in the runs folder (render/run_folder.py),
    oldest first; None (said) when there is none."""
    if given:
        return list(given)
    from ..render.run_folder import NoRunFound, default_runs_dir, newest_reports

    try:
        found = newest_reports(default_runs_dir(), newest)
    except NoRunFound as exc:
        print(f"error: {terminal_line(exc)}", file=sys.stderr)
        return None
    for path in found:
        print(f"reading {terminal_line(path)}", file=sys.stderr)
    return found


MAX_GENERATED = 1_000_000  # samples: about 200,000 screens, tens of GB; a larger count only fills the disk


def run_generate(out: Path, count: int, seed: int, workers: int | None) -> int:
    from ..datasets.synth import generate, screens_for

    if not 1 <= count <= MAX_GENERATED:
        print(f"error: --count must be between 1 and {MAX_GENERATED:,}", file=sys.stderr)
        return 2
    if workers is not None and not 1 <= workers <= 1024:
        print("error: --workers must be between 1 and 1,024", file=sys.stderr)
        return 2
    start = time.perf_counter()
    generate(out, count, seed, workers=workers)
    elapsed = time.perf_counter() - start
    screens = len(screens_for(count, seed))
    print(
        terminal_line(
            f"wrote {count} samples on {screens} screens to {out / 'data' / 'test'} in {elapsed:.1f} s (seed {seed})"
        )
    )
    return 0


def run_report(json_path: Path, html: Path | None, plots: Path | None) -> int:

    if html is None and plots is None:
        print("error: nothing to write: give --html PATH and/or --plots DIR", file=sys.stderr)
        return 2
    from ..store.reports import OutputError, read_report

    try:
        document = read_report(json_path)  # checked against the schema before any of it reaches HTML
    except OutputError as exc:
        print(f"error: {terminal_line(exc)}", file=sys.stderr)
        return 2
    from ..render.terminal import document_lines

    for line in document_lines(document):  # the report's summary, as the run, merge and rescore print it
        print(terminal_line(line))
    if plots is not None:
        from ..render.plots import PlotsUnavailable, check_plots, write_plots

        try:
            check_plots(plots)
        except PlotsUnavailable as exc:
            print(terminal_line(f"error: --plots: {exc}"), file=sys.stderr)
            return 2
    start = time.perf_counter()
    if html is not None:
        from ..render.html import write_html
        from .images import dataset_images

        own = dataset_images(document)  # thumbnails only of the report's datasets' own images
        for note in own.notes():
            print(f"note: {terminal_line(note)}", file=sys.stderr)
        try:
            written = write_html(document, html, base=json_path.resolve().parent, withhold=own.withhold)
        except OSError as exc:  # a full device, no permission: one line, a failed status
            print(f"error: {terminal_line(f'HTML report {html} not written: {exc.strerror or exc}')}", file=sys.stderr)
            return 2
        partial = " (partial run)" if document.get("partial") else ""
        print(
            f"wrote {written.path}{partial}: {written.entries} gallery entries from {written.screens} screens, "
            f"{written.bytes / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s"
        )
    if plots is not None:
        try:
            paths = write_plots(document, plots)
        except OSError as exc:
            print(f"error: {terminal_line(f'plots not written to {plots}: {exc.strerror or exc}')}", file=sys.stderr)
            return 2
        print(terminal_line(f"wrote {len(paths)} plots to {plots}: {', '.join(p.name for p in paths)}"))
    return 0


def run_compare(
    paths: Sequence[Path],
    *,
    markdown: bool,
    samples: bool,
    limit: int | None,
    mixed: bool = False,
    only_ids: Path | None = None,
    by_slice: bool = False,
) -> int:
    """Exit 0 with the table; 2 for a file that is no report or a request that cannot be met
    (reports scored by different profiles, unless `mixed`: then a note says so)."""
    from ..analysis.compare import change_lines, changes, comparison_lines, methods_from_reports, profile_mismatch
    from ..store.reports import OutputError, read_report

    try:
        documents = [(path.stem, read_report(path)) for path in paths]
    except OutputError as exc:
        print(f"error: {terminal_line(exc)}", file=sys.stderr)
        return 2
    names = [name for name, _ in documents]
    pairs = zip(documents, paths, strict=True)
    documents = [(name if names.count(name) == 1 else str(path), doc) for (name, doc), path in pairs]
    mismatch = profile_mismatch(documents)
    if mismatch and not mixed:
        print(f"error: {terminal_line(mismatch)}; --mixed-scoring compares them anyway", file=sys.stderr)
        return 2
    methods, notes = methods_from_reports(documents)
    notes = [mismatch, *notes] if mismatch else notes
    if only_ids is not None:
        from ..analysis.compare import on_shared_ids, shared_ids, shared_ids_refusal

        try:
            alias = shared_ids(safefile.read_text(only_ids, limit=safejson.MAX_DOCUMENT_CHARS))
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            print(f"error: {terminal_line(f'--only-ids {only_ids}: {reason}')}", file=sys.stderr)
            return 2
        refused = shared_ids_refusal(documents, alias, methods)
        if refused:
            print(f"error: {terminal_line(f'--only-ids {only_ids}: {refused}')}", file=sys.stderr)
            return 2
        methods = on_shared_ids(methods, alias, documents[0][0])
        notes = [n for n in notes if "fingerprints" not in n]
        placed = (
            "each record placed by its dataset fingerprint"
            if alias.old_fingerprint
            else f"{documents[0][0]} taken as the old version"
        )
        notes.append(
            f"paired only on the {len(alias)} ids of {only_ids} (the rows both versions share, old and new id "
            f"paired; {placed}); the table's figures are each run's own"
        )
    if not methods:
        print("error: the reports hold no grounding results", file=sys.stderr)
        return 2
    if samples and len(methods) != 2:
        labels = ", ".join(m.label for m in methods)
        message = f"--samples compares exactly two methods; these reports hold {len(methods)}: {labels}"
        print(terminal_line(f"error: {message}"), file=sys.stderr)
        return 2
    from ..core.safetext import markdown_text

    for note in notes:
        print(markdown_text(f"note: {note}") if markdown else terminal_line(f"note: {note}"))
    if notes:
        print()
    for line in comparison_lines(methods, markdown=markdown):
        print(line if markdown else terminal_line(line))  # the markdown lines escape their own data
    if by_slice and len(methods) > 1:
        from ..analysis.compare import slice_lines

        print()
        for line in slice_lines(methods):
            print(markdown_text(line) if markdown else terminal_line(line))
    if samples:
        print()
        for line in change_lines(changes(methods[0], methods[1]), limit):
            print(terminal_line(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
