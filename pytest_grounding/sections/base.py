"""A report section: one measured feature's slice of the report, owned in one place.

A section says what its figures are (computed from one detector block's records, or named at the
run level), how the terminal, the markdown summary, the HTML page and the experiment trackers
show them, and its fragment of the report's JSON schema. Each output loops over the registered
sections (sections/registry.py); an output a section does not render in is named in `not_in`
with the reason, and tests/test_sections.py fails on a section that neither renders in an output
nor says why.

Every method has a default that renders nothing, so a section overrides only what it has. The
API is stable: new hooks are added with defaults, none is renamed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..analysis.metrics import BlockRecords

if TYPE_CHECKING:
    from ..analysis.cost import Price
    from ..analysis.document import RunRecords
    from ..analysis.result import RunResult

# The outputs every section renders in or declares it does not (`not_in` keys).
TERMINAL, MARKDOWN, HTML, TRACKER, SCHEMA = "terminal", "markdown", "html", "tracker", "schema"
OUTPUTS = (TERMINAL, MARKDOWN, HTML, TRACKER, SCHEMA)

# Where a section's figures live in the report: in each detector's summary block, or at the top.
DETECTOR, RUN = "detector", "run"

# A detector block's terminal lines are drawn in `order`: a section below LATENCY sits under the
# accuracy lines, one at or above it after the latency line; the slice tables come last.
LATENCY = 50


@dataclass(frozen=True)
class DetectorView:
    """What a section draws one detector's terminal lines from (the HTML page's detector box too).

    `block`: the summary block (a DETECTOR section finds its figures at block[section.name]);
    `info`: the detector's describe() (the report's run.detectors[spec]); `cost`: the detector's
    entry of the report's cost block; `price`: --grounding-price."""

    key: str
    block: Mapping[str, Any]
    info: Mapping[str, Any] | None = None
    cost: Mapping[str, Any] | None = None
    price: Price | None = None

    def found(self, name: str) -> Any:
        """The block's figures under `name` (None where absent)."""
        return self.block.get(name)


def _no_pictures(record: Mapping[str, Any]) -> str:
    return ""


@dataclass(frozen=True)
class HtmlPage:
    """What the HTML page lends a section's fragment (a section imports nothing from render/):
    the thumbnails (render/html/thumbs.py), `pictures(record)` (the record's screen and crop with
    its click and target drawn, as the gallery shows them), `width` (the page's figure width, px)."""

    thumbs: Any = None
    pictures: Callable[[Mapping[str, Any]], str] = _no_pictures
    width: int = 560


