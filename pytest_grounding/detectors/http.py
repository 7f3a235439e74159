"""The one HTTP client for served models (the `openai` detector and the ScreenSeekeR planner):
JSON over httpx, with retries, a per-request timeout, a connection pool sized to the concurrency
and a limiter that keeps at most N requests in flight, fixed or adaptive (`concurrency=auto`).

Why httpx: a maintained, typed client with a thread-safe connection pool (keep-alive: no TCP set-up
per request), granular timeouts and precise exceptions, and an async API should the pipeline ever
move to asyncio. The `openai` package was not chosen: it adds pydantic and its own retry policy
(which neither reports its retries nor adapts the concurrency), and vLLM's extension fields would
pass through `extra_body`. Retries and the concurrency are ours, so the run report can say what
happened (retries, cuts, the concurrency reached).

A server that is down, a 5xx or 429 after the retries, a timeout or a body that is not a JSON
object raises ServerError: the harness records an error for that sample, never a miss. `timeout`
bounds each request as a whole (a server that drips its answer a byte at a time is cut at the
deadline, not at every read). A 401 or 403 raises AuthError and the client sends nothing more: a
wrong key is one message, not one refused request per sample."""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import budget
from ..core.redact import redact, register_env

RETRY_STATUS = (429, 500, 502, 503, 504)
OVERLOAD_STATUS = (429, 503)  # the server says "slower": adaptive concurrency backs off
MAX_RETRY_AFTER_S = 60.0
URL_SEPARATOR = "|"  # `,` separates detector options; several servers: base_url=http://a/v1|http://b/v1
AUTO_START = 8  # concurrency=auto starts here (inspect_ai starts at 20 for hosted APIs: 8 is gentler)
AUTO_MAX = 32
MAX_BODY_BYTES = 64 * 1024 * 1024  # a chat completion is kilobytes; a body past this is not one


class ServerError(RuntimeError):
    """The endpoint gave no usable answer (down, failing, too slow, or not OpenAI-compatible).
    Its text is redacted: a server may quote the request's Authorization header back.
    `status`: the HTTP status when the server answered with one; `detail`: its body's start."""

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(redact(message))
        self.status = status
        self.detail = redact(detail)


class AuthError(ServerError):
    """401 or 403: the key is wrong or missing. Every later request would be refused the same way."""


AUTH_STATUS = (401, 403)


def split_urls(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        items: Sequence[str] = [str(v) for v in value]
    else:
        items = str(value).split(URL_SEPARATOR)
    urls = [item.strip().rstrip("/") for item in items if item.strip()]
    for url in urls:
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"base_url {url!r} is not an http(s) URL")
    return urls


def server_root(url: str) -> str:
    """The server's root for an OpenAI base URL (http://host:8000/v1 -> http://host:8000): where
    vLLM serves /version and /health, SGLang /get_server_info."""
    return url[: -len("/v1")] if url.endswith("/v1") else url


