"""Cheap checks that a detector can be built, run once in the controller before any worker starts,
so a run that cannot work stops with one message (what was looked for, where, the one-line fix)
instead of an error on every item. A detector offers one as `preflight(**options)` (a classmethod
or function attribute of its factory); the built-ins' are here, by factory. Each check is
cheap: no model is loaded (a hub model missing from the cache is downloaded, once, here, with
progress, when online: workers then find it in the cache)."""

from __future__ import annotations

import http.client
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from .hub import ModelUnavailable, ResolvedModel, resolve_checkpoint

__all__ = ["DetectorUnavailable", "ModelUnavailable", "run_preflight"]

DetectorUnavailable = ModelUnavailable  # the one exception a preflight raises: what, where, fix
SERVER_TIMEOUT_S = 5.0


_progress: list[Callable[[str], None]] = []


def say(line: str) -> None:
    """A progress line from a preflight (a server loading), to the terminal the run set up."""
    for write in _progress[-1:]:
        write(line)


def run_preflight(
    name: str, factory: Any, options: dict[str, Any], progress: Callable[[str], None] | None = None
) -> None:
    """The factory's own `preflight`, else the built-in one for it, else nothing. `progress`
    takes the lines a long preflight says (`say`)."""
    check: Callable[..., None] | None = getattr(factory, "preflight", None)
    if check is None:
        target = f"{getattr(factory, '__module__', '')}:{getattr(factory, '__qualname__', '')}"
        check = BUILTIN.get(target)
    if check is None:
        return
    _progress.append(progress or (lambda line: None))
    try:
        check(**options)
    finally:
        _progress.pop()


def cuda_devices() -> int | None:
    """CUDA devices torch sees; None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_device(detector: str, device: Any) -> None:
    if not str(device).strip().lower().startswith("cuda"):
        return
    count = cuda_devices()
    if not count:
        raise ModelUnavailable(
            f"{detector}: device={device} was asked, but torch sees no CUDA device",
            "torch.cuda (torch " + ("not installed" if count is None else _torch_version()) + ")",
            "run on a machine with a GPU and a CUDA build of torch, or pass device=cpu "
            "(`python -m pytest_grounding doctor` shows what this machine has)",
        )


def _torch_version() -> str:
    import torch

    return f"{torch.__version__}, CUDA build {torch.version.cuda or 'none'}"


def vlm_model(
    detector: str, model_env: str, default_model: str | None, model: Any = None, revision: Any = None
) -> ResolvedModel:
    """The model of `qwenvl` / `uitars`: named (option, environment, or the detector's default),
    found in its folder or the hub cache (downloaded when online)."""
    named = model or os.environ.get(model_env) or default_model
    if not named:
        raise ModelUnavailable(
            f"{detector} needs a model",
            f"model= and ${model_env}",
            f"--detector {detector}:model=ORG/NAME (a hub id, e.g. Qwen/Qwen2.5-VL-7B-Instruct) or model=PATH",
        )
    return resolve_checkpoint(str(named), revision=str(revision) if revision else None, detector=detector)


def openai(base_url: Any = None, **options: Any) -> None:
    """Each server answers GET /models at start; then the detector is built once here, so its probe
    (served_checks.py: a refused key or field, the engine, the prompt's size) runs before any worker
    starts and what it finds is handed to them."""
    from .batch_files import writing
    from .http import ServerError
    from .served import BASE_URL_ENV, OpenAIDetector, public_url, split_urls

    urls = base_url or os.environ.get(BASE_URL_ENV)
    if not urls or writing() is not None:
        return  # the detector's own message says what to pass; --grounding-batch-out asks no server
    servers_answer(split_urls(urls))
    try:
        OpenAIDetector(base_url=base_url, **options).close()
    except ServerError as exc:
        raise ModelUnavailable(
            f"openai: the server at {public_url(split_urls(urls)[0])} answers, but not as an OpenAI-compatible one",
            str(exc)[:300],
            "check base_url= (it ends with /v1 for vLLM and SGLang) and model=",
        ) from None


def servers_answer(urls: list[str]) -> None:
    """ModelUnavailable unless something answers at each URL."""
    from .served import public_url

    for url in urls:
        problem = server_problem(url)
        if problem:
            raise ModelUnavailable(
                f"openai: the server at {public_url(url)} does not answer ({problem})",
                f"GET {public_url(url)}/models",
                "start the server (e.g. `vllm serve MODEL`), or point base_url= / $PYTEST_GROUNDING_OPENAI_BASE_URL "
                "at one that runs",
            )


def server_problem(url: str, timeout: float = SERVER_TIMEOUT_S) -> str | None:
    """None when something answers at `url`/models (any HTTP status, even a dropped connection:
    a server listens), else why not (refused, unknown host, no answer in time)."""
    from .http import url_opener

    request = urllib.request.Request(url.rstrip("/") + "/models", headers={"Accept": "application/json"})
    try:
        with url_opener().open(request, timeout=timeout):  # a redirect is an answer, never followed
            return None
    except (urllib.error.HTTPError, http.client.HTTPException, ConnectionResetError, ConnectionAbortedError):
        return None  # it answered, or accepted the connection: the detector's own messages say the rest
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (http.client.HTTPException, ConnectionResetError, ConnectionAbortedError)):
            return None
        if isinstance(exc.reason, TimeoutError):
            return f"no answer within {timeout:g} s"
        return str(exc.reason)
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except (OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def omniparser(model: Any = None, **_: Any) -> None:
    from .omniparser import MODEL_ENV, model_candidates, resolve_model

    try:
        resolve_model(str(model) if model else None)
    except FileNotFoundError:
        path, source = model_candidates(str(model) if model else None)[0]
        raise ModelUnavailable(
            "omniparser: no icon detector model file (OmniParser v2's icon_detect exported to ONNX)",
            f"{path} (from {source})",
            f"`yolo export model=weights/icon_detect/model.pt format=onnx imgsz=640` (see docs: detectors), "
            f"then put the file there, set ${MODEL_ENV}, or pass --detector omniparser:model=PATH",
        ) from None


BUILTIN: dict[str, Callable[..., None]] = {  # built-ins without a preflight of their own
    "pytest_grounding.detectors.served:OpenAIDetector": openai,
    "pytest_grounding.detectors.omniparser:OmniParserDetector": omniparser,
}
