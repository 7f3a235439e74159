"""The audit's HTML page: each finding with its screen crop, the box (green), the place the evidence
names (orange: the text read elsewhere, the other box, the runs' cluster), every run's click and the
text read in the box. Each screen is decoded once; crops are made with the report gallery's helpers
(render/html/thumbs.py) and drawn on with SVG in the screen's own pixels."""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.paths import shown_path, shown_text
from .html.svg import colour
from .html.thumbs import encode, fit, region_of

CROP_LIMIT = (420, 260)
MOST = 500  # findings shown; the JSON has them all

STYLE = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}
.f{display:flex;gap:1em;border-top:1px solid #ddd;padding:.7em 0}
.k{font-weight:600}.s{color:#666}.ev{font-size:12px;color:#444;max-width:46em}
svg{background:#eee;flex:none}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _rect(box: Sequence[float], colour_: str, dash: bool = False) -> str:
    x1, y1, x2, y2 = (float(v) for v in box)
    extra = ' stroke-dasharray="6 4"' if dash else ""
    return (
        f'<rect x="{x1:.1f}" y="{y1:.1f}" width="{max(x2 - x1, 0.5):.1f}" height="{max(y2 - y1, 0.5):.1f}" '
        f'fill="none" stroke="{colour_}" stroke-width="2" vector-effect="non-scaling-stroke"{extra}/>'
    )


def _span(finding: Mapping[str, Any]) -> list[float]:
    """The area the crop must show: the box, the place and the clicks."""
    xs: list[float] = []
    ys: list[float] = []
    boxes = [finding.get("bbox"), finding["evidence"].get("place"), finding["evidence"].get("other_bbox")]
    for box in boxes:
        if isinstance(box, list) and len(box) == 4:
            xs += [box[0], box[2]]
            ys += [box[1], box[3]]
        elif isinstance(box, list) and len(box) == 2:
            xs.append(box[0])
            ys.append(box[1])
    for point in (finding.get("clicks") or {}).values():
        xs.append(point[0])
        ys.append(point[1])
    if not xs:
        return [0, 0, 0, 0]
    return [min(xs), min(ys), max(xs), max(ys)]


def picture(finding: Mapping[str, Any], image: Any) -> str:
    region = region_of(_span(finding), image.size)
    x1, y1, x2, y2 = region
    data = encode(image.crop(region), CROP_LIMIT)
    width, height = fit((x2 - x1, y2 - y1), CROP_LIMIT)
    marks = [f'<image href="{data}" x="{x1}" y="{y1}" width="{x2 - x1}" height="{y2 - y1}"/>']
    evidence = finding["evidence"]
    if isinstance(evidence.get("other_bbox"), list):
        marks.append(_rect(evidence["other_bbox"], "#e08a00", dash=True))
    place = evidence.get("place")
    if isinstance(place, list) and len(place) == 4:
        marks.append(_rect(place, "#e08a00"))
    marks.append(_rect(finding["bbox"], "#0a0"))
    radius = max((x2 - x1) / width * 4, 2)
    for index, (name, point) in enumerate(sorted((finding.get("clicks") or {}).items())):
        marks.append(
            f'<circle cx="{point[0]:.1f}" cy="{point[1]:.1f}" r="{radius:.1f}" fill="{colour(index)}" '
            f'stroke="#fff" vector-effect="non-scaling-stroke"><title>{_e(name)}</title></circle>'
        )
    return (
        f'<svg width="{width}" height="{height}" viewBox="{x1} {y1} {x2 - x1} {y2 - y1}">' + "".join(marks) + "</svg>"
    )


def entry(rank: int, finding: Mapping[str, Any], image: Any, problem: str | None, root: str | None = None) -> str:
    shown = picture(finding, image) if image is not None else f"<p class=s>{_e(problem or 'no screen')}</p>"
    clicks = finding.get("clicks") or {}
    read = ", ".join(finding.get("ocr_in_box") or []) or "-"
    lines = [
        f"<div class=k>#{rank} {_e(finding['kind'])} <span class=s>score {finding['score']:.2f}</span> "
        f"{_e(finding['id'])}</div>",
        f"<div>{_e(finding['instruction'])}</div>",
        f"<div>{_e(finding['message'])}</div>",
        f"<div class=ev>box {_e(finding['bbox'])}; read in the box: {_e(read)}"
        + (f"; clicks: {_e(', '.join(f'{n} {p}' for n, p in sorted(clicks.items())))}" if clicks else "")
        + f"; {_e(shown_path(str(finding['image']), [root]))}</div>",
    ]
    return f"<div class=f>{shown}<div>{shown_text(''.join(lines))}</div></div>"  # a shared page: no home path


def render(document: Mapping[str, Any]) -> str:
    from PIL import Image

    findings = list(document.get("findings") or [])[:MOST]
    named = (document.get("dataset") or {}).get("path")
    root = named if isinstance(named, str) else None  # screen paths shown relative to the dataset's folder
    by_image: dict[str, list[int]] = defaultdict(list)
    for index, finding in enumerate(findings):
        by_image[finding["image"]].append(index)
    parts: dict[int, str] = {}
    for path, indices in by_image.items():
        image, problem = None, None
        try:
            with Image.open(path) as opened:
                image = opened.convert("RGB")
        except Exception as exc:  # a missing screen: its entries say so, the page is still written
            problem = f"screen not read: {type(exc).__name__}"
        for index in indices:
            parts[index] = entry(index + 1, findings[index], image, problem, root)
    dataset = document.get("dataset") or {}
    counts = document.get("counts") or {}
    head = (
        f"<h1>Audit of {_e(dataset.get('name'))}</h1><p>{_e(dataset.get('samples'))} samples, "
        f"{len(document.get('findings') or [])} findings; runs: {_e(', '.join(document.get('runs') or []) or 'none')}; "
        f"OCR: {'yes' if document.get('ocr') else 'no'}. Green: the box; orange: the place the evidence names; "
        f"dots: the runs' clicks.</p>"
        + "<table><tr><th>kind</th><th>findings</th></tr>"
        + "".join(f"<tr><td>{_e(k)}</td><td>{n}</td></tr>" for k, n in counts.items())
        + "</table>"
    )
    unread = list(document.get("unread_screens") or [])
    if unread:  # their samples got only the kinds that need no pixels
        items = "".join(
            f"<li>{_e(shown_path(str(e.get('image')), [root]))}: {_e(e.get('problem'))} "
            f"({_e(', '.join(e.get('samples') or []))})</li>"
            for e in unread
        )
        head += f"<h2>{len(unread)} screens not read</h2><ul>{items}</ul>"
    more = len(document.get("findings") or []) - len(findings)
    tail = f"<p>{more} more findings in the JSON.</p>" if more > 0 else ""
    body = "".join(parts[i] for i in range(len(findings)))
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>audit {_e(dataset.get('name'))}</title>"
        f"<style>{STYLE}</style></head><body>{shown_text(head)}{body}{tail}</body></html>\n"
    )
