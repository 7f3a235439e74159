"""The HTML page's sections, each a string, from the JSON report document."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ...analysis import cost
from ...analysis.figures import SLICE_TITLES, blocks, design_figures, slice_figure
from ...analysis.intervals import span
from ...core.identity import display_name
from ...core.numbers import ms, pct
from ...core.record import Outcome
from ...sections import HtmlPage, ordered
from ..common import headline as report
from ..common.tables import GATE_HEADER, gate_rows, macro_cell
from .svg import WIDTH
from .svg import render as render_svg
from .thumbs import CROP_MAX, OVERVIEW_MAX, Region, Thumbnails, fit
from .turns import crop_marks, turns_list

NON_HITS = (Outcome.MISS, Outcome.WRONG_FORMAT, Outcome.ERROR)
OUTCOME_WORDS: dict[str, str] = {outcome: outcome.value.replace("_", " ") for outcome in NON_HITS}
APP_BARS = 15  # apps in the app chart (most samples first); the app table has them all
FILTERS = (  # (data attribute, record field, label)
    ("task", "task", "task"),
    ("detector", "detector", "detector"),
    ("dataset", "dataset", "dataset"),
    ("app", "app", "app"),
    ("element", "element_type", "element type"),
    ("size", "size", "size (px)"),
    ("outcome", "outcome", "outcome"),
)


def e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def num(value: Any, digits: int = 0, unit: str = "") -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value:.{digits}f}{unit}"


def table(head: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] = ()) -> str:
    """Cells are HTML already (callers escape)."""
    numeric = list(numeric) or [False] * len(head)
    out = ["<table><thead><tr>", *(f"<th>{h}</th>" for h in head), "</tr></thead><tbody>"]
    for row in rows:
        cells = (f'<td class="n">{c}</td>' if numeric[i] else f"<td>{c}</td>" for i, c in enumerate(row))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def verdict(passed: bool) -> str:
    return '<span class="pass">passed</span>' if passed else '<span class="fail">FAILED</span>'


# -- header -------------------------------------------------------------------------------------


def banner(document: Mapping[str, Any]) -> str:
    parts = []
    if document.get("partial"):
        parts.append(
            '<div class="partial" id="partial">Partial run: it was interrupted; the figures cover the samples '
            "that finished.</div>"
        )
    if document.get("resumed"):
        parts.append(f'<div class="note">resumed: {e(document["resumed"])} samples taken from the predictions '
                     "file, the rest run then</div>")  # fmt: skip
    parts += [f'<div class="note">note: {e(note)}</div>' for note in document.get("notes") or []]
    return "".join(parts)


def samples_cell(dataset: Mapping[str, Any], shard: Mapping[str, Any] | None) -> str:
    """`300`, `40 of 300` (--grounding-limit), `shard 1/2: 150 of 300` (what a shard scores)."""
    planned = report.shard_planned(shard, dataset["name"])
    if shard is not None and planned is not None:
        return f"shard {num(shard['index'])}/{num(shard['count'])}: {num(planned)} of {num(dataset['samples'])}"
    limit = dataset.get("limit")
    return num(limit or dataset["samples"]) + (f" of {num(dataset['samples'])}" if limit else "")


def run_section(document: Mapping[str, Any]) -> str:
    run = document.get("run") or {}
    settings = run.get("settings") or {}
    facts = [
        ("started", e(document.get("started"))),
        ("duration", num(document.get("duration_s"), 1, " s")),
        ("task", e(settings.get("task", "grounding"))),
        ("workers (xdist -n)", e(run.get("workers") if run.get("workers") is not None else "none")),
        ("failed items reported as", e(settings.get("misses"))),  # --grounding-misses
        ("limit per dataset", e(settings.get("limit") or "none")),
        ("per-prediction timeout", num(settings.get("timeout_s"), 1, " s") if settings.get("timeout_s") else "none"),
        ("command line", f'<span class="mono">pytest {e(" ".join(run.get("args") or []))}</span>'),
    ]
    out = ["<h2>Run</h2>", table(["", ""], facts)]
    datasets = run.get("datasets") or []
    shard = None if document.get("merge") else document.get("shard")
    if datasets:
        rows = [
            [
                e(d["name"]),
                e(d["format"]),
                samples_cell(d, shard),
                f'<span class="mono">{e(d["fingerprint"])}</span>',
                num(d.get("defects", 0)),
                num(len(d.get("problems") or [])),
                f'<span class="mono muted">{e(d["path"])}</span>',
            ]
            for d in datasets
        ]
        head = ["dataset", "format", "samples", "fingerprint", "unusable", "label problems", "path"]
        out += ["<h3>Datasets</h3>", table(head, rows, [False, False, True, False, True, True, False])]
    detectors = run.get("detectors") or {}
    if detectors:
        rows = []
        for spec, info in detectors.items():
            described = json.dumps(info, indent=1, sort_keys=True, default=str)
            rows.append(
                [
                    f"<b>{e(spec)}</b>",
                    e(report.runtime_line(info)),
                    num(info.get("load_s"), 1, " s"),
                    e(", ".join(info.get("providers") or []) or "-"),
                    f'<details><summary class="mono">{e(info.get("class"))}</summary>'
                    f'<pre class="mono">{e(described)}</pre></details>',
                ]
            )
        out += ["<h3>Detectors</h3>", table(["detector", "settings", "load", "providers", "describe()"], rows)]
    versions = document.get("versions") or {}
    if versions:
        listed = " · ".join(f"{e(name)} {e(value)}" for name, value in versions.items())
        out += ["<h3>Versions</h3>", f'<p class="mono">{listed}</p>']
    return "".join(out)


def gates_section(document: Mapping[str, Any]) -> str:
    out = ["<h2>Gates</h2>"]
    gates = gate_rows(document)  # the markdown summary's table too (render/common/tables.py)
    if gates:
        rows = [[*(e(c) for c in row[:-1]), verdict(row[-1] == "passed")] for row in gates]
        numeric = [False, False, True, True, False, True, True, False]
        out.append(table(list(GATE_HEADER), rows, numeric))
    elif document.get("partial"):
        out.append('<p class="muted">no verdict: the run was interrupted</p>')
    else:
        out.append('<p class="muted">no accuracy gate set (--grounding-min-accuracy)</p>')
    checks = document.get("errors_check") or []
    if checks:
        rows = [
            [
                e(c["detector"]),
                f"{num(c['errors'])} of {num(c['samples'])}",
                pct(c["max_share"]),
                verdict(c["passed"]),
            ]
            for c in checks
        ]
        out += [
            "<h3>Error share (--grounding-max-errors)</h3>",
            table(["detector", "errors", "most allowed", "verdict"], rows, [False, True, True, False]),
        ]
    return "".join(out)


# -- summary ------------------------------------------------------------------------------------


def slice_table(title: str, rows: Sequence[Mapping[str, Any]]) -> str:
    body = [
        [
            e(row["value"]),
            num(row["samples"]),
            num(row["scored"]),
            num(row["hits"]),
            pct(row["accuracy"]),
            e(span(row.get("ci95"))),
            num(row[Outcome.WRONG_FORMAT]),
            num(row["errors"]),
            num(row["mean_iou"], 2),
        ]
        for row in rows
    ]
    head = [e(title), "n", "scored", "hits", "acc", "95% CI", "wrong", "err", "IoU"]
    return table(head, body, [False] + [True] * 8)


def detector_section(
    name: str,
    block: Mapping[str, Any],
    info: Mapping[str, Any] | None,
    spent: Mapping[str, Any] | None = None,
    sections: Any = None,
) -> str:
    """`spent`: the report's `cost` entry (tokens and cost lines under the headline); `sections`:
    the report sections (default: the installed ones)."""
    found = (spent or {}).get("detectors") or {}
    price = cost.Price.from_dict((spent or {}).get("price"))
    # the sections with a page section of their own (robustness) are left out of the box
    shown = found.get(name)
    headline = report.headline_lines(name, block, info=info, cost=shown, price=price, page=True, sections=sections)
    out = [f'<div class="block"><h3>{e(headline[0])}</h3>']
    out += [f'<p class="mono">{e(line.strip())}</p>' for line in headline[1:] if line.strip()]
    out.append('<div class="tables">')
    for key, title in report.TABLES:
        rows = block["by"][key]
        if key == "dataset" and len(rows) < 2:
            continue
        wrapped = '<div class="scroll">{}</div>' if key == "app" and len(rows) > APP_BARS else "<div>{}</div>"
        out.append(wrapped.format(slice_table(title, rows)))
    out.append("</div></div>")
    return "".join(out)


def comparison(document: Mapping[str, Any]) -> str:
    named = blocks(document)
    rows = [
        [
            f"<b>{e(display_name(name, block))}</b>",
            e(block.get("task", "grounding")),
            num(block["samples"]),
            num(block["scored"]),
            pct(block["accuracy"]),
            e(span(block.get("ci95"))),
            e(macro_cell(block, "app")),
            e(macro_cell(block, "dataset")),
            num(block.get("truncated", 0)),
            num(block["mean_iou"], 2),
            ms(block["latency_ms"]["p50"]),
            ms(block["latency_ms"]["p95"]),
            num(block[Outcome.WRONG_FORMAT]),
            num(block["errors"]),
        ]
        for name, block in named
    ]
    head = ["detector", "task", "n", "scored", "accuracy", "95% CI", "macro apps", "macro datasets", "cut answers"]
    head += ["IoU", "p50 ms", "p95 ms", "wrong", "err"]
    return table(head, rows, [False, False] + [True] * 12)


def summary_section(document: Mapping[str, Any], sections: Any = None) -> str:
    named = blocks(document)
    if not named:
        return '<h2>Summary</h2><p class="muted">no sample finished</p>'
    info = (document.get("run") or {}).get("detectors") or {}
    out = ["<h2>Summary</h2>"]
    if len(named) > 1:
        out += ["<h3>Comparison</h3>", comparison(document)]
    for task in ("grounding", "locate"):
        of_task = blocks(document, task)
        charts = [
            slice_figure(of_task, key, limit=APP_BARS if key == "app" else None, task=task) for key in SLICE_TITLES
        ]
        shown = [render_svg(chart) for chart in charts if chart is not None]
        if shown:
            what = "element at click" if task == "locate" else "grounding"
            out += [f"<h3>By slice ({what})</h3>", '<div class="figures">', *shown, "</div>"]
    for name, block in named:
        detector = info.get(str(block.get("detector")))
        out.append(detector_section(name, block, detector, document.get("cost"), sections))
    return "".join(out)


def sections_html(document: Mapping[str, Any], thumbs: Thumbnails, sections: Any = None) -> str:
    """Each report section's part of the page (pytest_grounding/sections), in their order."""
    page = HtmlPage(thumbs, pictures=lambda record: pictures(record, thumbs), width=WIDTH)
    return "".join(section.html(document, page) for section in ordered(sections))


