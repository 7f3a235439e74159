"""The records an episode of model-driven grounding is made of (`agent=crop`): its budget, the
images shown to the model, and one answer. agent.py runs the episode; agent_turns.py makes its
messages; both read these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .preprocess import Frame

Region = tuple[int, int, int, int]  # x1, y1, x2, y2 in screen pixels, x2 > x1, y2 > y1


@dataclass(frozen=True)
class Budget:
    """An episode's limits; the default is small (LBS's crops: two per turn, three in all)."""

    turns: int = 4  # requests
    crops_per_turn: int = 2
    crops: int = 3
    tokens: int = 32768  # prompt and completion tokens of all turns (as the engine reports them)
    reclick: int = 0  # re-click turns after a click, the cursor drawn on the screen

    def __post_init__(self) -> None:
        for name, low in (("turns", 1), ("crops_per_turn", 1), ("crops", 0), ("tokens", 1), ("reclick", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"agent budget: {name}={value!r} must be an integer of at least {low}")

    @classmethod
    def from_options(cls, **options: Any) -> Budget:
        """From detector options (`agent_turns=6` ...): numbers as the command line gives them (text)."""
        values: dict[str, int] = {}
        for name, value in options.items():
            if value is None:
                continue
            try:
                values[name] = int(str(value))
            except ValueError:
                raise ValueError(f"agent budget: agent_{name}={value!r} is not an integer") from None
        return cls(**values)


@dataclass(frozen=True)
class View:
    """An image shown to the model: a region of the screen (the whole of it for view 0), its frame
    (region size -> the size sent), and the cursor drawn on it (a re-click view)."""

    index: int
    region: Region
    frame: Frame
    source: int | None = None  # the view the crop was asked on
    cursor: tuple[float, float] | None = None


@dataclass(frozen=True)
class Reply:
    """One answer: its text, its tool calls (as the OpenAI API gives them: {id, function: {name,
    arguments}}), tokens (prompt, completion; None where unknown), the model's seconds."""

    text: str | None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float = 0.0
    truncated: bool = False
