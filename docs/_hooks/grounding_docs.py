"""MkDocs hooks: pages that are generated from the package, so they cannot drift from it.

- the `<!-- grounding:options -->` ... `<!-- /grounding:options -->` block of docs/options.md is the
  table of the options declared on the settings' fields (plugin/common/settings.py; the same texts and groups
  `pytest --help` prints). It is checked in, so a review sees it change: `python docs/_hooks/grounding_docs.py`
  regenerates it and tests/test_docs.py fails when it drifts;
- `<!-- grounding:report-schema -->` becomes the JSON Schema of the report, which is also published
  as `report.schema.json` beside the pages;
- `<!-- grounding:presets -->` becomes the model presets of `pytest_grounding.detectors.vlm` (the summary table,
  then each preset's prompt, preprocessing, coordinates, decoding and source).
- `<!-- grounding:timings -->` becomes the table of durations in `docs/_figures.json` (the one source of
  every timing the README and the pages quote);
- `<!-- grounding:published -->` becomes the table of published figures the reproduction check reads
  (`pytest_grounding/published.json`).

Option attributes are read with defaults, so a field added to `Option` later does not break the build.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # document this checkout's package, not another installed copy
    sys.path.insert(0, str(REPO))

OPTIONS_MARKER = "<!-- grounding:options -->"
OPTIONS_END = "<!-- /grounding:options -->"
OPTIONS_PAGE = REPO / "docs" / "options.md"
SCHEMA_MARKER = "<!-- grounding:report-schema -->"
PRESETS_MARKER = "<!-- grounding:presets -->"
SCHEMA_FILE = REPO / "pytest_grounding" / "schema" / "report.schema.json"
PUBLISHED_MARKER = "<!-- grounding:published -->"
TIMINGS_MARKER = "<!-- grounding:timings -->"
FIGURES_FILE = REPO / "docs" / "_figures.json"


def duration(seconds: float) -> str:
    """`about 2 minutes`, `about 55 s`: how a page says a timing of docs/_figures.json."""
    if seconds >= 90:
        return f"about {round(seconds / 60):.0f} minutes"
    return f"about {round(seconds):.0f} s"


def timings_table() -> str:
    """The durations of docs/_figures.json, the one place they are kept: command, what, how long,
    machine and load, date."""
    entries = json.loads(FIGURES_FILE.read_text(encoding="utf-8"))["timings"]
    rows = [
        f'<tr id="timing-{html.escape(t["key"])}"><td>{_code(t["command"])}</td><td>{html.escape(t["what"])}</td>'
        f"<td>{duration(t['seconds'])} ({t['seconds']:g} s)</td><td>{html.escape(t['machine'])}; load: "
        f"{html.escape(t['load'])}</td><td>{html.escape(t['date'])}</td><td>{html.escape(t['source'])}</td></tr>"
        for t in entries
    ]
    return (
        "<table>\n<thead><tr><th>command</th><th>what</th><th>took</th><th>machine</th><th>date</th>"
        "<th>source</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n"
    )


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def _inline(text: str) -> str:
    """Escape a help text for HTML, keeping its `backtick` spans as code."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def _option_row(option) -> str:
    flag = getattr(option, "flag", "?")
    metavar = getattr(option, "metavar", None)
    ini = getattr(option, "ini", None)
    text = getattr(option, "doc", None) or getattr(option, "help", "") or ""
    notes = []
    if getattr(option, "repeat", False) and "repeatable" not in text.lower():
        notes.append("Repeatable.")
    default = getattr(option, "default", None)
    if default not in (None, "", [], ()) and "default" not in text.lower():
        notes.append(f"Default: {_code(str(default))}.")
    anchor = flag.lstrip("-")
    usage = _code(f"{flag} {metavar}" if metavar else flag)
    return (
        f'<tr id="{html.escape(anchor)}"><td>{usage}</td><td>{_code(ini) if ini else ""}</td>'
        f"<td>{' '.join([_inline(text), *notes])}</td></tr>"
    )


def options_table() -> str:
    """The options, grouped as the settings declare them (plugin/common/settings.py), one row each."""
    from pytest_grounding.plugin.common.options import option_groups

    rows = []
    for name, title, options in option_groups():
        rows.append(f'<tr><th colspan="3" id="{html.escape(name)}">{html.escape(name)}: {html.escape(title)}</th></tr>')
        rows.extend(_option_row(option) for option in options)
    return (
        "<table>\n<thead><tr><th>option</th><th>ini key</th><th>meaning</th></tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n"
    )


def options_block() -> str:
    """What docs/options.md holds between its markers (checked in; tests/test_docs.py compares)."""
    return f"{OPTIONS_MARKER}\n{options_table()}{OPTIONS_END}\n"


def checked_in_options(text: str) -> str | None:
    """The options block as docs/options.md holds it, markers included; None without its markers."""
    start, end = text.find(OPTIONS_MARKER), text.find(OPTIONS_END)
    if start < 0 or end < 0:
        return None
    return text[start : end + len(OPTIONS_END)] + "\n"