def thumbnail_records(document: Mapping[str, Any], sections: Any = None) -> list[Mapping[str, Any]]:
    """Records the sections' parts show screens of (the sweep's flipped pairs)."""
    return [record for section in ordered(sections) for record in section.thumbnail_records(document)]


def figures_section(document: Mapping[str, Any]) -> str:
    # a scatter of one point (one detector's latency against its accuracy) says nothing the card does not
    figures = [f for f in design_figures(document) if f.kind != "scatter" or len(f.points) > 1]
    if not figures:
        return ""
    return "<h2>Figures</h2>" + '<div class="figures">' + "".join(render_svg(f) for f in figures) + "</div>"


# -- gallery ------------------------------------------------------------------------------------


def _numbers(value: Any, count: int) -> list[float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != count:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return None
    return list(value)


def marks(record: Mapping[str, Any], unit: float) -> str:
    """The target box (green), the predicted box (orange, dashed) and point (red) in screen pixels;
    `unit`: screen pixels per displayed pixel, so marks keep their size at every zoom."""
    out = []
    target = _numbers(record.get("target"), 4)  # numbers only reach the SVG (a crafted report: text)
    point = _numbers(record.get("point"), 2)
    if target and len(target) == 4:
        x1, y1, x2, y2 = target
        out.append(
            f'<rect x="{x1}" y="{y1}" width="{x2 - x1}" height="{y2 - y1}" fill="none" stroke="#12a150" '
            'stroke-width="2" vector-effect="non-scaling-stroke"/>'
        )
        if point and record.get("task", "grounding") == "grounding":
            out.append(
                f'<line x1="{(x1 + x2) / 2}" y1="{(y1 + y2) / 2}" x2="{point[0]}" y2="{point[1]}" stroke="#e0245e" '
                'stroke-width="1" stroke-dasharray="4 3" vector-effect="non-scaling-stroke"/>'
            )
    box = _numbers(record.get("box"), 4)
    if box and len(box) == 4:
        x1, y1, x2, y2 = box
        out.append(
            f'<rect x="{x1}" y="{y1}" width="{x2 - x1}" height="{y2 - y1}" fill="none" stroke="#f08c00" '
            'stroke-width="2" stroke-dasharray="5 3" vector-effect="non-scaling-stroke"/>'
        )
    if point:
        x, y = point
        r = 5 * unit
        out.append(
            f'<circle cx="{x}" cy="{y}" r="{r:.2f}" fill="none" stroke="#e0245e" stroke-width="2" '
            f'vector-effect="non-scaling-stroke"/><path d="M{x - 2 * r:.1f} {y}h{4 * r:.1f}M{x} {y - 2 * r:.1f}'
            f'v{4 * r:.1f}" stroke="#e0245e" stroke-width="1" vector-effect="non-scaling-stroke"/>'
        )
    return "".join(out)


def shot(css_class: str, region: Region, limit: tuple[int, int], record: Mapping[str, Any], outline: str = "") -> str:
    x1, y1, x2, y2 = region
    width, height = fit((x2 - x1, y2 - y1), limit)
    unit = (x2 - x1) / width
    return (
        f'<svg class="shot {css_class}" width="{width}" height="{height}" viewBox="{x1} {y1} {x2 - x1} {y2 - y1}" '
        f'preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">{outline}{marks(record, unit)}</svg>'
    )


def pictures(record: Mapping[str, Any], thumbs: Thumbnails) -> str:
    withheld = thumbs.withheld_reason(record)
    if withheld is not None:
        return f'<div class="missing" data-missing="1" data-withheld="1">{e(withheld)}</div>'
    screen = thumbs.screen(record)
    if screen is None:
        return '<div class="missing">no image in the record</div>'
    crop = thumbs.crop(record)
    if crop is None or screen.size is None:
        return f'<div class="missing" data-missing="1">{e(screen.problem or "image missing")}</div>'
    css_class, region = crop
    x1, y1, x2, y2 = region
    outline = (
        f'<rect x="{x1}" y="{y1}" width="{x2 - x1}" height="{y2 - y1}" fill="none" stroke="#1d232b" '
        'stroke-width="1" vector-effect="non-scaling-stroke"/>'
    )
    whole = (0, 0, screen.size[0], screen.size[1])
    if region == whole:  # a small screen: the crop is the whole of it
        return shot(css_class, region, CROP_MAX, record)
    overview = outline + crop_marks(record, whole[2] / fit(screen.size, OVERVIEW_MAX)[0])  # an episode's crops
    return shot(css_class, region, CROP_MAX, record) + shot(f"s{screen.index}", whole, OVERVIEW_MAX, record, overview)


def sample_anchor(detector: Any, dataset: Any, uid: Any) -> str:
    """A gallery entry's id, so that the board's sample x model matrix can link to it: the UTF-8 hex
    of detector, dataset and uid (any text; the board's script computes the same)."""
    return "sample-" + "\n".join(str(v) for v in (detector, dataset, uid)).encode("utf-8").hex()


def display_names(document: Mapping[str, Any]) -> dict[str, str]:
    """{spec: label} for the detectors of a report that have a label= (issue 51)."""
    detectors = (document.get("run") or {}).get("detectors") or {}
    return {str(spec): display_name(str(spec), info) for spec, info in detectors.items()}


def entry(record: Mapping[str, Any], thumbs: Thumbnails, index: int, names: Mapping[str, str] | None = None) -> str:
    anchor = sample_anchor(record.get("detector"), record.get("dataset"), record.get("uid"))
    attrs = f' id="{anchor}"' + "".join(f' data-{attr}="{e(record.get(field))}"' for attr, field, _ in FILTERS)
    distance = record.get("distance")
    attrs += f' data-distance="{distance if isinstance(distance, (int, float)) else ""}" data-index="{index}"'
    outcome = str(record.get("outcome"))
    task = record.get("task", "grounding")
    facts = [
        f'<p><span class="badge o-{e(outcome)}">{e(OUTCOME_WORDS.get(outcome, outcome))}</span> '
        f"<b>{e((names or {}).get(str(record.get('detector')), record.get('detector')))}</b>"
        f"{' (element at click)' if task == 'locate' else ''} · "
        f'<span class="mono">{e(record.get("dataset"))}/{e(record.get("id"))}</span></p>',
        f"<p>“{e(record.get('instruction'))}”</p>",
        f'<p class="muted">{e(record.get("app"))} ({e(record.get("app_category"))}, {e(record.get("platform"))}) · '
        f"{e(record.get('element_type'))} · {num(record.get('size_px'))} px ({e(record.get('size'))})</p>",
    ]
    measured = []
    if isinstance(distance, (int, float)):
        measured.append(f"distance {distance:.0f} px")
    if record.get("iou") is not None:
        measured.append(f"IoU {record['iou']:.2f}")
    if record.get("point"):
        measured.append("point (" + ", ".join(f"{v:g}" for v in record["point"]) + ")")
    if record.get("latency_ms") is not None:
        measured.append(f"{ms(record['latency_ms'])} ms")
    if measured:
        facts.append(f"<p>{' · '.join(measured)}</p>")
    if record.get("raw") not in (None, ""):
        facts.append(f'<div class="raw mono" title="raw answer">{e(record["raw"])}</div>')
    if record.get("error"):
        facts.append(f'<div class="err mono" title="error">{e(record["error"])}</div>')
    facts.append(turns_list(record))  # agent=crop: the episode's turns
    return (
        f'<article class="entry"{attrs}><div class="pics">{pictures(record, thumbs)}</div>'
        f'<div class="facts">{"".join(facts)}</div></article>'
    )


def controls(non_hits: Sequence[Mapping[str, Any]]) -> str:
    out = ['<div class="controls">']
    for attr, field, label in FILTERS:
        counts: dict[str, int] = {}
        for record in non_hits:
            value = "" if record.get(field) is None else str(record.get(field))
            counts[value] = counts.get(value, 0) + 1
        if attr in ("task", "dataset") and len(counts) < 2:
            continue
        options = "".join(f'<option value="{e(v)}">{e(v)} ({n})</option>' for v, n in sorted(counts.items()))
        out.append(
            f'<label>{e(label)}<select data-filter="{attr}" id="filter-{attr}"><option value="">all</option>'
            f"{options}</select></label>"
        )
    out.append(
        '<label>sort<select id="sort"><option value="report">report order</option>'
        '<option value="near">distance, nearest first</option><option value="far">distance, farthest first</option>'
        "</select></label>"
    )
    out.append(f'<span><b id="shown">{len(non_hits)}</b> of {len(non_hits)} shown</span></div>')
    return "".join(out)


def gallery_section(
    records: Sequence[Mapping[str, Any]], thumbs: Thumbnails, names: Mapping[str, str] | None = None
) -> str:
    non_hits = [r for r in records if r.get("outcome") in NON_HITS]
    out = [
        f'<h2 id="gallery-title">Misses, wrong formats and errors ({len(non_hits)})</h2>',
        '<p class="key muted"><span style="color:#12a150">▭ target</span><span style="color:#e0245e">⊕ predicted '
        'point</span><span style="color:#f08c00">⬚ predicted box</span><span>each entry: the area around the '
        "target, then the whole screen</span></p>",
    ]
    if not non_hits:
        return "".join([*out, '<p class="muted">every sample hit</p>'])
    out.append(controls(non_hits))
    out.append('<div id="gallery">')
    out += [entry(record, thumbs, index, names) for index, record in enumerate(non_hits)]
    out.append("</div>")
    return "".join(out)
