"""ScreenSeekeR (the ScreenSpot-Pro paper's visual search) around any detector.

In a viewport (the screen at first): a planner names the regions and neighbours the target is
likely in or beside; the grounder answers for the instruction and for each of those references;
every answer becomes a candidate patch (a small one padded to the minimum crop, an elongated large
one split); the patches are scored by Gaussian votes of all the answers' centres, de-duplicated by
NMS, and searched best first, recursively, to a depth limit. In a small enough viewport (or at the
depth limit) the grounder answers and the planner checks the answer (is the target / the target is
elsewhere here, with a sharper instruction / not here): not here sends the search on to the next
patch.

The planner is a language model behind the `openai` detector's client (`planner=openai`), or the
grounder itself (`planner=grounder`, the default): it proposes no references beyond the
instruction, and its check accepts an answer when the grounder gives one in the leaf. Either way the
search sees only the image and the instruction. `Search` holds the recursion, with the model calls
injected, so that it is tested without models."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...core import safejson
from ...core.types import Box, Query
from .geometry import candidate_patches, integral, nms, patch_scores, shift
from .wrappers import Answer, Strategy, Trail

IS_TARGET, ELSEWHERE, NOT_FOUND = "is_target", "target_elsewhere", "target_not_found"
PLANNERS = ("grounder", "openai")


@dataclass(frozen=True)
class Verdict:
    result: str  # IS_TARGET, ELSEWHERE or NOT_FOUND
    instruction: str | None = None  # the sharper instruction of ELSEWHERE


@dataclass(frozen=True)
class Limits:
    depth: int = 3
    min_size: tuple[float, float] = (1280.0, 768.0)
    max_aspect: float = 2.5
    sigma: float = 0.3
    nms_iou: float = 0.5
    max_calls: int = 40  # grounder and planner calls together, per sample


class Budget(Exception):
    """The call budget is spent: the search stops where it is."""


@dataclass
class Search:
    """The recursion. `ground(text, viewport)` answers in screen pixels (None: no answer);
    `propose(viewport, instruction)` gives references (None: the planner says the target is not in
    this viewport); `check(viewport, instruction, answer)` judges a leaf's answer. Each of these
    calls counts against `limits.max_calls`; `visited` lists the viewports searched, in order."""

    ground: Callable[[str, Box], Answer | None]
    propose: Callable[[Box, str], Sequence[str] | None]
    check: Callable[[Box, str, Answer], Verdict]
    limits: Limits
    planner_costs: bool = True  # False: the planner is the grounder's own, its propose and check call nothing
    calls: int = 0

    def __post_init__(self) -> None:
        self.visited: list[tuple[int, Box]] = []

    def _spend(self) -> None:
        if self.calls >= self.limits.max_calls:
            raise Budget
        self.calls += 1

    def run(self, screen: Box, instruction: str) -> Answer | None:
        try:
            return self.search(screen, instruction, 0)
        except Budget:
            return None

    def search(self, viewport: Box, instruction: str, depth: int) -> Answer | None:
        self.visited.append((depth, viewport))
        small = viewport.width <= self.limits.min_size[0] and viewport.height <= self.limits.min_size[1]
        if depth >= self.limits.depth or small:
            return self.leaf(viewport, instruction)
        if self.planner_costs:
            self._spend()
        references = self.propose(viewport, instruction)
        if references is None:
            return None
        anchors: list[Box] = []
        for text in [instruction, *references]:
            self._spend()
            answer = self.ground(text, viewport)
            if answer is not None and answer.point is not None:
                anchors.append(answer.box if answer.box is not None else Box(*answer.point, *answer.point))
        patches = self.patches(viewport, anchors)
        votes = [a.center for a in anchors]
        scores = patch_scores(patches, votes, self.limits.sigma)
        for index in nms(patches, scores, self.limits.nms_iou):
            patch = patches[index]
            if patch == viewport:  # no narrower: this viewport is the leaf
                return self.leaf(viewport, instruction)
            found = self.search(patch, instruction, depth + 1)
            if found is not None:
                return found
        return None

    def patches(self, viewport: Box, anchors: Sequence[Box]) -> list[Box]:
        """Candidate patches in screen pixels, cut inside the viewport (geometry in its frame)."""
        frame = (viewport.width, viewport.height)
        out: list[Box] = []
        for anchor in anchors:
            local = shift(anchor, -viewport.x1, -viewport.y1)
            for patch in candidate_patches(local, self.limits.min_size, self.limits.max_aspect, frame):
                out.append(integral(shift(patch, viewport.x1, viewport.y1), (viewport.x2, viewport.y2)))
        return out

    def leaf(self, viewport: Box, instruction: str) -> Answer | None:
        self._spend()
        answer = self.ground(instruction, viewport)
        if answer is None or answer.point is None:
            return None
        if self.planner_costs:
            self._spend()
        verdict = self.check(viewport, instruction, answer)
        if verdict.result == IS_TARGET:
            return answer
        if verdict.result == ELSEWHERE and verdict.instruction:
            self._spend()
            again = self.ground(verdict.instruction, viewport)
            return again if again is not None and again.point is not None else None
        return None


# -- planners ---------------------------------------------------------------------------------------

PROPOSE_PROMPT = """You help find one UI element in a screenshot. Instruction: {instruction}

