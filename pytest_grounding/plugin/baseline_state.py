"""The controller's baseline (--grounding-baseline): read and checked before any sample runs,
compared with (or written from) the run's records at the end, and its block of the JSON report.
The state stays on `GroundingRun` (its fields `baseline`, `comparison`, `baseline_status`,
`baseline_problem`), which workers read too; these are its steps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis import baseline as baseline_mod
from ..render.output import OutputError, check_writable, write_atomic
from .settings import SettingError

if TYPE_CHECKING:
    from .state import GroundingRun


def load(run: GroundingRun) -> None:
    """Read and check the baseline before any sample runs: another dataset version, detector spec
    or task is a usage error. Absent (or to be rewritten): the folder must be writable."""
    path = run.settings.baseline_path
    if path is None:
        return
    if run.settings.update_baseline or not path.exists():
        try:
            check_writable(path)
        except OutputError as exc:
            raise SettingError(f"--grounding-baseline: {exc}") from None
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingError(f"--grounding-baseline: cannot read {path}: {exc}") from None
    try:
        baseline = baseline_mod.loads(text, str(path))
        baseline_mod.check_compatible(
            baseline,
            where=str(path),
            task=run.settings.task,
            datasets={d.name: d.fingerprint for d in run.datasets.values()},
            detectors=run.settings.detector_specs,
        )
    except baseline_mod.BaselineError as exc:
        raise SettingError(f"--grounding-baseline: {exc}") from None
    run.baseline = baseline
    run.expected = dict(baseline.outcomes)
    run.baseline_loaded = True


def finish(run: GroundingRun) -> None:
    """At the end: compared with the baseline, or the baseline written (first run, or asked to)."""
    path = run.settings.baseline_path
    if path is None:
        return
    if run.interrupted or not run.records:
        # Neither a partial run nor an empty one (--co, -k matching nothing) is a baseline.
        run.baseline_status = "not written" if run.baseline is None else None
        return
    if run.baseline is not None:
        run.comparison = baseline_mod.compare(
            run.baseline, run.records, run.settings.tolerances, run.settings.max_slowdown
        )
        run.baseline_status = "compared"
        if not run.comparison.passed:
            found = run.comparison
            worse = [f"{len(found.regressions)} regressions"] if found.regressions else []
            worse += [f"{len(found.failed_slices)} slices beyond their tolerance"] if found.failed_slices else []
            slower = [v for v in found.latency if not v.passed]
            worse += [f"{len(slower)} latency figures beyond --grounding-max-slowdown"] if slower else []
            run.baseline_problem = f"the run is worse than the baseline {path}: {', '.join(worse)}"
        return
    document = baseline_mod.build(run.records, run.settings.task)
    try:
        write_atomic(path, baseline_mod.dumps(document))
    except OSError as exc:
        run.baseline_status = "not written"
        run.baseline_problem = f"baseline {path} not written: {exc}"
        return
    samples = len(document["samples"])
    if run.settings.update_baseline:
        run.baseline_status = "updated"
        run.note(f"baseline {path} rewritten from this run: {samples} samples (--grounding-update-baseline)")
    else:
        run.baseline_status = "written"
        run.baseline_problem = (
            f"baseline {path} did not exist: written now with {samples} samples; check it, commit it and "
            "run again to compare with it"
        )


def document(run: GroundingRun) -> dict[str, Any] | None:
    """The JSON report's `baseline` block (None without --grounding-baseline)."""
    if run.settings.baseline_path is None:
        return None
    found: dict[str, Any] = {
        "path": str(run.settings.baseline_path),
        "status": run.baseline_status,
        "problem": run.baseline_problem,
        "tolerance": run.settings.tolerances.default,
        "tolerances": [{"slice": t.label, "tolerance": t.share} for t in run.settings.tolerances.per_slice],
        "max_slowdown": run.settings.max_slowdown,
    }
    if run.comparison is not None:
        found.update(baseline_mod.document_of(run.comparison))
    return found
