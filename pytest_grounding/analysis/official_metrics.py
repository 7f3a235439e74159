"""ScreenSpot-Pro's official `metrics` block recomputed from records (pure), as the authors'
eval_screenspot_pro.py builds it from its result rows:

- each row has platform, application, group, ui_type, instruction_style, gt_type and a
  correctness (correct | wrong | wrong_format);
- a list of rows gives num_correct_action, num_total, wrong_format_num, action_acc (correct /
  total), text_acc and icon_acc (correct / total among ui_type text, icon; 0 when none);
- fine_grained: one entry per combination of the platforms, applications, instruction styles and
  gt types seen, keyed "plat:P app:A inst_style:S gt_type:G", empty combinations left out;
  seeclick_style the same without the application; leaderboard_simple_style by group
  ("group:G"), leaderboard_detailed_style by application ("app:A"); overall over all rows.

`compare_metrics` says where a file's own `metrics` differ from ours (nothing: reproduced)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.record import Outcome

CORRECT, WRONG, WRONG_FORMAT = "correct", "wrong", Outcome.WRONG_FORMAT.value  # ScreenSpot-Pro's words
_OUTCOME: dict[str, str] = {Outcome.HIT: CORRECT, Outcome.MISS: WRONG, Outcome.WRONG_FORMAT: WRONG_FORMAT}


def official_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the official script groups and counts by, from one of our records. An error
    record (no answer) is counted wrong: the official script has no errors."""
    benchmark = record.get("benchmark") if isinstance(record.get("benchmark"), Mapping) else {}
    style = benchmark.get("style") if isinstance(benchmark, Mapping) else None
    style, gt_type = sample_style_of(style, bool(record.get("negative")))
    return {
        "platform": record.get("platform"),
        "application": record.get("app"),
        "group": record.get("app_category"),
        "ui_type": record.get("element_type"),
        "instruction_style": style,
        "gt_type": gt_type,
        "correctness": _OUTCOME.get(str(record.get("outcome")), WRONG),
    }


def sample_style_of(style: Any, negative: bool) -> tuple[str, str]:
    if style == "negative":
        style = "instruction"
    return str(style or "instruction"), "negative" if negative else "positive"


def list_metrics(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    total = len(rows)
    correct = sum(1 for r in rows if r["correctness"] == CORRECT)
    text = [r for r in rows if r.get("ui_type") == "text"]
    icon = [r for r in rows if r.get("ui_type") == "icon"]
    text_correct = sum(1 for r in text if r["correctness"] == CORRECT)
    icon_correct = sum(1 for r in icon if r["correctness"] == CORRECT)
    return {
        "num_correct_action": correct,
        "num_total": total,
        "wrong_format_num": sum(1 for r in rows if r["correctness"] == WRONG_FORMAT),
        "action_acc": correct / total if total > 0 else 0,
        "text_acc": text_correct / len(text) if text else 0,
        "icon_acc": icon_correct / len(icon) if icon else 0,
    }


def _grouped(rows: Sequence[Mapping[str, Any]], fields: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """One entry per combination of the values seen of each field (key label, row field)."""
    values = [sorted({r.get(name) for r in rows}, key=str) for _, name in fields]
    out: dict[str, Any] = {}
    for combination in itertools.product(*values):
        chosen = [r for r in rows if all(r.get(name) == v for (_, name), v in zip(fields, combination, strict=True))]
        if not chosen:
            continue
        key = " ".join(f"{label}:{value}" for (label, _), value in zip(fields, combination, strict=True))
        out[key] = list_metrics(chosen)
    return out


def official_metrics(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The official `metrics` block over the grounding records given (one detector's)."""
    rows = [official_row(r) for r in records if r.get("task", "grounding") == "grounding"]
    plat, app, gt_type = ("plat", "platform"), ("app", "application"), ("gt_type", "gt_type")
    style = ("inst_style", "instruction_style")
    return {
        "fine_grained": _grouped(rows, (plat, app, style, gt_type)),
        "seeclick_style": _grouped(rows, (plat, style, gt_type)),
        "leaderboard_simple_style": _grouped(rows, (("group", "group"),)),
        "leaderboard_detailed_style": _grouped(rows, (("app", "application"),)),
        "overall": list_metrics(rows),
    }


def compare_metrics(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    """Every place the file's metrics differ from ours, as "path: theirs X, ours Y"; only the
    blocks the file has are compared (a script with some blocks commented out still matches)."""
    differences: list[str] = []
    for block, their_block in theirs.items():
        if block not in ours:
            differences.append(f"{block}: a block this check does not compute")
            continue
        _diff(block, their_block, ours[block], differences)
    return differences


def _diff(path: str, theirs: Any, ours: Any, out: list[str]) -> None:
    if isinstance(theirs, Mapping) and isinstance(ours, Mapping):
        for key in sorted(set(theirs) | set(ours), key=str):
            where = f"{path} / {key}"
            if key not in ours:
                out.append(f"{where}: in the file only")
            elif key not in theirs:
                out.append(f"{where}: computed here only")
            else:
                _diff(where, theirs[key], ours[key], out)
        return
    if theirs == ours:  # exact: the same division gives the same float
        return
    out.append(f"{path}: the file says {theirs!r}, recomputed {ours!r}")


__all__ = ["compare_metrics", "official_metrics", "official_row"]
