"""Presets: a model prompted and decoded as its authors do, composed from named parts (prompt,
preprocessing, extractors, coordinate transform, decoding, refusal form). Both VLM detectors take
`preset=NAME` and any part as an override option (`resolve_preset`).

The shipped presets live in `library.py`; a project adds its own with `register_preset` (from the
`pytest_grounding_register_presets` hook in conftest.py) or a TOML file (`presets_from_toml`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...core import safefile, safejson
from ...core.registry import Registry
from . import prompts
from .library import PRESETS
from .parse import check_parts
from .preprocess import PREPROCESSORS, Capped, Preprocess, SmartResize, make_preprocess
from .preset import Decoding, Preset

_PROJECT: dict[str, Preset] = {}  # presets a project registered (conftest hook, TOML file)
PRESETS_FILE_LIMIT = 16 << 20  # bytes: a file of thousands of presets fits many times


def register_preset(preset: Preset, *, origin: str | None = None) -> None:
    """Add (or replace) a preset by its name; its parts are checked now, not at the first sample."""
    check_parts(preset.extractors, preset.transform, preset.refusal)
    _PROJECT[preset.name] = replace(preset, origin=origin) if origin else preset


def unregister_project_presets() -> None:
    _PROJECT.clear()


class ProjectPresets:
    """What the `pytest_grounding_register_presets` hook receives: `registry.register(Preset(...))`,
    or `registry.register("mine", base="qwen2.5-vl", max_pixels=2_000_000)` (parts as options)."""

    def register(self, preset: Preset | str, *, base: str | None = None, **parts: Any) -> Preset:
        if isinstance(preset, str):
            if base is None:
                raise ValueError(f"preset {preset!r}: register(name, base=PRESET, **parts) or register(Preset(...))")
            preset = replace(resolve_preset(base, **parts), name=preset, notes=f"based on {base}")
        register_preset(preset, origin="conftest")
        return preset

    def load_toml(self, path: str | Path) -> list[Preset]:
        presets = presets_from_toml(path)
        for preset in presets:
            register_preset(preset)
        return presets


def all_presets() -> dict[str, Preset]:
    presets = {preset.name: preset for preset in PRESETS}
    presets.update(_PROJECT)
    return presets


def preset_registry() -> Registry:
    registry = Registry("preset")
    for preset in all_presets().values():
        registry.register(preset.name, lambda preset=preset: preset, help=f"{preset.family}: {preset.source}")
    return registry


def get_preset(name: str) -> Preset:
    return preset_registry().get(name).load()()


DEFAULT_PRESET = "uitars-1.5-point"  # the in-process uitars detector's; a served model names its own


def served_pick(detector: str, preset: str | None, model: str | None) -> Any:
    """The preset a served detector uses (vlm/matching.py: named, or picked by the model id; a
    usage error when no preset matches); None until the model id is known."""
    from .matching import pick

    presets = all_presets()
    project = {name for name, p in presets.items() if p.origin != "built-in"}
    return pick(detector, preset, model, list(presets), project)


def presets_listing() -> str:
    """Every preset: name, family, coordinate system, then its source on the next line."""
    presets = list(all_presets().values())
    width = max(len(p.name) for p in presets)
    family = max(len(p.family) for p in presets)
    lines = [f"{'preset':<{width}}  {'family':<{family}}  coordinates", ""]
    for preset in presets:
        origin = "" if preset.origin == "built-in" else f" [{preset.origin}]"
        lines.append(f"{preset.name:<{width}}  {preset.family:<{family}}  {preset.coordinates}{origin}")
        lines.append(f"{'':<{width}}  source: {preset.source}")
    return "\n".join(lines) + "\n"


# Options that override one part of a preset (detector options are strings or numbers).
PROMPT_OVERRIDES = ("prompt", "system", "order", "lead", "strip", "image_first")
PREPROCESS_OVERRIDES = ("preprocess", "factor", "min_pixels", "max_pixels", "width", "height", "max_edge", "max_side")
DECODING_OVERRIDES = (
    "max_new_tokens",
    "temperature",
    "top_p",
    "top_k",
    "frequency_penalty",
    "stop",
    "skip_special_tokens",
    "greedy",
    "thinking",
)
OVERRIDES = (*PROMPT_OVERRIDES, *PREPROCESS_OVERRIDES, "extractors", "transform", "refusal", *DECODING_OVERRIDES)


def resolve_preset(name: str = DEFAULT_PRESET, **overrides: Any) -> Preset:
    """The named preset with the given parts replaced. `extractors` and `transform` chain with `+`
    (`yx_swap+rel1000`), `prompt` holds `{instruction}`, `refusal=none` drops the refusal form,
    `preprocess=KIND` switches the kind (its parameters from the same options), `stop` is `a;b`
    (special tokens hold `|`), `greedy=true` forces temperature 0 (`greedy=false` without a
    temperature samples at 1.0)."""
    unknown = sorted(set(overrides) - set(OVERRIDES))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(unknown)}; preset parts: {', '.join(OVERRIDES)}")
    return apply_overrides(get_preset(name), {k: v for k, v in overrides.items() if v is not None})


def apply_overrides(preset: Preset, given: Mapping[str, Any]) -> Preset:
    changes: dict[str, Any] = {}
    prompt_parts: dict[str, Any] = {k: given[k] for k in ("system", "order", "lead", "strip") if k in given}
    if "prompt" in given:
        prompt_parts["user"] = str(given["prompt"])
    if "image_first" in given:
        prompt_parts["order"] = "image,text" if as_bool(given["image_first"], "image_first") else "text,image"
    if prompt_parts:
        changes["prompt"] = replace(preset.prompt, **prompt_parts)
    preprocess = capped_preprocess(preset.preprocess, given)
    if preprocess is not preset.preprocess:
        changes["preprocess"] = preprocess
    decoding = _decoding(preset.decoding, given)
    if decoding != preset.decoding:
        changes["decoding"] = decoding
    if "extractors" in given:
        changes["extractors"] = tuple(filter(None, str(given["extractors"]).split("+")))
    if "transform" in given:
        changes["transform"] = str(given["transform"])
    if "refusal" in given:
        changes["refusal"] = None if str(given["refusal"]).lower() == "none" else str(given["refusal"])
    resolved = replace(preset, **changes) if changes else preset
    check_parts(resolved.extractors, resolved.transform, resolved.refusal)
    return resolved


def capped_preprocess(current: Preprocess, given: Mapping[str, Any]) -> Preprocess:
    """`max_side` (any preset), and `max_pixels` where the preprocessing has no such parameter of its
    own, put the preset's preprocessing behind a provider's frame (`Capped`: shrink first, map back)."""
    inner = current.inner if isinstance(current, Capped) else current
    cap = {"max_side": current.max_side, "max_pixels": current.max_pixels} if isinstance(current, Capped) else {}
    given = dict(given)
    kind = str(given.get("preprocess", inner.kind))
    if "max_side" in given:
        cap["max_side"] = int(given.pop("max_side"))
    if "max_pixels" in given and "max_pixels" not in getattr(PREPROCESSORS.get(kind), "__dataclass_fields__", {}):
        cap["max_pixels"] = int(given.pop("max_pixels"))
    new_inner = _preprocess(inner, given)
    if not any(cap.values()):
        return new_inner
    caps = (cap.get("max_side", 0), cap.get("max_pixels", 0))
    if isinstance(current, Capped) and new_inner is inner and (current.max_side, current.max_pixels) == caps:
        return current
    if isinstance(new_inner, Capped):  # preprocess=KIND never builds one; for the type checker
        new_inner = new_inner.inner
    return Capped(new_inner, max_side=caps[0], max_pixels=caps[1])


def _preprocess(current: Preprocess, given: Mapping[str, Any]) -> Preprocess:
    params = {k: given[k] for k in PREPROCESS_OVERRIDES if k in given and k != "preprocess"}
    kind = str(given.get("preprocess", current.kind))
    if kind == current.kind:
        if not params:
            return current
        merged = {**{k: v for k, v in current.describe().items() if k != "kind"}, **params}
        return make_preprocess(kind, **merged)
    return make_preprocess(kind, **params)


def _decoding(current: Decoding, given: Mapping[str, Any]) -> Decoding:
    parts: dict[str, Any] = {}
    for key, convert in (
        ("max_new_tokens", int),
        ("top_k", int),
        ("top_p", float),
        ("frequency_penalty", float),
        ("temperature", float),
    ):
        if key in given:
            try:
                parts[key] = convert(given[key])
            except (TypeError, ValueError):
                kind = "a whole number" if convert is int else "a number"
                raise ValueError(f"decoding: {key}={given[key]!r} must be {kind}") from None
    if "stop" in given:
        value = given["stop"]
        parts["stop"] = tuple(value) if isinstance(value, (list, tuple)) else tuple(filter(None, str(value).split(";")))
    if "skip_special_tokens" in given:
        parts["skip_special_tokens"] = as_bool(given["skip_special_tokens"], "skip_special_tokens")
    if "thinking" in given:  # issue 56: the chat template's thinking switch, as the engines take it
        parts["chat_template_kwargs"] = with_thinking(
            current.chat_template_kwargs, as_bool(given["thinking"], "thinking")
        )
    if "greedy" in given:
        if as_bool(given["greedy"], "greedy"):
            parts["temperature"] = 0.0
        elif float(parts.get("temperature", current.temperature)) == 0:
            parts["temperature"] = 1.0
    return replace(current, **parts) if parts else current


def with_thinking(kwargs: tuple[tuple[str, bool], ...], on: bool) -> tuple[tuple[str, bool], ...]:
    """The chat template's switches with thinking on or off: the preset's own key where it has one
    (Holo's `thinking`, Qwen3's `enable_thinking`), else `enable_thinking` (Qwen3, GLM, DeepSeek
    templates). vLLM, SGLang and llama-server all take them as the request's `chat_template_kwargs`."""
    keys = [key for key, _ in kwargs if key in THINKING_KEYS]
    key = keys[0] if keys else "enable_thinking"
    return (*((k, v) for k, v in kwargs if k != key), (key, on))


