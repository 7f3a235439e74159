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
    verdicts: tuple[Any, ...]  # gates.Verdict | gates.ErrorVerdict | a section's own (max-drop)
    datasets: tuple[dict[str, Any], ...]
    detector_info: dict[str, dict[str, Any]]
    partial: bool  # interrupted, or items no report came for
    resumed: int  # records kept from the predictions file resumed
    notes: tuple[str, ...]
    view: View
    baseline: BaselineResult | None = None
    replay: ReplayFindings | None = None  # replayed files' agreement and metrics (sections/replay_text.py)
    outputs: tuple[tuple[str, str], ...] = ()  # (title, path) of each output asked for
    output_errors: tuple[str, ...] = ()
    shard: Mapping[str, Any] | None = None  # --grounding-shard: the report's `shard` entry (what it was to score)
    # the run-level sections' figures by their report key (document.Figures.run); read back from a
    # report: the report itself (each section reads its own key)
    run: Mapping[str, Any] = field(default_factory=dict)
    sections: tuple[Any, ...] = ()  # the report sections the outputs loop over (empty: the installed ones)

    @property
    def cost(self) -> Mapping[str, Mapping[str, Any]]:
        """Each summary block's entry of the cost section's figures (the report's `cost.detectors`),
        what a detector's terminal lines show beside its block."""
        found = self.run.get("cost")
        return (found.get("detectors") or {}) if isinstance(found, Mapping) else {}

    @property
    def frame_checks(self) -> Mapping[str, Any]:
        """--grounding-frame-check: spec -> what its check found (the frame_check section's figures)."""
        found = self.run.get("frame_check")
        return found if isinstance(found, Mapping) else {}

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
        and run facts; `figures` (verdicts, view, ...) given by the caller."""
        from .cost import Price

        run = document["run"]
        cost = document.get("cost")
        spent: Mapping[str, Any] = cost if isinstance(cost, Mapping) else {}
        found: dict[str, Any] = {
            "records": tuple(document.get("samples") or ()),
            "summary": document.get("summary"),
            "verdicts": (),
            "datasets": tuple(run.get("datasets") or ()),
            "detector_info": dict(run.get("detectors") or {}),
            "partial": bool(document.get("partial")),
            "resumed": int(document.get("resumed") or 0),
            "notes": tuple(document.get("notes") or ()),
            "shard": None if document.get("merge") else document.get("shard"),
            "run": document,
            "view": View(
                top_apps=(run.get("settings") or {}).get("top_apps"),
                price=Price.from_dict(spent.get("price")),
                profile=document.get("scoring_profile") or View().profile,
            ),
        }
        return cls(**{**found, **figures})
