"""The prediction path of the in-process Qwen-VL detectors (`qwenvl`, `uitars`): several queries
in one `generate`.

Each query is prepared alone (its own smart_resize frame and chat-templated prompt); the batch goes
through the processor in one call with LEFT padding (generation appends on the right, so every row's
last prompt token must sit in the last column) and an attention mask, so padded rows see what they
would see alone. Each row's answer is cut where the model would have stopped alone (its first end
token or stop string: after that generate only pads the row), decoded, and mapped back through its own
frame. A query that fails to prepare or to parse is that query's error; a `generate` that fails for
the batch is run again one query at a time, so each query gets its own outcome."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..core.types import Prediction, Query
from . import answer_cache as cache_keys
from .batching import Outcome, chunked, predictions_or_raise

if TYPE_CHECKING:
    from PIL.Image import Image

    from .vlm.preprocess import Frame
    from .vlm.preset import Preset


class QwenVLModel(Protocol):
    """What this module uses of detectors/qwenvl.py's detector (a Protocol: no import back)."""

    name: str
    device: str
    preset: Preset
    processor: Any
    model: Any
    patch: int
    batch_size: int

    @property
    def _torch(self) -> Any: ...

    def prompt_text(self, instruction: str, size: tuple[int, int] | None = None) -> str: ...


# Default queries per generate on CUDA (docs/detectors-vlm.md says why); CPU gains nothing from it.
CUDA_BATCH = 8


def batch_size_for(batch: int | str, device: str) -> int:
    """The `batch` option: a positive count, or auto (1 on CPU, CUDA_BATCH on CUDA)."""
    if str(batch).strip().lower() == "auto":
        return CUDA_BATCH if str(device).startswith("cuda") else 1
    try:
        size = int(batch)
    except (TypeError, ValueError):
        size = 0
    if size < 1 or str(batch).strip() != str(size):
        raise ValueError(f"batch must be auto or a whole number of at least 1, not {batch!r}")
    return size


@dataclass(frozen=True)
class Prepared:
    """One query made ready for the model: the resized image, its frame, the templated prompt."""

    image: Image
    frame: Frame
    text: str


@dataclass(frozen=True)
class Generated:
    """One row's answer: its text, the row's own prompt and answer lengths in tokens (padding not
    counted), and the image size the vision tower saw (from the processor's grid)."""

    answer: str
    prompt_tokens: int
    new_tokens: int
    seen: tuple[int, int]


def prepare(detector: QwenVLModel, query: Query) -> Prepared:
    image, frame = detector.preset.preprocess.apply(query.image)
    return Prepared(image=image, frame=frame, text=detector.prompt_text(query.instruction, frame.model))


