"""Each check that decides the exit status a test case of its own (issue 61): an accuracy gate, a
max-drop gate, the errors-share check, the baseline. A gate is judged after the last item, so no
item runs it; its case is made on the controller and reported as an item's are, so `--junitxml`,
the terminal's counts, the exit status and the job summary agree (a CI page built from JUnit shows
the red gate beside the red job).

Named after the option and the gate (`min-accuracy[ocr element_type=icon:5.0%]`) under the path
`grounding`; failed with the gate's own message, passed otherwise."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...analysis import gates as gates_mod
from ...analysis.result import RunResult
from ...core.identity import display_name

PATH = "grounding"  # the cases' "file": their own line in the terminal, their classname in JUnit


@dataclass(frozen=True)
class Case:
    name: str
    passed: bool
    message: str


def cases_of(result: RunResult, max_errors: float | None) -> list[Case]:
    """The run's checks as cases, in the order the summary names them. The errors-share check has
    a case for every detector once any gate or baseline is asked for (passed or failed: a CI page
    keeps its history); a run with no gate keeps its items' own failures and errors alone."""
    if not result.records or result.partial:
        return []
    judged = [v for v in result.verdicts if not isinstance(v, gates_mod.ErrorVerdict)]
    failing = {v.detector: v for v in result.verdicts if isinstance(v, gates_mod.ErrorVerdict)}
    asked = bool(judged) or result.view.gated or result.baseline is not None
    checks: list[Any] = []
    if max_errors is not None and result.summary:
        for check in gates_mod.error_checks(result.summary, max_errors):
            if asked:
                checks.append(failing.get(check.detector, check))
    checks += judged
    info = result.detector_info
    cases = [Case(_name(v, result.summary or {}, info), bool(v.passed), v.describe()) for v in checks]
    baseline = result.baseline
    if baseline is not None and (baseline.loaded or baseline.failed):
        message = baseline.problem or f"baseline passed: the run is no worse than {baseline.path}"
        cases.append(Case(f"baseline[{Path(baseline.path).name}]", not baseline.failed, message))
    return _unique(cases)


def _name(verdict: Any, summary: dict[str, Any], info: Mapping[str, Any]) -> str:
    block = summary.get(verdict.detector) or {}
    spec = str(block.get("detector") or verdict.detector)
    who = display_name(spec, {**(info.get(spec) or {}), **block})  # a label, or a served model@host
    if isinstance(verdict, gates_mod.ErrorVerdict):
        return f"max-errors[{who}:{verdict.max_share:.1%}]"
    if isinstance(verdict, gates_mod.Verdict):
        return f"min-accuracy[{who} {verdict.gate.label}:{verdict.gate.threshold:.1%}]"
    variant = getattr(verdict, "variant", None) or getattr(verdict.gate, "variant", None) or "every variant"
    return f"max-drop[{who} {variant}:{verdict.gate.points:g}%]"  # robustness.DropVerdict


def _unique(cases: list[Case]) -> list[Case]:
    """One node id each: a gate given twice keeps both cases, the second numbered."""
    seen: dict[str, int] = {}
    out = []
    for case in cases:
        seen[case.name] = seen.get(case.name, 0) + 1
        count = seen[case.name]
        out.append(case if count == 1 else Case(f"{case.name}#{count}", case.passed, case.message))
    return out


def as_logged(cases: list[Case]) -> list[tuple[str, str, bool, str]]:
    return [(PATH, case.name, case.passed, case.message) for case in cases]