def write_options_page(page: Path = OPTIONS_PAGE) -> bool:
    """Regenerate the options table in docs/options.md; True when it changed."""
    text = page.read_text(encoding="utf-8")
    found = checked_in_options(text)
    fresh = options_block()
    if found is None:
        raise SystemExit(f"{page}: no {OPTIONS_MARKER} ... {OPTIONS_END} block")
    if found == fresh:
        return False
    page.write_text(text.replace(found, fresh), encoding="utf-8")
    return True


def schema_block() -> str:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return "```json\n" + json.dumps(schema, indent=2) + "\n```\n"


def _fenced(text: str) -> str:
    """A prompt as a text block, exact: shown with its whitespace, newlines as they are sent."""
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text}\n{fence}\n"


def presets_page() -> str:
    from pytest_grounding.detectors.vlm.presets import all_presets

    presets = list(all_presets().values())
    rows = ["| preset | family | coordinates | preprocessing | decoding |", "|---|---|---|---|---|"]
    for preset in presets:
        pre = preset.preprocess.describe()
        sizes = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in pre.items() if k != "kind")
        rows.append(
            f"| [`{preset.name}`](#{preset.name.replace('.', '')}) | {preset.family} | {preset.coordinates} | "
            f"{pre['kind']}{(' ' + sizes) if sizes else ''} | {preset.decoding.summary()} |"
        )
    sections = ["\n".join(rows) + "\n"]
    for preset in presets:
        prompt = preset.prompt
        parts = [f"### {preset.name}\n", f"**{preset.family}**. Source: {preset.source}.\n"]
        if preset.notes:
            parts.append(f"Notes: {preset.notes}\n")
        order = " | ".join(" + ".join(m.split(",")) for m in prompt.order.split("|"))
        parts.append(f"- order of the user turn: `{order}` (`|` separates messages)")
        if prompt.strip:
            parts.append(f"- the instruction loses a trailing `{prompt.strip}`")
        pre = preset.preprocess.describe()
        parts.append(f"- preprocessing: `{json.dumps(pre)}`")
        parts.append(
            f"- answer read by: {', '.join(f'`{e}`' for e in preset.extractors)}; transform `{preset.transform}` "
            f"({preset.coordinates})"
        )
        parts.append(f"- decoding: {preset.decoding.summary()}")
        parts.append(f"- refusal form: {f'`{preset.refusal}`' if preset.refusal else 'none'}\n")
        if prompt.system is not None:
            parts.append("System prompt:\n\n" + _fenced(prompt.system))
        if prompt.lead is not None:
            parts.append("Lead text:\n\n" + _fenced(prompt.lead))
        parts.append("User text:\n\n" + _fenced(prompt.user))
        parts.append(_published_for(preset.name))
        sections.append("\n".join(parts))
    return "\n".join(sections)


def _published_for(preset: str) -> str:
    """The preset's published figures (the reproduction check's data), or a line saying none ship."""
    from pytest_grounding.analysis.reproduce import shipped_table

    table = shipped_table()
    found = sorted((r for r in table.results if r.preset == preset), key=lambda r: (r.benchmark, r.model))
    if not found:
        return "Published figures: none ship for this preset (see [the reproduction check](reproduction.md)).\n"
    titles = {b.id: b.title for b in table.benchmarks}
    lines = ["Published figures (the [reproduction check](reproduction.md) compares a run with them):\n"]
    for result in found:
        note = f"; {result.note}" if result.note else ""
        lines.append(f"- {titles[result.benchmark]}, {result.model}: {result.figure:g} ({result.source}{note})")
    return "\n".join(lines) + "\n"


def published_table() -> str:
    from pytest_grounding.analysis.reproduce import shipped_table

    table = shipped_table()
    titles = {b.id: b.title for b in table.benchmarks}
    averages = {b.id: b.average for b in table.benchmarks}
    rows = ["| preset | model | benchmark | figure | average | source |", "|---|---|---|---|---|---|"]
    for found in sorted(table.results, key=lambda r: (r.preset, r.benchmark, r.model)):
        note = f" ({found.note})" if found.note else ""
        cell = (found.source + note).replace("|", "\\|")
        figure = f"{found.figure:g}" if found.figure % 1 else f"{found.figure:.1f}"
        rows.append(
            f"| `{found.preset}` | {found.model} | {titles[found.benchmark]} | {figure} | "
            f"{found.average or averages[found.benchmark]} | {cell} |"
        )
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown, page, config, files, **kwargs):
    if PRESETS_MARKER in markdown:
        markdown = markdown.replace(PRESETS_MARKER, presets_page())
    found = checked_in_options(markdown)
    if found is not None:  # checked in (tests/test_docs.py fails on drift); built from the declarations anyway
        markdown = markdown.replace(found, options_table())
    if SCHEMA_MARKER in markdown:
        markdown = markdown.replace(SCHEMA_MARKER, schema_block())
    if TIMINGS_MARKER in markdown:
        markdown = markdown.replace(TIMINGS_MARKER, timings_table())
    if PUBLISHED_MARKER in markdown:
        markdown = markdown.replace(PUBLISHED_MARKER, published_table())
    return markdown


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    files.append(File.generated(config, "report.schema.json", content=SCHEMA_FILE.read_bytes()))
    return files


if __name__ == "__main__":  # python docs/_hooks/grounding_docs.py: the options table regenerated
    print("docs/options.md: " + ("regenerated" if write_options_page() else "up to date"))
