"""The files a run writes from its report document, in one table: each output's name in the
summary, its setting, its flag, and the function that writes it. A new output is a module that
writes a document and one row here (plus its option in plugin/common/options.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import run_folder


@dataclass(frozen=True)
class Output:
    title: str  # in the summary: "grounding {title}: {path}"
    setting: str  # the OutputSettings field that holds its path (None: not asked for)
    flag: str  # the option that sets it, for usage errors
    # (document, path, the run's report sections); None: written as the run goes (predictions)
    write: Callable[[Mapping[str, Any], Path, Any], None] | None
    # how a failure reads: the HTML page and the plots can fail in any library they use
    describe_failure: Callable[[Exception], str] = str
    place: str = "{title} {path}"  # how a failure names it
    check: Callable[[Path], None] | None = None  # before any sample runs: can it be written? (raises)
    kept_as: str | None = None  # its file in the run's folder when given no path (render/run_folder.py)


def _json(document: Mapping[str, Any], path: Path, sections: Any = None) -> None:
    from ..store.reports import write_json

    write_json(path, dict(document))


def _html(document: Mapping[str, Any], path: Path, sections: Any = None) -> None:
    from .html import write_html

    write_html(document, path, sections=sections)


def _plots(document: Mapping[str, Any], folder: Path, sections: Any = None) -> None:
    from .plots import write_plots

    write_plots(document, folder)


def _writable(path: Path) -> None:
    from ..store.reports import check_writable

    check_writable(path)


def _plots_possible(folder: Path) -> None:
    from .plots import check_plots

    check_plots(folder)


def _typed(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


OUTPUTS = (
    Output("JSON report", "json_path", "--grounding-json", _json, check=_writable, kept_as=run_folder.REPORT_JSON),
    Output(
        "HTML report",
        "html_path",
        "--grounding-html",
        _html,
        describe_failure=_typed,
        check=_writable,
        kept_as=run_folder.REPORT_HTML,
    ),
    Output(
        "plots",
        "plots_dir",
        "--grounding-plots",
        _plots,
        describe_failure=_typed,
        place="{title} in {path}",
        check=_plots_possible,
    ),
    Output(
        "predictions",
        "predictions_path",
        "--grounding-predictions",
        None,
        check=_writable,
        kept_as=run_folder.PREDICTIONS,
    ),
)


class OutputUnusable(Exception):
    """An output that cannot be written: a usage error before any sample runs."""


def check_all(outputs: Any) -> None:
    """Each output asked for can be written (a folder exists and is writable, matplotlib for plots)."""
    from ..store.reports import OutputError
    from .plots import PlotsUnavailable

    run_dir = getattr(outputs, "run_dir", None)
    if run_dir is not None and (problem := run_folder.check_runs_dir(run_dir.parent)) is not None:
        raise OutputUnusable(f"--grounding-runs-dir: {problem}")
    for output, path in asked_for(outputs, kept=False):
        if output.check is None:
            continue
        try:
            output.check(path)
        except (OutputError, PlotsUnavailable) as exc:
            raise OutputUnusable(f"{output.flag}: {exc}") from None


def asked_for(outputs: Any, *, kept: bool = True) -> list[tuple[Output, Path]]:
    """The outputs this run's settings (their OutputSettings) ask for, with their paths, in the
    summary's order; with `kept`, those given no path in the run's folder (--grounding-runs-dir)."""
    run_dir = getattr(outputs, "run_dir", None) if kept else None
    found = []
    for output in OUTPUTS:
        path = getattr(outputs, output.setting)
        if path is None and run_dir is not None and output.kept_as is not None:
            path = run_dir / output.kept_as
        if path is not None:
            found.append((output, path))
    return found


def write_all(document: Mapping[str, Any], outputs: Any, *, kept: bool = True, sections: Any = None) -> list[str]:
    """Every output written from the document; what could not be written, said (never raised: the
    JSON report stays written when the page fails). `kept`: the run's folder too (not for a run
    that scored nothing); `sections`: the run's report sections (default: the installed ones)."""
    problems = []
    for output, path in asked_for(outputs, kept=kept):
        if output.write is None:
            continue
        try:
            output.write(document, path, sections)
        except Exception as exc:
            place = output.place.format(title=output.title, path=path)
            problems.append(f"{place} not written: {output.describe_failure(exc)}")
    run_dir, elsewhere = getattr(outputs, "run_dir", None), getattr(outputs, "json_path", None)
    if kept and run_dir is not None and elsewhere is not None and Path(elsewhere).is_file():
        try:  # the default board finds a report written elsewhere through its run folder (issue 61)
            run_folder.point_to(run_dir, Path(elsewhere))
        except OSError as exc:
            problems.append(f"the run folder's pointer to {elsewhere} not written: {exc.strerror or exc}")
    return problems