def public_url(url: str) -> str:
    """The URL without any user:password part."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def retry_after_s(value: str | None) -> float:
    """A Retry-After header in seconds (an HTTP date counts as 0: rare from model servers)."""
    try:
        return min(MAX_RETRY_AFTER_S, max(0.0, float(value))) if value else 0.0
    except ValueError:
        return 0.0


@dataclass(frozen=True)
class ConcurrencySetting:
    """`concurrency=N` (fixed) or `concurrency=auto` (start moderate, at most `maximum`)."""

    start: int
    maximum: int
    adaptive: bool

    @classmethod
    def parse(cls, value: Any, maximum: Any = None) -> ConcurrencySetting:
        top = AUTO_MAX if maximum in (None, "") else int(maximum)
        if top < 1:
            raise ValueError(f"max={maximum}: 1 or more")
        if str(value).strip().lower() == "auto":
            return cls(start=min(AUTO_START, top), maximum=top, adaptive=True)
        try:
            fixed = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"concurrency={value!r}: a whole number or auto") from None
        if fixed < 1:
            raise ValueError(f"concurrency={value}: 1 or more")
        return cls(start=fixed, maximum=fixed, adaptive=False)

    def __str__(self) -> str:
        return f"auto (start {self.start}, max {self.maximum})" if self.adaptive else str(self.maximum)


class Limiter:
    """At most `limit` requests in flight. Adaptive: slow start (+1 per success, so the limit
    doubles per round trip) until the first sign of overload, then +1 per `limit` successes; a
    429, 503 or timeout halves it (once per cooldown: the requests already in flight when it was
    cut do not cut it again). `clock` is injectable for tests."""

    def __init__(self, setting: ConcurrencySetting, clock: Callable[[], float] = time.monotonic) -> None:
        self.setting = setting
        self.limit = setting.start
        self.clock = clock
        self._cond = threading.Condition()
        self.in_flight = 0
        self.peak_in_flight = 0
        self.peak_limit = setting.start
        self.cuts = 0
        self._slow_start = True
        self._credit = 0
        self._demand = False  # the limit was reached since the last growth: more would be used
        self._cut_at = -1e9
        self._cut_for_s = 0.0

    def acquire(self) -> float:
        """Wait for a slot; the seconds waited (queueing inside our client)."""
        started = self.clock()
        with self._cond:
            while self.in_flight >= self.limit:
                self._demand = True
                self._cond.wait()
            self.in_flight += 1
            if self.in_flight >= self.limit:
                self._demand = True
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return max(0.0, self.clock() - started)

    def release(self, *, overloaded: bool = False, seconds: float = 0.0) -> None:
        """Give the slot back; `overloaded`: the server said 429/503 or did not answer in time;
        `seconds`: how long that request took (the cooldown before another cut)."""
        with self._cond:
            self.in_flight -= 1
            if self.setting.adaptive:
                self._adapt(overloaded, seconds)
            self._cond.notify_all()

    def _adapt(self, overloaded: bool, seconds: float) -> None:
        now = self.clock()
        if overloaded:
            self._slow_start = False
            self._credit = 0
            if now - self._cut_at >= self._cut_for_s:
                self.limit = max(1, self.limit // 2)
                self.cuts += 1
                self._cut_at, self._cut_for_s = now, max(seconds, 0.05)
            return
        if not self._demand or self.limit >= self.setting.maximum:
            return
        self._credit += 1
        if self._slow_start or self._credit >= self.limit:
            self.limit += 1
            self._credit = 0
            self._demand = False
            self.peak_limit = max(self.peak_limit, self.limit)


@dataclass(frozen=True)
class Reply:
    document: dict[str, Any]
    queue_ms: float  # waiting for a slot inside our client (all attempts)
    attempts: int


def load_httpx() -> Any:
    """httpx without its command line: its `__init__` imports `httpx._main` for the `httpx` console
    script, which pulls in click, rich and pygments where they are installed (~90 ms a process);
    it catches the ImportError a None entry in sys.modules raises and defines a stand-in `main`."""
    if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]
        try:
            import httpx
        finally:
            sys.modules.pop("httpx._main", None)  # an explicit `import httpx._main` later still works
    import httpx

    return httpx


def checked_timing(timeout: Any, retries: Any, backoff: Any) -> tuple[float, int, float]:
    """timeout= (seconds above 0), retries= (0 or more) and backoff= (seconds, 0 or more) as given,
    or a ValueError naming the option: a spec is refused before any request, never clamped."""
    try:
        seconds, tries, pause = float(timeout), int(retries), float(backoff)
    except (TypeError, ValueError):
        raise ValueError(
            f"timeout={timeout!r}, retries={retries!r}, backoff={backoff!r}: numbers (retries a whole one)"
        ) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"timeout={timeout!r}: seconds above 0 (a request's limit)")
    if tries < 0:
        raise ValueError(f"retries={retries!r}: 0 or more")
    if not math.isfinite(pause) or pause < 0:
        raise ValueError(f"backoff={backoff!r}: seconds, 0 or more")
    return seconds, tries, pause


class HttpClient:
    """JSON requests to one or more base URLs (round-robin; each xdist worker starts at its own)."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 1.0,
        concurrency: ConcurrencySetting | None = None,
        api_key_env: str | None = None,
        start: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        httpx = load_httpx()
        if not urls:
            raise ValueError("base_url is empty")
        self.urls = list(urls)
        begin = start % len(self.urls)
        self._next_url = itertools.cycle(self.urls[begin:] + self.urls[:begin])
        self._url_lock = threading.Lock()
        self.timeout, self.retries, self.backoff = checked_timing(timeout, retries, backoff)
        self.concurrency = concurrency or ConcurrencySetting(4, 4, False)
        self.limiter = Limiter(self.concurrency)
        self.api_key_env = api_key_env or None
        register_env(self.api_key_env)  # before the first request: an echoed key is masked everywhere
        self.sleep = sleep
        self.refused: str | None = None  # a 401/403's message: the client sends nothing more
        self.refused_status: int | None = None
        self._stats_lock = threading.Lock()
        self.requests = 0
        self.retried = 0
        self.overloads = 0
        size = self.concurrency.maximum
        self._http = httpx.Client(
            timeout=httpx.Timeout(self.timeout),
            # a slot of the limiter always finds a connection: the pool never queues on its own
            limits=httpx.Limits(max_connections=size + 4, max_keepalive_connections=size + 4),
            trust_env=False,  # a proxy from the environment must not see a loopback or in-house server
            # No TLS to set up when every URL is plain http (loading the CA bundle costs each process
            # ~0.3 s); redirects are not followed, so no request can reach an https URL unverified.
            verify=any(not url.lower().startswith("http://") for url in self.urls),
            follow_redirects=False,
        )

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.api_key_env:
            headers["Authorization"] = "Bearer " + os.environ.get(self.api_key_env, "")
        return headers

    def _url(self) -> str:
        with self._url_lock:
            return next(self._next_url)

    def request(
        self,
        path: str,
        body: dict[str, Any] | None = None,
        verbatim: Mapping[str, bytes] | None = None,
        *,
        root: bool = False,
        retries: int | None = None,
        timeout: float | None = None,
    ) -> Reply:
        """One JSON request with retries; the decoded JSON object, or ServerError. `verbatim`: as
        `json_bytes` takes it; `root`: `path` is under the server's root, not the base URL (vLLM's
        /version); `retries` and `timeout` override the client's for this request (probes)."""
        data = None if body is None else json_bytes(body, verbatim)
        headers = self._headers()
        if data is not None:
            headers["Content-Type"] = "application/json"
        problem = ""
        last_status, last_detail = None, ""
        queued = 0.0
        attempts = self.retries if retries is None else max(0, retries)
        limit = self.timeout if timeout is None else float(timeout)
        for attempt in range(attempts + 1):
            if self.refused is not None:  # a 401/403 before: nothing more is sent
                raise AuthError(self.refused, status=self.refused_status)
            meter = budget.current()
            if meter is not None and data is not None:  # a model call (a GET for /models is metadata)
                meter.send_http()  # BudgetSpent past --grounding-budget requests=N: nothing more is sent
            base = self._url()
            url = (server_root(base) if root else base) + path
            wait = self.backoff * (2**attempt)
            queued += self.limiter.acquire()
            started = time.monotonic()
            overloaded = False
            try:
                status, raw, retry_after = self._exchange(url, data, headers, limit)
            except TimeoutError as exc:
                overloaded = True
                raise ServerError(f"no answer from {public_url(url)} within {limit:g} s") from exc
            except ConnectionError as exc:
                problem = str(exc)
            else:
                if status < 300:
                    return Reply(_json_object(raw, url), queue_ms=queued * 1000.0, attempts=attempt + 1)
                detail = redact(raw[:4096].decode("utf-8", "replace"))[:300]  # redact, then cut
                if 300 <= status < 400:
                    raise ServerError(
                        f"HTTP {status} from {public_url(url)}: a redirect, not followed (point base_url= at "
                        "the server's OpenAI path itself, e.g. http://host:8000/v1)",
                        status=status,
                    )
                problem = f"HTTP {status} from {public_url(url)}: {detail}"
                last_status, last_detail = status, detail
                if status in AUTH_STATUS:
                    self.refused, self.refused_status = (
                        f"{problem} (the key in ${self.api_key_env or '<none: api_key_env= not set>'} was refused; "
                        "nothing more is sent to this server)",
                        status,
                    )
                    raise AuthError(self.refused, status=status, detail=detail)
                if status not in RETRY_STATUS:
                    raise ServerError(problem, status=status, detail=detail)
                if status in OVERLOAD_STATUS:
                    overloaded = True
                    wait = max(wait, retry_after_s(retry_after))
            finally:
                self.limiter.release(overloaded=overloaded, seconds=time.monotonic() - started)
                with self._stats_lock:
                    self.requests += 1
                    self.overloads += overloaded
            if attempt < attempts:
                with self._stats_lock:
                    self.retried += 1
                self.sleep(wait)  # outside the slot: a backing-off request holds no place in flight
        raise ServerError(f"{problem} (after {attempts + 1} attempts)", status=last_status, detail=last_detail)

    def _exchange(
        self, url: str, data: bytes | None, headers: dict[str, str], limit: float
    ) -> tuple[int, bytes, str | None]:
        """Status, body and Retry-After of one request that ends within `limit` seconds in all:
        the body is read as it arrives and the request is cut at the deadline (httpx's timeout
        bounds each read only). TimeoutError past the deadline; ConnectionError when the
        connection fails."""
        import httpcore  # httpx's transport: installed with it

        httpx = load_httpx()
        deadline = time.monotonic() + limit
        try:
            with self._http.stream(
                "GET" if data is None else "POST", url, content=data, headers=headers, timeout=httpx.Timeout(limit)
            ) as response:
                chunks = []
                size = 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"over {limit:g} s")
                    if size > MAX_BODY_BYTES:
                        raise ConnectionError(f"{public_url(url)} sent more than {MAX_BODY_BYTES} bytes: cut")
                return response.status_code, b"".join(chunks), response.headers.get("Retry-After")
        except (httpx.TimeoutException, httpcore.TimeoutException) as exc:
            # httpcore's own timeout can escape httpx's mapping while a slow body is read
            raise TimeoutError(str(exc)) from exc
        except httpx.ConnectError as exc:
            raise ConnectionError(f"cannot reach {public_url(url)}: {exc}") from exc
        except httpx.TransportError as exc:
            raise ConnectionError(f"connection to {public_url(url)} failed: {type(exc).__name__}: {exc}") from exc

    def stats(self) -> dict[str, Any]:
        """What the run report shows: the concurrency reached, the retries and the overloads."""
        limiter = self.limiter
        with self._stats_lock:
            return {
                "concurrency": str(self.concurrency),
                "concurrency_reached": limiter.peak_in_flight,
                "limit_now": limiter.limit,
                "limit_peak": limiter.peak_limit,
                "requests": self.requests,
                "retries": self.retried,
                "overloads": self.overloads,  # 429/503/timeouts
                "cuts": limiter.cuts,
            }

    def close(self) -> None:
        self._http.close()