Name where on this screenshot that element most likely is, most likely first. Wrap each reference in
a tag: <element>the element itself</element>, <area>a panel, bar or window holding it</area>,
<neighbor>a distinctive element right next to it</neighbor>. Every reference must pick out one
specific thing on this screen (not "a button" or "the window"). Assume the screen will not change.
If the element cannot be on this screenshot, answer exactly: No target"""

CHECK_PROMPT = """A red box marks one element on this (cropped) screenshot. Instruction: {instruction}

Decide: is_target (the marked element is the one the instruction means), target_elsewhere (it is not,
but the right one is visible here) or target_not_found (the right one is not on this image). For
target_elsewhere, write a sharper instruction naming its label, text or position. Answer with JSON:
{{"result": "...", "new_instruction": "..." or null}}"""

_TAG = re.compile(r"<(element|area|neighbor)>(.*?)</\1>", re.S | re.I)
_RESULTS = (IS_TARGET, ELSEWHERE, NOT_FOUND)


def parse_references(text: str) -> list[str] | None:
    """References in tag order, elements first, then areas, then neighbours (the grounder is
    asked in that order); None for "No target"; duplicates dropped."""
    found = [(kind.lower(), value.strip()) for kind, value in _TAG.findall(text or "")]
    if not found and "no target" in (text or "").lower():
        return None
    ordered = [v for kind in ("element", "area", "neighbor") for k, v in found if k == kind and v]
    return list(dict.fromkeys(ordered))


def parse_verdict(text: str) -> Verdict:
    """The JSON object in the answer (fenced or bare); anything unreadable counts as not found,
    so that the search moves on rather than trusting an unchecked answer."""
    text = text if isinstance(text, str) else ""
    first, last = text.find("{"), text.rfind("}")  # the outermost braces: linear, as `\{.*\}` was not
    if 0 <= first < last:
        try:
            data = safejson.loads(text[first : last + 1], max_chars=1 << 20)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("result") in _RESULTS:
            sharper = data.get("new_instruction")
            return Verdict(str(data["result"]), sharper if isinstance(sharper, str) and sharper.strip() else None)
    return Verdict(NOT_FOUND)


def marked(image: Any, box: Box, width: int = 3) -> Any:
    """A copy of the image with a red box drawn just outside `box` (image pixels)."""
    from PIL import ImageDraw

    copy = image.copy()
    draw = ImageDraw.Draw(copy)
    w, h = copy.size
    outline = [max(0, box.x1 - width), max(0, box.y1 - width), min(w - 1, box.x2 + width), min(h - 1, box.y2 + width)]
    draw.rectangle(outline, outline=(255, 0, 0), width=width)
    return copy


class OpenAIPlanner:
    """The planner: a language model behind the shared HTTP client (`detectors.http`: its retries,
    timeout, key handling and in-flight limit), as the `openai` detector uses it."""

    def __init__(self, client: Any, model: str, max_tokens: int = 1024) -> None:
        self.client = client
        self.model = model
        self.max_tokens = max_tokens

    def _ask(self, image: Any, prompt: str) -> str:
        from ..encoding import data_url
        from ..http import chat_text

        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are an expert in using computers and reading graphical interfaces."},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": data_url(image)}},
                    {"type": "text", "text": prompt},
                ],
            },
        ]
        return chat_text(self.client, self.model, messages, max_tokens=self.max_tokens, temperature=0.0)

    def propose(self, image: Any, instruction: str) -> list[str] | None:
        return parse_references(self._ask(image, PROPOSE_PROMPT.replace("{instruction}", instruction)))

    def check(self, image: Any, instruction: str, box: Box | None) -> Verdict:
        shown = image if box is None else marked(image, box)
        return parse_verdict(self._ask(shown, CHECK_PROMPT.replace("{instruction}", instruction)))

    def describe(self) -> dict[str, Any]:
        from ..http import public_url

        return {
            "kind": "openai",
            "model": self.model,
            "base_urls": [public_url(u) for u in self.client.urls],
        }

    def close(self) -> None:
        self.client.close()


class ScreenSeekeR(Strategy):
    """Options: ``depth`` (3), ``min_width``/``min_height`` (1280x768: the smallest patch),
    ``max_aspect`` (2.5), ``sigma`` (0.3), ``nms`` (0.5), ``max_calls`` (40 model calls a sample),
    ``fallback`` (true: when the search confirms nothing, the grounder's first answer on the whole
    screen stands, marked unconfirmed), ``planner`` (grounder or openai) and, for the openai planner,
    ``base_url``, ``model``, ``api_key_env``, ``timeout``, ``retries`` as for the `openai` detector."""

    name = "screenseeker"

    def __init__(
        self,
        detector: Any,
        /,
        *,
        depth: int = 3,
        min_width: int = 1280,
        min_height: int = 768,
        max_aspect: float = 2.5,
        sigma: float = 0.3,
        nms: float = 0.5,
        max_calls: int = 40,
        fallback: bool = True,
        planner: str = "grounder",
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 120.0,
        retries: int = 3,
    ) -> None:
        super().__init__(detector)
        self.validate_options(depth=depth, max_calls=max_calls, planner=planner, base_url=base_url, sigma=sigma)
        self.limits = Limits(depth, (float(min_width), float(min_height)), float(max_aspect), sigma, nms, max_calls)
        self.fallback = fallback
        self.planner_kind = planner
        self.planner: OpenAIPlanner | None = None
        if planner == "openai":
            import os

            from ..http import HttpClient, first_model, split_urls
            from ..served import BASE_URL_ENV

            urls = split_urls(base_url or os.environ.get(BASE_URL_ENV) or "")
            if not urls:
                raise ValueError(f"planner=openai needs base_url=URL (or ${BASE_URL_ENV})")
            if api_key_env and not os.environ.get(api_key_env):
                raise ValueError(f"planner: api_key_env={api_key_env} but that environment variable is not set")
            client = HttpClient(urls, timeout=timeout, retries=retries, api_key_env=api_key_env)
            self.planner = OpenAIPlanner(client, model or first_model(client))

    @staticmethod
    def validate_options(
        depth: int = 3,
        max_calls: int = 40,
        planner: str = "grounder",
        base_url: str | None = None,
        sigma: float = 0.3,
        **_: Any,
    ) -> None:
        if depth < 0:
            raise ValueError(f"depth={depth}: 0 or more")
        if max_calls < 2:
            raise ValueError(f"max_calls={max_calls}: at least 2 (an answer and its check)")
        if sigma <= 0:
            raise ValueError(f"sigma={sigma}: above 0")
        if planner not in PLANNERS:
            raise ValueError(f"planner={planner!r}: one of {', '.join(PLANNERS)}")
        if planner == "grounder" and base_url:
            raise ValueError("base_url= is for planner=openai (the grounder planner calls no server)")

    def options(self) -> dict[str, Any]:
        limits = self.limits
        return {
            "depth": limits.depth,
            "min_size": f"{limits.min_size[0]:g}x{limits.min_size[1]:g}",
            "max_aspect": limits.max_aspect,
            "max_calls": limits.max_calls,
            "planner": self.planner_kind if self.planner is None else f"openai {self.planner.model}",
        }

    def predict(self, query: Query) -> Any:
        trail = Trail()
        planner_calls = [0]
        first: list[Answer] = []

        def ground(text: str, viewport: Box) -> Answer | None:
            answer = self.ask(query, viewport, trail, instruction=text)
            if text == query.instruction and not first:
                first.append(answer)  # the whole screen's direct answer: the fallback
            return answer

        def crop(viewport: Box) -> Any:
            x1, y1, x2, y2 = (int(v) for v in viewport.as_list())
            return query.image.crop((x1, y1, x2, y2))

        def propose(viewport: Box, instruction: str) -> Sequence[str] | None:
            if self.planner is None:
                return []
            planner_calls[0] += 1
            return self.planner.propose(crop(viewport), instruction)

        def check(viewport: Box, instruction: str, answer: Answer) -> Verdict:
            if self.planner is None:
                return Verdict(IS_TARGET)  # the grounder answered in the leaf: nothing else to ask
            planner_calls[0] += 1
            # the answer in the crop's pixels; a bare point is marked by a 16 px box
            shown = answer.box if answer.box is not None else Box(*answer.point, *answer.point)  # type: ignore[misc]
            pad = 0.0 if answer.box is not None else 8.0
            local = Box(
                shown.x1 - viewport.x1 - pad,
                shown.y1 - viewport.y1 - pad,
                shown.x2 - viewport.x1 + pad,
                shown.y2 - viewport.y1 + pad,
            )
            return self.planner.check(crop(viewport), instruction, local)

        search = Search(ground, propose, check, self.limits, planner_costs=self.planner is not None)
        screen = Box(0.0, 0.0, float(query.image.size[0]), float(query.image.size[1]))
        found = search.run(screen, query.instruction)
        trail.attempts += planner_calls[0]
        extra = {
            "planner_calls": planner_calls[0],
            "visited": [{"depth": d, "viewport": v.as_list()} for d, v in search.visited],
            "budget_spent": search.calls >= self.limits.max_calls,
        }
        if found is not None:
            return self.finish(found, trail, confirmed=True, **extra)
        if self.fallback and first and first[0].point is not None:
            return self.finish(first[0], trail, confirmed=False, **extra)
        return self.finish(None, trail, confirmed=False, **extra)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        if self.planner is not None:
            info["planner"] = self.planner.describe()
        return info

    def close(self) -> None:
        super().close()
        if self.planner is not None:
            self.planner.close()
