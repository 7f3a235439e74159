"""A run's card (issue 58): what a reader needs to judge one detector's number, in one list of
fields. One function builds them (`card_fields`); the report's card section (sections/card.py)
shows them in the markdown summary and on the HTML page's first screen, and the Every Eval Ever
export (analysis/eee.py) carries the same fields, so the card and the published file never disagree.

Pure: a parsed report in, plain strings out."""

from __future__ import annotations

import hashlib
import itertools
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.identity import display_name, engine_of, found, strategy_of, weights_of
from ..core.numbers import pct
from ..core.profiles import profile_of
from .intervals import METHOD, span

# The card's fields, in the order they are shown (key -> label).
FIELDS: dict[str, str] = {
    "model": "model",
    "engine": "engine",
    "preset": "preset",
    "prompt_digest": "prompt digest",
    "dataset": "dataset",
    "samples": "samples",
    "accuracy": "accuracy",
    "scoring_profile": "scoring profile",
    "errata": "errata",
    "frame_check": "frame check",
    "rescored": "figures",
    "harness": "harness",
    "command": "command line",
}


@dataclass(frozen=True)
class CardField:
    key: str  # one of FIELDS
    label: str
    text: str


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def prompt_digest(preset: Mapping[str, Any]) -> str | None:
    """The first 16 hex digits of the sha256 of a preset's prompt (its system and user templates
    as the report records them, keys sorted): two runs with one digest sent the same words."""
    prompt = preset.get("prompt")
    if not prompt:
        return None
    text = json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def command_line(document: Mapping[str, Any]) -> str:
    """The command the run was started with (pytest and its arguments, quoted for a shell; a report
    `rescore` wrote: the rescore command)."""
    args = _mapping(document.get("run")).get("args")
    if not isinstance(args, Sequence) or isinstance(args, str):
        return "not recorded"
    head = "python -m pytest_grounding " if rescored_by(document) else "pytest "
    return head + " ".join(shlex.quote(str(a)) for a in args)


RESCORE_OPTIONS = ("--preset", "--frame", "--scoring", "--errata")


def rescore_options(document: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The options of the `rescore` that wrote this report (`("--frame rel1000", "--scoring pixel")`), or
    None for a report a run wrote. Its run.args start with `rescore` (cli/rescore.py writes them)."""
    args = _mapping(document.get("run")).get("args")
    if not isinstance(args, Sequence) or isinstance(args, str) or not args or args[0] != "rescore":
        return None
    return tuple(f"{flag} {value}" for flag, value in itertools.pairwise(args) if flag in RESCORE_OPTIONS)


def rescored_by(document: Mapping[str, Any]) -> str | None:
    """`rescored offline from the run's stored answers (--frame rel1000, ...)` for a report `rescore` wrote:
    its figures are the stored answers judged again (another preset, frame, profile or errata), not the
    run's own. None for a run's report. Every export and the board say it (issue 60)."""
    how = rescore_options(document)
    if how is None:
        return None
    return "rescored offline from the run's stored answers" + (f" ({', '.join(how)})" if how else "")


def card_fields(document: Mapping[str, Any], key: str, dataset: str | None = None) -> list[CardField]:
    """The card of the detector `key` (a summary key) in a report; `dataset` narrows the dataset,
    samples and accuracy fields to one dataset (the EEE export's one file per benchmark)."""
    summary = _mapping(_mapping(document.get("summary")).get(key))
    spec = str(summary.get("detector", key))
    run = _mapping(document.get("run"))
    info = _mapping(_mapping(run.get("detectors")).get(spec))
    versions = _mapping(document.get("versions"))
    out: dict[str, str] = {}

    model = found(info, ("model",))
    name = display_name(spec, info)
    model_text = str(model) if isinstance(model, (str, int, float)) and model != "" else name
    weights = weights_of(info)
    if weights:
        model_text += f" (weights {weights})"
    if name != model_text and name != str(model):
        model_text += f"; detector {name}"
    strategy = strategy_of(info)
    if strategy:
        model_text += f"; strategy {strategy}"
    out["model"] = model_text

    engine = engine_of(info)
    if not engine:
        in_process = [f"{lib} {versions[lib]}" for lib in ("transformers", "torch") if versions.get(lib)]
        kind = info.get("kind")
        engine = f"in process ({kind})" if kind else "in process"
        if info.get("class") and "detectors.qwenvl" in str(info.get("class")) and in_process:
            engine += ": " + ", ".join(in_process)
    out["engine"] = engine

    preset = found(info, ("preset",))
    if isinstance(preset, Mapping):
        origin = preset.get("origin") or "built-in"
        source = preset.get("source") or "no source recorded"
        out["preset"] = f"{preset.get('name')} ({origin}; source: {source})"
        out["prompt_digest"] = prompt_digest(preset) or "no prompt"
    else:
        out["preset"] = str(preset) if preset else "none (not a prompted model)"
        out["prompt_digest"] = "no prompt"

    datasets = [d for d in run.get("datasets") or [] if isinstance(d, Mapping)]
    if dataset is not None:
        datasets = [d for d in datasets if d.get("name") == dataset]
    out["dataset"] = (
        "; ".join(f"{d.get('name')} ({d.get('samples')} samples, fingerprint {d.get('fingerprint')})" for d in datasets)
        or "none"
    )

    counts: Mapping[str, Any] = summary
    if dataset is not None:
        by = _mapping(summary.get("by")).get("dataset") or []
        counts = next((r for r in by if isinstance(r, Mapping) and r.get("value") == dataset), {})
    not_run = [
        r
        for r in document.get("not_run") or []
        if isinstance(r, Mapping) and r.get("detector") == spec and (dataset is None or r.get("dataset") == dataset)
    ]
    out["samples"] = f"{counts.get('scored', 0)} scored, {counts.get('errors', 0)} errors, {len(not_run)} not run" + (
        " (the run is partial)" if document.get("partial") else ""
    )
    interval = span(counts.get("ci95"))
    out["accuracy"] = f"{pct(counts.get('accuracy'))}, 95% CI {interval} ({METHOD}, clustered by screen)"

    profile = _mapping(document.get("scoring_profile"))
    rule = profile.get("rule")
    out["scoring_profile"] = profile_of(document) + (f": {rule}" if rule else "")

    errata = _mapping(document.get("errata"))
    if errata.get("digest"):
        out["errata"] = (
            f"applied: {errata.get('file')} (sha256 {str(errata['digest'])[:12]}, {errata.get('drops', 0)} dropped, "
            f"{errata.get('fixes', 0)} fixed); the accuracy is the official one"
        )
    else:
        out["errata"] = "none applied"

    check = _mapping(_mapping(document.get("frame_check")).get(spec))
    if check:
        mode = check.get("mode")
        out["frame_check"] = f"{check.get('name')} ({check.get('requests', 0)} requests, mode {mode})"
    else:
        out["frame_check"] = "not run"

    out["rescored"] = rescored_by(document) or "the run's own"

    harness = versions.get("pytest-grounding")
    pytest_version = versions.get("pytest")
    out["harness"] = (
        f"pytest-grounding {harness or 'unknown'}"
        + (f", pytest {pytest_version}" if pytest_version else "")
        + f", report schema {document.get('schema_version')}, scoring {document.get('scoring_version')}"
    )
    out["command"] = command_line(document)
    return [CardField(k, label, out[k]) for k, label in FIELDS.items()]


def card_dict(document: Mapping[str, Any], key: str, dataset: str | None = None) -> dict[str, str]:
    """The card as key -> text."""
    return {f.key: f.text for f in card_fields(document, key, dataset)}
