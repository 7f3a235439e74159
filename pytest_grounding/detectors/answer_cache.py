"""--grounding-cache DIR: model answers kept across runs, for the served (`openai` and everything
built on it) and in-process VLM detectors (`qwenvl`, `uitars`).

The key is a digest of everything that decides the answer: the model and its revision (served: the
model name with the engine and its version as served_engine.py records them; in-process: the hub id
and resolved commit, dtype, device kind, torch and transformers), the preset's name and the exact
request (the image as sent, after preprocessing, by its digest; the whole prompt; the decoding
settings; the epoch and the seed). Only complete answers are kept: an error raises before anything
is stored, and an answer the engine cut (finish_reason "length") is never stored.

The store itself (files, written atomically) is store/answers.py; the pool hands it to a
detector that has an `answer_cache` attribute. Here: the keys and the look-up around a request.
A stored answer is parsed again on every hit, so a parser fix applies to cached answers too."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..core.record import CACHE_META, CacheUse

KEY_VERSION = 1  # part of every key: a change in what a key covers makes every old entry a miss
# The prediction's meta says what the cache did for it (core.record.CacheUse)
META = CACHE_META
HIT = CacheUse.HIT.value
STORED = CacheUse.STORED.value
NOT_STORED = CacheUse.NOT_STORED.value


class AnswerStore(Protocol):
    """What a detector uses of the store (store/answers.py): never raises."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, entry: Mapping[str, Any]) -> bool: ...


@runtime_checkable
class KeepsAnswers(Protocol):
    """A detector whose model answers the run may keep (--grounding-cache): the pool hands it the
    run's store once, before its first sample. Declared, so the pool never guesses from attributes."""

    def use_answer_store(self, store: AnswerStore) -> None: ...


def digest(parts: Mapping[str, Any]) -> str:
    """The key of a request: SHA-256 of its parts as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps({"key_version": KEY_VERSION, **parts}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- served ----------------------------------------------------------------------------------------


def sent_image(source: str, preprocess: Any, frame: Any, resized: bool) -> dict[str, Any]:
    """The image a served request carries, named without encoding it: the screen's digest
    (encoding.image_digest) and the deterministic preprocessing that makes the pixels sent (its
    parameters, the frame, whether it resizes, and the Pillow that resizes and writes the PNG)."""
    from PIL import __version__ as pillow

    return {
        "source": source,
        "preprocess": preprocess.describe() if resized else "original",
        "size": list(frame.model) if resized else list(frame.original),
        "pillow": pillow,
    }


def served_key(
    body: Mapping[str, Any],
    placeholder: str,
    image: Mapping[str, Any],
    *,
    engine: Any,
    preset: str,
    root: Any = None,
    endpoint: Any = None,
) -> str:
    """A chat-completions request's key: the body as sent (model, messages, every decoding field,
    the seed) with the image's description where its data URL goes, the engine and its version, the
    preset, and the base URL(s) it is sent to (without credentials; None: the vllm detector's own)."""
    return digest(
        {
            "kind": "served",
            "endpoint": endpoint,
            "engine": getattr(engine, "name", None),
            "engine_version": getattr(engine, "version", None),
            "weights": root,  # vLLM's `root`: the folder or hub id the served name stands for
            "preset": preset,
            "request": json.dumps(body, sort_keys=True, separators=(",", ":")).replace(placeholder, "<image>"),
            "image": image,
        }
    )


def storable_completion(document: Mapping[str, Any]) -> bool:
    """A chat completion worth keeping: a text answer the engine finished (not cut at max_tokens)."""
    try:
        choice = document["choices"][0]
        content = choice["message"]["content"]
        finish = choice.get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return False
    return isinstance(content, str) and finish != "length"


@dataclass(frozen=True)
class Completion:
    """A chat completion as the detector reads it: from the server or from the store."""

    document: dict[str, Any]
    queue_ms: float = 0.0
    attempts: int = 0  # requests sent for it (0: it came from the store)
    cache: str | None = None  # HIT, STORED, NOT_STORED (a write failed) or None (not cached)


def cached_completion(store: AnswerStore | None, key: str | None, send: Callable[[], Any]) -> Completion:
    """The completion for a request: the store's when it holds the key, else `send()`'s (an
    http.Reply), stored when complete. An error raises from `send` before anything is stored."""
    if store is not None and key is not None:
        entry = store.get(key)
        document = entry.get("completion") if entry is not None else None
        if isinstance(document, dict) and storable_completion(document):
            return Completion(document, cache=HIT)
    reply = send()
    use = None
    if store is not None and key is not None and storable_completion(reply.document):
        use = STORED if store.put(key, {"completion": _kept(reply.document)}) else NOT_STORED
    return Completion(reply.document, reply.queue_ms, reply.attempts, use)


def _kept(document: Mapping[str, Any]) -> dict[str, Any]:
    """What a completion keeps: the first choice and the usage (ids and timestamps vary run to run)."""
    kept: dict[str, Any] = {"choices": [document["choices"][0]]}
    if isinstance(document.get("usage"), dict):
        kept["usage"] = document["usage"]
    return kept


# -- in-process ------------------------------------------------------------------------------------


def inprocess_identity(detector: Any) -> dict[str, Any]:
    """What decides an in-process model's answers besides the request: the weights (hub id and
    commit, or the folder), the numerics (dtype, device kind, attention) and the libraries."""
    from importlib import metadata

    source = detector.source
    versions: dict[str, str | None] = {}
    for name in ("torch", "transformers"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "kind": "in-process",
        "detector": detector.name,
        "model": source.repo_id or str(source.folder),
        "commit": source.commit,
        "dtype": detector.dtype,
        "device": str(detector.device).split(":")[0],
        "attn": detector.attn,
        **versions,
    }


def inprocess_key(identity: Mapping[str, Any], preset: Any, text: str, image: Any, epoch: int | None) -> str:
    """An in-process request's key: the model's identity, the templated prompt, the resized
    image's pixels, the preset's decoding and the epoch."""
    pixels = hashlib.sha256(image.tobytes())
    pixels.update(f"{image.mode}:{image.size[0]}x{image.size[1]}".encode())
    return digest(
        {
            **identity,
            "preset": preset.name,
            "decoding": repr(preset.decoding),
            "prompt": text,
            "image": "sha256:" + pixels.hexdigest(),
            "epoch": epoch,
        }
    )


def generated_entry(answer: str, prompt_tokens: int, new_tokens: int, seen: tuple[int, int]) -> dict[str, Any]:
    return {"generated": {"answer": answer, "prompt_tokens": prompt_tokens, "new_tokens": new_tokens, "seen": seen}}


def generated_of(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The stored generation of an entry, checked field by field (anything else: a miss)."""
    found = entry.get("generated") if entry is not None else None
    if not isinstance(found, dict):
        return None
    seen = found.get("seen")
    counts = (found.get("prompt_tokens"), found.get("new_tokens"))
    if not isinstance(found.get("answer"), str) or not all(_count(v) for v in counts):
        return None
    if not (isinstance(seen, list) and len(seen) == 2 and all(_count(v) for v in seen)):
        return None
    return {**found, "seen": (int(seen[0]), int(seen[1]))}


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
