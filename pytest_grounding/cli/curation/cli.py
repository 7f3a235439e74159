"""The curation commands' arguments (`annotate`, `review`, `record`) and their dispatch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

COMMANDS = ("annotate", "review", "record")


def add_commands(commands: Any) -> None:
    annotate = commands.add_parser(
        "annotate",
        help="draft annotations.json from screenshots with a detector that lists elements (ocr, omniparser)",
        description="Each screenshot becomes a screen, each element the detector finds a draft element with its box, "
        "type and text as instruction. An existing OUT keeps its screens; new screenshots are added. Screenshots "
        "outside OUT's folder are copied into its images/ folder. Exit 0: written; 2: nothing to annotate or the "
        "detector cannot list elements.",
    )
    annotate.add_argument("screenshots", type=Path, metavar="SCREENSHOTS_DIR", help="folder of PNG/JPEG screenshots")
    annotate.add_argument("--detector", default="ocr", metavar="SPEC", help="name[:key=value,...] (default ocr)")
    annotate.add_argument("--out", required=True, type=Path, metavar="annotations.json", help="the file to write")
    annotate.add_argument("--dataset", default=None, metavar="NAME", help="the dataset's name (default: OUT's folder)")
    review = commands.add_parser(
        "review",
        help="review an annotations.json in the terminal: accept, reject, fix boxes and instructions",
        description="One draft element at a time. Keys: a accept, r reject, e edit the box (Tab picks the edge, "
        "arrows move it), i edit the instruction, n add an element, s skip, q quit. Saved after every decision; "
        "a second run resumes where the first stopped. Screens outside the file's folder are not read. Exit 0; "
        "2 when the file cannot be read, or standard input is not a terminal while drafts are left.",
    )
    review.add_argument("file", type=Path, nargs="?", metavar="annotations.json")
    review.add_argument(
        "--audit",
        type=Path,
        metavar="AUDIT.json",
        help="walk an audit's findings (audit --json) instead, one sample at a time: keep, drop, fix the box or "
        "the instruction; each decision is written to --errata at once",
    )
    review.add_argument(
        "--errata",
        type=Path,
        metavar="ERRATA.jsonl",
        help="with --audit: the errata file to write (resumed where it stopped), for --grounding-errata",
    )
    review.add_argument(
        "--preview",
        choices=("auto", "kitty", "sixel", "file"),
        default="auto",
        help="how to show the element: inline (kitty or sixel graphics) or as a PNG file beside the "
        "annotations (default auto: inline only where the terminal says it can)",
    )
    record = commands.add_parser(
        "record",
        help="record clicks on an X11 desktop as a dataset (screenshot, point, box, label per click)",
        description="On each left click: a screenshot, the click point and the box of the X window under it; "
        "a label is then asked on the terminal (an empty one drops the click). Stops after --count clicks, at "
        "end of input or on Ctrl-C. Needs the curation extra and an X11 display. Exit 0; 2 no display.",
    )
    record.add_argument("--out", required=True, type=Path, metavar="DIR", help="dataset folder (annotations.json)")
    record.add_argument("--count", type=int, default=None, metavar="N", help="stop after N labelled clicks")
    record.add_argument(
        "--box-size",
        type=float,
        default=40.0,
        metavar="PX",
        help="side of the box drawn around a click when no widget window gives one (default 40)",
    )


def run(args: argparse.Namespace) -> int:
    if args.command == "annotate":
        from .annotate import run_annotate

        return run_annotate(args.screenshots, args.detector, args.out, dataset=args.dataset)
    if args.command == "review" and args.audit is not None:
        from . import errata_review

        if args.errata is None:
            print("error: review --audit needs --errata ERRATA.jsonl (the file it writes)", file=sys.stderr)
            return 2
        return errata_review.run(args.audit, args.errata, args.preview)
    if args.command == "review":
        from .tui import run_review

        if args.file is None:
            print("error: review needs annotations.json (or --audit AUDIT.json --errata ERRATA.jsonl)", file=sys.stderr)
            return 2

        return run_review(args.file, args.preview)
    from .record import run_record

    return run_record(args.out, count=args.count, box_size=args.box_size)
