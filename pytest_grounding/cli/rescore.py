"""`python -m pytest_grounding rescore PREDICTIONS [--preset NAME] [--scoring PROFILE] [--errata FILE] --json OUT`:
a run's records scored again without the model (pytest_grounding.evaluate.rescore): the raw
answers parsed again with another preset, and every record judged by a scoring profile; written as
the JSON report (and predictions) a fresh run with that preset and profile writes. The errata a
report was run with (its `errata` block's corrections) are applied again, or `--errata FILE`'s."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.safetext import terminal_line

DESCRIPTION = (
    "Every record of a predictions file (--grounding-predictions) or a JSON report (--grounding-json) "
    "scored again, without the model: with --preset, the raw answers of the VLM detectors are parsed again "
    "by that preset (its extractors, transform, refusal form and preprocessing's frame); with --scoring, every "
    "record is judged by that scoring profile (default: pixel); with --errata, that errata file's corrected "
    "figure is given beside the official one (without it, a report's own errata are applied again). Other records "
    "are scored from their stored "
    "answer; error records and the element-at-click task's are kept as written. Writes the records and the "
    "report that a fresh run with that preset and profile writes. Exit 0: written; 2: the file cannot be read "
    "or a record cannot be scored."
)


# the run settings a report needs, for a predictions file (a report's own are kept)
BARE_SETTINGS: dict[str, Any] = {"misses": "fail", "limit": None, "timeout_s": None, "top_apps": None, "gates": []}


def add_command(commands: Any) -> None:
    from ..core.profiles import DEFAULT_PROFILE, PROFILES

    rescore = commands.add_parser(
        "rescore",
        help="score a run's predictions again: another preset's parsing, another scoring profile; no model",
        description=DESCRIPTION,
    )
    rescore.add_argument("source", type=Path, metavar="PREDICTIONS", help="a predictions JSONL or a JSON report")
    rescore.add_argument("--preset", metavar="NAME", help="parse the raw answers again with this preset")
    rescore.add_argument(
        "--frame",
        metavar="NAME",
        help="decode the answers (a VLM's, or a replayed file's stored clicks) in this coordinate frame whatever the "
        "preset says: original-pixels, rel1000, "
        "rel1, swapped, resized-by-server:max_pixels=N (or :long_edge=L, :scale=S), offset:DX,DY (the report's "
        "summary[DET].diagnosis.frame.suggestion names one; docs: why it misses)",
    )
    rescore.add_argument(
        "--scoring",
        default=DEFAULT_PROFILE,
        choices=list(PROFILES),
        metavar="PROFILE",
        help=f"scoring profile: {', '.join(PROFILES)} (default {DEFAULT_PROFILE}; docs/measured.md)",
    )
    rescore.add_argument(
        "--errata",
        type=Path,
        metavar="FILE",
        help="an errata file (JSONL, as --grounding-errata): the corrected accuracy beside the official one; "
        "without it, the errata a report was run with are applied again (docs: audit)",
    )
    rescore.add_argument("--json", required=True, type=Path, metavar="PATH", help="write the report here")
    rescore.add_argument("--predictions", type=Path, metavar="PATH", help="also the records as a predictions JSONL")


def preset_parser(name: str) -> Any:
    """The `parse(record, image_size)` of a preset: what a served or in-process VLM detector with
    that preset makes of the record's raw answer (its frame from the preset's preprocessing, capped
    at the server's default pixel budget as `openai` caps it)."""
    from ..detectors.served_budget import server_budget, within_budget
    from ..detectors.vlm.presets import resolve_preset

    preset = resolve_preset(name)
    preset = within_budget(preset, server_budget(preset))
    dropped = ("answer_shape", "model_coordinates", "refusal", "model_image")

    def parse(record: Mapping[str, Any], size: tuple[int, int]) -> Any:
        frame = preset.preprocess.frame(size)
        stored = record.get("meta") if isinstance(record.get("meta"), Mapping) else {}
        meta = {"model_image": list(frame.model), **{k: v for k, v in dict(stored or {}).items() if k not in dropped}}
        raw = record.get("raw")
        return preset.parse(raw if isinstance(raw, str) else None, frame, meta)

    return parse


