"""A finished run, as one frozen value: what the terminal summary, the JSON document, the markdown,
the HTML page and the gates all read. Made once, at the run's end, by the controller."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core.profiles import get_profile
from ..core.record import Record

if TYPE_CHECKING:  # imported by the controller at a run's end: not by every process that loads the plugin
    from . import baseline as baseline_mod
    from . import cost as cost_mod
    from . import reproduce
    from .agreement import ReplayFindings


@dataclass(frozen=True)
class View:
    """How the run asked its results to be shown (options that change no figure)."""

    order: tuple[str, ...] = ()  # detector specs, as the run named them
    top_apps: int | None = None
    show_misses: int | None = 10  # None: all
    misses_as: str = "fail"  # --grounding-misses
    gated: bool = False  # accuracy gates were asked for
    price: cost_mod.Price | None = None
    profile: Mapping[str, str] = field(default_factory=lambda: get_profile(None).describe())
    errata: Any = None  # --grounding-errata: an errata.Errata; the corrected figure shown beside the official


@dataclass(frozen=True)
class BaselineResult:
    path: str
    status: str | None  # written | updated | compared | not written
    problem: str | None  # why the baseline fails the run
    loaded: bool  # a baseline was compared with
    comparison: baseline_mod.Comparison | None = None

    @property
    def failed(self) -> bool:
        return self.problem is not None


@dataclass(frozen=True)
class RunResult:
    records: tuple[Record, ...]
    summary: dict[str, Any] | None  # None: no record (nothing scored)
    cost: dict[str, dict[str, Any]]
    verdicts: tuple[Any, ...]  # gates.Verdict | gates.ErrorVerdict
    reproductions: tuple[reproduce.Reproduction, ...]
    datasets: tuple[dict[str, Any], ...]
    detector_info: dict[str, dict[str, Any]]
    partial: bool  # interrupted, or items no report came for
    resumed: int  # records kept from the predictions file resumed
    notes: tuple[str, ...]
    view: View
    baseline: BaselineResult | None = None
    replay: ReplayFindings | None = None  # replayed files' agreement and metrics (render/replay.py)
    outputs: tuple[tuple[str, str], ...] = ()  # (title, path) of each output asked for
    output_errors: tuple[str, ...] = ()
    shard: Mapping[str, Any] | None = None  # --grounding-shard: the report's `shard` entry (what it was to score)
    frame_checks: Mapping[str, Any] = field(default_factory=dict)  # --grounding-frame-check: spec -> its finding

    @property
    def failed_gates(self) -> list[Any]:
        return [v for v in self.verdicts if not v.passed]

    @property
    def failed(self) -> bool:
        """The gates or the baseline fail the run."""
        return bool(self.failed_gates) or (self.baseline is not None and self.baseline.failed)

    def with_output_errors(self, errors: tuple[str, ...]) -> RunResult:
        return replace(self, output_errors=errors)

    @classmethod
    def of_report(cls, document: Mapping[str, Any], **figures: Any) -> RunResult:
        """A result read back from a JSON report (`merge`, a benchmark script): its records, summary
        and run facts; `figures` (cost, verdicts, reproductions, view, ...) given by the caller."""
        run = document["run"]
        found: dict[str, Any] = {
            "records": tuple(document.get("samples") or ()),
            "summary": document.get("summary"),
            "cost": {},
            "verdicts": (),
            "reproductions": (),
            "datasets": tuple(run.get("datasets") or ()),
            "detector_info": dict(run.get("detectors") or {}),
            "partial": bool(document.get("partial")),
            "resumed": int(document.get("resumed") or 0),
            "notes": tuple(document.get("notes") or ()),
            "shard": None if document.get("merge") else document.get("shard"),
            "view": View(
                top_apps=(run.get("settings") or {}).get("top_apps"),
                profile=document.get("scoring_profile") or View().profile,
            ),
        }
        return cls(**{**found, **figures})
