"""Prompt builders: a preset's prompt and an instruction in, chat messages out.

Messages use transformers' chat-template form (`{"type": "image"}` marks where the image goes);
`openai_messages` turns them into the chat-completions form with the image as a data URL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The maintainers' ScreenSpot-Pro prompt (bytedance/UI-TARS issues #182, #215; README_v1).
UITARS_POINT = (
    "Output only the coordinate of one point in your response. What element matches the following task: {instruction}"
)
# The computer-use prompt of the 1.5 release, reduced to the click action (DESIGN.md section 3).
UITARS_COMPUTER_USE = (
    "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform "
    "the next action to complete the task. \n\n## Output Format\n\nAction: ...\n\n\n## Action Space\n"
    "click(start_box='<|box_start|>(x1,y1)<|box_end|>')\n\n## User Instruction\n{instruction}"
)


@dataclass(frozen=True)
class Prompt:
    """`user` holds `{instruction}`; `system` None sends no system turn (the chat template may add
    its default one, as Qwen's does); `image_first` puts the image before the text."""

    user: str
    system: str | None = None
    image_first: bool = True

    def text(self, instruction: str) -> str:
        # str.replace, not format: prompts hold literal braces (JSON tool schemas)
        return self.user.replace("{instruction}", instruction)

    def messages(self, instruction: str) -> list[dict[str, Any]]:
        image: dict[str, Any] = {"type": "image"}
        text: dict[str, Any] = {"type": "text", "text": self.text(instruction)}
        messages: list[dict[str, Any]] = []
        if self.system is not None:
            messages.append({"role": "system", "content": [{"type": "text", "text": self.system}]})
        messages.append({"role": "user", "content": [image, text] if self.image_first else [text, image]})
        return messages


def openai_messages(messages: list[dict[str, Any]], image_url: str) -> list[dict[str, Any]]:
    """Chat-completions messages: the image part becomes an `image_url` (a data URL)."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message["content"]:
            if part["type"] == "image":
                parts.append({"type": "image_url", "image_url": {"url": image_url}})
            else:
                parts.append(dict(part))
        if message["role"] == "system" and all(p["type"] == "text" for p in parts):
            converted.append({"role": "system", "content": "".join(p["text"] for p in parts)})
        else:
            converted.append({"role": message["role"], "content": parts})
    return converted
