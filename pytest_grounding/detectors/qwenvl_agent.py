"""`agent=crop` on the in-process `qwenvl` / `uitars` detectors (issue 39): one sample's episode
(`vlm/agent.py`) through the model's own chat template (the crop tool passed as `tools`, so a
template that renders tools shows it as the model was trained to see it) and one `generate` per
turn. Tool calls are read from the text (`<tool_call>{...}</tool_call>`). Each image of the episode
is cut from the screen and resized by the preset once; the processor must see it at that size."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from ..core import safejson
from ..core.types import Prediction, Query
from .agent_images import view_image
from .qwenvl_batch import end_token_ids, own_length, sampling_options, strip_end
from .vlm.agent import Budget, Reply, View, prediction_of, run_episode
from .vlm.agent_turns import MAX_CALL_CHARS


def predict(detector: Any, query: Query, mode: str, budget: Budget) -> Prediction:
    images: dict[int, Any] = {}

    def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]], views: tuple[View, ...]) -> Reply:
        for view in views:
            if view.index not in images:
                images[view.index] = detector.preset.preprocess.apply(view_image(query.image, view))[0]
        shown = [images[p["view"]] for m in messages for p in m["content"] if p["type"] == "image"]
        text = detector.processor.apply_chat_template(
            template_messages(messages),
            tools=tools,
            tokenize=False,
            add_generation_prompt=True,
            **dict(detector.preset.decoding.chat_template_kwargs),
        )
        started = time.monotonic()
        answer, prompt_tokens, new_tokens = generate(detector, text, shown)
        return Reply(answer, (), prompt_tokens, new_tokens, 1000.0 * (time.monotonic() - started))

    episode = run_episode(detector.preset, query.instruction, query.image.size, budget, ask)
    return prediction_of(episode, mode, {"device": detector.device})


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The episode's messages as transformers' chat templates take them: image parts plain, tool
    calls with their arguments as objects."""
    out = []
    for message in messages:
        content = [{"type": "image"} if p["type"] == "image" else dict(p) for p in message["content"]]
        converted = {**message, "content": content}
        if message.get("tool_calls"):
            converted["tool_calls"] = [_call(c) for c in message["tool_calls"]]
        out.append(converted)
    return out


def _call(call: dict[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    if isinstance(function.get("arguments"), str):
        with contextlib.suppress(ValueError):
            function["arguments"] = safejson.loads(function["arguments"], max_chars=MAX_CALL_CHARS)
    return {**call, "function": function}


def generate(detector: Any, text: str, images: list[Any]) -> tuple[str, int, int]:
    """One turn's answer and its prompt and answer lengths in tokens."""
    inputs = detector.processor(text=[text], images=images, return_tensors="pt")
    seen = [(int(w) * detector.patch, int(h) * detector.patch) for _, h, w in inputs["image_grid_thw"].tolist()]
    if seen != [image.size for image in images]:  # the processor resized again: the crops' mapping would be off
        raise RuntimeError(
            f"{detector.name}: the processor gave images of {seen}, the preset's {[i.size for i in images]}"
        )
    prompt_tokens = int(inputs["input_ids"].shape[1])
    inputs = inputs.to(detector.device)
    decoding = detector.preset.decoding
    with detector._torch.inference_mode():
        output = detector.model.generate(**inputs, max_new_tokens=decoding.max_new_tokens, **sampling_options(detector))
    tokenizer = detector.processor.tokenizer
    tokens = [int(t) for t in output[0, prompt_tokens:].tolist()]
    tokens = tokens[: own_length(tokens, end_token_ids(detector), decoding.stop, lambda ids: tokenizer.decode(ids))]
    answer = strip_end(tokenizer.decode(tokens, skip_special_tokens=decoding.skip_special_tokens), tokenizer)
    return answer.strip(), prompt_tokens, len(tokens)