def json_bytes(body: dict[str, Any], verbatim: Mapping[str, bytes] | None = None) -> bytes:
    """The body as JSON, `json.dumps`'s bytes. Each string of the body that is a key of
    `verbatim` is written as that key's bytes, which the caller vouches are a JSON string's
    content as they are (a base64 data URL: no quote, backslash or control character). A screen's
    data URL is megabytes: json would scan and copy it for every request while holding the GIL
    (6 ms for 1.5 MB); spliced in, it is one copy (0.1 ms)."""
    data = json.dumps(body).encode()
    for key, value in (verbatim or {}).items():
        parts = data.split(json.dumps(key).encode())  # the key in quotes: whole strings only
        pieces = [parts[0]]
        for part in parts[1:]:
            pieces += (b'"', value, b'"', part)
        data = b"".join(pieces)
    return data


def _json_object(raw: bytes, url: str) -> dict[str, Any]:
    from ..core import safejson

    try:  # the bounded reader every file goes through: nesting 100,000 deep is refused, never a RecursionError
        document = safejson.loads(raw, max_chars=MAX_BODY_BYTES)
    except safejson.TooDeep:
        raise ServerError(f"{public_url(url)} answered JSON nested too deeply to read (a hostile body)") from None
    except ValueError as exc:
        if isinstance(exc, safejson.TooLarge):
            raise ServerError(f"{public_url(url)} answered JSON the reader refuses: {exc}") from None
        raise ServerError(f"{public_url(url)} answered with something that is not JSON: {_clip(raw, 200)}") from None
    if not isinstance(document, dict):
        raise ServerError(f"{public_url(url)} answered JSON that is not an object: {_clip(raw, 200)}")
    return document


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises the 3xx as an HTTPError