def sampling_options(detector: QwenVLModel) -> dict[str, Any]:
    decoding = detector.preset.decoding
    sampling: dict[str, Any] = (
        {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        if decoding.greedy
        else {
            "do_sample": True,
            "temperature": decoding.temperature,
            "top_p": decoding.top_p,
            "top_k": decoding.top_k,
        }
    )
    if decoding.stop:
        sampling.update(stop_strings=list(decoding.stop), tokenizer=detector.processor.tokenizer)
    return sampling


def end_token_ids(detector: QwenVLModel) -> set[int]:
    config = getattr(detector.model, "generation_config", None)
    eos = getattr(config, "eos_token_id", None)
    if eos is None:
        eos = detector.processor.tokenizer.eos_token_id
    values = eos if isinstance(eos, (list, tuple)) else [eos]
    return {int(v) for v in values if v is not None}


def own_length(tokens: Sequence[int], ends: set[int], stop: Sequence[str], decode: Any) -> int:
    """How many of a row's new tokens the model wrote before it stopped: through its first end token
    or the token that completed a stop string; everything after is the batch's padding."""
    for index, token in enumerate(tokens):
        if token in ends:
            return index + 1
        if stop:
            text = decode(tokens[: index + 1])
            if any(s in text for s in stop):
                return index + 1
    return len(tokens)


def generate(detector: QwenVLModel, prepared: Sequence[Prepared]) -> list[Generated]:
    """One `generate` for all the prepared queries; each row's answer and token counts."""
    tokenizer = detector.processor.tokenizer
    tokenizer.padding_side = "left"  # generation appends on the right: pad before the prompt
    inputs = detector.processor(
        text=[p.text for p in prepared], images=[p.image for p in prepared], padding=True, return_tensors="pt"
    )
    grids = inputs["image_grid_thw"].tolist()  # t, h, w in patches per image: what the vision tower saw
    prompt_lengths = inputs["attention_mask"].sum(dim=1).tolist()
    width = int(inputs["input_ids"].shape[1])
    inputs = inputs.to(detector.device)
    decoding = detector.preset.decoding
    with detector._torch.inference_mode():
        output = detector.model.generate(**inputs, max_new_tokens=decoding.max_new_tokens, **sampling_options(detector))
    ends = end_token_ids(detector)
    generated = []
    for row, grid in enumerate(grids):
        tokens = [int(t) for t in output[row, width:].tolist()]
        tokens = tokens[: own_length(tokens, ends, decoding.stop, lambda ids: tokenizer.decode(ids))]
        answer = tokenizer.decode(tokens, skip_special_tokens=decoding.skip_special_tokens)
        answer = strip_end(answer, tokenizer)
        generated.append(
            Generated(
                answer=answer.strip(),
                prompt_tokens=int(prompt_lengths[row]),
                new_tokens=len(tokens),
                seen=(int(grid[2]) * detector.patch, int(grid[1]) * detector.patch),
            )
        )
    return generated


def finish(detector: QwenVLModel, prepared: Prepared, generated: Generated, cache: str | None = None) -> Prediction:
    """The row's prediction, mapped back through its own frame (`cache`: what --grounding-cache did)."""
    if generated.seen != prepared.frame.model:  # the processor resized again: the transform would be off
        raise RuntimeError(
            f"{detector.name}: the processor gave a {generated.seen[0]}x{generated.seen[1]} image, "
            f"the preset's smart_resize {prepared.frame.model[0]}x{prepared.frame.model[1]}"
        )
    meta = {
        "device": detector.device,
        "model_image": list(generated.seen),
        "prompt_tokens": generated.prompt_tokens,
        "new_tokens": generated.new_tokens,
    }
    if cache:
        meta[cache_keys.META] = cache
    return detector.preset.parse(generated.answer, prepared.frame, meta)


def run_chunk(detector: QwenVLModel, queries: Sequence[Query]) -> list[Outcome]:
    """Each query's prediction or exception, in one `generate` where all goes well."""
    outcomes: list[Outcome | None] = [None] * len(queries)
    ready: list[tuple[int, Prepared]] = []
    for index, query in enumerate(queries):
        try:
            ready.append((index, prepare(detector, query)))
        except Exception as exc:  # this query's image or prompt: its own error
            outcomes[index] = exc
    keys = from_cache(detector, queries, ready, outcomes)  # --grounding-cache: hits are done here
    ready = [(index, one) for index, one in ready if outcomes[index] is None]
    answers: list[Generated | Exception] = []
    if len(ready) > 1:
        try:
            answers = list(generate(detector, [p for _, p in ready]))
        except Exception:  # the batch as a whole (out of memory, a bad row): one by one below
            answers = []
    if not answers:
        for _, one in ready:
            try:
                answers.extend(generate(detector, [one]))
            except Exception as exc:
                answers.append(exc)
    for (index, one), answer in zip(ready, answers, strict=True):
        if isinstance(answer, Exception):
            outcomes[index] = answer
            continue
        try:
            outcomes[index] = finish(detector, one, answer, stored(detector, keys.get(index), one, answer))
        except Exception as exc:
            outcomes[index] = exc
    done = [o for o in outcomes if o is not None]
    if len(done) != len(queries):
        raise RuntimeError(f"{detector.name}: {len(queries) - len(done)} queries of a batch got no outcome")
    return done


def from_cache(
    detector: QwenVLModel, queries: Sequence[Query], ready: Sequence[tuple[int, Prepared]], outcomes: list[Any]
) -> dict[int, str]:
    """--grounding-cache: each prepared query's key; a stored answer becomes its outcome at once."""
    store = getattr(detector, "answer_cache", None)
    if store is None or not ready:
        return {}
    identity = cache_keys.inprocess_identity(detector)
    keys = {}
    for index, one in ready:
        keys[index] = cache_keys.inprocess_key(identity, detector.preset, one.text, one.image, queries[index].epoch)
        found = cache_keys.generated_of(store.get(keys[index]))
        if found is not None:
            try:
                outcomes[index] = finish(detector, one, Generated(**found), cache_keys.HIT)
            except Exception as exc:  # a stored answer for another frame: this query's error, as a fresh one's
                outcomes[index] = exc
    return keys


def stored(detector: QwenVLModel, key: str | None, prepared: Prepared, answer: Generated) -> str | None:
    """A complete answer kept under its key: never one that ran to max_new_tokens (it may be cut),
    nor one `finish` refuses (another frame than the preset's)."""
    store = getattr(detector, "answer_cache", None)
    if store is None or key is None or answer.new_tokens >= detector.preset.decoding.max_new_tokens:
        return None
    if answer.seen != prepared.frame.model:
        return None
    entry = cache_keys.generated_entry(answer.answer, answer.prompt_tokens, answer.new_tokens, answer.seen)
    return cache_keys.STORED if store.put(key, entry) else cache_keys.NOT_STORED


def run(detector: QwenVLModel, queries: Sequence[Query]) -> list[Outcome]:
    """Each query's outcome, in generate calls of at most the detector's batch size."""
    outcomes: list[Outcome] = []
    for chunk in chunked(queries, detector.batch_size):
        outcomes.extend(run_chunk(detector, chunk))
    return outcomes


def predict_batch(detector: QwenVLModel, queries: Sequence[Query]) -> list[Prediction]:
    return predictions_or_raise(run(detector, queries))


def predict(detector: QwenVLModel, query: Query) -> Prediction:
    """One query: predict_batch([query])[0], its own exception raised as it is."""
    (outcome,) = run(detector, [query])
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def strip_end(answer: str, tokenizer: Any) -> str:
    """With special tokens kept, the end-of-turn and padding tokens go (the answer's own stay)."""
    for token in (tokenizer.eos_token, tokenizer.pad_token, "<|im_end|>", "<|endoftext|>"):
        if token:
            while answer.endswith(token):
                answer = answer[: -len(token)]
    return answer
