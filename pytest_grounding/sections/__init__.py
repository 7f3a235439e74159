"""Report sections: each measured feature's slice of the report (figures, verdicts, terminal
lines, markdown, HTML, tracker metrics, schema fragment) in one registered object.

    from pytest_grounding.sections import Section, DetectorView, BlockRecords

See base.py for the hooks, registry.py for how sections are registered (built-ins, the
`pytest_grounding_register_sections` hook, the `pytest_grounding.sections` entry points), and
CONTRIBUTING.md ("Adding a figure")."""

from ..analysis.metrics import BlockRecords
from .base import (
    DETECTOR,
    HTML,
    LATENCY,
    MARKDOWN,
    OUTPUTS,
    RUN,
    SCHEMA,
    TERMINAL,
    TRACKER,
    DetectorView,
    HtmlPage,
    Section,
)
from .registry import SectionRegistry, default, ordered, sections, summarize

__all__ = [
    "DETECTOR",
    "HTML",
    "LATENCY",
    "MARKDOWN",
    "OUTPUTS",
    "RUN",
    "SCHEMA",
    "TERMINAL",
    "TRACKER",
    "BlockRecords",
    "DetectorView",
    "HtmlPage",
    "Section",
    "SectionRegistry",
    "default",
    "ordered",
    "sections",
    "summarize",
]