def frame_parser(spec: str, base: Any = None) -> Any:
    """The `parse(record, image_size)` that decodes a stored answer in frame `spec` (core/frames.py):
    a VLM's answer as its preset (or `base`, another preset's parse) read it, any other record's
    stored click (a replayed file's numbers) as it stands, then re-mapped. A stored click re-mapped
    keeps its numbers as `meta.model_coordinates`, so that rescoring again is no second re-map."""
    from ..core.frames import AS_PRESET, decode_prediction_point, parse_frame
    from ..core.types import Prediction
    from ..evaluate.rescore import is_model_answer
    from ..evaluate.resume import prediction_of

    frame = parse_frame(spec)

    def parse(record: Mapping[str, Any], size: tuple[int, int]) -> Any:
        model = is_model_answer(record)
        prediction = base(record, size) if base is not None and model else prediction_of(record)
        if frame.name == AS_PRESET or prediction.refused:
            return prediction
        meta = dict(prediction.meta)
        point = decode_prediction_point(frame, prediction.click, meta, size)
        if point is None:
            return prediction
        if not model and prediction.click is not None and "model_coordinates" not in meta:
            meta["model_coordinates"] = [float(prediction.click[0]), float(prediction.click[1])]
        return Prediction(point=point, raw=prediction.raw, meta={**meta, "frame": frame.spec})

    return parse


