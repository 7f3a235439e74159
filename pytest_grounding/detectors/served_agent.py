"""`agent=crop` on the `openai` detector (issue 39): one sample's episode (`vlm/agent.py`) over the
detector's HTTP client. Each turn is one chat-completions request with the conversation so far and
the crop tool in `tools`; turns are sequential, samples run concurrently as single shots do (each
request takes its own place in flight). Every image of an episode is cut from the screen, resized
as the preset says and encoded once (the screen itself through the detector's screen cache); later
turns splice the same bytes in again."""

from __future__ import annotations

import secrets
import time
from typing import Any

from ..core.redact import redact
from ..core.types import Prediction, Query
from .agent_images import view_image
from .encoding import data_url_bytes
from .http import completion_answer
from .vlm.agent import Budget, Reply, View, describe_budget, headline, prediction_of, run_episode

# Placeholders for the episode's images in a body until it is written (`http.json_bytes`): random.
VIEW_PLACEHOLDER = "pytest-grounding-view-" + secrets.token_hex(12) + "-"
AGENT_OPTIONS = ("turns", "crops_per_turn", "crops", "tokens", "reclick")


class ServedAgent:
    """The episode runner of one `openai` detector (`detector`: its client, preset, fields, screens)."""

    def __init__(self, detector: Any, mode: str, budget: Budget) -> None:
        self.detector = detector
        self.mode = mode
        self.budget = budget

    def predict(self, query: Query) -> Prediction:
        detector = self.detector
        images: dict[int, bytes] = {}
        queued = [0.0]
        found: list[Any] = []  # each turn's Answer: where the engine put it

        def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]], views: tuple[View, ...]) -> Reply:
            for view in views:
                if view.index not in images:
                    images[view.index] = self._encode(query.image, view, queued)
            body: dict[str, Any] = {
                "model": detector.model,
                "messages": openai_conversation(messages),
                "tools": tools,
                **detector.fields,
            }
            if query.epoch is not None:
                body["seed"] = query.epoch
            verbatim = {f"{VIEW_PLACEHOLDER}{k}": url for k, url in images.items()}
            started = time.monotonic()
            reply = detector.client.request("/chat/completions", body, verbatim=verbatim)
            queued[0] += reply.queue_ms / 1000.0
            answer = completion_answer(reply.document, getattr(detector, "answer_from", "content"))
            found.append(answer)
            return reply_of(reply.document, 1000.0 * (time.monotonic() - started) - reply.queue_ms, answer)

        episode = run_episode(detector.preset, query.instruction, query.image.size, self.budget, ask)
        meta: dict[str, Any] = {"queue_ms": round(1000.0 * queued[0], 3)} if queued[0] >= 5e-5 else {}
        meta.update(reasoning_meta(found))
        return prediction_of(episode, self.mode, meta)

    def _encode(self, screen: Any, view: View, queued: list[float]) -> bytes:
        """A view's data URL: the screen from the detector's cache (shared by its samples), a crop
        or a cursor view cut and resized here (once per episode)."""
        detector = self.detector
        if view.index == 0:
            (url, _), waited = detector._screen(screen)
            queued[0] += waited
            return url
        image = view_image(screen, view)
        resized, _ = detector.preset.preprocess.apply(image)
        return data_url_bytes(resized if detector.resize else image)

    def describe(self) -> dict[str, Any]:
        return describe_budget(self.mode, self.budget)

    def headline(self) -> str:
        return headline(self.mode, self.budget)


def openai_conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The episode's messages for chat completions: view k's image as its placeholder URL; text-only
    system and tool messages as plain strings."""
    out = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message["content"]:
            if part["type"] == "image":
                parts.append({"type": "image_url", "image_url": {"url": f"{VIEW_PLACEHOLDER}{part['view']}"}})
            else:
                parts.append({"type": "text", "text": part["text"]})
        converted: dict[str, Any] = {k: v for k, v in message.items() if k != "content"}
        textual = all(p["type"] == "text" for p in parts)
        if message["role"] in ("system", "tool") and textual:
            converted["content"] = "".join(p["text"] for p in parts)
        else:
            converted["content"] = parts
        out.append(converted)
    return out


def reasoning_meta(answers: list[Any]) -> dict[str, Any]:
    """An episode's reasoning fields over its turns: the last turn's field and where its answer
    came from (what the episode ended on), the reasoning's length summed, `</think>` in any content."""
    if not answers:
        return {}
    last = answers[-1].meta()
    fields = [a.reasoning_field for a in answers if a.reasoning_field]
    if fields:
        last["reasoning_field"] = fields[-1]
        last["reasoning_chars"] = sum(a.reasoning_chars for a in answers)
    if any(a.think_in_content for a in answers):
        last["think_in_content"] = True
    turns = sum(a.from_reasoning for a in answers)
    if turns:
        last["answer_from"] = "reasoning"
        last["answers_from_reasoning"] = turns
    return last


def reply_of(document: dict[str, Any], latency_ms: float, answer: Any = None) -> Reply:
    """A chat completion as the episode's Reply: text, tool calls, tokens, whether it was cut
    (`answer`: its text where the engine put it, `completion_answer`; default: the content)."""
    # a body that is no completion raises ServerError: the sample's error
    text = (answer or completion_answer(document)).text
    choice = document["choices"][0]
    calls = choice.get("message", {}).get("tool_calls") if isinstance(choice, dict) else None
    usage: dict[str, Any] = document["usage"] if isinstance(document.get("usage"), dict) else {}
    return Reply(
        text=redact(text) if isinstance(text, str) else None,
        tool_calls=tuple(c for c in calls if isinstance(c, dict)) if isinstance(calls, list) else (),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        latency_ms=max(0.0, latency_ms),
        truncated=isinstance(choice, dict) and choice.get("finish_reason") == "length",
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
