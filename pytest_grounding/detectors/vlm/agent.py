"""Model-driven grounding (`agent=crop`, issue 39): the episode's pure logic. The model answers a
crop request (a `crop` tool call), a click, a `terminate`, or a refusal; the harness shows each crop
(cut from the screen, resized as the preset says), may render the cursor after a click for a
re-click, and ends the episode on a click, a refusal, an invalid action, a loop or a spent budget.

No I/O and no transport here: `run_episode` drives any `ask(messages, tools, views) -> Reply` (the served
detector's HTTP glue in `served_agent.py`, an in-process generate) and returns the episode: its end,
its final click in screen pixels, and every turn's trace. Images stay abstract: a message part
`{"type": "image", "view": k}` stands for view k (0 the screen), which the glue cuts and encodes once.

Every region is a whole-pixel box of the SCREEN, so a crop of a crop maps back exactly: a box the
model gives on view k is mapped through view k's frame and offset to screen pixels, then widened to
whole pixels (floor, ceil) and clipped to view k."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ...core.record import AGENT_BUDGET_ENDS, RAW_LIMIT, AgentEnd
from ...core.types import Prediction
from .agent_parts import Budget, Region, Reply, View
from .agent_turns import after_click, after_crop, assistant_message, first_messages, read_action, tools
from .parse import TRANSFORMS, extract, is_refusal, split_transform
from .preprocess import Frame

AGENT_MODES = ("crop",)


End = AgentEnd  # the episode's ends: core's vocabulary (a record's `agent_end`)
ENDS = tuple(AgentEnd)
BUDGET_ENDS = AGENT_BUDGET_ENDS


@dataclass(frozen=True)
class Turn:
    """One request's trace: the regions it showed new (screen px), the answer, the action read."""

    turn: int
    shown: tuple[Region, ...]
    answer: str | None
    action: Mapping[str, Any]
    latency_ms: float
    tokens: Mapping[str, int | None]

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["shown"] = [list(r) for r in self.shown]
        out["action"] = dict(self.action)
        out["tokens"] = dict(self.tokens)
        return out


@dataclass(frozen=True)
class Episode:
    end: str
    point: tuple[float, float] | None
    turns: tuple[Turn, ...]
    views: tuple[View, ...]
    problem: str | None = None
    answer: str | None = None  # the last answer's text
    crops: int = 0
    truncated: bool = False
    # the last click's own numbers and the view they are on (the frame check and the diagnosis
    # read them as a single answer's `model_coordinates` and `model_image`)
    values: tuple[float, float] | None = None
    clicked_on: int | None = None

    @property
    def tokens(self) -> dict[str, int]:
        """Prompt and completion tokens summed over the turns that report them."""
        out: dict[str, int] = {}
        for turn in self.turns:
            for key, value in turn.tokens.items():
                if isinstance(value, int):
                    out[key] = out.get(key, 0) + value
        return out


# -- geometry -------------------------------------------------------------------------------------


def view_of(index: int, region: Region, frame_of: Callable[[tuple[int, int]], Frame], **more: Any) -> View:
    return View(index, region, frame_of((region[2] - region[0], region[3] - region[1])), **more)


def box_transform(transform: str) -> str:
    """The preset's transform for the tool's box, always written x first (`yx_swap` left out)."""
    return "+".join(p for p in split_transform(transform) if p != "yx_swap")


def to_screen(view: View, x: float, y: float, transform: str) -> tuple[float, float]:
    """A point in the model's values on `view` in screen pixels."""
    for name in split_transform(transform):
        x, y = TRANSFORMS[name](x, y, view.frame)
    cx, cy = view.frame.to_original(x, y)
    return view.region[0] + cx, view.region[1] + cy


def _whole(value: float, up: bool) -> int:
    value = round(value, 6)  # 12.9999999 from a scale is 13
    return math.ceil(value) if up else math.floor(value)


def crop_region(view: View, box: tuple[float, float, float, float], transform: str) -> tuple[Region | None, str | None]:
    """The screen region of a box asked on `view`: whole pixels that cover it, clipped to the view;
    None and why for a box of zero size or one wholly outside the view."""
    x1, y1, x2, y2 = box
    if not (x2 > x1 and y2 > y1):
        return None, f"crop {list(box)} has zero size (x2 <= x1 or y2 <= y1)"
    sx1, sy1 = to_screen(view, x1, y1, transform)
    sx2, sy2 = to_screen(view, x2, y2, transform)
    left, top, right, bottom = view.region
    region = (
        max(left, _whole(min(sx1, sx2), False)),
        max(top, _whole(min(sy1, sy2), False)),
        min(right, _whole(max(sx1, sx2), True)),
        min(bottom, _whole(max(sy1, sy2), True)),
    )
    if region[2] <= region[0] or region[3] <= region[1]:
        return None, f"crop {list(box)} lies outside image {view.index} ({_size(view.region)})"
    return region, None


