"""The frame a detector's answers are in, and the `rescore` that reads them in it, printed wherever
a run goes on with a frame finding (issue 61): the summary's last lines, the HTML's and markdown's
"rescore with" column, the board. From the diagnosis after the run (`summary[DET].diagnosis.frame`)
or, where it names none, the frame check before it (`frame_check[spec]`, `--grounding-frame-check=warn`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.frames import rescore_command
from ..core.identity import display_name

DIAGNOSIS = "the diagnosis after the run"
CHECK = "the frame check before the run"


def finding_of(block: Mapping[str, Any], frame_checks: Mapping[str, Any]) -> tuple[str, list[str], str] | None:
    """(frame, rescore arguments, where it was found) for one summary block; None: no frame to fix."""
    diagnosis = ((block.get("diagnosis") or {}).get("frame")) or {}
    suggestion = diagnosis.get("suggestion") if isinstance(diagnosis, Mapping) else None
    if isinstance(suggestion, list) and suggestion:
        return str(diagnosis.get("frame") or suggestion[-1]), [str(s) for s in suggestion], DIAGNOSIS
    check = frame_checks.get(str(block.get("detector"))) if isinstance(frame_checks, Mapping) else None
    if not isinstance(check, Mapping):
        return None
    suggestion = check.get("suggestion")
    if isinstance(suggestion, list) and suggestion:
        return str(check.get("frame") or suggestion[-1]), [str(s) for s in suggestion], CHECK
    return None


def suggestion_of(block: Mapping[str, Any], frame_checks: Mapping[str, Any]) -> str:
    """`--frame rel1000` for a table's "rescore with" column ("-": nothing to fix)."""
    found = finding_of(block, frame_checks)
    return " ".join(found[1]) if found else "-"


def source_of(outputs: Sequence[tuple[str, str]]) -> str | None:
    """What `rescore` reads of this run: its predictions file, else its JSON report."""
    paths = dict(outputs)
    return paths.get("predictions") or paths.get("JSON report")


def rescore_lines(
    summary: Mapping[str, Mapping[str, Any]] | None,
    frame_checks: Mapping[str, Any],
    outputs: Sequence[tuple[str, str]],
) -> list[str]:
    """One line per detector whose answers are in another frame: which, found where, and the whole
    command that reads the stored answers in it (the run's own predictions or report)."""
    lines = []
    source = source_of(outputs)
    for key, block in (summary or {}).items():
        found = finding_of(block, frame_checks)
        if found is None:
            continue
        frame, suggestion, where = found
        name = display_name(str(block.get("detector") or key), block)
        lines.append(
            f"grounding frame: detector {name} answers in frame {frame} ({where}): "
            f"rescore its answers with `{rescore_command(suggestion, source)}`"
        )
    return lines
