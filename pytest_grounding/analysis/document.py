"""The JSON report's document from a run's records and settings: the figures (summary, cost,
reproduction verdicts, gates) and the document around them. Pure: the pytest session and
`python -m pytest_grounding merge` both call it, so a merged report and a single run's can never
disagree on how a figure is computed."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.profiles import get_profile
from ..core.record import SCHEMA_VERSION
from . import cost as cost_mod
from . import errata as errata_mod
from . import gates as gates_mod
from . import intervals, metrics, reproduce, robustness

# Bumped by a change that scores the same predictions differently (outcomes or figures): a merge
# refuses reports whose scoring differs. Reports without it are read as scoring 1.
SCORING_VERSION = 1


@dataclass(frozen=True)
class Scoring:
    """What the figures depend on besides the records."""

    refusal_rows: str = "include"
    price: cost_mod.Price | None = None
    gates: tuple[gates_mod.Gate, ...] = ()
    max_errors: float | None = 0.1
    limit: int | None = None
    published: reproduce.Table | None = None
    gate_on_interval: bool = False  # gates judged on the lower bound of the 95% interval
    max_drops: tuple[Any, ...] = ()  # --grounding-max-drop: robustness.MaxDrop gates
    errata: errata_mod.Errata | None = None  # --grounding-errata: the corrected figure beside the official one
    # the scoring profile's name, rule and source (core/profiles.py): recorded in every report
    profile: Mapping[str, str] = field(default_factory=lambda: get_profile(None).describe())


@dataclass(frozen=True)
class RunRecords:
    """What a run-level section computes its figures from (Section.run_figures): the run's records,
    how it is scored, the detector blocks already summarized."""

    records: Sequence[Mapping[str, Any]]
    scoring: Scoring
    summary: Mapping[str, Any]
    datasets: Sequence[Mapping[str, Any]]
    detector_info: Mapping[str, Mapping[str, Any]]
    interrupted: bool
    registered: Callable[[str], Mapping[str, Any] | None] | None = None  # a preset's registered description
    # what the controller's checks found, by the report key of the section that keeps it (the
    # start-up's frame_check, the baseline file's comparison); a section's run_figures takes its own
    checks: Mapping[str, Any] = field(default_factory=dict)


class ReportSection(Protocol):
    """A report section as the figures see it (sections.Section is one; analysis imports no section)."""

    @property
    def name(self) -> str: ...

    @property
    def level(self) -> str: ...

    def figures(self, found: Any) -> Any | None: ...

    def run_figures(self, found: RunRecords) -> Any | None: ...

    def judge(self, summary: Mapping[str, Any], scoring: Any) -> list[Any]: ...

    def verdict_entries(self, verdicts: Sequence[Any]) -> Mapping[str, Any]: ...

    def read_verdicts(self, document: Mapping[str, Any]) -> list[Any]: ...


@dataclass(frozen=True)
class Figures:
    summary: dict[str, Any]
    verdicts: tuple[Any, ...] = ()  # gates_mod.Verdict | gates_mod.ErrorVerdict | a section's own
    # the report's keys the sections make beside the summary (their run_figures: cost, reproduction,
    # errata; their verdict_entries: robustness_gates), in the sections' order
    run: Mapping[str, Any] = field(default_factory=dict)


def figures(
    records: Sequence[Mapping[str, Any]],
    scoring: Scoring,
    *,
    datasets: Sequence[Mapping[str, Any]],
    detector_info: Mapping[str, Mapping[str, Any]],
    interrupted: bool,
    registered: Callable[[str], Mapping[str, Any] | None] | None = None,
    sections: Sequence[ReportSection] = (),
    checks: Mapping[str, Any] | None = None,
) -> Figures:
    """Every figure of the report; the gates are judged only on a complete run. `sections`: the
    run's report sections (sections/registry.py), each asked for its figures (detector-level: into
    each summary block; run-level: a key of the report), its gates and the report keys of its
    verdicts, in their order: building the document is a loop over them."""
    detector_level = [s for s in sections if s.level == "detector"]
    summary = metrics.summarize(records, refusal_rows=scoring.refusal_rows, figures=detector_level)
    for name, block in summary.items():  # a detector's label= (issue 51), on its block for the renderers
        label = (detector_info.get(block.get("detector", name)) or {}).get("label")
        if label:
            block["label"] = label
    verdicts: list[Any] = []
    if not interrupted:
        verdicts = gates_mod.judge(
            list(scoring.gates), summary, max_errors=scoring.max_errors, on_lower=scoring.gate_on_interval
        )
        for section in sections:  # each feature's own gates (--grounding-max-drop: robustness)
            verdicts += section.judge(summary, scoring)
    found = RunRecords(records, scoring, summary, datasets, detector_info, interrupted, registered, checks or {})
    run: dict[str, Any] = {}
    for section in sections:  # each whole-run feature's figures (cost, reproduction, the errata's corrected figure)
        if section.level != "detector":
            made = section.run_figures(found)
            if made is not None:
                run[section.name] = made
    for section in sections:  # each feature's own verdicts, kept (--grounding-max-drop: robustness_gates)
        run.update(section.verdict_entries(verdicts))
    return Figures(summary, tuple(verdicts), run)


def dataset_entries(
    found: Mapping[str, Mapping[str, Any]], records: Sequence[Mapping[str, Any]], limit: int | None
) -> list[dict[str, Any]]:
    """The datasets the records came from, by name, each marked with the run's --grounding-limit
    when it cut the set."""
    used = {r["dataset"] for r in records}
    out = []
    for name in sorted(used & set(found)):
        summary = dict(found[name])
        summary.pop("limit", None)
        if limit is not None and limit < summary["samples"]:
            summary["limit"] = limit
        out.append(summary)
    return out


@dataclass(frozen=True)
class Header:
    """The document's parts that describe the run rather than score it."""

    started: float
    duration_s: float
    args: tuple[str, ...]
    settings: Mapping[str, Any]
    workers: Any
    versions: Mapping[str, Any]
    partial: bool
    resumed: int
    notes: tuple[str, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)  # not_run, budget, shard, merge