def _size(region: Region) -> str:
    return f"{region[2] - region[0]}x{region[3] - region[1]}"


# -- the episode ------------------------------------------------------------------------------------


def run_episode(
    preset: Any,
    instruction: str,
    screen_size: tuple[int, int],
    budget: Budget,
    ask: Callable[[list[dict[str, Any]], list[dict[str, Any]], tuple[View, ...]], Reply],
    frame_of: Callable[[tuple[int, int]], Frame] | None = None,
) -> Episode:
    """One sample's episode. `ask(messages, tools, views)` sends a turn and returns the Reply (it
    may raise: a server error is the sample's error, as for a single shot); `frame_of(size)`: the
    frame a region of that size is shown in (the preset's preprocessing by default)."""
    frame_of = frame_of or preset.preprocess.frame
    views = [view_of(0, (0, 0, screen_size[0], screen_size[1]), frame_of)]
    messages = first_messages(preset.prompt.messages(instruction, views[0].frame.model), budget)
    offered = tools(preset.coordinates, budget.reclick > 0)
    turns: list[Turn] = []
    shown: tuple[Region, ...] = (views[0].region,)
    crops = reclicks = spent = 0
    point: tuple[float, float] | None = None
    latest = 0  # the view the last answer's coordinates refer to
    truncated = False
    clicked: tuple[tuple[float, float], int] | None = None  # the last click's numbers and view

    def done(end: str, problem: str | None = None, answer: str | None = None) -> Episode:
        final = None if end == End.REFUSAL else point  # after an earlier click, a broken turn keeps it
        values, on = clicked if clicked is not None and final is not None else (None, None)
        return Episode(end, final, tuple(turns), tuple(views), problem, answer, crops, truncated, values, on)

    while True:
        reply = ask(messages, offered, tuple(views))
        truncated = truncated or reply.truncated
        spent += (reply.prompt_tokens or 0) + (reply.completion_tokens or 0)
        action = read_action(reply, len(views))

        def trace(what: Mapping[str, Any], reply: Reply = reply, shown: tuple[Region, ...] = shown) -> None:
            turns.append(_turn(len(turns) + 1, shown, reply, what))

        if action.kind == "invalid":
            trace({"kind": "invalid", "problem": action.problem})
            return done(End.INVALID, action.problem, reply.text)
        if action.kind == "terminate":
            trace({"kind": "terminate"})
            return done(End.CLICK if point is not None else End.REFUSAL, answer=reply.text)
        if action.kind == "crop":
            regions, problem = [], None
            for box, on in action.boxes:
                source = views[latest if on is None else on]
                region, problem = crop_region(source, box, box_transform(preset.transform))
                if region is None:
                    break
                regions.append((region, source.index))
            asked = [list(r) for r, _ in regions]
            if problem is not None:
                trace({"kind": "invalid", "problem": problem, "crops": asked})
                return done(End.INVALID, problem, reply.text)
            trace({"kind": "crop", "crops": asked})
            repeated = _repeated([r for r, _ in regions], {v.region for v in views if v.cursor is None})
            if repeated is not None:
                return done(End.LOOP, f"crop {list(repeated)} was shown before", reply.text)
            if len(regions) > budget.crops_per_turn:
                return done(End.CROPS_PER_TURN, f"{len(regions)} crops in one turn, {budget.crops_per_turn} allowed")
            if crops + len(regions) > budget.crops:
                return done(End.CROPS, f"{crops + len(regions)} crops asked, {budget.crops} allowed")
            if len(turns) >= budget.turns:
                return done(End.TURNS, f"a crop asked on turn {len(turns)} of {budget.turns}")
            if spent >= budget.tokens:
                return done(End.TOKENS, f"{spent} tokens spent, {budget.tokens} allowed")
            new = [view_of(len(views) + i, r, frame_of, source=s) for i, (r, s) in enumerate(regions)]
            views += new
            crops += len(new)
            latest = new[-1].index
            messages += [assistant_message(reply, action), *after_crop(action, new)]
            shown = tuple(v.region for v in new)
            continue
        # an answer in the preset's own form, on the latest view
        found = extract(reply.text or "", preset.extractors) if reply.text else None
        if reply.text and is_refusal(reply.text, found, preset.refusal):
            trace({"kind": "refusal"})
            return done(End.REFUSAL, answer=reply.text)
        if found is None or len(found.values) not in (2, 4):
            trace({"kind": "none"})
            return done(End.CLICK if point is not None else End.WRONG_FORMAT, answer=reply.text)
        values = found.values
        view = views[latest]
        if len(values) == 4:  # a box answered: its centre is the click
            values = ((values[0] + values[2]) / 2.0, (values[1] + values[3]) / 2.0)
        on_screen = to_screen(view, values[0], values[1], preset.transform)
        trace({"kind": "click", "point": [round(on_screen[0], 3), round(on_screen[1], 3)], "view": view.index})
        confirmed = point is not None and math.dist(point, on_screen) < 0.5
        point = on_screen
        clicked = ((float(values[0]), float(values[1])), view.index)
        if confirmed or reclicks >= budget.reclick or len(turns) >= budget.turns or spent >= budget.tokens:
            return done(End.CLICK, answer=reply.text)
        reclicks += 1
        cursor = view_of(len(views), views[0].region, frame_of, source=0, cursor=on_screen)
        views.append(cursor)
        latest = cursor.index
        messages += [assistant_message(reply, action), after_click(cursor)]
        shown = (cursor.region,)