def url_opener() -> urllib.request.OpenerDirector:
    """urllib's opener for the plain-HTTP probes and clients (preflight, OmniParser's selector, the
    server's health check): redirects not followed, as HttpClient does not follow them."""
    return urllib.request.build_opener(_NoRedirect)


def read_bounded(reply: Any, limit: int = MAX_BODY_BYTES) -> bytes:
    """At most `limit` bytes of a urllib reply; ConnectionError past it."""
    chunks: list[bytes] = []
    total = 0
    while True:  # in chunks: memory follows the body, never the limit
        chunk: bytes = reply.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise ConnectionError(f"the server sent more than {limit} bytes: cut")
    return b"".join(chunks)


def _clip(raw: bytes, limit: int) -> str:
    """A body's start for an error text: redacted before it is cut (a cut key would not match)."""
    return repr(redact(raw[:4096].decode("utf-8", "replace"))[:limit])


def chat_text(client: HttpClient, model: str, messages: list[dict[str, Any]], **fields: Any) -> str:
    """The text of a chat completion (content parts joined; "" when there is none)."""
    answer = completion_content(
        client.request("/chat/completions", {"model": model, "messages": messages, **fields}).document
    )
    return redact(answer) if isinstance(answer, str) else ""


def first_model(client: HttpClient) -> str:
    """The first model the server lists at /models."""
    listing = client.request("/models").document
    try:
        return str(listing["data"][0]["id"])
    except (KeyError, IndexError, TypeError):
        raise ServerError(
            f"no model= given and the server lists none at /models: {redact(repr(listing))[:200]}"
        ) from None


