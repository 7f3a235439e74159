"""Answers where the engine put them (issue 56): a served thinking model's reasoning parser moves
text out of `content` into `message.reasoning` (vLLM 0.3x) or `message.reasoning_content` (SGLang,
llama.cpp). Each record keeps the reasoning's length and whether `content` held a `</think>`
(detectors/http.py `completion_answer`); this section counts them per detector: the answers with a
reasoning text, those read from it (`answer_from=reasoning-if-empty`), the `answer_in_reasoning`
misses (no click in `content` beside a reasoning text), and names the option when there are some."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..analysis.tracked import _numbers
from ..core.safetext import markdown_text as md
from ._render import html_table, md_table
from .base import BlockRecords, DetectorView, HtmlPage, Section

OPTION = "answer_from=reasoning-if-empty"


def reasoning_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The counts over a block's records; None when no answer had a reasoning text or a `</think>`."""
    chars: list[int] = []
    think = from_reasoning = in_reasoning = 0
    fields: dict[str, int] = {}
    for record in records:
        meta = record.get("meta")
        if not isinstance(meta, Mapping):
            continue
        n = meta.get("reasoning_chars")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            chars.append(n)
            field = str(meta.get("reasoning_field") or "reasoning")
            fields[field] = fields.get(field, 0) + 1
        think += bool(meta.get("think_in_content"))
        from_reasoning += meta.get("answer_from") == "reasoning"
        in_reasoning += record.get("miss_kind") == "answer_in_reasoning"
    if not chars and not think:
        return None
    chars.sort()
    return {
        "answers": len(records),
        "with_reasoning": len(chars),
        "fields": fields,
        "reasoning_chars_median": chars[len(chars) // 2] if chars else None,
        "think_in_content": think,
        "from_reasoning": from_reasoning,
        "answer_in_reasoning": in_reasoning,
    }


def line(found: Mapping[str, Any]) -> str:
    fields = ", ".join(f"{name} {n}" for name, n in sorted(found["fields"].items())) or "-"
    median = found["reasoning_chars_median"]
    text = (
        f"  reasoning field  {found['with_reasoning']} of {found['answers']} answers ({fields}"
        + (f"; median {median:,} chars" if median else "")
        + f"), </think> in content {found['think_in_content']}, answers read from it {found['from_reasoning']}"
    )
    if found["answer_in_reasoning"]:
        text += (
            f"; answer_in_reasoning {found['answer_in_reasoning']}: no click in content beside a reasoning "
            f"text (the engine's reasoning parser filed the answer there): {OPTION} reads it"
        )
    return text


class Reasoning(Section):
    name = "reasoning"
    title = "Answers in the reasoning field"
    order = 47  # under the misses by kind

    def figures(self, found: BlockRecords) -> Any | None:
        return reasoning_figures(found.records)

    def terminal(self, view: DetectorView) -> list[str]:
        found = view.found(self.name)
        return [line(found)] if found else []

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = [
            [
                md(key),
                f["answers"],
                f["with_reasoning"],
                f["think_in_content"],
                f["from_reasoning"],
                f["answer_in_reasoning"],
            ]
            for key, f in self.blocks(document)
        ]
        if not rows:
            return []
        header = ["detector", "answers", "with reasoning", "</think> in content", "read from reasoning"]
        header.append("answer_in_reasoning")
        out = ["### Answers in the reasoning field", "", *md_table(header, rows)]
        if any(row[-1] for row in rows):
            out += ["", f"answer_in_reasoning: no click in `content` beside a reasoning text; `{OPTION}` reads it.", ""]
        return out

    def html(self, document: Mapping[str, Any], page: HtmlPage) -> str:
        blocks = self.blocks(document)
        if not blocks:
            return ""
        header = ["detector", "answers", "with reasoning", "</think> in content", "read from reasoning"]
        header.append("answer_in_reasoning")
        rows = [
            [
                key,
                f["answers"],
                f["with_reasoning"],
                f["think_in_content"],
                f["from_reasoning"],
                f["answer_in_reasoning"],
            ]
            for key, f in blocks
        ]
        return '<h2 id="reasoning">Answers in the reasoning field</h2>' + html_table(
            header, rows, [False] + [True] * (len(header) - 1)
        )

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        found = dict(self.found_in(document, key) or {})
        found.pop("fields", None)
        return _numbers("reasoning", found)

    def schema(self) -> Mapping[str, Any]:
        count = {"$ref": "#/$defs/count"}
        return {
            "type": "object",
            "description": "issue 56: answers with a reasoning text (vLLM's message.reasoning, SGLang's and "
            "llama.cpp's message.reasoning_content), with a </think> in content, read from the reasoning field "
            "(answer_from=reasoning-if-empty) and answer_in_reasoning misses.",
            "required": [
                "answers",
                "with_reasoning",
                "fields",
                "reasoning_chars_median",
                "think_in_content",
                "from_reasoning",
                "answer_in_reasoning",
            ],
            "properties": {
                "answers": count,
                "with_reasoning": count,
                "fields": {"type": "object", "additionalProperties": count},
                "reasoning_chars_median": {"type": ["integer", "null"], "minimum": 0},
                "think_in_content": count,
                "from_reasoning": count,
                "answer_in_reasoning": count,
            },
            "additionalProperties": False,
        }

    def example(self) -> Mapping[str, Any]:
        from . import testing

        records = [
            testing.record("s1", "hit", meta={"reasoning_field": "reasoning", "reasoning_chars": 40}),
            testing.record(
                "s2",
                "wrong_format",
                point=None,
                miss_kind="answer_in_reasoning",
                meta={"reasoning_field": "reasoning_content", "reasoning_chars": 12},
            ),
        ]
        return testing.document(records, self)


SECTION = Reasoning()
