"""--grounding-perturb on the HTML page: per detector, a chart of the change each variant makes
(points against the same samples' originals, with the 95% interval as a whisker), the table, and
a gallery of the flips: the original and the variant side by side, each with its click."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..analysis.metrics import summary_key
from ..core.numbers import points
from ._render import html_table
from .base import HtmlPage
from .robustness_text import HEAD, cells

FLIPS_SHOWN = 12  # per variant and direction: the page stays light; the JSON lists every flip
DIRECTIONS = (("hit_to_miss", "hit → miss"), ("miss_to_hit", "miss → hit"))


def _blocks(document: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(name, b["robustness"]) for name, b in (document.get("summary") or {}).items() if b.get("robustness")]


def _by_uid(document: Mapping[str, Any]) -> dict[tuple[Any, Any, Any], Mapping[str, Any]]:
    """(summary block, dataset, uid) -> record."""
    return {(summary_key(r), r.get("dataset"), r.get("uid")): r for r in document.get("samples") or []}


def flip_pairs(document: Mapping[str, Any]) -> list[tuple[str, str, str, Mapping[str, Any], Mapping[str, Any]]]:
    """(detector, variant, direction, original record, variant record) of the flips shown."""
    records = _by_uid(document)
    out = []
    for name, block in _blocks(document):
        for row in block["variants"]:
            for kind, _ in DIRECTIONS:
                for flip in row[kind][:FLIPS_SHOWN]:
                    original = records.get((name, flip["dataset"], flip["uid"]))
                    variant = records.get((name, flip["dataset"], flip["variant_uid"]))
                    if original is not None and variant is not None:
                        out.append((name, str(row["label"]), kind, original, variant))
    return out


def flip_records(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The records whose screens the gallery of flips shows (for the page's thumbnails)."""
    return [r for *_, original, variant in flip_pairs(document) for r in (original, variant)]


def e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def chart(rows: Sequence[Mapping[str, Any]], width: int) -> str:
    """A diverging bar per variant: the change in points, its interval as a whisker."""
    spans = [abs(float(v)) for r in rows for v in (r.get("delta_ci95") or [r.get("delta") or 0.0]) if v is not None]
    reach = max([0.05, *spans])
    left, right, bar, top = 150.0, width - 30.0, 14.0, 30.0
    middle = (left + right) / 2

    def x_of(value: float) -> float:
        return middle + (right - middle) * value / reach

    height = top + bar * 1.5 * len(rows) + 20
    body = [
        '<text x="10" y="16" font-size="13" font-weight="600">change in accuracy per variant (points, 95% CI)</text>',
        f'<line x1="{middle:.1f}" y1="{top - 6}" x2="{middle:.1f}" y2="{height - 14:.1f}" stroke="#888"/>',
        f'<text x="{left:.1f}" y="{height - 2:.1f}" font-size="9">{-reach * 100:+.0f}</text>',
        f'<text x="{right:.1f}" y="{height - 2:.1f}" font-size="9" text-anchor="end">{reach * 100:+.0f}</text>',
    ]
    for index, row in enumerate(rows):
        y = top + index * bar * 1.5
        delta = row.get("delta")
        body.append(
            f'<text x="{left - 6:.1f}" y="{y + bar - 3:.1f}" font-size="11" text-anchor="end">'
            f"{escape(row['label'])}</text>"
        )
        if delta is None:
            continue
        x1, x2 = sorted((middle, x_of(float(delta))))
        fill = "#c2413b" if delta < 0 else "#2f9e57"
        title = escape(f"{row['label']}: {points(float(delta))} points over {row['pairs']} pairs")
        body.append(
            f'<rect x="{x1:.1f}" y="{y:.1f}" width="{max(x2 - x1, 0.5):.1f}" height="{bar - 2:.1f}" fill="{fill}">'
            f"<title>{title}</title></rect>"
        )
        bounds = row.get("delta_ci95")
        if bounds:
            a, b = x_of(float(bounds[0])), x_of(float(bounds[1]))
            mid = y + (bar - 2) / 2
            body.append(
                f'<path d="M{a:.1f} {mid:.1f}H{b:.1f}M{a:.1f} {mid - 4:.1f}v8M{b:.1f} {mid - 4:.1f}v8" stroke="#222"/>'
            )
    return (
        f'<svg class="figure" width="{width}" height="{height:.0f}" viewBox="0 0 {width} {height:.0f}" '
        f'xmlns="http://www.w3.org/2000/svg">{"".join(body)}</svg>'
    )


def _side(record: Mapping[str, Any], page: HtmlPage, title: str) -> str:
    point = record.get("point")
    click = "no point" if not point else "click (" + ", ".join(f"{float(v):.0f}" for v in point) + ")"
    return (
        f'<div><p class="muted">{e(title)}: {e(record.get("outcome"))} · {e(click)}</p>'
        f'<div class="pics">{page.pictures(record)}</div></div>'
    )


def section(document: Mapping[str, Any], page: HtmlPage) -> str:
    """The page's robustness section ('' without a sweep)."""
    found = _blocks(document)
    if not found:
        return ""
    out = ["<h2>Robustness</h2>"]
    numeric = [False, True, True, True, True, True, True, True]
    for name, block in found:
        rows = block["variants"]
        out.append(f"<h3>{e(name)}</h3>{chart(rows, page.width)}")
        out.append(html_table(list(HEAD), [cells(row) for row in rows], numeric))
    pairs = flip_pairs(document)
    if pairs:
        out.append(f"<h3>Flips ({len(pairs)} shown; the JSON lists every one)</h3>")
        words = dict(DIRECTIONS)
        for name, label, kind, original, variant in pairs:
            out.append(
                f'<article class="entry"><div class="facts"><p><b>{e(name)}</b> · {e(label)} · {e(words[kind])}</p>'
                f'<p class="mono">{e(original.get("dataset"))}/{e(original.get("id"))}</p>'
                f"<p>“{e(variant.get('instruction'))}”</p></div>"
                f"{_side(original, page, 'original')}{_side(variant, page, label)}</article>"
            )
    return "".join(out)
