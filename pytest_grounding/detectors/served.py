"""The `openai` detector: any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, TGI, a
hosted API), prompted and parsed by a preset (`pytest_grounding.vlm`; UI-TARS-1.5's grounding
prompt by default), so a vLLM serving UI-TARS-1.5-7B scores as `uitars` in-process does.

Standard library only (urllib). A server that is down, a 5xx or 429 after the retries, a timeout
or a body that is not a chat completion RAISES: the harness records an error, never a miss. The
API key is read from the environment variable named by `api_key_env`; it is never printed,
described or written anywhere."""

from __future__ import annotations

import base64
import http.client
import io
import itertools
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from ..redact import redact, register_env
from ..types import Prediction, Query
from ..vlm.parse import answer_to_prediction
from ..vlm.presets import DEFAULT_PRESET, Decoding, preset_headline, resolve_preset
from ..vlm.prompts import openai_messages
from .qwenvl import worker_index
from .served_budget import server_budget, within_budget

BASE_URL_ENV = "PYTEST_GROUNDING_OPENAI_BASE_URL"
URL_SEPARATOR = "|"  # `,` separates detector options; several servers: base_url=http://a/v1|http://b/v1
RETRY_STATUS = (429, 500, 502, 503, 504)


class ServerError(RuntimeError):
    """The endpoint gave no usable completion (down, failing, too slow, or not OpenAI-compatible).
    Its text is redacted: a server may quote the request's Authorization header back."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


def split_urls(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        items: Sequence[str] = [str(v) for v in value]
    else:
        items = str(value).split(URL_SEPARATOR)
    urls = [item.strip().rstrip("/") for item in items if item.strip()]
    for url in urls:
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"openai: base_url {url!r} is not an http(s) URL")
    return urls


def public_url(url: str) -> str:
    """The URL without any user:password part."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def data_url(image: Any) -> str:
    """The image as a base64 PNG data URL (lossless: the model sees our pixels)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class OpenAIDetector:
    """Options (``--detector openai:key=value,...``):

    - ``base_url`` (else $PYTEST_GROUNDING_OPENAI_BASE_URL): e.g. http://127.0.0.1:8000/v1; several
      separated by ``|`` (quote it in the shell), used round-robin, each xdist worker starting at its own.
    - ``model``: the served model name (default: the first one the server lists at /models).
    - ``api_key_env``: the NAME of the environment variable holding the key (none: no Authorization).
    - ``timeout`` (120 s per request), ``retries`` (3, on connection errors, 429 and 5xx), ``backoff``
      (1 s, doubled each retry; a 429's Retry-After is honoured up to 60 s), ``concurrency`` (4 requests
      in flight per worker).
    - ``preset`` (uitars-1.5-point) and its part overrides, as for ``uitars``; ``resize`` (true) sends the
      image at the preset's smart_resize size (false: the original, the server resizes it the same way).
    """

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        preset: str = DEFAULT_PRESET,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 1.0,
        concurrency: int = 4,
        resize: bool = True,
        server_max_pixels: int | None = None,
        **overrides: Any,
    ) -> None:
        # never more pixels than the server's processor keeps as they are (served_budget.py)
        self.pixel_budget = server_budget(resolve_preset(preset, **overrides), server_max_pixels)
        self.preset = within_budget(resolve_preset(preset, **overrides), self.pixel_budget)
        urls = base_url or os.environ.get(BASE_URL_ENV)
        if not urls:
            raise ValueError(f"openai needs base_url=URL (or ${BASE_URL_ENV}), e.g. http://127.0.0.1:8000/v1")
        self.urls = split_urls(urls)
        if not self.urls:
            raise ValueError("openai: base_url is empty")
        self.worker = worker_index()
        start = (self.worker or 0) % len(self.urls)
        self._next_url = itertools.cycle(self.urls[start:] + self.urls[:start])
        self._url_lock = threading.Lock()
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = max(0.0, float(backoff))
        self.concurrency = max(1, int(concurrency))
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self.resize = resize if isinstance(resize, bool) else str(resize).lower() in ("1", "true", "yes", "on")
        self.api_key_env = api_key_env or None
        if self.api_key_env and not os.environ.get(self.api_key_env):
            raise ValueError(f"openai: api_key_env={self.api_key_env} but that environment variable is not set")
        register_env(self.api_key_env)  # before the first request: an echoed key is masked everywhere
        self.model = model or self._first_model()

    # -- HTTP -------------------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            headers["Authorization"] = "Bearer " + os.environ.get(self.api_key_env, "")
        return headers

    def _url(self) -> str:
        with self._url_lock:
            return next(self._next_url)

    def _request(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One JSON request with retries; the decoded JSON object, or ServerError."""
        data = None if body is None else json.dumps(body).encode()
        problem = ""
        for attempt in range(self.retries + 1):
            url = self._url() + path
            request = urllib.request.Request(
                url, data=data, headers=self._headers(), method="GET" if data is None else "POST"
            )
            wait = self.backoff * (2**attempt)
            try:
                with self._slots, urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                detail = redact(exc.read()[:4096].decode("utf-8", "replace"))[:300]  # redact, then cut
                problem = f"HTTP {exc.code} from {public_url(url)}: {detail}"
                if exc.code not in RETRY_STATUS:
                    raise ServerError(problem) from None
                if exc.code == 429:
                    wait = max(wait, min(60.0, _seconds(exc.headers.get("Retry-After"))))
            except TimeoutError as exc:
                raise ServerError(f"no answer from {public_url(url)} within {self.timeout:g} s") from exc
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                    raise ServerError(f"no answer from {public_url(url)} within {self.timeout:g} s") from exc
                problem = f"cannot reach {public_url(url)}: {exc.reason}"
            except (ConnectionError, http.client.HTTPException) as exc:
                problem = f"connection to {public_url(url)} failed: {type(exc).__name__}: {exc}"
            else:
                try:
                    document = json.loads(raw)
                except ValueError:
                    raise ServerError(
                        f"{public_url(url)} answered with something that is not JSON: {_clip(raw, 200)}"
                    ) from None
                if not isinstance(document, dict):
                    raise ServerError(f"{public_url(url)} answered JSON that is not an object: {_clip(raw, 200)}")
                return document
            if attempt < self.retries:
                time.sleep(wait)
        raise ServerError(f"{problem} (after {self.retries + 1} attempts)")

    def _first_model(self) -> str:
        listing = self._request("/models")
        try:
            return str(listing["data"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise ServerError(
                f"no model= given and the server lists none at /models: {redact(repr(listing))[:200]}"
            ) from None

    # -- detector ---------------------------------------------------------------------------------
    def request_body(self, query: Query) -> dict[str, Any]:
        """The chat-completions request for a query (image at the preset's size)."""
        body, _ = self._body_and_frame(query)
        return body

    def _body_and_frame(self, query: Query):
        resized, frame = self.preset.preprocess.apply(query.image)
        image = resized if self.resize else query.image
        messages = openai_messages(self.preset.prompt.messages(query.instruction, frame.model), data_url(image))
        body: dict[str, Any] = {"model": self.model, "messages": messages, **decoding_fields(self.preset.decoding)}
        return body, frame

    def chat(self, messages: list[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0) -> str:
        """The text of a chat completion for any messages, through this client's retries, timeout
        and key (the ScreenSeekeR planner asks its own questions this way)."""
        body = {"model": self.model, "messages": messages, "max_tokens": max_tokens, "temperature": temperature}
        answer = redact(_content(self._request("/chat/completions", body)))
        return answer if isinstance(answer, str) else ""

    def predict(self, query: Query) -> Prediction:
        body, frame = self._body_and_frame(query)
        document = self._request("/chat/completions", body)
        answer = redact(_content(document))
        meta: dict[str, Any] = {"model_image": list(frame.model), "pixel_budget": self.pixel_budget}
        usage = document.get("usage")
        if isinstance(usage, dict):
            meta["usage"] = {k: v for k, v in usage.items() if isinstance(v, (int, float))}
        p = self.preset
        return answer_to_prediction(
            answer if isinstance(answer, str) else None,
            frame,
            extractors=p.extractors,
            transform=p.transform,
            refusal=p.refusal,
            meta=meta,
        )

    def describe(self) -> dict[str, Any]:
        p = self.preset
        urls = [public_url(u) for u in self.urls]
        where = urls[0] if len(urls) == 1 else f"{len(urls)} servers ({urls[0]}, ...)"
        return {
            "headline": f"{self.model} at {where}, {preset_headline(p)}",
            "base_urls": urls,
            "model": self.model,
            "preset": p.describe(),
            "image": f"{p.preprocess.kind} PNG" if self.resize else "original PNG",
            "api_key_env": self.api_key_env,  # the variable's name, never its value
            "server_max_pixels": self.pixel_budget,
            "timeout_s": self.timeout,
            "retries": self.retries,
            "backoff_s": self.backoff,
            "concurrency": self.concurrency,
            "xdist_worker": None if self.worker is None else f"gw{self.worker}",
        }


def decoding_fields(decoding: Decoding) -> dict[str, Any]:
    """A preset's decoding as chat-completions fields; top_k and skip_special_tokens are vLLM's
    extensions (sent only when the preset sets them, so hosted APIs never see them)."""
    fields: dict[str, Any] = {"max_tokens": decoding.max_new_tokens, "temperature": decoding.temperature}
    if decoding.top_p is not None:
        fields["top_p"] = decoding.top_p
    if decoding.top_k is not None:
        fields["top_k"] = decoding.top_k
    if decoding.frequency_penalty is not None:
        fields["frequency_penalty"] = decoding.frequency_penalty
    if decoding.stop:
        fields["stop"] = list(decoding.stop)
    if not decoding.skip_special_tokens:
        fields["skip_special_tokens"] = False
    return fields


def _content(document: dict[str, Any]) -> Any:
    """The first choice's message content (content parts joined), or ServerError."""
    try:
        answer = document["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ServerError(f"not a chat completion: {redact(json.dumps(document))[:300]}") from None
    if isinstance(answer, list):  # content parts
        answer = "".join(part.get("text", "") for part in answer if isinstance(part, dict))
    return answer


def _clip(raw: bytes, limit: int) -> str:
    """A body's start for an error text: redacted before it is cut (a cut key would not match)."""
    return repr(redact(raw[:4096].decode("utf-8", "replace"))[:limit])


def _seconds(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0
