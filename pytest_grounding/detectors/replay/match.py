"""Which row of a predictions file answers which sample (pure).

By id (this plugin's files, Pointerbench-Pro, a user mapping): the dataset's own id; two rows
for one id is that sample's error. By screen (ScreenSpot-Pro rows, which carry no id): the
image's path below images/ plus the instruction asked (`prompt_to_evaluate`), narrowed by
language, instruction style and gt type where the row has them, then by the target box the row
was scored against (the dataset's duplicate rows share a screen and an instruction). Rows still
tied answer the sample only when they answer alike; otherwise it is that sample's error."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...core.types import Sample
from .files import BY_ID, Answer, ReplayFile, below_images

_SAME_BOX = 1e-6


@dataclass(frozen=True)
class Match:
    """The row answering a sample, or why none does; `lines` are every row considered for it."""

    answer: Answer | None
    problem: str | None
    lines: tuple[int, ...] = ()


def sample_language(sample: Sample) -> str:
    """The language asked: cn when the sample is asked in its instruction_cn (--grounding-language cn), else en."""
    translated = sample.extra.get("instruction_cn") if isinstance(sample.extra, Mapping) else None
    return "cn" if isinstance(translated, str) and translated.strip() == sample.instruction else "en"


def sample_style(sample: Sample) -> tuple[str, str]:
    """(instruction style, gt type) as ScreenSpot-Pro's script labels rows."""
    benchmark = sample.extra.get("benchmark") if isinstance(sample.extra, Mapping) else None
    style = benchmark.get("style") if isinstance(benchmark, Mapping) else None
    negative = getattr(sample.target, "kind", None) == "absent"
    if style == "negative":  # the variants' negative instruction: positive wording, element absent
        style = "instruction"
    return str(style or "instruction"), "negative" if negative else "positive"


class Index:
    """A file's answers, looked up per sample."""

    def __init__(self, replay: ReplayFile) -> None:
        self.file = replay
        self._by_id: dict[str, list[Answer]] = defaultdict(list)
        self._by_screen: dict[tuple[str, str], list[Answer]] = defaultdict(list)
        self._by_name: dict[tuple[str, str], list[Answer]] = defaultdict(list)  # file name only
        for answer in replay.answers:
            if replay.by == BY_ID and answer.id is not None:
                self._by_id[answer.id].append(answer)
            elif answer.image is not None and answer.prompt is not None:
                self._by_screen[(answer.image, answer.prompt)].append(answer)
                self._by_name[(answer.image.rsplit("/", 1)[-1], answer.prompt)].append(answer)

    def match(self, sample: Sample) -> Match:
        path = self.file.path
        if self.file.by == BY_ID:
            rows = self._by_id.get(str(sample.id), [])
            other = [a for a in rows if a.dataset not in (None, sample.dataset)]
            rows = [a for a in rows if a.dataset in (None, sample.dataset)]  # another dataset's answer: never
            lines = tuple(a.line for a in rows)
            if not rows:
                also = f" (only rows of dataset {other[0].dataset!r})" if other else ""
                return Match(None, f"no answer for id {sample.id!r} in replay file {path}{also}")
            if len(rows) > 1 and len({_answered(a) for a in rows}) > 1:  # identical rows are one answer
                where = ", ".join(str(n) for n in lines)
                problem = f"ambiguous: {len(rows)} answers for id {sample.id!r} in {path} (rows {where})"
                return Match(None, problem, lines)
            return Match(rows[0], None, lines)
        image = below_images(str(sample.image)) or ""
        rows = self._by_screen.get((image, sample.instruction), [])
        if not rows and "/" not in image:  # a copy of the dataset with no images/ folder (a hub cache)
            rows = self._by_name.get((image, sample.instruction), [])
        if not rows:
            return Match(None, f"no answer for image {image!r} with this instruction in replay file {path}")
        all_lines = tuple(a.line for a in rows)
        style, gt_type = sample_style(sample)
        language = sample_language(sample)
        rows = [
            a
            for a in rows
            if a.style in (None, style) and a.gt_type in (None, gt_type) and a.language in (None, language)
        ]
        if not rows:
            return Match(
                None,
                f"no answer in language {language}, style {style}, gt type {gt_type} for image {image!r} in {path}",
                all_lines,
            )
        if len(rows) > 1:
            target = sample.bbox.as_list()
            same_box = [a for a in rows if a.bbox is not None and _same_box(a.bbox, target)]
            rows = same_box or rows
        if len(rows) > 1 and len({_answered(a) for a in rows}) > 1:
            where = ", ".join(str(a.line) for a in rows)
            return Match(
                None,
                f"ambiguous: {len(rows)} different answers for image {image!r} with this instruction in {path} "
                f"(rows {where})",
                all_lines,
            )
        return Match(rows[0], None, all_lines)

    def unmatched(self, samples: Iterable[Sample]) -> list[Answer]:
        """The rows no sample of `samples` considered: answers for samples not in the dataset."""
        used: set[int] = set()
        for sample in samples:
            used.update(self.match(sample).lines)
        return [a for a in self.file.answers if a.line not in used]


def _same_box(a: Any, b: list[float]) -> bool:
    return all(abs(float(x) - float(y)) <= _SAME_BOX for x, y in zip(a, b, strict=True))


def _answered(answer: Answer) -> tuple[Any, ...]:
    return (answer.point, answer.box, answer.points, answer.refusal, answer.wrong_format, answer.invalid, answer.error)
