"""A detector's identity: what decides its answers and how they are judged (issue 49). One notion
shared by `merge` (shards of one detector merge into one), the board (one row per identity) and
the answer cache (whose keys cover the same parts: detectors/answer_cache.py).

What is in it: the detector spec without its transport options (where the server is, how many
requests are in flight, how long to wait, how often to retry: `TRANSPORT`), the model, the
preset, the serving engine with its version, the weights (a hub commit, or the checkpoint a server
loaded), the strategies around the detector, and the scoring profile. Two runs that reached one
model through different endpoints or with another concurrency have one identity; another model,
another engine version or other weights do not.

Pure: a spec and the detector's describe() (a report's run.detectors entry) in; no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Spec options that say how to reach a model, not which model answers (served.py's and vllm's).
TRANSPORT = frozenset(
    {
        "base_url",
        "concurrency",
        "max_concurrency",
        "timeout",
        "retries",
        "backoff",
        "api_key_env",
        "probe",
        "port",
        "startup_timeout",
    }
)


@dataclass(frozen=True, order=True)
class Identity:
    detector: str  # the spec without its transport options
    model: str = ""
    preset: str = ""
    engine: str = ""  # the engine's name and version, as the served detector's probe recorded them
    weights: str = ""
    strategy: str = ""
    scoring: str = "pixel"

    def differences(self, other: Identity) -> list[str]:
        """`engine 'vllm 0.11' against 'vllm 0.12'`: each part that differs, named."""
        names = ("detector", "model", "preset", "engine", "weights", "strategy", "scoring")
        return [
            f"{name} {getattr(self, name)!r} against {getattr(other, name)!r}"
            for name in names
            if getattr(self, name) != getattr(other, name)
        ]


def split_options(rest: str, spec: str) -> list[str]:
    """`a=1,b='x, y'` -> ["a=1", "b='x, y'"]: a value that starts with a quote runs to the same
    quote (server_args='--flag {"a":1,"b":2}'); a quote elsewhere is an ordinary character."""
    items, start, i = [], 0, 0
    while i < len(rest):
        char = rest[i]
        if char == ",":
            items.append(rest[start:i])
            start = i + 1
        elif char in "'\"" and rest[start:i].strip().endswith("=") and rest[start:i].count("=") == 1:
            end = rest.find(char, i + 1)
            if end < 0:
                raise ValueError(
                    f"detector option {rest[start:].strip()!r} in {spec!r}: its quote {char} is not closed"
                )
            i = end
        i += 1
    items.append(rest[start:])
    return items


# The display name a spec may carry (`center:label=floor`, issue 51): taken off the spec when the
# run's settings are read (split_label), so records, baselines, resume files and the answer cache
# key on the spec without it; the run record keeps it (run.detectors[spec].label).
LABEL = "label"


def split_label(spec: str) -> tuple[str, str | None]:
    """`ocr:label=fast,lang=en+zoom` -> ("ocr:lang=en+zoom", "fast"): the label may stand in any
    part of a strategy chain, once. ValueError for an empty, unprintable or repeated label."""
    parts, label = [], None
    for part in spec.split("+"):
        name, sep, rest = part.partition(":")
        if not sep:
            parts.append(part)
            continue
        kept = []
        for item in split_options(rest, spec):
            key, _, value = item.partition("=")
            if key.strip() != LABEL:
                kept.append(item)
                continue
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1].strip()
            if label is not None:
                raise ValueError(f"detector spec {spec!r} has two labels ({label!r}, {value!r}): give one")
            if not value or not value.isprintable():
                raise ValueError(f"detector spec {spec!r}: label= needs a printable, non-empty name")
            label = value
        parts.append(f"{name}:{','.join(kept)}" if any(item.strip() for item in kept) else name)
    return ("+".join(parts), label) if label is not None else (spec, None)


def display_name(spec: str, info: Mapping[str, Any] | None) -> str:
    """The name people read for a detector: its label where the run gave one (`info`: its
    run.detectors entry or its summary block), else its short name (short_name)."""
    label = info.get(LABEL) if isinstance(info, Mapping) else None
    return str(label) if label else short_name(spec, info)


def short_name(spec: str, info: Mapping[str, Any] | None = None) -> str:
    """A served detector by its model and host (issue 61): `openai:base_url=http://127.0.0.1:8765/v1,preset=x`
    -> `uitars-1.5-point@127.0.0.1:8765 preset=x` (the model as the server named it, from `info`,
    else the spec's `model=`, else the detector's name), with the options that change answers
    after it; a strategy chain keeps its other parts (`...+zoom`). Any other spec is itself."""
    parts = spec.split("+")
    name, sep, rest = parts[0].partition(":")
    if not sep:
        return spec
    try:
        items = split_options(rest, spec)
    except ValueError:
        return spec
    options = {item.partition("=")[0].strip(): item.partition("=")[2].strip() for item in items if "=" in item}
    base_url = options.get("base_url", "").strip("'\"")
    if not base_url:
        return spec
    from urllib.parse import urlsplit

    host = urlsplit(base_url if "//" in base_url else f"//{base_url}").netloc or base_url
    model = found(info, ("model",)) if isinstance(info, Mapping) else None
    model = str(model) if isinstance(model, str) and model else options.get("model", "").strip("'\"") or name
    model = model.rstrip("/").rsplit("/", 1)[-1] or model
    kept = [i.strip() for i in items if i.partition("=")[0].strip() not in TRANSPORT | {LABEL, "model"} and i.strip()]
    head = f"{model}@{host}" + (f" {','.join(kept)}" if kept else "")
    return "+".join([head, *parts[1:]])


def without_transport(spec: str) -> str:
    """The spec with its transport options left out, each part of a strategy chain (`a+zoom:...`)
    on its own; a part that cannot be read stays as it is."""
    parts = []
    for part in spec.split("+"):
        name, sep, rest = part.partition(":")
        if not sep:
            parts.append(part)
            continue
        try:
            items = split_options(rest, spec)
        except ValueError:
            parts.append(part)
            continue
        dropped = TRANSPORT | {LABEL}  # a label names the detector for people; it never changes answers
        kept = [item for item in items if item.strip() and item.partition("=")[0].strip() not in dropped]
        parts.append(f"{name}:{','.join(kept)}" if kept else name)
    return "+".join(parts)


def found(info: Any, keys: tuple[str, ...]) -> Any:
    """The first of `keys` in a detector's description or in any description it wraps (`inner`)."""
    while isinstance(info, Mapping):
        for key in keys:
            value = info.get(key)
            if value not in (None, "", {}):
                return value
        info = info.get("inner")
    return None


