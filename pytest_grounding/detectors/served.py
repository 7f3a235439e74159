"""The `openai` detector: any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, TGI, a
hosted API), prompted and parsed by a preset (`pytest_grounding.detectors.vlm`; UI-TARS-1.5's grounding
prompt by default), so a vLLM serving UI-TARS-1.5-7B scores as `uitars` in-process does.

HTTP through the shared client (`detectors.http`: httpx, retries, timeouts, N requests in flight).
A server that is down, a 5xx or 429 after the retries, a timeout or a body that is not a chat
completion RAISES: the harness records an error, never a miss. The API key is read from the
environment variable named by `api_key_env`; it is never printed, described or written anywhere."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.redact import redact
from ..core.types import Prediction, Query
from . import answer_cache as cache_keys
from . import batch_files
from .devices import worker_index
from .encoding import EncodingCache, data_url, data_url_bytes, image_digest, screens_for
from .http import (
    RETRY_STATUS,
    URL_SEPARATOR,
    ConcurrencySetting,
    HttpClient,
    ServerError,
    answer_from_option,
    chat_text,
    completion_answer,
    completion_content,
    first_model,
    json_bytes,
    public_url,
    split_urls,
)
from .hub import ModelUnavailable
from .served_agent import ServedAgent
from .served_budget import server_budget, within_budget
from .served_checks import (
    PROBE_INSTRUCTION,
    PROBE_SIZE,
    PROBE_TOKENS,
    ServerCheck,
    check_key,
    checked,
    context_shortfall,
    image_tokens,
    judge_screen,
    probe_fields,
    prompt_need,
    resize_fix,
)
from .served_engine import fingerprint_version, probe_engine
from .vlm.agent import take_agent_options
from .vlm.formats import in_format, own_format
from .vlm.preset import Decoding, preset_headline
from .vlm.presets import DEFAULT_PRESET, resolve_preset, served_pick
from .vlm.prompts import openai_messages

BASE_URL_ENV = "PYTEST_GROUNDING_OPENAI_BASE_URL"
# Stands for the screen's data URL in a body until it is written (`http.json_bytes`); random, so
# no instruction or prompt can contain it.
IMAGE_PLACEHOLDER = "pytest-grounding-image-" + secrets.token_hex(16)

__all__ = [
    "BASE_URL_ENV",
    "RETRY_STATUS",
    "URL_SEPARATOR",
    "OpenAIDetector",
    "ServerError",
    "data_url",
    "decoding_fields",
    "public_url",
    "split_urls",
]


def cache_endpoint(urls: Sequence[str], root: Any, by_endpoint: bool) -> list[str] | None:
    """The base URL(s) an answer's key holds: none where the engine names the weights it serves (vLLM's
    `root`, llama-server's `model_path`: the same model restarted on another port, a new pod, answers
    from the cache), the URLs (without credentials) where it names nothing (two servers that describe
    themselves alike are not one model), none for a detector that keys its own launch (`vllm:`)."""
    if not by_endpoint or (isinstance(root, str) and root.strip()):
        return None
    return sorted(public_url(u) for u in urls)


class OpenAIDetector:
    """Options (``--detector openai:key=value,...``):

    - ``base_url`` (else $PYTEST_GROUNDING_OPENAI_BASE_URL): e.g. http://127.0.0.1:8000/v1; several
      separated by ``|`` (quote it in the shell), used round-robin, each xdist worker starting at its own.
    - ``model``: the served model name (default: the first one the server lists at /models).
    - ``api_key_env``: the NAME of the environment variable holding the key (none: no Authorization).
    - ``timeout`` (120 s per request), ``retries`` (3, on connection errors, 429 and 5xx), ``backoff``
      (1 s, doubled each retry; a 429's or 503's Retry-After is honoured up to 60 s).
    - ``concurrency``: requests in flight per process (per xdist worker): a number, or ``auto``
      (the default: starts at 8, grows while the server keeps up, halves on 429 / 503 / timeouts,
      never beyond ``max_concurrency``, 32 by default). The run prefetches that many samples ahead.
    - ``preset`` and its part overrides, as for ``uitars``: no default (vlm/matching.py): none given or
      ``preset=auto`` picks it by the model id and the headline says so; an id no preset matches stops
      the run; ``resize`` (true) sends the
      image at the preset's smart_resize size (false: the original, the server resizes it the same way).
    - ``probe`` (true): one small request when the detector is built finds a refused key or request
      field, the engine and the prompt's size before the run (served_checks.py); false sends none.
    - ``too_long``: ``stop`` (the default) ends the run before it starts when a sample's prompt cannot
      fit the server's context; ``error`` runs the samples that fit and records the others as errors
      without sending them.
    - ``answer_from``: ``content`` (the default) parses the message's ``content`` only;
      ``reasoning-if-empty`` reads an empty ``content`` from the reasoning field (vLLM's
      ``reasoning``, SGLang's and llama.cpp's ``reasoning_content``), and the report counts those
      answers. Either way each record keeps the reasoning's length and whether ``content`` held a
      ``</think>``; an empty or unreadable answer beside a reasoning text is an ``answer_in_reasoning`` miss.
    """

    name = "openai"
    answer_formats = True  # --grounding-perturb format: asked in the Query's answer_format (vlm/formats.py)
    frame_check = True  # the frame check before a run (detectors/frame_check.py)
    answer_cache: cache_keys.AnswerStore | None = None  # --grounding-cache: use_answer_store() sets it
    # The endpoint is part of an answer's key: two servers that describe themselves alike (same
    # engine, model name, no version) are not one model. The vllm detector's own server has a new
    # port each start; its key names what it launches instead.
    endpoint_in_cache_key = True

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        preset: str | None = None,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 1.0,
        concurrency: int | str = "auto",
        max_concurrency: int | None = None,
        resize: bool = True,
        server_max_pixels: int | None = None,
        probe: bool = True,
        too_long: str = "stop",
        answer_from: str = "content",
        **overrides: Any,
    ) -> None:
        self.answer_from = answer_from_option(answer_from, self.name)
        setting = take_agent_options(self.name, overrides)  # agent=crop (issue 39); None: a single shot
        self.agent = ServedAgent(self, *setting) if setting else None
        chosen = served_pick(self.name, preset, None)  # None: the model id picks it, below
        resolve_preset(chosen.name if chosen else DEFAULT_PRESET, **overrides)  # bad options: before any request
        self.batch = batch_files.writing()  # --grounding-batch-out: requests written, no server asked
        urls = base_url or os.environ.get(BASE_URL_ENV) or (OFFLINE_URL if self.batch else None)
        if not urls:
            raise ValueError(f"openai needs base_url=URL (or ${BASE_URL_ENV}), e.g. http://127.0.0.1:8000/v1")
        try:
            self.urls = split_urls(urls)
        except ValueError as exc:
            raise ValueError(f"openai: {exc}") from None
        if not self.urls:
            raise ValueError("openai: base_url is empty")
        self.worker = worker_index()
        self.setting = ConcurrencySetting.parse(concurrency, max_concurrency)
        self.resize = resize if isinstance(resize, bool) else str(resize).lower() in ("1", "true", "yes", "on")
        self.api_key_env = api_key_env or None
        if self.api_key_env and not os.environ.get(self.api_key_env):
            raise ValueError(f"openai: api_key_env={self.api_key_env} but that environment variable is not set")
        self.client = HttpClient(
            self.urls,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            concurrency=self.setting,
            api_key_env=self.api_key_env,
            start=self.worker or 0,
        )
        self.screens = EncodingCache()
        if str(too_long) not in TOO_LONG:
            raise ValueError(f"openai: too_long={too_long!r}: one of {', '.join(TOO_LONG)}")
        self.too_long = str(too_long)
        if self.batch is not None and self.agent is not None:
            raise ValueError("openai: --grounding-batch-out writes single requests; agent=crop holds a conversation")
        if self.batch is not None and not model:
            raise ValueError(
                "openai: --grounding-batch-out writes the requests without asking a server: give model=NAME "
                "(the name the batch engine serves) and preset=NAME"
            )
        self.model = model or self._first_model()
        self.preset_pick = chosen or served_pick(self.name, preset, self.model)
        # never more pixels than the server's processor keeps as they are (served_budget.py)
        self.pixel_budget = server_budget(resolve_preset(self.preset_pick.name, **overrides), server_max_pixels)
        self.preset = within_budget(resolve_preset(self.preset_pick.name, **overrides), self.pixel_budget)
        self.preset_options = {k: v for k, v in overrides.items()}  # the preset's parts (a batch manifest)
        self.fields = decoding_fields(self.preset.decoding)
        self.check = ServerCheck() if self.batch is not None else self._check_server(_flag(probe))
        self.fields = {k: v for k, v in self.fields.items() if k not in self.check.dropped}

    @property
    def concurrency(self) -> int:
        """How many predictions the run may start ahead (the pipeline's window): the limit now."""
        return 1 if self.batch is not None else self.client.limiter.limit

    @property
    def timeout(self) -> float:
        return self.client.timeout

    # -- HTTP -------------------------------------------------------------------------------------
    def _request(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One JSON request with retries; the decoded JSON object, or ServerError."""
        return self.client.request(path, body).document

    def _first_model(self) -> str:
        return first_model(self.client)

    def _check_server(self, probe: bool) -> ServerCheck:
        """What the probe finds (served_checks.py), once per server, model and preset in a run."""
        key = check_key(self.urls, self.model, self.preset.describe(), self.fields)
        if not probe:
            return checked(key + "#engine", lambda: ServerCheck(engine=probe_engine(self.client, self.model)))

        def run_probe() -> ServerCheck:
            engine = probe_engine(self.client, self.model)
            dropped, detail, answer = probe_fields(
                self._send_probe,
                self.fields,
                self.preset.decoding,
                preset=self.preset.name,
                where=public_url(self.urls[0]),
            )
            usage = answer.get("usage") if isinstance(answer, dict) else None
            prompt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
            fingerprint = answer.get("system_fingerprint") if isinstance(answer, dict) else None
            if engine.name == "vllm" and not engine.version and isinstance(fingerprint, str):
                engine = replace(engine, version=fingerprint_version(fingerprint))
            return ServerCheck(
                engine=engine,
                dropped=dropped,
                refused_detail=detail,
                prompt_tokens=prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None,
                probe_image_tokens=image_tokens(self.preset.preprocess, PROBE_SIZE) if self.resize else None,
                probed=answer is not None,
            )

        return checked(key, run_probe)

    def _send_probe(self, omitted: Any, size: tuple[int, int] = PROBE_SIZE) -> dict[str, Any]:
        """The probe: a blank screen, the preset's prompt and fields less `omitted`, a few tokens."""
        from PIL import Image

        query = Query(Image.new("RGB", size, (128, 128, 128)), PROBE_INSTRUCTION)
        fields = {k: v for k, v in self.fields.items() if k not in omitted}
        body, url, _ = self._body_and_frame(query, fields={**fields, "max_tokens": PROBE_TOKENS})
        return self.client.request("/chat/completions", body, verbatim={IMAGE_PLACEHOLDER: url}, retries=0).document

    # -- detector ---------------------------------------------------------------------------------
    def request_body(self, query: Query) -> dict[str, Any]:
        """The chat-completions request for a query (image at the preset's size)."""
        body, url, _ = self._body_and_frame(query)
        return json.loads(json_bytes(body, {IMAGE_PLACEHOLDER: url}))

    def batch_request(self, query: Query) -> tuple[dict[str, Any], Any]:
        """--grounding-batch-out: the body `predict` would send for this query (the same builder,
        the image inline as its data URL, an epoch's seed) and the frame it is sent in."""
        body, url, frame = self._body_and_frame(query)
        return json.loads(json_bytes(self._seeded(body, query), {IMAGE_PLACEHOLDER: url})), frame

    def batch_manifest(self) -> dict[str, Any]:
        """What a batch replay needs to decode the results as this detector would (the manifest's `detector`)."""
        return {
            "name": self.name,
            "model": self.model,
            "preset_name": self.preset.name,
            "preset_options": {k: str(v) for k, v in self.preset_options.items()},
            "pixel_budget": self.pixel_budget,
            "resize": self.resize,
            "fields": dict(self.fields),
            "preset": self.preset.describe(),
        }

    def _screen(self, image: Any) -> tuple[tuple[bytes, Any], float]:
        """The data URL sent (ASCII bytes) and the frame (model size) of a screen, resized and
        encoded once; and the seconds spent waiting for another sample's encoding of the same screen."""

        def encode() -> tuple[bytes, Any]:
            resized, frame = self.preset.preprocess.apply(image)
            return data_url_bytes(resized if self.resize else image), frame

        cache, key = screens_for(image, self.screens, (type(self.preset.preprocess), self.preset.preprocess))
        return cache.get_timed((key, self.resize), encode)

    def _body_and_frame(self, query: Query, waits: list[float] | None = None, fields: dict[str, Any] | None = None):
        """The body with `IMAGE_PLACEHOLDER` where the image goes, the screen's data URL, its frame."""
        (url, frame), waited = self._screen(query.image)
        if waits is not None:
            waits.append(waited)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(query, frame),
            **(self.fields if fields is None else fields),
        }
        return body, url, frame

    def chat(self, messages: list[dict[str, Any]], *, max_tokens: int = 1024, temperature: float = 0.0) -> str:
        """The text of a chat completion for any messages, through this client's retries, timeout
        and key."""
        return chat_text(self.client, self.model, messages, max_tokens=max_tokens, temperature=temperature)

    def use_answer_store(self, store: cache_keys.AnswerStore) -> None:
        """--grounding-cache: answers are looked up and kept in `store` (detectors/answer_cache.KeepsAnswers)."""
        self.answer_cache = store

    def predict(self, query: Query) -> Prediction:
        waits: list[float] = []
        if self.too_long == "error":
            self._refuse_if_too_long(query)
        if self.agent is not None and query.answer_format is not None:
            raise ValueError("agent=crop asks in its own tools' format: --grounding-perturb format is for single shots")
        if self.agent is not None:  # agent=crop: the model asks for crops over several turns (not cached)
            return self.agent.predict(query)
        frame = self.preset.preprocess.frame(query.image.size)  # the frame alone: a cached answer needs no encoding
        reply = cache_keys.cached_completion(
            self.answer_cache, self._cache_key(query, frame), lambda: self._send(query, waits)
        )
        meta: dict[str, Any] = {"pixel_budget": self.pixel_budget}
        if reply.cache:
            meta[cache_keys.META] = reply.cache
        queue_ms = reply.queue_ms + 1000.0 * sum(waits)
        if queue_ms >= 0.05:  # a place in flight, another sample's encoding: the runner takes it out of the latency
            meta["queue_ms"] = round(queue_ms, 3)
        if reply.attempts > 1:
            meta["http_attempts"] = reply.attempts  # retries included (429, 5xx, connection)
        meta["asked_format"] = query.answer_format or own_format(self.preset)
        return decode_reply(self._preset_for(query), reply.document, frame, meta, self.answer_from)

    def _preset_for(self, query: Query) -> Any:
        """The preset, or (--grounding-perturb format) the preset asked in the query's format."""
        if query.answer_format is None:
            return self.preset
        return in_format(self.preset, query.answer_format)

    def _send(self, query: Query, waits: list[float]) -> Any:
        body, url, _ = self._body_and_frame(query, waits)
        return self.client.request("/chat/completions", self._seeded(body, query), verbatim={IMAGE_PLACEHOLDER: url})

    @staticmethod
    def _seeded(body: dict[str, Any], query: Query) -> dict[str, Any]:
        """--grounding-epochs: each epoch its own sampling seed."""
        return body if query.epoch is None else {**body, "seed": query.epoch}

    def _cache_key(self, query: Query, frame: Any) -> str | None:
        """--grounding-cache: this request's key (detectors/answer_cache.py), None without a cache.
        The image sent is named by the screen's digest and the preprocessing that makes it (the
        same pixels, without resizing and encoding the screen again)."""
        if self.answer_cache is None:
            return None
        body = {"model": self.model, "messages": self._messages(query, frame), **self.fields}
        if query.epoch is not None:
            body["seed"] = query.epoch
        image = cache_keys.sent_image(image_digest(query.image), self.preset.preprocess, frame, self.resize)
        engine = self.check.engine
        root = engine.settings.get("root") or engine.settings.get("model_path")  # the weights behind the name
        endpoint = cache_endpoint(self.urls, root, self.endpoint_in_cache_key)
        return cache_keys.served_key(
            body, IMAGE_PLACEHOLDER, image, engine=engine, preset=self.preset.name, root=root, endpoint=endpoint
        )

    def _messages(self, query: Query, frame: Any) -> list[dict[str, Any]]:
        prompt = self._preset_for(query).prompt
        return openai_messages(prompt.messages(query.instruction, frame.model), IMAGE_PLACEHOLDER)

    def _refuse_if_too_long(self, query: Query) -> None:
        """too_long=error: a prompt the server's context cannot hold is an error, not a request."""
        context = self.check.engine.max_model_len
        need = prompt_need(
            self.check, self.preset.preprocess, query.image.size, query.instruction, self.preset.decoding.max_new_tokens
        )
        if context and need and need > context:
            raise ServerError(
                f"not sent: this screen's prompt needs about {need:,} tokens with the answer's "
                f"{self.preset.decoding.max_new_tokens}, and the server's context is {context:,} (too_long=error)"
            )

    def check_screen(self, size: tuple[int, int]) -> str:
        """The server's image tokens for a blank screen of `size` (the run's largest) against the
        preset's frame, through the probe's, judged (served_checks.judge_screen): one message when
        the server resized it; one note (returned) when its counts cannot be used or it enlarged
        only the small probe. Nothing when the probe told nothing or the screens' tokens do not differ."""
        check = self.check
        expected = image_tokens(self.preset.preprocess, size)
        if not check.probed or check.prompt_tokens is None or check.probe_image_tokens is None or expected is None:
            return ""
        if abs(expected - check.probe_image_tokens) <= 4:
            return ""
        prompt = self._probe_prompt(size)
        judged = judge_screen(check, self.preset.preprocess, size, prompt, self._probe_prompt)
        resized = judged.resized
        if resized is None or prompt is None:
            return judged.note
        p = self.preset.preprocess
        factor = int(getattr(p, "factor", 28))
        min_tokens = getattr(p, "min_pixels", 0) // (factor * factor) or None
        fw, fh = resized.frame
        raise ModelUnavailable(
            f"{self.name}: the server {'shrank' if resized.shrunk else 'enlarged'} the screen behind the harness's "
            f"back: the run's largest screen ({size[0]}x{size[1]}), sent as {fw}x{fh} ({resized.expected:,} image "
            f"tokens in preset {self.preset.name}'s frame), took about {resized.seen:,} image tokens on the server, "
            "so its clicks would be in a frame the harness does not know",
            f"{check.engine.headline} at {public_url(self.urls[0])}: prompt tokens {check.prompt_tokens:,} for the "
            f"{PROBE_SIZE[0]}x{PROBE_SIZE[1]} probe ({check.probe_image_tokens:,} image tokens), {prompt:,} for "
            "this screen",
            resize_fix(check.engine.name, resized, min_tokens, factor) + " (probe=false skips this check)",
        )

    def _probe_prompt(self, size: tuple[int, int]) -> int | None:
        """The prompt tokens the server counts for a blank screen of `size` (None: it failed or did not say)."""
        try:
            answer = self._send_probe(self.check.dropped, size)
        except ServerError:
            return None  # a server that fails on a large screen: the run's records say it
        usage = answer.get("usage") if isinstance(answer, dict) else None
        prompt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None

    @classmethod
    def check_samples(cls, samples: Any, **options: Any) -> list[str]:
        """Before the run (the controller), each one message: the server resized the run's largest
        screen (`check_screen`), or a sample's prompt cannot fit the server's context (unless
        too_long=error). `samples`: (id, (width, height), instruction). Returns the notes for the
        report (the server's token counts cannot be used: the checks are skipped, the run goes on)."""
        samples = list(samples)
        if batch_files.writing() is not None:
            return []  # --grounding-batch-out: no server to check
        detector = cls(**options)
        notes: list[str] = []
        try:
            p = detector.preset
            sizes = [size for _, size, _ in samples]
            if sizes:
                note = detector.check_screen(max(sizes, key=lambda size: image_tokens(p.preprocess, size) or 0))
                if note:
                    notes.append(f"{cls.name}: {note}")
            if str(options.get("too_long", "stop")) != "stop" or "cannot be used" in "".join(notes):
                return notes
            short = context_shortfall(detector.check, p.preprocess, p.decoding.max_new_tokens, samples)
        finally:
            detector.close()
        if short is not None:
            raise ModelUnavailable(
                f"{cls.name}: {short.over} sample(s) need more tokens than the server's context holds: the "
                f"largest prompt needs about {short.largest_need:,} tokens (image, text and "
                f"{p.decoding.max_new_tokens} for the answer), the server has {short.context:,} (first: {short.first})",
                f"{detector.check.engine.headline} at {public_url(detector.urls[0])}",
                f"restart the server with a larger context "
                f"({_larger_context(detector.check.engine, short.largest_need)}), "
                "lower the preset's max_pixels, or pass too_long=error to run the samples that fit",
            )
        return notes

    def describe(self) -> dict[str, Any]:
        p = self.preset
        urls = [public_url(u) for u in self.urls]
        where = urls[0] if len(urls) == 1 else f"{len(urls)} servers ({urls[0]}, ...)"
        engine = self.check.engine
        left_out = f", left out: {', '.join(self.check.dropped)} (the server refuses it)" if self.check.dropped else ""
        served = f"at {where} ({engine.headline})"
        if self.batch is not None:
            served = f"requests written to {self.batch.path}, not sent"
        return {
            "headline": f"{self.model} {served}, {preset_headline(p)}{self.preset_pick.note}"
            f"{left_out}"
            + (f", concurrency {self.setting}" if self.batch is None else "")
            + (f", {self.agent.headline()}" if self.agent else ""),
            "engine": engine.describe(),
            "agent": self.agent.describe() if self.agent else None,
            "dropped_fields": list(self.check.dropped),
            "answer_from": self.answer_from,
            "thinking": p.decoding.thinking,  # the chat template's switch sent (None: the template's default)
            "notes": self.check.notes(p.name),
            "base_urls": urls,
            "model": self.model,
            "preset": p.describe(),
            "image": f"{p.preprocess.kind} PNG" if self.resize else "original PNG",
            "api_key_env": self.api_key_env,  # the variable's name, never its value
            "server_max_pixels": self.pixel_budget,
            "timeout_s": self.client.timeout,
            "retries": self.client.retries,
            "backoff_s": self.client.backoff,
            "concurrency": str(self.setting),
            "xdist_worker": None if self.worker is None else f"gw{self.worker}",
        }

    def served_stats(self) -> dict[str, Any]:
        """Read at the end of the run into the report: the concurrency reached, retries, cuts."""
        return {**self.client.stats(), "screens_encoded": self.screens.misses, "screens_reused": self.screens.hits}

    def close(self) -> None:
        self.client.close()


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
    if decoding.chat_template_kwargs:
        fields["chat_template_kwargs"] = dict(decoding.chat_template_kwargs)
    return fields


def decode_reply(
    preset: Any, document: Any, frame: Any, meta: dict[str, Any], answer_from: str = "content"
) -> Prediction:
    """A chat completion to a prediction in `frame`: the answer's text (keys redacted; `answer_from`
    says whether an empty content is read from the reasoning field), truncation, usage, then the
    preset's parse. Live answers and a batch engine's results (batch_files.py) both come through
    here, so the same answer gives the same record."""
    document = document if isinstance(document, dict) else {}
    found = completion_answer(document, answer_from)
    answer = redact(found.text)
    meta = {"model_image": list(frame.model), **meta, **found.meta()}
    if _finish_reason(document) == "length":  # the engine stopped it at max_tokens or the context's end
        meta["truncated"] = True
    usage = document.get("usage")
    if isinstance(usage, dict):
        meta["usage"] = {k: v for k, v in usage.items() if isinstance(v, (int, float))}
    return preset.parse(answer if isinstance(answer, str) else None, frame, meta)


def offline_preset(name: str, options: Mapping[str, Any], pixel_budget: Any) -> Any:
    """The preset a served detector built from these options (a batch manifest's), without a server."""
    budget = int(pixel_budget) if isinstance(pixel_budget, int) else None
    return within_budget(resolve_preset(name, **dict(options)), budget)


_content = completion_content
TOO_LONG = ("stop", "error")
OFFLINE_URL = "http://batch-requests.invalid/v1"  # --grounding-batch-out: never asked


def _finish_reason(document: dict[str, Any]) -> Any:
    try:
        return document["choices"][0].get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def _flag(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


def _larger_context(engine: Any, need: int) -> str:
    """How to give one request `need` tokens: vLLM's flag; llama-server's `-c`, which its `-np` slots
    share (each slot holds `-c` / `-np`: the server's slot count named where it reports it)."""
    each = _round_up(need)
    slots = engine.settings.get("total_slots") if engine.name == "llamacpp" else None
    if isinstance(slots, int) and not isinstance(slots, bool) and slots > 1:
        llama = (
            f"llama-server: -c {each * slots} -np {slots}, as -c is shared by its {slots} slots "
            f"(each holds {engine.max_model_len or 0:,} now), or -c {each} -np 1"
        )
    else:
        llama = f"llama-server: -c is shared by its -np slots, each needs {each}: -c {each} -np 1"
    return f"vLLM: --max-model-len {each}; {llama}"


def _round_up(tokens: int) -> int:
    """A context size to suggest: the need rounded up to a multiple of 1,024."""
    return -(-tokens // 1024) * 1024