class Section:
    """One feature's part of the report. Subclass, set `name` (and `level`, `title`, `order`,
    `not_in`), override the hooks it has, and register an instance (sections/registry.py).

    Hooks, each with a default that contributes nothing:
    - `figures(found)`: DETECTOR sections: the block's figures from its records (None: absent,
      no key written); stored at summary[key][name] by analysis/metrics.summarize.
    - `run_figures(found)`: RUN sections: the section's key of the report from the run's records
      and scoring (analysis/document.RunRecords; None: absent, no key written); the document and
      `RunResult.run` hold it, and every output (the terminal too) renders from there.
    - `judge(summary, scoring)`: verdicts (gates) over the summary; `verdict_entries(verdicts)` the
      report keys its own verdicts are kept under (None: none of its), `read_verdicts(document)`
      them read back (what `merge`, `rescore` and `report` print, as the run printed them).
    - `terminal(view)`: a detector block's lines (two-space indent); `run_terminal(result)`: the
      run's lines (reproduction, baseline: figures beside the detectors').
    - `markdown(document)`: the markdown summary's lines (a `### Title` and a table, usually).
    - `html(document, page)`: a fragment of the HTML page (sections of the page follow the
      detectors' summary); `html_inline` True puts the section's terminal lines in the detector's
      box on the page as well.
    - `metrics(document, key)`: (name, number) pairs a tracker logs for the detector `key`;
      names are dotted paths starting with the section's name (analysis/tracked.py name()).
    - `schema()`: the JSON schema of the section's key (under detectorSummary for DETECTOR
      sections, at the report's top for RUN ones); `schema_report()`: more top-level keys it
      owns (key -> schema); `schema_defs()`: the $defs it adds.
    - `thumbnail_records(document)`: records whose screens the HTML page needs beside its
      gallery (the sweep's flipped pairs).
    - `card(document, key)`: a short HTML line (escaped by the section) for the detector `key`'s
      card at the top of the HTML page (render/html/headline.py): a diagnosis worth the first screen.
    - `example()`: a small report document in which the section has figures; where given,
      tests/test_sections.py renders it in every output the section renders in and expects the
      section's part there (the built-ins all give one: sections/testing.py helps).
    """

    name: ClassVar[str] = ""  # its key in summary[DETECTOR] (DETECTOR) or in the report (RUN)
    title: ClassVar[str] = ""  # how the outputs name it
    level: ClassVar[str] = DETECTOR
    order: ClassVar[int] = 100  # the sections' order in every output (and LATENCY in the terminal)
    html_inline: ClassVar[bool] = True
    terminal_after_summary: ClassVar[bool] = False  # RUN lines after the summary (baseline, replay)
    not_in: ClassVar[Mapping[str, str]] = {}  # output -> why the section does not render there

    def figures(self, found: BlockRecords) -> Any | None:
        return None

    def run_figures(self, found: RunRecords) -> Any | None:
        return None

    def judge(self, summary: Mapping[str, Any], scoring: Any) -> list[Any]:
        return []

    def verdict_entries(self, verdicts: Sequence[Any]) -> Mapping[str, Any]:
        return {}

    def read_verdicts(self, document: Mapping[str, Any]) -> list[Any]:
        return []

    def terminal(self, view: DetectorView) -> list[str]:
        return []

    def run_terminal(self, result: RunResult) -> list[str]:
        return []

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        return []

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        return ""

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        return ()

    def schema(self) -> Mapping[str, Any] | None:
        return None

    def schema_report(self) -> Mapping[str, Any]:
        return {}

    def schema_defs(self) -> Mapping[str, Any]:
        return {}

    def thumbnail_records(self, document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return []

    def card(self, document: Mapping[str, Any], key: str) -> str:
        return ""

    def example(self) -> Mapping[str, Any] | None:
        return None

    # -- helpers for subclasses -------------------------------------------------------------------

    def blocks(self, document: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """(detector key, this section's figures) for each summary block that has them."""
        summary = document.get("summary") or {}
        return [(key, block[self.name]) for key, block in summary.items() if block.get(self.name)]

    def found_in(self, document: Mapping[str, Any], key: str) -> Any:
        """This section's figures for the detector `key` (DETECTOR), or the report's (RUN)."""
        if self.level == RUN:
            return document.get(self.name)
        return ((document.get("summary") or {}).get(key) or {}).get(self.name)

    def renders_in(self, output: str) -> bool:
        """Whether the section has a hook for `output` (tests/test_sections.py holds this against
        `not_in`)."""
        cls = type(self)

        def has(hook: str) -> bool:
            return getattr(cls, hook) is not getattr(Section, hook)

        if output == TERMINAL:
            return has("terminal") or has("run_terminal")
        if output == MARKDOWN:
            return has("markdown")
        if output == HTML:
            return has("html") or (self.html_inline and has("terminal"))
        if output == TRACKER:
            return has("metrics")
        if output == SCHEMA:
            return has("schema") or has("schema_report")
        raise ValueError(f"unknown output {output!r}; one of {', '.join(OUTPUTS)}")


@dataclass(frozen=True)
class Coverage:
    """Where a section renders and where it says it does not."""

    name: str
    renders: tuple[str, ...]
    declared: Mapping[str, str] = field(default_factory=dict)


def coverage(section: Section) -> Coverage:
    return Coverage(section.name, tuple(o for o in OUTPUTS if section.renders_in(o)), dict(section.not_in))