def _read(source: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The records, and the report they came from (None for a predictions file)."""
    from ..store.reports import check_records, read_predictions, read_report

    if source.suffix == ".json":
        document = read_report(source)
        return [dict(r) for r in document["samples"]], document
    lines = read_predictions(source)
    bad = [n for n, line in lines if not isinstance(line, dict) or "outcome" not in line or "detector" not in line]
    if bad:
        raise ValueError(f"{source}:{bad[0]}: not a record of a predictions file (--grounding-predictions)")
    check_records(source, [line for _, line in lines])  # a line copied would count twice
    return [line for _, line in lines], None


def _datasets(records: list[dict[str, Any]], document: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The report's datasets, or for a predictions file what its records say of theirs (name, count,
    fingerprint; format and path are not in a record)."""
    if document is not None:
        return list(document["run"]["datasets"])
    found: dict[str, dict[str, Any]] = {}
    for record in records:
        entry = found.setdefault(
            record["dataset"],
            {"name": record["dataset"], "format": "unknown", "path": "", "samples": 0, "fingerprint": "unknown"},
        )
        entry["samples"] += 1
        if isinstance(record.get("fingerprint"), str):
            entry["fingerprint"] = record["fingerprint"]
    return [{**entry, "defects": 0, "problems": []} for _, entry in sorted(found.items())]


def _errata(path: Path | None, source: dict[str, Any] | None) -> tuple[Any, list[str]]:
    """The errata to apply (analysis/errata.py's Errata, or None) and what to say of them: `--errata FILE`,
    else the corrections a report's `errata` block lists. A bad file is a ValueError naming it."""
    from ..analysis import errata as errata_mod

    if path is not None:
        from ..core import safefile

        try:
            data = safefile.read_bytes(path, limit=safefile.MAX_FILE_BYTES)  # a regular file, bounded
        except (OSError, safefile.FileTooLarge) as exc:
            raise ValueError(f"--errata {path}: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            return errata_mod.parse(data, f"--errata {path}", str(path)), []
        except errata_mod.ErrataError as exc:
            raise ValueError(str(exc)) from None
    found = source.get("errata") if source else None
    if not isinstance(found, Mapping):
        return None, []
    try:
        applied = errata_mod.from_block(found)
    except errata_mod.ErrataError as exc:
        raise ValueError(f"the report's errata block cannot be applied again: {exc}") from None
    if applied is None:
        return None, [
            f"the report applied errata {str(found.get('digest'))[:12]}, but does not list its corrections "
            "(written by an older version): the rescored report gives the official figure only (--errata FILE "
            "applies the file again)"
        ]
    return applied, []


def run(args: argparse.Namespace) -> int:
    from ..analysis import document as document_mod
    from ..analysis import errata as errata_mod
    from ..core.profiles import get_profile
    from ..evaluate.rescore import rescore
    from ..evaluate.sample_of_record import RescoreError
    from ..plugin.common.environment import versions as environment_versions
    from ..sections import sections
    from ..store.reports import OutputError, PredictionsWriter, write_json

    started = time.time()
    try:
        profile = get_profile(args.scoring)
        parse = preset_parser(args.preset) if args.preset else None
        if args.frame:
            parse = frame_parser(args.frame, parse)
        records, source = _read(args.source)
        errata, errata_notes = _errata(args.errata, source)
        if errata is not None:
            named = f"--errata {args.errata or 'of the report'}"
            errata.check_datasets((str(r.get("dataset")) for r in records), named)
            off = errata_mod.off_image(errata, records)
            if off:
                raise ValueError(f"{named}: {'; '.join(off[:3])}")
        found = rescore(records, profile, parse, args.preset, stored_clicks=bool(args.frame))
        if args.frame:  # every record of the run, parsed again or not: one configuration, its frame named
            from dataclasses import replace

            from ..core.record import with_fields
            from ..evaluate.rescore import reframe

            framed = tuple(with_fields(r, detector=reframe(str(r["detector"]), args.frame)) for r in found.records)
            found = replace(found, records=framed)
    except (OutputError, RescoreError, ValueError, LookupError) as exc:
        print(terminal_line(f"error: {exc}"), file=sys.stderr)
        return 2
    notes = [
        f"rescored from {args.source}"
        + (f" with preset {args.preset}" if args.preset else "")
        + (f" in frame {args.frame}" if args.frame else "")
        + (f" with errata {args.errata}" if args.errata else "")
    ]
    notes += errata_notes
    if errata is not None:
        from ..analysis.errata import unmatched_note

        unmatched = unmatched_note(errata, found.records, "the rescored records")
        if unmatched:
            notes.append(unmatched)
    if found.cut:
        notes.append(f"{found.cut} raw answers were cut at 500 characters by an older version: parsed as they are")
    if found.not_parsed and args.frame:
        notes.append(
            f"{found.not_parsed} records hold no VLM answer to parse again: their stored clicks read in frame "
            f"{args.frame}"
        )
    elif found.not_parsed:
        notes.append(f"{found.not_parsed} records hold no VLM answer to parse again: scored from their stored answer")
    datasets = _datasets(records, source)
    stored = dict(source["run"]["detectors"]) if source else {}
    renamed = {str(old["detector"]): str(new["detector"]) for old, new in zip(records, found.records, strict=True)}
    detectors: dict[str, Any] = {renamed.get(str(spec), str(spec)): info for spec, info in stored.items()}
    for spec in dict.fromkeys(str(r["detector"]) for r in found.records):
        detectors.setdefault(spec, {"name": spec, "class": "unknown (rescored from a predictions file)"})
    settings = dict(source["run"]["settings"]) if source else {}
    settings.pop("errata", None)  # the errata applied here say themselves below
    scoring = document_mod.Scoring(
        refusal_rows=str(settings.get("refusal_rows") or "include"),
        max_errors=settings.get("max_errors", 0.1),
        profile=profile.describe(),
        errata=errata,
    )
    figures = document_mod.figures(
        found.records, scoring, datasets=datasets, detector_info=detectors, interrupted=False, sections=sections()
    )
    header = document_mod.Header(
        started=started,
        duration_s=time.time() - started,
        args=(
            "rescore",
            str(args.source),
            *(["--preset", args.preset] if args.preset else []),
            *(["--frame", args.frame] if args.frame else []),
            *(["--errata", str(args.errata)] if args.errata else []),
            "--scoring",
            profile.name,
        ),
        settings={**BARE_SETTINGS, **settings, "scoring": profile.name, **errata_mod.settings_entry(errata)},
        workers=None,
        versions=dict(source["versions"]) if source else environment_versions(),
        partial=bool(source.get("partial")) if source else False,
        resumed=0,
        notes=tuple(notes),
    )
    document = document_mod.build(found.records, figures, scoring, header, datasets=datasets, detector_info=detectors)
    try:
        write_json(args.json, document)
    except (OSError, ValueError) as exc:
        print(terminal_line(f"error: report {args.json} not written: {exc}"), file=sys.stderr)
        return 2
    if args.predictions is not None:
        writer = PredictionsWriter(args.predictions)
        for record in found.records:
            writer.write(record)
        writer.close()
        if writer.error:
            print(terminal_line(f"error: {writer.error}"), file=sys.stderr)
            return 2
    from ..render.terminal import document_lines

    for line in document_lines(document):  # the rescored document's summary, as a run prints it
        print(terminal_line(line))
    print()
    print(
        f"rescored {len(found.records)} records ({found.parsed} parsed again, {found.kept} kept as written): "
        f"{found.changed} outcomes changed -> {args.json}"
    )
    return 0
