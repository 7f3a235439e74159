"""The top of the HTML page: a card per detector (accuracy with its 95% interval and the samples
scored, the gates' verdict, wrong formats and errors), so the first screen answers "how good is
it"; the run's metadata is folded below them. Each card keeps a slot (`data-slot="diagnosis"`)
that a report section fills with its one-line finding for that detector (the frame diagnosis)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ...analysis.figures import blocks
from ...analysis.intervals import span
from ...core.identity import display_name
from ...core.numbers import pct
from ...core.record import Outcome


def e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def gate_verdict(name: str, block: Mapping[str, Any], document: Mapping[str, Any]) -> tuple[str, str]:
    """(css class, words) of the gates and the error check for one detector."""
    detector = str(block.get("detector", name))
    gates = [g for g in document.get("gates") or [] if str(g.get("detector")) in (name, detector)]
    checks = [c for c in document.get("errors_check") or [] if str(c.get("detector")) in (name, detector)]
    failed = [g for g in gates if not g.get("passed")] + [c for c in checks if not c.get("passed")]
    if document.get("partial") and not gates:
        return "muted", "no verdict: interrupted"
    if failed:
        words = [f"{g.get('slice', 'overall')} below {pct(g.get('threshold'))}" for g in failed if "threshold" in g]
        words += ["too many errors" for c in failed if "max_share" in c]
        return "fail", "gate FAILED: " + "; ".join(words)
    if gates:
        return "pass", f"{len(gates)} gate{'s' if len(gates) > 1 else ''} passed"
    return "muted", "no gate set"


def info_of(document: Mapping[str, Any], name: str, block: Mapping[str, Any]) -> Mapping[str, Any]:
    """The detector's run.detectors entry (its served model's name: the card's short name)."""
    detectors = (document.get("run") or {}).get("detectors") or {}
    info = detectors.get(str(block.get("detector") or name)) if isinstance(detectors, Mapping) else None
    return info if isinstance(info, Mapping) else {}


def card(name: str, block: Mapping[str, Any], document: Mapping[str, Any], diagnosis: str = "") -> str:
    css, verdict = gate_verdict(name, block, document)
    scored, samples = block.get("scored", 0), block.get("samples", 0)
    unscored = f" of {samples}" if samples != scored else ""
    interval = span(block.get("ci95"))
    task = "element at click" if block.get("task") == "locate" else "grounding"
    shown = display_name(name, {**info_of(document, name, block), **block})  # never cut: the card wraps it
    return (
        f'<div class="card" data-detector="{e(name)}">'
        f'<div class="card-name" title="{e(name)}">{e(shown)}</div>'
        f'<div class="card-acc">{e(pct(block.get("accuracy")))}</div>'
        f'<div class="card-ci">95% CI {e(interval)} · n = {e(scored)} scored{e(unscored)} · {e(task)}</div>'
        f'<div class="card-verdict {css}">{e(verdict)}</div>'
        f'<div class="card-counts">{e(block.get(Outcome.WRONG_FORMAT, 0))} wrong format · '
        f"{e(block.get('errors', 0))} errors · {e(block.get('hits', 0))} hits</div>"
        f'<div class="card-diagnosis" data-slot="diagnosis">{diagnosis}</div>'
        "</div>"
    )


def section_lines(document: Mapping[str, Any], key: str, sections: Any = None) -> str:
    """What the report sections put on the detector's card (Section.card); a section that fails
    here leaves its line out, never the page."""
    from ...sections import ordered

    lines = []
    for section in ordered(sections):
        try:
            line = section.card(document, key)
        except Exception:
            continue
        if line:
            lines.append(f"<div>{line}</div>")
    return "".join(lines)


def cards(document: Mapping[str, Any], diagnoses: Mapping[str, str] | None = None, sections: Any = None) -> str:
    """Every detector's card, in the report's order; `diagnoses`: HTML per summary key for its slot
    (default: what the report sections say, Section.card)."""
    named: Sequence[tuple[str, Mapping[str, Any]]] = blocks(document)
    if not named:
        return '<section id="headline" class="cards"><p class="muted">no sample finished</p></section>'
    found = diagnoses if diagnoses is not None else {name: section_lines(document, name, sections) for name, _ in named}
    inner = "".join(card(name, block, document, found.get(name, "")) for name, block in named)
    return f'<section id="headline" class="cards">{inner}</section>'


def folded(title: str, body: str) -> str:
    """A section folded away (the run's metadata): one click opens it."""
    return f'<details class="fold" id="run-details"><summary>{e(title)}</summary>{body}</details>'


CSS = """
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:12px;margin:14px 0}
.card{background:#fff;border:1px solid #e1e4e8;border-radius:8px;padding:12px 16px}
.card-name{font-weight:600;font-size:15px;overflow-wrap:anywhere}
.card-acc{font-size:40px;font-weight:700;line-height:1.1;margin:4px 0;font-variant-numeric:tabular-nums}
.card-ci{color:#4a525c;font-size:13px}
.card-verdict{margin-top:6px;font-size:14px}
.card-counts{color:#4a525c;font-size:13px;margin-top:4px}
.card-diagnosis:empty{display:none}
.card-diagnosis{margin-top:6px;font-size:13px}
details.fold{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:4px 12px;margin:10px 0}
details.fold>summary{cursor:pointer;font-weight:600;padding:4px 0}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(440px,1fr));gap:12px}
.figure{width:100%;height:auto}
"""