REASONING_FIELDS = ("reasoning", "reasoning_content")  # vLLM 0.3x; SGLang and llama.cpp
ANSWER_FROM = ("content", "reasoning-if-empty")
THINK_END = "</think>"


def answer_from_option(value: Any, detector: str) -> str:
    """`answer_from=`: content (the default) or reasoning-if-empty."""
    chosen = "content" if value in (None, "") else str(value).strip().lower()
    if chosen not in ANSWER_FROM:
        raise ValueError(f"{detector}: answer_from={value!r}: one of {', '.join(ANSWER_FROM)}")
    return chosen


@dataclass(frozen=True)
class Answer:
    """What a chat completion answered, where the engine put it: `text` is what is parsed (the
    content, or the reasoning field's text with answer_from=reasoning-if-empty and no content);
    `reasoning_field` and `reasoning_chars`: the reasoning field that held text and its length
    (vLLM 0.3x `message.reasoning`, SGLang and llama.cpp `message.reasoning_content`);
    `think_in_content`: the content held a `</think>` (the reasoning parser left it there)."""

    text: Any
    reasoning_field: str | None = None
    reasoning_chars: int = 0
    think_in_content: bool = False
    from_reasoning: bool = False

    def meta(self) -> dict[str, Any]:
        """The prediction's meta fields (none for a plain answer)."""
        out: dict[str, Any] = {}
        if self.reasoning_field:
            out["reasoning_field"] = self.reasoning_field
            out["reasoning_chars"] = self.reasoning_chars
        if self.think_in_content:
            out["think_in_content"] = True
        if self.from_reasoning:
            out["answer_from"] = "reasoning"
        return out


def _text_of(value: Any) -> str | None:
    if isinstance(value, list):  # content parts: only text parts that are text
        return "".join(part["text"] for part in value if isinstance(part, dict) and isinstance(part.get("text"), str))
    return value if isinstance(value, str) else None


def completion_answer(document: dict[str, Any], answer_from: str = "content") -> Answer:
    """The first choice's answer with its reasoning field read (`Answer`), or ServerError."""
    content = completion_content(document)
    message = document["choices"][0]["message"]
    field, reasoning = None, None
    if isinstance(message, dict):
        for name in REASONING_FIELDS:
            text = _text_of(message.get(name))
            if text and text.strip():
                field, reasoning = name, text
                break
    text = _text_of(content)
    think = bool(text) and THINK_END in str(text)
    empty = text is None or not text.strip()
    if answer_from == "reasoning-if-empty" and empty and reasoning is not None:
        return Answer(reasoning, field, len(reasoning), think, True)
    return Answer(content, field, len(reasoning or ""), think, False)


def completion_content(document: dict[str, Any]) -> Any:
    """The first choice's message content (content parts joined), or ServerError."""
    try:
        answer = document["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ServerError(f"not a chat completion: {redact(json.dumps(document))[:300]}") from None
    if isinstance(answer, list):  # content parts
        # only text parts that are text: a number or an object there is no answer, never a TypeError
        answer = "".join(
            part["text"] for part in answer if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return answer