def gate_entries(verdicts: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "detector": v.detector,
            "slice": v.gate.label,
            "threshold": v.gate.threshold,
            "accuracy": v.accuracy,
            "ci95": None if v.ci95 is None else list(v.ci95),
            "judged_on": "lower bound" if v.on_lower else "accuracy",
            "scored": v.scored,
            "passed": v.passed,
        }
        for v in verdicts
        if isinstance(v, gates_mod.Verdict)
    ]


def error_entries(verdicts: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {"detector": v.detector, "errors": v.errors, "samples": v.samples, "max_share": v.max_share, "passed": v.passed}
        for v in verdicts
        if isinstance(v, gates_mod.ErrorVerdict)
    ]


def build(
    records: Sequence[Mapping[str, Any]],
    found: Figures | None,
    scoring: Scoring,
    header: Header,
    *,
    datasets: Sequence[Mapping[str, Any]],
    detector_info: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """The report. `found` None: no records (nothing was scored)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": "pytest-grounding",
        "scoring_version": SCORING_VERSION,
        "scoring_profile": dict(scoring.profile),
        "partial": header.partial,
        "resumed": header.resumed,
        "notes": list(header.notes),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(header.started)),
        "duration_s": round(header.duration_s, 3),
        "run": {
            "args": list(header.args),
            "datasets": list(datasets),
            "detectors": dict(detector_info),
            "settings": dict(header.settings),
            "workers": header.workers,
        },
        "versions": dict(header.versions),
        "intervals": intervals.about(),
        "summary": found.summary if found else {},
        "gates": gate_entries(found.verdicts) if found else [],
        "errors_check": error_entries(found.verdicts) if found else [],
        **(dict(found.run) if found else {}),  # the sections' own keys (Figures.run), in their order
        "samples": sorted(records, key=metrics.record_order),
        **header.extra,
    }


def verdicts_of(document: Mapping[str, Any], sections: Sequence[ReportSection] = ()) -> tuple[Any, ...]:
    """The verdicts a report holds (`gates`, `errors_check`, then each section's own: `robustness_gates`),
    in the order `figures` judged them: per detector its failed error share, then its gates; then the
    sections' (read_verdicts). What `merge`, `rescore` and a report read back print, as the run printed them."""
    summary = document.get("summary") or {}
    errors = {e["detector"]: e for e in document.get("errors_check") or [] if not e.get("passed", True)}
    found: list[Any] = []
    for detector, block in summary.items():
        too_many = errors.get(detector)
        if too_many is not None:
            found.append(
                gates_mod.ErrorVerdict(
                    detector, int(too_many["errors"]), int(too_many["samples"]), float(too_many["max_share"])
                )
            )
        for entry in document.get("gates") or []:
            if entry.get("detector") != detector:
                continue
            label = str(entry.get("slice") or "overall")
            key, _, value = label.partition("=")
            gate = gates_mod.Gate(float(entry["threshold"]), None if label == "overall" else key, value or None)
            bounds = entry.get("ci95")
            rows = (block.get("by") or {}).get(key) or [] if gate.key is not None else []
            # a slice value no sample has: the values the run has, for the gate's "did you mean"
            named = any(str(r.get("value")).lower() == (value or "").lower() for r in rows)
            values = () if gate.key is None or named else tuple(str(r.get("value")) for r in rows)
            found.append(
                gates_mod.Verdict(
                    gate,
                    detector,
                    entry.get("accuracy"),
                    int(entry.get("scored") or 0),
                    unreliable=too_many is not None,
                    measure="hit rate" if block.get("task") == "locate" else "accuracy",
                    ci95=(float(bounds[0]), float(bounds[1])) if bounds else None,
                    on_lower=entry.get("judged_on") == "lower bound",
                    values=values,
                )
            )
    for section in sections:
        found += section.read_verdicts(document)
    return tuple(found)


def settings_entry(settings: Any) -> dict[str, Any]:
    """The report's `run.settings` from the plugin's Settings."""
    return {
        "misses": settings.verdict.misses,
        "limit": settings.selection.limit,
        "max_errors": settings.verdict.max_errors,
        "resume": settings.outputs.resume,
        "task": settings.selection.task,
        "iou_threshold": settings.scoring.iou_threshold,
        "refusal_rows": settings.scoring.refusal_rows,
        "language": settings.selection.language,
        "scoring": settings.scoring.scoring,
        "epochs": settings.selection.epochs,  # --grounding-epochs
        "timeout_s": settings.scoring.timeout,
        "top_apps": settings.outputs.top_apps,
        "gates": [{"slice": g.label, "threshold": g.threshold, "source": g.source} for g in settings.verdict.gates],
        "gate_on_interval": settings.verdict.gate_on_interval,
        **robustness.settings_entry(settings),  # --grounding-perturb, --grounding-max-drop
        **errata_mod.settings_entry(settings.scoring.errata),  # --grounding-errata: the file and its digest
    }
