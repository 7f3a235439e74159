"""Replayed predictions files (the `replay` detector): per replayed detector, our verdict beside
the file's own, and the file's metrics checked (analysis/agreement.py), as one section. The
figures come from the records' `replay` field, so a report read back renders them too."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ..analysis.agreement import tally
from ._render import html_table
from .base import RUN, HtmlPage, Section

if TYPE_CHECKING:
    from ..analysis.result import RunResult

HEADER = ["detector", "file", "format", "samples", "compared", "agree", "differ"]


class Replay(Section):
    name = "replay"
    title = "Replayed files"
    level = RUN
    order = 95
    terminal_after_summary = True
    not_in: ClassVar[Mapping[str, str]] = {
        "schema": "no key of its own: the figures are counted from each record's `replay` field, which the "
        "record's schema holds"
    }

    def run_terminal(self, result: RunResult) -> list[str]:
        from .replay_text import finding_lines, lines

        if result.replay is None:  # a report read back: the agreement counted from its records
            return lines(tally(result.records))
        return finding_lines(result.replay)

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        from .replay_text import markdown_lines

        return markdown_lines(document.get("samples") or [])

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        blocks = tally(document.get("samples") or [])
        if not blocks:
            return ""
        rows = [
            [key, b["file"], b["format"], b["replayed"], b["compared"], b["agree"], b["compared"] - b["agree"]]
            for key, b in blocks.items()
        ]
        numeric = [False, False, False, True, True, True, True]
        return '<h2 id="replay">Replayed files: our verdict beside theirs</h2>' + html_table(HEADER, rows, numeric)

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        detector = ((document.get("summary") or {}).get(key) or {}).get("detector", key)
        block = tally(document.get("samples") or []).get(str(detector))
        if block is None:
            return
        for figure in ("replayed", "compared", "agree"):
            yield f"replay.{figure}", float(block[figure])

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        replay = {"file": "theirs.jsonl", "format": "jsonl", "row": 1, "agree": False, "their_verdict": "hit"}
        records = [
            _examples.record("s1", "hit", replay={**replay, "agree": True}),
            _examples.record("s2", "miss", replay=replay),
        ]
        return _examples.document(records, self)


SECTION = Replay()
