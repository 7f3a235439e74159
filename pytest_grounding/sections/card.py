"""The run card (issue 58): per detector, what a reader needs to judge its number (model and
engine with versions, preset and its source, prompt digest, dataset and fingerprint, samples
scored / errors / not run, the interval, the scoring profile, errata, the frame check, the
harness's version and the command line). The fields come from analysis/card.py, the one function
the Every Eval Ever export (analysis/eee.py) carries them from too. Shown on the HTML page's
first screen, folded in each detector's headline card, and as a table in the markdown summary."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any, ClassVar

from . import _examples
from ._render import md_table
from .base import RUN, Section


def _keys(document: Mapping[str, Any]) -> list[str]:
    return [str(k) for k in (document.get("summary") or {})]


class Card(Section):
    name = "card"
    title = "Run card"
    level = RUN
    order = 1  # in the markdown, right under the summary table
    not_in: ClassVar[Mapping[str, str]] = {
        "terminal": "the header lines already name the detector, preset, engine and interval; the card is for "
        "readers of the files",
        "html": "on the first screen instead: folded in each detector's headline card (Section.card)",
        "tracker": "text, not numbers: the figures it shows are the summary's, which trackers log",
        "schema": "no key of its own: every field is read from the report's other keys",
    }

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        from ..analysis.card import FIELDS, card_dict

        keys = _keys(document)
        if not keys:
            return []
        cards = {key: card_dict(document, key) for key in keys}
        rows = [[label, *(cards[key][field] for key in keys)] for field, label in FIELDS.items()]
        from ..core.safetext import markdown_text

        return ["### Run card", "", *md_table(["", *(markdown_text(k) for k in keys)], rows)]

    def card(self, document: Mapping[str, Any], key: str) -> str:
        from ..analysis.card import card_fields

        items = "".join(f"<dt>{escape(f.label)}</dt><dd>{escape(f.text)}</dd>" for f in card_fields(document, key))
        return (
            f'<details class="run-card" data-card="{escape(key, quote=True)}"><summary>run card</summary>'
            f'<dl style="margin:4px 0;display:grid;grid-template-columns:auto 1fr;gap:2px 8px;font-size:12px">'
            f"{items}</dl></details>"
        )

    def example(self) -> Mapping[str, Any] | None:
        found = _examples.document(_examples.plain())
        found["run"]["args"] = ["suites/", "--detector", _examples.KEY]
        found["versions"] = {"pytest-grounding": "0.0.0"}
        return found


SECTION = Card()
