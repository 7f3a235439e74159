"""The controller's baseline (--grounding-baseline): read and checked before any sample runs,
compared with (or written from) the run's records at the end, and its block of the JSON report.
`BaselineCheck` owns its fields; workers get the checked outcomes through workerinput."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...analysis import baseline as baseline_mod
from ...core import safefile
from ...core.record import Record
from ...store.reports import OutputError, check_writable, write_atomic
from ..common.settings import SettingError, Settings


@dataclass
class BaselineCheck:
    settings: Settings
    baseline: baseline_mod.Baseline | None = None  # the baseline compared with, if any
    loaded: bool = False  # a baseline is compared with (not absent, not being rewritten)
    comparison: baseline_mod.Comparison | None = None
    status: str | None = None  # written | updated | compared | not written
    problem: str | None = None  # why the baseline fails the run (written on a first run, ...)
    note: str | None = None  # said once in the summary (a baseline rewritten on request)

    @property
    def failed(self) -> bool:
        return self.problem is not None

    def expectations(self) -> list[list[str]] | None:
        """What workers judge each sample with (None: no baseline compared with)."""
        return self.baseline.expectations() if self.loaded and self.baseline is not None else None

    def load(self, fingerprints: dict[str, str]) -> None:
        """Read and check the baseline before any sample runs: another dataset version, detector spec
        or task is a usage error. Absent (or to be rewritten): the folder must be writable."""
        settings = self.settings
        path = settings.verdict.baseline_path
        if path is None:
            return
        if settings.verdict.update_baseline or not path.exists():
            try:
                check_writable(path)
            except OutputError as exc:
                raise SettingError(f"--grounding-baseline: {exc}") from None
            return
        try:
            text = safefile.read_text(path)  # a regular file, bounded
        except (OSError, ValueError) as exc:
            raise SettingError(f"--grounding-baseline: cannot read {path}: {exc}") from None
        try:
            baseline = baseline_mod.loads(text, str(path))
            baseline_mod.check_compatible(
                baseline,
                where=str(path),
                task=settings.selection.task,
                datasets=fingerprints,
                detectors=settings.selection.detector_specs,
            )
        except baseline_mod.BaselineError as exc:
            raise SettingError(f"--grounding-baseline: {exc}") from None
        self.baseline = baseline
        self.loaded = True

    def finish(self, records: Sequence[Record], interrupted: bool) -> None:
        """At the end: compared with the baseline, or the baseline written (first run, or asked to)."""
        settings = self.settings
        path = settings.verdict.baseline_path
        if path is None:
            return
        if interrupted or not records:
            # Neither a partial run nor an empty one (--co, -k matching nothing) is a baseline.
            self.status = "not written" if self.baseline is None else None
            return
        if self.baseline is not None:
            self.comparison = baseline_mod.compare(
                self.baseline, records, settings.verdict.tolerances, settings.verdict.max_slowdown
            )
            self.status = "compared"
            if not self.comparison.passed:
                found = self.comparison
                worse = [f"{len(found.regressions)} regressions"] if found.regressions else []
                worse += [f"{len(found.failed_slices)} slices beyond their tolerance"] if found.failed_slices else []
                slower = [v for v in found.latency if not v.passed]
                worse += [f"{len(slower)} latency figures beyond --grounding-max-slowdown"] if slower else []
                self.problem = f"the run is worse than the baseline {path}: {', '.join(worse)}"
            return
        document = baseline_mod.build(records, settings.selection.task)
        try:
            write_atomic(path, baseline_mod.dumps(document))
        except OSError as exc:
            self.status = "not written"
            self.problem = f"baseline {path} not written: {exc}"
            return
        samples = len(document["samples"])
        if settings.verdict.update_baseline:
            self.status = "updated"
            self.note = f"baseline {path} rewritten from this run: {samples} samples (--grounding-update-baseline)"
        else:
            self.status = "written"
            self.problem = (
                f"baseline {path} did not exist: written now with {samples} samples; check it, commit it and "
                "run again to compare with it"
            )

    def document(self) -> dict[str, Any] | None:
        """The JSON report's `baseline` block (None without --grounding-baseline)."""
        settings = self.settings
        if settings.verdict.baseline_path is None:
            return None
        found: dict[str, Any] = {
            "path": str(settings.verdict.baseline_path),
            "status": self.status,
            "problem": self.problem,
            "tolerance": settings.verdict.tolerances.default,
            "tolerances": [{"slice": t.label, "tolerance": t.threshold} for t in settings.verdict.tolerances.per_slice],
            "max_slowdown": settings.verdict.max_slowdown,
        }
        if self.comparison is not None:
            found.update(baseline_mod.document_of(self.comparison))
        return found
