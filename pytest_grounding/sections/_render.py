"""Small helpers the sections share for their markdown and HTML: a markdown table, an HTML table
(cells escaped here), a percentage with its interval."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from ..analysis.intervals import span
from ..core.numbers import pct
from ..core.safetext import markdown_text


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A markdown table (every cell made safe: data is never markup), then a blank line."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(markdown_text(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def html_table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] = ()) -> str:
    """An HTML table of plain values (escaped here)."""
    numeric = list(numeric) or [False] * len(header)
    out = ["<table><thead><tr>", *(f"<th>{escape(str(h))}</th>" for h in header), "</tr></thead><tbody>"]
    for row in rows:
        cells = (
            f'<td class="n">{escape(str(c))}</td>' if numeric[i] else f"<td>{escape(str(c))}</td>"
            for i, c in enumerate(row)
        )
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def with_ci(value: Any, bounds: Any) -> str:
    """`41.2% (35.0-47.5)`; the interval left out where there is none."""
    return f"{pct(value)} ({span(bounds)})" if bounds else pct(value)
