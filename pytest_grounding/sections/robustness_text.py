"""--grounding-perturb: the robustness block (analysis/robustness.py) as the terminal's compact
table and the markdown summary's section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.numbers import pct, points
from ..core.safetext import markdown_text

HEAD = ("variant", "pairs", "original", "variant acc", "change (95% CI)", "McNemar p", "flips -/+", "no variant")


def _points(value: Any) -> str:
    return "-" if value is None else f"{points(float(value))}"


def _change(row: Mapping[str, Any]) -> str:
    bounds = row.get("delta_ci95")
    span = f" ({_points(bounds[0])} to {_points(bounds[1])})" if bounds else ""
    return f"{_points(row.get('delta'))}{span}"


def _p(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f}"


def cells(row: Mapping[str, Any]) -> list[str]:
    return [
        str(row["label"]),
        str(row["pairs"]),
        pct(row.get("original_accuracy")),
        pct(row.get("accuracy")),
        _change(row),
        _p(row.get("mcnemar_p")),
        f"{len(row['hit_to_miss'])}/{len(row['miss_to_hit'])}",
        str(row["no_variant"]),
    ]


def terminal_lines(block: Mapping[str, Any] | None, flips_shown: int = 3) -> list[str]:
    """The detector block's robustness table: one row per variant, the change in points."""
    if not block:
        return []
    rows = [cells(row) for row in block["variants"]]
    widths = [max(len(r[i]) for r in [list(HEAD), *rows]) for i in range(len(HEAD))]

    def line(values: Sequence[str]) -> str:
        first = values[0].ljust(widths[0])
        return "    " + "  ".join([first, *(v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True))])

    lines = [
        "",
        "  robustness (--grounding-perturb): each variant against the same samples' originals; change in "
        "points, 95% CI clustered by screen",
        line(HEAD),
        *(line(r) for r in rows),
    ]
    for row in block["variants"]:
        lost = [flip.get("id") or flip["uid"] for flip in row["hit_to_miss"]]  # the dataset's own ids: short
        if lost:
            more = f" (+{len(lost) - flips_shown} more)" if len(lost) > flips_shown else ""
            lines.append(f"    {row['label']}: hit -> miss {', '.join(map(str, lost[:flips_shown]))}{more}")
        if row["no_variant"]:
            lines.append(f"    {row['label']}: no variant for {row['no_variant']}: {row['no_variant_reason']}")
    return lines


def markdown_lines(summary: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The markdown summary's robustness section (every detector with variants)."""
    lines: list[str] = []
    for name, block in summary.items():
        found = block.get("robustness")
        if not found:
            continue
        lines += [
            "",
            f"### Robustness: {markdown_text(str(name))}",
            "",
            "Each variant against the same samples' originals (change in accuracy points, 95% CI clustered by screen).",
            "",
            "| " + " | ".join(HEAD) + " |",
            "|" + "---|" * len(HEAD),
        ]
        lines += ["| " + " | ".join(markdown_text(c) for c in cells(row)) + " |" for row in found["variants"]]
        for row in found["variants"]:
            for kind, words in (("hit_to_miss", "hit → miss"), ("miss_to_hit", "miss → hit")):
                if row[kind]:
                    uids = ", ".join(markdown_text(str(f.get("id") or f["uid"])) for f in row[kind][:20])
                    more = f" and {len(row[kind]) - 20} more" if len(row[kind]) > 20 else ""
                    lines.append(f"- {markdown_text(row['label'])} {words}: {uids}{more}")
    return lines