def _turn(number: int, shown: tuple[Region, ...], reply: Reply, what: Mapping[str, Any]) -> Turn:
    tokens = {"prompt": reply.prompt_tokens, "completion": reply.completion_tokens}
    text = reply.text if reply.text is None or len(reply.text) <= RAW_LIMIT else reply.text[:RAW_LIMIT] + "..."
    return Turn(number, shown, text, what, round(reply.latency_ms, 3), tokens)


def _repeated(regions: Sequence[Region], known: set[Region]) -> Region | None:
    """The first region already shown (or asked twice in one turn): a loop."""
    seen = set(known)
    for region in regions:
        if region in seen:
            return region
        seen.add(region)
    return None


def prediction_of(episode: Episode, mode: str, meta: dict[str, Any]) -> Prediction:
    """The episode as a Prediction in screen pixels; its trace in meta (the record lifts it out)."""
    tokens = episode.tokens
    meta = {
        **meta,
        "agent": mode,
        "agent_end": episode.end,
        "turns": [t.as_dict() for t in episode.turns],
        "attempts": len(episode.turns),  # model calls: the record's `attempts`
    }
    if tokens:
        meta["usage"] = {
            "prompt_tokens": tokens.get("prompt", 0),
            "completion_tokens": tokens.get("completion", 0),
            "total_tokens": tokens.get("prompt", 0) + tokens.get("completion", 0),
        }
    if episode.problem:
        meta["reason"] = episode.problem
    if episode.truncated:
        meta["truncated"] = True
    if episode.point is not None and episode.values is not None and episode.clicked_on is not None:
        view = episode.views[episode.clicked_on]
        meta["model_coordinates"] = list(episode.values)
        meta["model_image"] = list(view.frame.model)
        if view.region != episode.views[0].region:
            meta["model_view"] = list(view.region)
    if episode.end == End.REFUSAL:
        return Prediction.refusal(raw=episode.answer, **meta)
    if episode.point is None:
        return Prediction.no_answer(raw=episode.answer, **meta)
    return Prediction(point=episode.point, raw=episode.answer, meta=meta)


# A detector's budget options and the Budget fields they set.
BUDGET_OPTIONS = {
    "agent_turns": "turns",
    "agent_crops_per_turn": "crops_per_turn",
    "agent_crops": "crops",
    "agent_tokens": "tokens",
    "agent_reclick": "reclick",
}


def take_agent_options(name: str, options: dict[str, Any]) -> tuple[str, Budget] | None:
    """`agent=MODE` and its budget options taken out of a detector's options (the rest are the
    preset's parts): (mode, budget), or None for a single shot; a budget without a mode is refused."""
    mode = options.pop("agent", None)
    budget = {field: options.pop(key) for key, field in BUDGET_OPTIONS.items() if key in options}
    setting = agent_setting(name, mode, **budget)
    if setting is None and budget:
        raise ValueError(f"{name}: agent budget options need agent=crop")
    return setting


def agent_setting(name: str, mode: str | None, **budget: Any) -> tuple[str, Budget] | None:
    """(mode, budget) for a detector's `agent=MODE` and budget options, None for a single shot;
    a bad value is refused when the detector is built, before any request or model load."""
    if mode in (None, "", "none", "off"):
        return None
    if mode not in AGENT_MODES:
        raise ValueError(f"{name}: agent={mode!r}: one of {', '.join(AGENT_MODES)} (or none)")
    return str(mode), Budget.from_options(**budget)


def describe_budget(mode: str, budget: Budget) -> dict[str, Any]:
    """The agent's part of a detector's describe(): the mode and its budget (the report's run.detectors)."""
    return {"mode": mode, **asdict(budget)}


def headline(mode: str, budget: Budget) -> str:
    more = f", {budget.reclick} re-click(s)" if budget.reclick else ""
    return (
        f"agent={mode} ({budget.turns} turns, {budget.crops} crops, {budget.crops_per_turn} per turn, "
        f"{budget.tokens:,} tokens{more})"
    )


__all__ = ["AGENT_MODES", "BUDGET_ENDS", "ENDS", "Budget", "End", "Episode", "Reply", "Turn", "View", "run_episode"]