def engine_of(info: Mapping[str, Any]) -> str:
    engine = found(info, ("engine",))
    if isinstance(engine, Mapping) and engine.get("name"):
        return " ".join(str(engine[k]) for k in ("name", "version") if engine.get(k))
    return ""


def weights_of(info: Mapping[str, Any]) -> str:
    """The model's commit or revision where the detector recorded one (hub models; a served
    engine's `root`, the checkpoint the server loaded)."""
    commit = found(info, ("model_commit", "model_revision"))
    if commit:
        return str(commit)
    engine = found(info, ("engine",))
    settings = engine.get("settings") if isinstance(engine, Mapping) else None
    root = settings.get("root") if isinstance(settings, Mapping) else None
    return str(root) if root else ""


def strategy_of(info: Mapping[str, Any]) -> str:
    """zoom around screenseeker around ...: the outermost first."""
    strategies = []
    level: Any = info
    while isinstance(level, Mapping):
        if level.get("strategy"):
            given = level.get("options")
            options: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
            said = ",".join(f"{k}={v}" for k, v in options.items())
            strategies.append(f"{level['strategy']}({said})" if said else str(level["strategy"]))
        level = level.get("inner")
    return " > ".join(strategies)


def identity_of(spec: str, info: Mapping[str, Any], scoring: str = "pixel") -> Identity:
    """A detector's identity from its spec and its describe() as a report records it."""
    preset = found(info, ("preset",))
    preset_name = str(preset.get("name", "")) if isinstance(preset, Mapping) else str(preset or "")
    model = found(info, ("model",))
    return Identity(
        detector=without_transport(spec),
        model=str(model) if isinstance(model, (str, int, float)) else "",
        preset=preset_name,
        engine=engine_of(info),
        weights=weights_of(info),
        strategy=strategy_of(info),
        scoring=scoring,
    )
