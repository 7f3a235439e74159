"""The replay block of the terminal summary and its markdown section: per replayed file, agreement
with the file's own verdicts and the disagreements with their reasons."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis.agreement import ReplayFindings, tally

LISTED = 12  # disagreements shown per detector in the terminal; the JSON report has them all


def _plain(text: Any) -> str:
    """Text from a file, safe on a terminal: control characters written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def lines(blocks: Mapping[str, Mapping[str, Any]], *, listed: int = LISTED) -> list[str]:
    """The terminal's short block: agreement per replayed file, the first disagreements."""
    out: list[str] = []
    for detector, block in blocks.items():
        head = f"replay {detector}: {block['replayed']} samples answered from {block['file']} ({block['format']})"
        if not block["compared"]:
            out.append(f"{head}; the file gives no verdict of its own to compare")
            continue
        disagree = block["compared"] - block["agree"]
        out.append(f"{head}; verdicts compared on {block['compared']}: {block['agree']} agree, {disagree} differ")
        for item in block["disagreements"][:listed]:
            out.append(
                f"  {_plain(item['dataset'])}/{_plain(item['id'])} (row {item['row']}): ours {item['ours']}, "
                f"theirs {_plain(item['theirs'])}: {_plain(item['reason'])}"
            )
        if disagree > listed:
            out.append(f"  ... and {disagree - listed} more (every one is in the JSON report's samples, field replay)")
    return out


def finding_lines(found: ReplayFindings | None) -> list[str]:
    """The terminal block of a run that replayed files: agreement, then each file's metrics."""
    if found is None:
        return []
    out = lines(found.blocks)
    for spec, check in found.metrics.items():
        if check.differences is None:
            out.append(
                f"replay {spec}: the file's metrics not compared: this run scored {check.scored} samples, "
                f"the file has {check.rows} rows"
            )
        elif not check.differences:
            out.append(
                f"replay {spec}: the file's ScreenSpot-Pro metrics are reproduced exactly from this run's verdicts"
            )
        else:
            out.append(f"replay {spec}: the file's metrics differ from this run's in {len(check.differences)} places:")
            out += [f"  {d}" for d in check.differences[:LISTED]]
    return out


def markdown_lines(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The markdown section: per replayed detector, agreement with the file's own verdicts and
    every disagreement with its reason (python -m pytest_grounding summary, CI job summaries)."""
    blocks = tally(records)
    if not blocks:
        return []

    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = ["### Replayed files: our verdict beside theirs", ""]
    out += ["| detector | file | format | samples | compared | agree | differ |", "|---|---|---|---|---|---|---|"]
    for detector, block in blocks.items():
        differ = block["compared"] - block["agree"]
        cells = (detector, block["file"], block["format"], block["replayed"], block["compared"], block["agree"], differ)
        out.append("| " + " | ".join(cell(c) for c in cells) + " |")
    out.append("")
    for detector, block in blocks.items():
        if block["disagreements"]:
            out += [f"Disagreements of `{cell(detector)}`:", ""]
            out += [
                f"- {cell(d['dataset'])}/{cell(d['id'])} (row {d['row']}): ours {d['ours']}, theirs "
                f"{cell(d['theirs'])}: {cell(d['reason'])}"
                for d in block["disagreements"]
            ]
            out.append("")
    return out