THINKING_KEYS = ("enable_thinking", "thinking")


def as_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be true or false, not {value!r}")


def split_overrides(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Detector options -> (preset overrides, the rest)."""
    parts = {k: v for k, v in options.items() if k in OVERRIDES}
    return parts, {k: v for k, v in options.items() if k not in OVERRIDES}


# -- presets from a TOML file -------------------------------------------------------------------
TOML_KEYS = {
    "base",
    "family",
    "source",
    "notes",
    "prompt",
    "system",
    "order",
    "lead",
    "strip",
    "preprocess",
    "extractors",
    "transform",
    "refusal",
    "decoding",
}


def presets_from_toml(path: str | Path) -> list[Preset]:
    """`[presets.NAME]` tables: `base` (a preset to start from) or every part; `preprocess` and
    `decoding` are tables (`{kind = "smart_resize", factor = 28, ...}`), `extractors` a list.
    A file that cannot be read or a table that is not a preset raises ValueError naming it."""
    import importlib

    tomllib: Any = None
    for module in ("tomllib", "tomli"):  # tomllib from Python 3.11; tomli before
        try:
            tomllib = importlib.import_module(module)
            break
        except ImportError:
            continue
    if tomllib is None:
        raise ValueError(f"presets file {path}: reading TOML on Python 3.10 needs tomli (pip install tomli)")

    path = Path(path)
    try:
        document = tomllib.loads(safefile.read_text(path, limit=PRESETS_FILE_LIMIT))
        safejson.check_values(document)  # the JSON reader's bounds: depth, digits, inf and nan
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise ValueError(f"presets file {path}: nested too deeply to read") from None
    except (OSError, ValueError) as exc:  # TOMLDecodeError, UnicodeDecodeError and FileTooLarge too
        raise ValueError(f"presets file {path}: {exc}") from None
    tables = document.get("presets")
    if not isinstance(tables, dict) or not tables:
        raise ValueError(f"presets file {path}: no [presets.NAME] table")
    return [_preset_from_table(name, table, path) for name, table in tables.items()]


def _preset_from_table(name: str, table: Any, path: Path) -> Preset:
    where = f"presets file {path}, [presets.{name}]"
    if not isinstance(table, dict):
        raise ValueError(f"{where}: not a table")
    unknown = sorted(set(table) - TOML_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(TOML_KEYS))}")
    try:
        if "base" in table:
            base = get_preset(str(table["base"]))
        else:
            missing = [k for k in ("prompt", "preprocess", "extractors", "transform") if k not in table]
            if missing:
                raise ValueError(f"needs base = PRESET or {', '.join(missing)}")
            kind = dict(table["preprocess"]).get("kind", "")
            if kind not in PREPROCESSORS:
                raise ValueError(f"preprocess kind {kind!r}; known: {', '.join(PREPROCESSORS)}")
            base = Preset(name, "", prompts.Prompt(str(table["prompt"])), SmartResize(), ("paren",), "abs")
        given: dict[str, Any] = {k: table[k] for k in ("prompt", "system", "order", "lead", "strip") if k in table}
        if "preprocess" in table:
            params = dict(table["preprocess"])
            given["preprocess"] = params.pop("kind", base.preprocess.kind)
            given.update(params)
        if "extractors" in table:
            value = table["extractors"]
            given["extractors"] = "+".join(value) if isinstance(value, list) else str(value)
        for key in ("transform", "refusal"):
            if key in table:
                given[key] = table[key]
        decoding = dict(table.get("decoding", {}))
        unknown = sorted(set(decoding) - set(DECODING_OVERRIDES))
        if unknown:
            raise ValueError(f"unknown decoding key(s) {', '.join(unknown)}")
        given.update(decoding)
        if "preprocess" in given and given["preprocess"] != base.preprocess.kind:
            base = replace(base, preprocess=make_preprocess(given.pop("preprocess"), **_pop_params(given)))
        preset = apply_overrides(base, given)
    except (ValueError, TypeError, LookupError) as exc:  # LookupError: an unknown base preset
        raise ValueError(f"{where}: {exc}") from None
    return replace(
        preset,
        name=name,
        family=str(table.get("family", preset.family)),
        source=str(table.get("source", preset.source)),
        notes=str(table.get("notes", "" if "base" not in table else f"based on {table['base']}")),
        origin=str(path),
    )


def _pop_params(given: dict[str, Any]) -> dict[str, Any]:
    return {k: given.pop(k) for k in PREPROCESS_OVERRIDES if k in given and k not in ("preprocess", "max_side")}
