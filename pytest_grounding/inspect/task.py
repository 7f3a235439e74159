"""The Inspect task `grounding` (pytest_grounding/inspect/__init__.py): a dataset the plugin
reads, a solver that prompts and decodes as a preset does, a scorer that is the plugin's own
point-in-box scoring profile, with the accuracy and its clustered interval as metrics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, metric, scorer, value_to_float
from inspect_ai.solver import Generate, TaskState, solver

from ..analysis import intervals
from ..core.profiles import get_profile
from ..core.record import Outcome
from ..core.types import Sample
from ..datasets import load_dataset
from ..detectors.encoding import data_url
from ..detectors.vlm.preset import Preset
from ..detectors.vlm.presets import DEFAULT_PRESET, resolve_preset
from ..evaluate.runner import read_image
from ..evaluate.scoring import score as score_record

NAME = "inspect"  # the detector name the records made here carry
# The plugin's samples by uid, loaded by the task (Inspect logs a sample's metadata and store as
# JSON, so the Sample objects stay here and the solver and scorer find them by the sample's id).
_LOADED: dict[str, Sample] = {}


def _samples(dataset: str, limit: int | None) -> list[Sample]:
    loaded = load_dataset(dataset)
    samples = sorted(loaded.samples, key=lambda s: s.uid)  # the plugin's order: by uid
    return samples[:limit] if limit else samples


def _outcomes(scores: list[Any]) -> intervals.Outcomes:
    """The scored samples as the plugin's interval reads them: a hit or not, clustered by screen."""
    records = [
        {
            "outcome": Outcome.HIT if _as_float(s.score.value) == 1.0 else Outcome.MISS,
            "dataset": (s.sample_metadata or {}).get("dataset"),
            "image": (s.sample_metadata or {}).get("image"),
        }
        for s in scores
    ]
    return intervals.Outcomes.of(records)


_as_float = value_to_float()  # CORRECT, or 1.0 once Inspect has reduced the epochs


@metric
def ci95_lower() -> Any:
    """The lower bound of the accuracy's cluster-robust 95% interval (clustered by screen)."""

    def compute(scores: list[Any]) -> float:
        bounds = intervals.ci95(intervals.proportion(_outcomes(scores)))
        return float(bounds[0]) if bounds else 0.0

    return compute


@metric
def ci95_upper() -> Any:
    """The upper bound of the accuracy's cluster-robust 95% interval (clustered by screen)."""

    def compute(scores: list[Any]) -> float:
        bounds = intervals.ci95(intervals.proportion(_outcomes(scores)))
        return float(bounds[1]) if bounds else 0.0

    return compute


def generate_config(preset: Preset) -> GenerateConfig:
    """The preset's decoding as Inspect's generation settings."""
    d = preset.decoding
    return GenerateConfig(
        max_tokens=d.max_new_tokens,
        temperature=d.temperature,
        top_p=d.top_p,
        top_k=d.top_k,
        frequency_penalty=d.frequency_penalty,
        stop_seqs=list(d.stop) or None,
    )


@solver
def preset_prompt(preset: str = DEFAULT_PRESET) -> Any:
    """The preset's messages with the screen as the preset preprocesses it (its frame kept in the
    sample's store for the scorer), then one generation with the preset's decoding."""
    chosen = resolve_preset(preset)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = _LOADED[str(state.sample_id)]
        image, problem = read_image(sample)
        if image is None:
            raise ValueError(f"sample {sample.uid}: {problem}")
        resized, frame = chosen.preprocess.apply(image)
        state.store.set("image_size", list(image.size))
        url = data_url(resized)
        messages: list[Any] = []
        for message in chosen.prompt.messages(sample.instruction, frame.model):
            parts: list[Any] = []
            for part in message["content"]:
                if part["type"] == "image":
                    parts.append(ContentImage(image=url))
                else:
                    parts.append(ContentText(text=part["text"]))
            if message["role"] == "system":
                messages.append(ChatMessageSystem(content="".join(p.text for p in parts)))
            else:
                messages.append(ChatMessageUser(content=parts))
        state.messages = messages
        return await generate(state, **generate_config(chosen).model_dump(exclude_none=True))

    return solve


@scorer(metrics=[accuracy(), ci95_lower(), ci95_upper()])
def point_in_box(preset: str = DEFAULT_PRESET, scoring: str | None = None) -> Any:
    """The answer parsed as the preset reads it, the click judged by the plugin's scoring profile
    (the same function that makes a pytest run's records): CORRECT exactly for a hit."""
    chosen = resolve_preset(preset)
    profile = get_profile(scoring)

    async def score(state: TaskState, target: Target) -> Score:
        sample = _LOADED[str(state.sample_id)]
        size = tuple(state.store.get("image_size") or (0, 0))
        frame = chosen.preprocess.frame((int(size[0]), int(size[1])))
        answer = state.output.completion if state.output else None
        prediction = chosen.parse(answer or None, frame, {})
        record: Mapping[str, Any] = score_record(
            sample, prediction, detector=NAME, latency_ms=0.0, image_size=(int(size[0]), int(size[1])),
            profile=profile,
        )  # fmt: skip
        outcome = str(record["outcome"])
        return Score(
            value=CORRECT if outcome == Outcome.HIT else INCORRECT,
            answer=answer,
            explanation=f"{outcome}: click {record.get('point')} against target {record.get('target')}",
            metadata={"outcome": outcome, "point": record.get("point"), "miss_kind": record.get("miss_kind"),
                      "uid": sample.uid},
        )  # fmt: skip

    return score


@task
def grounding(dataset: str, limit: int | None = None, preset: str = DEFAULT_PRESET, scoring: str | None = None) -> Task:
    """GUI grounding on a dataset the plugin reads (`-T dataset=PATH`, any `--dataset` spec:
    FORMAT:PATH, hf:NAME...), its first `limit` samples by uid, prompted and decoded with `preset`,
    judged by the scoring profile `scoring` (default pixel)."""
    chosen = resolve_preset(preset)
    get_profile(scoring)  # an unknown profile: refused before any request
    loaded = _samples(dataset, int(limit) if limit else None)
    _LOADED.update({s.uid: s for s in loaded})
    samples = [
        InspectSample(
            input=s.instruction,
            target=str(s.bbox.as_list()) if getattr(s, "bbox", None) is not None else "absent",
            id=s.uid,
            metadata={"dataset": s.dataset, "image": str(s.image), "id": s.id},
        )
        for s in loaded
    ]
    return Task(
        dataset=MemoryDataset(samples, name=dataset),
        solver=preset_prompt(preset),
        scorer=point_in_box(preset, scoring),
        config=generate_config(chosen),
        metadata={"preset": chosen.name, "scoring_profile": get_profile(scoring).name},
    )
