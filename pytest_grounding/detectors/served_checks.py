"""What a served detector finds out about its server before the run, with one probe request (a
small blank screen, the preset's real prompt and fields, a few answer tokens), so that what would
go wrong on every sample is one message instead:

- a key the server refuses (401/403): the detector cannot be built (one message, nothing more sent);
- a request field the server refuses (`transformers serve` answers 422 to vLLM's `top_k` and
  `skip_special_tokens`): dropped with one line when it cannot change the answer (`top_k`/`top_p`
  under greedy decoding, see `droppable`), else one message naming the field, the preset and the fix;
- the prompt's text tokens (the probe's `usage` less its image), which with the engine's context
  (`served_engine`) tells before the run whether the largest screen fits (`context_shortfall`);
- what the server does to the screen: a second probe with the run's largest screen (a blank one of
  its size, resized by the preset as a sample would be); the difference of the two prompts' tokens
  is the difference of the two images' tokens as the server counted them. Fewer than the preset's
  frame holds means the server shrank the screen behind the harness's back (llama.cpp's
  `--image-max-tokens`, Ollama's 1 Mpx, LM Studio's image size), so its clicks would be in a frame
  the harness does not know: one message naming the server's setting (`image_resized`).

A probe that fails for another reason (a 5xx, a timeout, a body that is not a completion) decides
nothing: the run goes on and its records say what happens. What a probe found is remembered per
process and handed to xdist workers (`export` / `adopt`), so a run probes each server once."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .hub import ModelUnavailable
from .served_engine import EngineInfo

PROBE_INSTRUCTION = "pytest-grounding probe: the top left corner"  # stand-ins may recognise it
PROBE_SIZE = (320, 240)
# The second probe that tells which screen the server resized (`judge_screen`): a size every
# plausible server keeps as sent, above the largest minimum seen (UI-TARS-1.5's processor: 78,400
# pixels; Qwen2-VL's documented 256 * 28 * 28 = 200,704) and far below llama.cpp's, Ollama's and
# vLLM's maxima. Under a small pixel budget (a preset's max_pixels near FIT_SIZE's pixels) the
# preset's frame brings it as near the run's largest screen as the tolerance, where it could tell
# nothing (both shrunk to one cap read as agreeing): then it is a screen of about half the largest
# screen's frame (`fit_size`).
FIT_SIZE = (560, 420)
FIT_SCALE = 0.7  # of the largest screen's frame, each side: about half its pixels
PROBE_TOKENS = 8
# Fields every OpenAI-compatible server takes; the others are checked.
STANDARD_FIELDS = frozenset({"model", "messages", "max_tokens", "temperature"})
NEAR_GREEDY_TOP_P = 0.05  # top_p this small keeps only the most likely token (unless two nearly tie)
REFUSAL_STATUS = (400, 404, 422)

# Why a field cannot be dropped, and what to do instead: the message's last part.
KEEP_REASONS = {
    "skip_special_tokens": "the preset's answers are written between special tokens, which the server would strip",
    "frequency_penalty": "the penalty changes greedy answers too",
    "stop": "without its stop strings the answer runs on past where the preset's authors cut it",
    "chat_template_kwargs": "it switches the model's chat template (thinking on or off)",
    "top_k": "the preset samples (temperature above 0), and top_k shapes what it samples",
    "top_p": "the preset samples (temperature above 0), and top_p shapes what it samples",
}


@dataclass(frozen=True)
class ServerCheck:
    """What the probe found about one server, for one model and preset."""

    engine: EngineInfo = field(default_factory=EngineInfo)
    dropped: tuple[str, ...] = ()  # request fields left out: refused, and unable to change the answer
    refused_detail: str = ""  # the server's words when it refused them
    prompt_tokens: int | None = None  # the probe's prompt tokens (`usage`), its image included
    probe_image_tokens: int | None = None  # of them, the probe screen's
    probed: bool = False  # False: no probe (probe=false) or it decided nothing (a 5xx, a timeout)

    @property
    def text_tokens(self) -> int | None:
        """The prompt's tokens besides the image (system prompt, template, the probe's instruction)."""
        if self.prompt_tokens is None or self.probe_image_tokens is None:
            return None
        return max(0, self.prompt_tokens - self.probe_image_tokens)

    def notes(self, preset: str) -> list[str]:
        if not self.dropped:
            return []
        fields = ", ".join(self.dropped)
        return [
            f"the server refuses {fields} ({self.refused_detail[:120]}); preset {preset} decodes greedily, so "
            f"{'it is' if len(self.dropped) == 1 else 'they are'} left out of every request: answers are unchanged"
        ]

    def to_wire(self) -> dict[str, Any]:
        return {
            "engine": self.engine.describe(),
            "dropped": list(self.dropped),
            "refused_detail": self.refused_detail,
            "prompt_tokens": self.prompt_tokens,
            "probe_image_tokens": self.probe_image_tokens,
            "probed": self.probed,
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> ServerCheck:
        engine = data.get("engine") or {}
        return cls(
            engine=EngineInfo(
                name=str(engine.get("name") or "unknown"),
                version=engine.get("version"),
                max_model_len=engine.get("max_model_len"),
                settings=dict(engine.get("settings") or {}),
            ),
            dropped=tuple(data.get("dropped") or ()),
            refused_detail=str(data.get("refused_detail") or ""),
            prompt_tokens=data.get("prompt_tokens"),
            probe_image_tokens=data.get("probe_image_tokens"),
            probed=bool(data.get("probed")),
        )


# -- pure decisions -------------------------------------------------------------------------------


def droppable(name: str, decoding: Any) -> bool:
    """Whether leaving a refused field out cannot change the answer: top_k and top_p only narrow
    sampling toward the most likely token, so they go when the preset decodes greedily (temperature
    0), or when top_k=1 goes and a top_p of at most 0.05 stays (GUI-Owl-1.5's temperature 0.01,
    top_p 0.01, top_k 1). Every other field changes answers and is kept."""
    if name not in ("top_k", "top_p"):
        return False
    if decoding.temperature == 0:
        return True
    if name == "top_k" and decoding.top_k == 1:
        return decoding.top_p is not None and decoding.top_p <= NEAR_GREEDY_TOP_P
    return False


def refused_fields(detail: str, sent: Iterable[str]) -> list[str]:
    """The sent fields a server's error text names (`Unexpected fields in the request: {'top_k'}`,
    `extra_forbidden ... 'top_k'`), as whole words."""
    return [name for name in sent if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", detail)]


def image_tokens(preprocess: Any, size: tuple[int, int]) -> int | None:
    """Tokens of a screen in the model's frame, for Qwen-style patches merged 2x2 (smart_resize's
    factor is the merged patch's side); None for presets whose tokens are not known."""
    factor = getattr(preprocess, "factor", None)
    frame = getattr(preprocess, "frame", None)
    if not isinstance(factor, int) or factor < 1 or frame is None:
        return None
    width, height = frame(size).model
    return (width // factor) * (height // factor)


@dataclass(frozen=True)
class Shortfall:
    """Samples whose prompt would not fit the server's context."""

    context: int
    largest_need: int
    over: int  # how many samples
    first: str  # the first such sample (id and image size)


def prompt_need(
    check: ServerCheck, preprocess: Any, size: tuple[int, int], instruction: str, answer_tokens: int
) -> int | None:
    """Tokens a sample's request holds at most: the probe's text tokens, this screen's image tokens,
    the instruction's bytes beyond the probe's (a token is at least a byte) and the answer's room."""
    text = check.text_tokens
    tokens = image_tokens(preprocess, size)
    if text is None or tokens is None:
        return None
    extra = max(0, len(instruction.encode()) - len(PROBE_INSTRUCTION.encode()))
    return text + tokens + extra + answer_tokens


def context_shortfall(
    check: ServerCheck, preprocess: Any, answer_tokens: int, samples: Iterable[tuple[str, tuple[int, int], str]]
) -> Shortfall | None:
    """None when every (id, size, instruction) fits the server's context (or it is not known)."""
    context = check.engine.max_model_len
    if not context:
        return None
    largest, over, first = 0, 0, ""
    for sample_id, size, instruction in samples:
        need = prompt_need(check, preprocess, size, instruction, answer_tokens)
        if need is None:
            return None
        largest = max(largest, need)
        if need > context:
            over += 1
            first = first or f"{sample_id} ({size[0]}x{size[1]})"
    return Shortfall(context, largest, over, first) if over else None


@dataclass(frozen=True)
class Resized:
    """The run's largest screen as the server counted it, against the preset's frame."""

    size: tuple[int, int]  # the screen's own size
    frame: tuple[int, int]  # what the harness sends (the preset's frame)
    expected: int  # that frame's image tokens
    seen: int  # the image tokens the server's prompt counts imply

    @property
    def shrunk(self) -> bool:
        return self.seen < self.expected


RESIZE_TOLERANCE = 0.02  # a share of the expected tokens (and at least 4): rounding, a marker token


def image_resized(
    check: ServerCheck, preprocess: Any, size: tuple[int, int], prompt_tokens: int | None
) -> Resized | None:
    """The server's count for a screen of `size` (its prompt's tokens: `prompt_tokens`) against the
    preset's, through the probe's: both prompts hold the same text, so their difference is the
    difference of the images' tokens. None when they agree or nothing can be told."""
    tokens = image_tokens(preprocess, size)
    if check.prompt_tokens is None or check.probe_image_tokens is None or prompt_tokens is None or tokens is None:
        return None
    seen = prompt_tokens - check.prompt_tokens + check.probe_image_tokens
    if abs(seen - tokens) <= resize_tolerance(tokens):
        return None
    width, height = preprocess.frame(size).model
    return Resized(size, (width, height), tokens, max(0, seen))


def counts_unusable(check: ServerCheck, preprocess: Any, size: tuple[int, int], prompt_tokens: int | None) -> str:
    """Why a server's prompt-token counts cannot be true ("" when they can): a prompt shorter than
    its own image (a probe screen no plausible server shrinks), or one count for two screens of
    very different sizes that is below the small one's image (a gateway that reports
    `prompt_tokens: 1` for every request)."""
    small = check.probe_image_tokens
    if check.prompt_tokens is None or small is None:
        return ""
    if check.prompt_tokens < small:
        return (
            f"the {PROBE_SIZE[0]}x{PROBE_SIZE[1]} probe's prompt counts {check.prompt_tokens:,} tokens, fewer than "
            f"its own image's {small:,}"
        )
    large = image_tokens(preprocess, size)
    if prompt_tokens is not None and large is not None:
        if prompt_tokens == check.prompt_tokens and large > 4 * max(1, small) and prompt_tokens <= small:
            return f"one count ({prompt_tokens:,}) for a {large:,}-token screen and a {small:,}-token probe"
        if prompt_tokens < min(small, large):
            return (
                f"a {size[0]}x{size[1]} screen's prompt counts {prompt_tokens:,} tokens, fewer than the probe's image"
            )
    return ""


@dataclass(frozen=True)
class ScreenJudgement:
    """What the probes say about the run's largest screen: `resized` (it would stop the run), or
    `note` (one line: the counts cannot be used, or the server enlarged the small probe and keeps
    this screen as sent), or neither."""

    resized: Resized | None = None
    note: str = ""


def resize_tolerance(tokens: int) -> float:
    return max(4, RESIZE_TOLERANCE * tokens)


def fit_size(preprocess: Any, size: tuple[int, int]) -> tuple[int, int]:
    """The second probe's screen for a run whose largest screen is `size`: FIT_SIZE, unless the
    preset's frame puts the two within twice the tolerance of each other (a small pixel budget):
    then a screen of FIT_SCALE of the largest one's frame, whose count differs enough to be told."""
    large, fit = image_tokens(preprocess, size), image_tokens(preprocess, FIT_SIZE)
    if large is None or fit is None or abs(large - fit) > 2 * resize_tolerance(large):
        return FIT_SIZE
    width, height = preprocess.frame(size).model
    return max(1, round(width * FIT_SCALE)), max(1, round(height * FIT_SCALE))


def judge_screen(
    check: ServerCheck,
    preprocess: Any,
    size: tuple[int, int],
    prompt_tokens: int | None,
    fit_prompt_tokens: Callable[[tuple[int, int]], int | None],
) -> ScreenJudgement:
    """The run's largest screen against the probe (`image_resized`), judged: counts that cannot
    be true are a note and no verdict; a difference is checked against a second probe at
    `fit_size` (`fit_prompt_tokens(size)` sends it), which the server keeps as sent: when the screen
    agrees with it, the server enlarged the small probe (a minimum above the preset's), not the
    screen. A second probe too near the screen to tell (no other size to send) leaves the verdict."""
    unusable = counts_unusable(check, preprocess, size, prompt_tokens)
    if unusable:
        return ScreenJudgement(note=f"this server's prompt-token counts cannot be used ({unusable}): the check of "
                               "what it does to the screen is skipped")  # fmt: skip
    resized = image_resized(check, preprocess, size, prompt_tokens)
    if resized is None:
        return ScreenJudgement()
    fit = fit_size(preprocess, size)
    fit_expected = image_tokens(preprocess, fit)
    if fit_expected is None or abs(resized.expected - fit_expected) <= 2 * resize_tolerance(resized.expected):
        return ScreenJudgement(resized)  # two screens one cap would shrink alike: their agreement tells nothing
    fit_prompt = fit_prompt_tokens(fit)
    if fit_prompt is None or fit_prompt < fit_expected:
        return ScreenJudgement(resized)
    fitted = ServerCheck(check.engine, prompt_tokens=fit_prompt, probe_image_tokens=fit_expected, probed=True)
    against_fit = image_resized(fitted, preprocess, size, prompt_tokens)
    small = image_resized(fitted, preprocess, PROBE_SIZE, check.prompt_tokens)
    if against_fit is None:  # the screen is kept as sent: the server resized the small probe
        if small is not None and not small.shrunk:
            return ScreenJudgement(
                note=f"the server enlarged the {PROBE_SIZE[0]}x{PROBE_SIZE[1]} probe ({small.expected:,} image tokens "
                f"in the preset's frame, about {small.seen:,} on the server: its minimum is above the preset's); the "
                f"run's largest screen ({size[0]}x{size[1]}) is kept as sent, so only screens about as small as the "
                "probe would be answered in another frame"
            )
        return ScreenJudgement()
    return ScreenJudgement(against_fit)


def resize_fix(engine: str, resized: Resized, min_tokens: int | None, factor: int) -> str:
    """What makes the server keep the screen as the harness sends it: the engine's own setting,
    and (for a shrinking server) the harness's side: send no more than the server keeps."""
    keep = f"server_max_pixels={resized.seen * factor * factor}"
    wanted = f"{resized.expected}"
    if not resized.shrunk:  # enlarged: the server's minimum is above the preset's
        flag = f"--image-min-tokens {min_tokens}" if engine == "llamacpp" and min_tokens else "a lower image minimum"
        return f"start the server with {flag}, so that it keeps the preset's frame"
    if engine == "llamacpp":
        low = f" --image-min-tokens {min_tokens}" if min_tokens else ""
        return (
            f"llama-server resizes each image to between its --image-min-tokens and --image-max-tokens (4096 at most "
            f"by default for Qwen-VL): start it with{low} --image-max-tokens {wanted} (the llamacpp detector "
            f"does), or send what it keeps: {keep}"
        )
    if engine == "ollama":
        return (
            "Ollama resizes Qwen-VL images to under about 1 Mpx (multiples of 28) and has no setting for it: "
            f"send what it keeps: {keep}"
        )
    if engine == "lmstudio":
        return (
            "LM Studio's MLX engine resizes images to its max_image_size (1024 px by default, 500 px in older "
            f"versions): raise it in the model's load settings, or send what it keeps: {keep}"
        )
    if engine == "vllm":
        return (
            f"start vLLM with --mm-processor-kwargs '{{\"max_pixels\": {resized.frame[0] * resized.frame[1]}}}' "
            f"and pass server_max_pixels= the same, or send what it keeps: {keep}"
        )
    return f"serve the model with a larger image budget, or send what the server keeps: {keep}"


# -- the probe ------------------------------------------------------------------------------------


def probe_fields(
    send: Callable[[Sequence[str]], Mapping[str, Any]],
    fields: Mapping[str, Any],
    decoding: Any,
    *,
    preset: str,
    where: str,
) -> tuple[tuple[str, ...], str, Mapping[str, Any] | None]:
    """Send the probe (`send(omitted)` posts it without those fields, raising ServerError); the
    fields to drop, the server's words, and the probe's answer (None when it decided nothing).
    When the whole probe fails (a 4xx, or a 5xx: `transformers serve` fails on `stop` with a VLM),
    the probe without the checked fields is sent, then with each one alone: a field that alone
    fails a request that succeeds without it is the server's problem with that field.
    Raises ModelUnavailable for a refused key, or a failing field the preset needs."""
    from ..core.budget import BudgetSpent
    from .http import AuthError, ServerError

    checked = [name for name in fields if name not in STANDARD_FIELDS]
    try:
        return (), "", send(())
    except BudgetSpent:  # --grounding-budget requests=N spent by the checks before: the probe tells nothing
        return (), "", None
    except AuthError as exc:
        raise ModelUnavailable(
            f"openai: the server at {where} refuses the key",
            str(exc)[:300],
            "set the right key in the variable api_key_env= names (or leave api_key_env out for a server without keys)",
        ) from None
    except ServerError as exc:
        if exc.status is None or not (exc.status in REFUSAL_STATUS or exc.status >= 500) or not checked:
            return (), "", None  # a timeout, garbage, a 429: the run's own records say it
    try:
        answer = send(tuple(checked))
    except ServerError:
        return (), "", None  # it fails without them too: not their doing
    failing: dict[str, str] = {}
    for name in checked:
        try:
            send(tuple(other for other in checked if other != name))
        except ServerError as exc:
            failing[name] = f"HTTP {exc.status}: {exc.detail or exc}" if exc.status else str(exc)
    if not failing:
        return (), "", answer  # only together, or only once (a passing 5xx): decided by the run
    detail = "; ".join(f"with {name}: {text[:160]}" for name, text in failing.items())
    kept = [name for name in failing if not droppable(name, decoding)]
    if kept:
        reasons = "; ".join(f"{name}: {KEEP_REASONS.get(name, 'the preset sets it')}" for name in kept)
        raise ModelUnavailable(
            f"openai: the server at {where} refuses or fails on the request field{'s' if len(kept) > 1 else ''} "
            f"{', '.join(kept)} that preset {preset} needs ({reasons})",
            f"probe requests: {detail[:300]}",
            "serve the model with vLLM or SGLang (both take these fields), or choose a preset that does not set "
            f"{'them' if len(kept) > 1 else 'it'} (python -m pytest_grounding presets)",
        )
    dropped = tuple(failing)
    try:
        return dropped, detail, send(dropped)
    except ServerError:
        return dropped, detail, None


# -- remembered per process, handed to workers ----------------------------------------------------

_lock = threading.Lock()
_checks: dict[str, ServerCheck] = {}


def check_key(urls: Sequence[str], model: str, preset: Mapping[str, Any], fields: Mapping[str, Any]) -> str:
    return json.dumps([list(urls), model, preset, dict(fields)], sort_keys=True, default=str)


def checked(key: str, probe: Callable[[], ServerCheck]) -> ServerCheck:
    """The check remembered under `key`, else `probe()`'s (remembered; a ModelUnavailable is not)."""
    with _lock:
        known = _checks.get(key)
    if known is not None:
        return known
    found = probe()
    with _lock:
        return _checks.setdefault(key, found)


def export() -> dict[str, Any]:
    """What this process found, for xdist workers (plain types)."""
    with _lock:
        return {key: check.to_wire() for key, check in _checks.items()}


def adopt(sent: Mapping[str, Any]) -> None:
    with _lock:
        for key, data in (sent or {}).items():
            if isinstance(data, Mapping):
                _checks.setdefault(str(key), ServerCheck.from_wire(data))


def forget() -> None:
    """At the end of a session: a later in-process session may see other servers at these URLs."""
    with _lock:
        _checks.clear()
