"""One self-contained HTML page from a JSON report document (the dict --grounding-json writes):
the run's header, the summary tables and charts, the design's figures and a gallery of every
miss, wrong-format answer and error. `--grounding-html` at the end of a run and
`python -m pytest_grounding report REPORT.json --html PATH` both call `write_html`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from ...core.paths import shown_text
from ...sections import ordered
from ...store.reports import write_atomic
from . import headline
from .assets import CSS, SCRIPT
from .page import (
    NON_HITS,
    banner,
    display_names,
    figures_section,
    gallery_section,
    gates_section,
    run_section,
    sections_html,
    summary_section,
    thumbnail_records,
)
from .thumbs import Thumbnails, Withhold

THUMBS = "/*grounding-thumbnails*/"  # where the thumbnails' CSS goes once the page's text is checked


@dataclass(frozen=True)
class Written:
    path: Path
    entries: int  # gallery entries: the report's non-hits
    screens: int  # screens decoded for thumbnails
    bytes: int


def render(
    document: Mapping[str, Any], base: Path | None = None, withhold: Withhold | None = None, sections: Any = None
) -> tuple[str, int, int]:
    """(the page, gallery entries, screens decoded). `base`: where relative image paths start;
    `withhold`: why a record's image must not be read (a report from elsewhere: see cli/images.py);
    `sections`: the report sections (a registry or a list; default: the installed ones)."""
    found = ordered(sections)
    records = document.get("samples") or []
    non_hits = [r for r in records if r.get("outcome") in NON_HITS]
    thumbs = Thumbnails([*non_hits, *thumbnail_records(document, found)], base=base, withhold=withhold)
    partial = bool(document.get("partial"))
    title = ("[partial] " if partial else "") + "pytest-grounding report"
    started = escape(str(document.get("started") or ""))
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} {started}</title><style>{CSS}\n{headline.CSS}\n{THUMBS}</style></head>"
        f'<body data-partial="{"1" if partial else "0"}"><header><h1>{escape(title)}</h1>'
        f'<p class="muted">started {started} · {len(records)} records</p>{banner(document)}</header><main>'
        f"{headline.cards(document, sections=found)}"
        f"{headline.folded('Run, datasets, detectors, versions', run_section(document))}"
        f"{gates_section(document)}{summary_section(document, found)}"
        f"{sections_html(document, thumbs, found)}{figures_section(document)}"
        f"{gallery_section(records, thumbs, display_names(document))}</main><script>{SCRIPT}</script></body></html>\n"
    )
    # a shared file: no absolute home path in any text (an exception's message, the command line, a folder);
    # the thumbnails' data URIs go in after, untouched
    page = shown_text(page).replace(THUMBS, thumbs.css(), 1)
    return page, len(non_hits), len(thumbs.screens)


def write_html(
    document: Mapping[str, Any],
    path: Path,
    base: Path | None = None,
    withhold: Withhold | None = None,
    sections: Any = None,
) -> Written:
    """Written to a temporary file and renamed, like the JSON report."""
    page, entries, screens = render(document, base=base, withhold=withhold, sections=sections)
    path = Path(path)
    data = page.encode("utf-8")
    write_atomic(path, data)
    return Written(path, entries, screens, len(data))
