"""An Inspect task on this plugin's scorer (issue 58; the `inspect` extra: inspect_ai).

`inspect eval pytest_grounding/grounding -T dataset=PATH [-T limit=N] [-T preset=NAME]
[-T scoring=PROFILE] --model openai/NAME --model-base-url URL` runs any dataset the plugin reads
through any model Inspect can call: the solver prompts and decodes as the preset does
(its prompt, preprocessing and decoding), the scorer parses the answer with the preset and judges
the click with the plugin's own scoring profile, and the metrics are the accuracy and its
cluster-robust 95% interval (by screen), as the plugin's reports give them. The task is found
through inspect_ai's entry point group (`inspect_ai` -> pytest_grounding.inspect._registry).

inspect_ai is imported only here, lazily: the core install never needs it."""

from __future__ import annotations

from typing import Any

__all__ = ["grounding"]


def __getattr__(name: str) -> Any:
    if name == "grounding":
        from .task import grounding

        return grounding
    raise AttributeError(name)
