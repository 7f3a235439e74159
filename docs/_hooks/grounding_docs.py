"""MkDocs hooks: pages that are generated from the package, so they cannot drift from it.

- `<!-- grounding:options -->` becomes the table of `pytest_grounding.plugin.options.OPTIONS` (the same
  texts `pytest --help` prints);
- `<!-- grounding:report-schema -->` becomes the JSON Schema of the report, which is also published
  as `report.schema.json` beside the pages;
- `<!-- grounding:presets -->` becomes the model presets of `pytest_grounding.detectors.vlm` (the summary table,
  then each preset's prompt, preprocessing, coordinates, decoding and source).
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
SCHEMA_MARKER = "<!-- grounding:report-schema -->"
PRESETS_MARKER = "<!-- grounding:presets -->"
SCHEMA_FILE = REPO / "pytest_grounding" / "schema" / "report.schema.json"
PUBLISHED_MARKER = "<!-- grounding:published -->"


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def _inline(text: str) -> str:
    """Escape a help text for HTML, keeping its `backtick` spans as code."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def options_table() -> str:
    from pytest_grounding.plugin.options import OPTIONS

    rows = []
    for option in OPTIONS:
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
        rows.append(
            f'<tr id="{html.escape(anchor)}"><td>{usage}</td><td>{_code(ini) if ini else ""}</td>'
            f"<td>{' '.join([_inline(text), *notes])}</td></tr>"
        )
    return (
        "<table>\n<thead><tr><th>option</th><th>ini key</th><th>meaning</th></tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n"
    )


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
    if OPTIONS_MARKER in markdown:
        markdown = markdown.replace(OPTIONS_MARKER, options_table())
    if SCHEMA_MARKER in markdown:
        markdown = markdown.replace(SCHEMA_MARKER, schema_block())
    if PUBLISHED_MARKER in markdown:
        markdown = markdown.replace(PUBLISHED_MARKER, published_table())
    return markdown


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    files.append(File.generated(config, "report.schema.json", content=SCHEMA_FILE.read_bytes()))
    return files
