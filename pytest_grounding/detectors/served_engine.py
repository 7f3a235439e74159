"""Which engine answers behind an OpenAI-compatible URL, its version and the settings it reports:
the record every served report carries, since engine versions move grounding scores by tens of
points. Asked once per server when a served detector is built (three small GETs, no retries):

- vLLM: `GET /version` ({"version": "0.32.0"}) and `/v1/models` (`owned_by: "vllm"`,
  `max_model_len`, `root`: the weights' folder or hub id);
- SGLang: `GET /get_server_info` (`version`, `context_length`, the server's arguments);
- `transformers serve`: `/v1/models` only (`owned_by: "local"` with a `status` object); it reports
  no version;
- llama.cpp's `llama-server`: `/v1/models` entries `owned_by: "llamacpp"`, then `GET /props`
  (`build_info` such as "b11434-...", `modalities.vision`, a slot's `n_ctx` (what one request
  holds: `-c` shared by the `-np` slots), `model_path`, `total_slots`);
- Ollama: `GET /api/version` ({"version": "0.12.6"});
- LM Studio: `GET /api/v0/models` (its REST API: `type` "vlm", `arch`, `compatibility_type` gguf or
  mlx, `quantization`, `state`, `max_context_length`); it reports no version there;
- anything else: "unknown", with what `/v1/models` said.

The parsing is pure (`engine_from`); `probe_engine` does the requests, each only where the ones
before it did not tell the engine (a hosted API gets at most five 404s)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.redact import redact

PROBE_TIMEOUT_S = 5.0
UNKNOWN = "unknown"
# SGLang's /get_server_info holds every server argument; these are the ones that move answers.
SGLANG_SETTINGS = (
    "model_path",
    "served_model_name",
    "context_length",
    "dtype",
    "tp_size",
    "dp_size",
    "mem_fraction_static",
    "reasoning_parser",  # issue 56: which parser moves text out of content (None: none runs)
)
# llama-server's /props: what moves answers or says what was loaded
LLAMACPP_SETTINGS = ("model_path", "model_alias", "model_ftype", "total_slots", "reasoning_format")
# LM Studio's /api/v0/models entry
LMSTUDIO_SETTINGS = ("type", "arch", "compatibility_type", "quantization", "state", "publisher")
ENGINE_NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "transformers": "transformers serve",
    "llamacpp": "llama.cpp",
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
    UNKNOWN: "unknown engine",
}
# the GETs at the server's root, in the order probe_engine may ask them
ENGINE_PATHS = ("/version", "/get_server_info", "/props", "/api/version", "/api/v0/models")


@dataclass(frozen=True)
class EngineInfo:
    """The engine behind a base URL, as it describes itself."""

    name: str = UNKNOWN  # vllm | sglang | transformers | llamacpp | ollama | lmstudio | unknown
    version: str | None = None
    max_model_len: int | None = None  # the context the server holds, prompt and answer together
    settings: Mapping[str, Any] = field(default_factory=dict)  # what else it reports (root, dtype, ...)

    @property
    def headline(self) -> str:
        """`vLLM 0.32.0, context 16,384` / `transformers serve (version not reported)`."""
        words = ENGINE_NAMES.get(self.name, self.name)
        words += f" {self.version}" if self.version else (" (version not reported)" if self.name != UNKNOWN else "")
        if self.max_model_len:
            words += f", context {self.max_model_len:,}"
        parser = self.settings.get("reasoning_parser") or self.settings.get("reasoning_format")
        if isinstance(parser, str) and parser and parser != "none":
            words += f", reasoning parser {parser}"
        return words

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "max_model_len": self.max_model_len,
            "settings": dict(self.settings),
            "headline": self.headline,
        }


def engine_from(
    models: Mapping[str, Any] | None,
    model: str | None,
    version: Mapping[str, Any] | None = None,
    server_info: Mapping[str, Any] | None = None,
    fingerprint: str | None = None,
    props: Mapping[str, Any] | None = None,
    ollama: Mapping[str, Any] | None = None,
    lmstudio: Mapping[str, Any] | None = None,
) -> EngineInfo:
    """The engine from what its endpoints answered (None: that endpoint did not answer JSON):
    `/v1/models`, vLLM's `/version`, SGLang's `/get_server_info`, llama-server's `/props`,
    Ollama's `/api/version`, LM Studio's `/api/v0/models`."""
    entry = _model_entry(models, model)
    owner = str(entry.get("owned_by") or "").lower()
    settings: dict[str, Any] = {k: _plain(entry[k]) for k in ("id", "root", "owned_by") if entry.get(k) is not None}
    if owner == "llamacpp" or (isinstance(props, Mapping) and "build_info" in props):
        return _llamacpp(props if isinstance(props, Mapping) else {}, entry, settings)
    if isinstance(server_info, Mapping) and ("version" in server_info or "model_path" in server_info):
        settings.update({k: _plain(server_info[k]) for k in SGLANG_SETTINGS if server_info.get(k) is not None})
        return EngineInfo(
            "sglang",
            _text(server_info.get("version")),
            _count(server_info.get("context_length")) or _count(entry.get("max_model_len")),
            settings,
        )
    if owner == "vllm" or (isinstance(version, Mapping) and "version" in version and owner != "sglang"):
        named = _text(version.get("version")) if isinstance(version, Mapping) else None
        return EngineInfo(
            "vllm", named or fingerprint_version(fingerprint), _count(entry.get("max_model_len")), settings
        )
    if owner == "local" and isinstance(entry.get("status"), Mapping):
        return EngineInfo("transformers", None, None, settings)
    if owner == "sglang":
        return EngineInfo("sglang", None, _count(entry.get("max_model_len")), settings)
    if isinstance(ollama, Mapping) and ollama.get("version"):
        return EngineInfo("ollama", _text(ollama.get("version")), None, settings)
    listed = _model_entry(lmstudio, model)
    if listed.get("compatibility_type") or listed.get("arch"):
        settings.update({k: _plain(listed[k]) for k in LMSTUDIO_SETTINGS if listed.get(k) is not None})
        # max_context_length is what the model supports; the loaded context is not listed here
        settings["max_context_length"] = _count(listed.get("max_context_length"))
        return EngineInfo("lmstudio", None, None, settings)
    return EngineInfo(UNKNOWN, None, _count(entry.get("max_model_len")), settings)


def _llamacpp(props: Mapping[str, Any], entry: Mapping[str, Any], settings: dict[str, Any]) -> EngineInfo:
    """llama-server: the build from /props (`b11434-...`, also every answer's system_fingerprint),
    the slot's context (what one request may hold), whether a projector serves images. `-c` is the
    context of all the `-np` slots together unless the KV cache is unified (`-c 8192 -np 4`: 2,048
    tokens a slot, rounded up to a multiple of 256): the server does that division itself and reports
    its outcome, a slot's `n_ctx`, in /props' `default_generation_settings` (slot 0's settings) and in
    /models' `meta.n_ctx` (tools/server/server-context.cpp: both are `n_ctx_slot()`). That is the
    context the check holds a prompt against; it is never divided again (a unified cache's slot may
    hold the whole `-c`)."""
    generation = props.get("default_generation_settings")
    meta = entry.get("meta")
    context = _count(generation.get("n_ctx")) if isinstance(generation, Mapping) else None
    if context is None and isinstance(meta, Mapping):
        context = _count(meta.get("n_ctx"))
    settings.update({k: _plain(props[k]) for k in LLAMACPP_SETTINGS if props.get(k) is not None})
    modalities = props.get("modalities")
    if isinstance(modalities, Mapping) and isinstance(modalities.get("vision"), bool):
        settings["vision"] = modalities["vision"]
    if isinstance(meta, Mapping) and _count(meta.get("n_ctx_train")):
        settings["n_ctx_train"] = meta["n_ctx_train"]
    return EngineInfo("llamacpp", _text(props.get("build_info")), context, settings)


def probe_engine(client: Any, model: str | None, models: Mapping[str, Any] | None = None) -> EngineInfo:
    """Ask the server (the first base URL) what it is: never raises, "unknown" when it says nothing."""
    from .http import ServerError

    def get(path: str, root: bool) -> Mapping[str, Any] | None:
        try:
            return client.request(path, root=root, retries=0, timeout=PROBE_TIMEOUT_S).document
        except ServerError:
            return None

    listing = models if models is not None else get("/models", False)
    owner = str(_model_entry(listing, model).get("owned_by") or "").lower()
    if owner == "llamacpp":
        return engine_from(listing, model, props=get("/props", True))
    version = get("/version", True)
    info = None if version is not None else get("/get_server_info", True)
    known = version is not None or info is not None or owner in ("vllm", "sglang", "local")
    ollama = None if known else get("/api/version", True)
    lmstudio = None if known or ollama is not None else get("/api/v0/models", True)
    return engine_from(listing, model, version, info, ollama=ollama, lmstudio=lmstudio)


def _model_entry(models: Mapping[str, Any] | None, model: str | None) -> Mapping[str, Any]:
    data = models.get("data") if isinstance(models, Mapping) else None
    entries = [e for e in data if isinstance(e, Mapping)] if isinstance(data, list) else []
    return next((e for e in entries if e.get("id") == model), entries[0] if entries else {})


def fingerprint_version(fingerprint: str | None) -> str | None:
    """vLLM's `system_fingerprint` is `vllm-0.32.0-13abd795`."""
    if fingerprint and fingerprint.startswith("vllm-"):
        return fingerprint.split("-")[1] or None
    return None


def _text(value: Any) -> str | None:
    return redact(str(value))[:80] if isinstance(value, (str, int, float)) and str(value) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**9 else None


def _plain(value: Any) -> Any:
    """Settings as the report writes them: short texts and numbers only (a server is untrusted)."""
    if isinstance(value, bool) or (isinstance(value, (int, float)) and abs(value) < 10**15):
        return value
    return redact(str(value))[:200]
