"""Model weights by local folder or Hugging Face hub id, resolved the way `huggingface_hub` does it:
the user's cache ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub), a download
with progress bars when online, the cache alone when $HF_HUB_OFFLINE=1, the token from the
standard places ($HF_TOKEN, the `hf auth login` file; never read or printed here). The environment
is read at each call (not at import), so a test or a conftest that sets it is obeyed.

Used by the in-process VLM detectors (`qwenvl`, `uitars`); anything that needs a checkpoint folder
can call `resolve_checkpoint`. A model that cannot be had is a `ModelUnavailable`: what was looked
for, where, and the one-line fix."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import safefile, safejson

# org/name as the hub spells it (letters, digits, '-', '_', '.'; no '..', no leading '-' or '.').
_HUB_ID = re.compile(r"^(?![.-])[A-Za-z0-9._-]{1,96}/(?![.-])[A-Za-z0-9._-]{1,96}$")
# What a transformers checkpoint needs; the rest of a repository (other weight formats, images,
# ONNX exports) is not downloaded.
ALLOW_PATTERNS = ("*.json", "*.safetensors", "*.jinja", "*.txt", "*.model", "*.tiktoken")
_TRUE = {"1", "on", "yes", "true"}
CONFIG_CHARS = 1 << 22  # a config.json or a weight index: 4 MiB of text is far more than any holds
# A checkpoint's shape as its config.json states it, bounded: transformers builds what the config
# says before it reads a weight, so a config of 10^9 layers is refused here, not allocated there.
SHAPE_LIMITS = {
    "num_hidden_layers": 1_024,
    "num_layers": 1_024,
    "depth": 1_024,
    "num_attention_heads": 4_096,
    "num_key_value_heads": 4_096,
    "hidden_size": 1 << 17,
    "intermediate_size": 1 << 19,
    "vocab_size": 1 << 22,
    "max_position_embeddings": 1 << 24,
}


class ModelUnavailable(ValueError):
    """A model that cannot be had: `what` was looked for, `where`, and `fix` (one line)."""

    def __init__(self, what: str, where: str, fix: str) -> None:
        self.what, self.where, self.fix = what, where, fix
        super().__init__(f"{what} (looked in {where}). Fix: {fix}")


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files are, and which weights they are."""

    folder: Path
    repo_id: str | None = None  # None: a local folder given by path
    revision: str | None = None  # as asked (branch, tag or commit); None: the default branch
    commit: str | None = None  # the snapshot's commit hash

    @property
    def label(self) -> str:
        """`org/name@commit7` for a hub model, the folder's name for a local one."""
        if self.repo_id is None:
            return self.folder.name
        return f"{self.repo_id}@{(self.commit or '?')[:7]}"

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.repo_id or str(self.folder),
            "model_source": "hub" if self.repo_id else "folder",
            "model_revision": self.revision,
            "model_commit": self.commit,
            "model_folder": str(self.folder),
        }


def hub_cache() -> Path:
    """The hub cache folder huggingface_hub would use, from the environment as it is now."""
    env = os.environ
    explicit = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def is_hub_id(text: str) -> bool:
    """`org/name` that is not an existing path (a folder `org/name` under the current one wins)."""
    return bool(_HUB_ID.match(text)) and not Path(text).expanduser().exists()


def repo_folder(repo_id: str, cache: Path | None = None) -> Path:
    """huggingface_hub's folder for a model repository: models--org--name."""
    return (cache or hub_cache()) / ("models--" + repo_id.replace("/", "--"))


def get_command(repo_id: str, revision: str | None = None) -> str:
    rev = f" --revision {revision}" if revision else ""
    return f"hf download {repo_id}{rev}"


def resolve_checkpoint(
    model: str, *, revision: str | None = None, detector: str = "model", download: bool = True
) -> ResolvedModel:
    """A local folder (kept as it is) or a hub id (found in, or downloaded into, the hub cache).
    `download=False`: the cache only, whatever the environment says (a cheap look)."""
    text = str(model).strip()
    path = Path(text).expanduser()
    if path.exists() or not _HUB_ID.match(text):
        if revision:
            raise ModelUnavailable(
                f"{detector}: revision={revision} applies to a hub id, and {text!r} is a local path",
                str(path),
                "drop revision=, or name the model by its hub id (org/name)",
            )
        return check_folder(ResolvedModel(path.resolve()), detector)
    return check_folder(_from_hub(text, revision, detector, download), detector)


def _from_hub(repo_id: str, revision: str | None, detector: str, download: bool) -> ResolvedModel:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    cache = hub_cache()
    offline = hub_offline() or not download
    where = f"the hub cache {cache}" + (" ($HF_HUB_OFFLINE=1: no download)" if hub_offline() else "")
    asked = repo_id + (f"@{revision}" if revision else "")
    get = f"`{get_command(repo_id, revision)}` (online), or set $HF_HUB_CACHE to a cache that holds it"
    try:
        folder = snapshot_download(
            repo_id,
            revision=revision,
            cache_dir=cache,
            local_files_only=offline,
            allow_patterns=list(ALLOW_PATTERNS),
            library_name="pytest-grounding",
            endpoint=os.environ.get("HF_ENDPOINT") or None,  # read now: huggingface_hub reads it at import
        )
    except GatedRepoError:
        raise ModelUnavailable(
            f"{detector}: {asked} is gated on the hub and this machine's token has no access",
            "https://huggingface.co/" + repo_id,
            f"accept its terms on the hub, then `hf auth login` (or set $HF_TOKEN) and {get}",
        ) from None
    except RevisionNotFoundError:
        raise ModelUnavailable(
            f"{detector}: the hub has {repo_id} but no revision {revision!r}",
            "https://huggingface.co/" + repo_id,
            "name a branch, tag or commit it has (revision=main)",
        ) from None
    except RepositoryNotFoundError:
        raise ModelUnavailable(
            f"{detector}: no model {repo_id} on the hub (a typo, or private and this machine's token cannot see it)",
            "https://huggingface.co/" + repo_id,
            "check the id (org/name), or `hf auth login` for a private one",
        ) from None
    except LocalEntryNotFoundError:
        raise ModelUnavailable(
            f"{detector}: the weights of {asked} are not in the hub cache"
            + ("" if offline else " and the hub could not be reached"),
            where,
            get + ", or pass model=/path/to/checkpoint",
        ) from None
    except HfHubHTTPError as exc:  # the hub answered with an error other than the above
        raise ModelUnavailable(
            f"{detector}: the hub refused {asked} ({exc.response.status_code if exc.response is not None else '?'})",
            "https://huggingface.co/" + repo_id,
            get,
        ) from None
    snapshot = Path(folder)
    return ResolvedModel(snapshot, repo_id=repo_id, revision=revision, commit=snapshot.name)


def check_folder(resolved: ResolvedModel, detector: str) -> ResolvedModel:
    """A checkpoint folder: a config.json and its weights (every shard its index names)."""
    folder = resolved.folder
    fix = (
        f"`{get_command(resolved.repo_id, resolved.revision)}` to complete it"
        if resolved.repo_id
        else "pass model= a folder written by save_pretrained, or a hub id (org/name)"
    )
    name = resolved.repo_id or str(folder)
    if not folder.is_dir():
        raise ModelUnavailable(f"{detector}: no checkpoint folder {name}", str(folder), fix)
    if not (folder / "config.json").is_file():
        raise ModelUnavailable(f"{detector}: {name} is not a checkpoint (no config.json)", str(folder), fix)
    root = repo_root(folder) if resolved.repo_id else None
    try:
        checkpoint_config(folder, root)
    except ValueError as exc:
        what = f"{detector}: {name} has a config.json this plugin will not load: {exc}"
        raise ModelUnavailable(what, str(folder), fix) from None
    missing = missing_weights(folder, root)
    if missing:
        raise ModelUnavailable(
            f"{detector}: {name} lacks its weights ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})",
            str(folder),
            fix,
        )
    return resolved


def repo_root(snapshot: Path) -> Path:
    """The repository folder of a hub-cache snapshot (models--org--name/snapshots/<commit>): every
    file of the snapshot must resolve inside it (its blobs); a link out of it is not the model's."""
    return snapshot.parent.parent


def cached_file(folder: Path, name: str, root: Path | None) -> Path | None:
    """`folder/name` when it is a file inside `folder` (and inside `root`, for a cache snapshot); a
    name that leaves the folder (`..`, an absolute path) or a link out of the cache is no file of it."""
    if not name or name.startswith(("/", "\\")) or ".." in re.split(r"[\\/]", name):
        return None
    path = folder / name
    if not path.is_file():
        return None
    if root is not None and not path.resolve().is_relative_to(root.resolve()):
        return None
    return path


def read_json_file(path: Path) -> Any:
    """A config or index file as JSON, bounded (core.safejson); a ValueError saying why not."""
    try:
        return safejson.read_path(path, max_chars=CONFIG_CHARS)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name} cannot be read ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"{path.name} is not JSON this plugin reads ({exc})") from None


def checkpoint_config(folder: Path, root: Path | None = None) -> Mapping[str, Any]:
    """config.json as an object whose stated shape is within SHAPE_LIMITS (a ValueError otherwise)."""
    path = cached_file(folder, "config.json", root)
    if path is None:
        raise ValueError("config.json is not a file of the checkpoint (a link out of the cache?)")
    config = read_json_file(path)
    if not isinstance(config, dict):
        raise ValueError(f"config.json holds a {type(config).__name__}, not an object")
    pending: list[Any] = [config]
    while pending:  # nested configs (text_config, vision_config) too; safejson bounded the depth
        value = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                limit = SHAPE_LIMITS.get(key)
                if limit is not None and isinstance(item, (int, float)) and not 0 <= item <= limit:
                    raise ValueError(f"{key} is {item}, beyond {limit:,}")
                pending.append(item)
        elif isinstance(value, list):
            pending.extend(value)
    return config


def missing_weights(folder: Path, root: Path | None = None) -> list[str]:
    """The weight files a checkpoint folder lacks: every shard its index names, or one
    model.safetensors / pytorch_model.bin when there is no index. A cache snapshot (`root` its
    repository folder): a file that links out of the cache is missing."""
    for index_name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        if not (folder / index_name).is_file():
            continue
        index = cached_file(folder, index_name, root)
        try:
            if index is None:
                raise ValueError("a link out of the cache")
            document = read_json_file(index)
            weight_map = document.get("weight_map") if isinstance(document, dict) else None
            if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
                raise ValueError("no weight_map of file names")
        except ValueError:
            return [f"{index_name} (unreadable)"]
        shards = sorted(set(weight_map.values()))
        return [shard for shard in shards if cached_file(folder, shard, root) is None]
    if any(cached_file(folder, name, root) for name in ("model.safetensors", "pytorch_model.bin")):
        return []
    return ["model.safetensors"]


@dataclass(frozen=True)
class CachedModel:
    """A model repository in the hub cache, as `doctor` lists it."""

    repo_id: str
    commits: tuple[str, ...]
    refs: tuple[str, ...]
    complete: bool  # the newest snapshot has config.json and its weights
    model_type: str | None
    problem: str | None = None  # why its config.json is not read (malformed, a link out of the cache)


def cached_models(cache: Path | None = None) -> list[CachedModel]:
    """The model repositories in the hub cache (huggingface_hub's scan), with their model type."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound, CorruptedCacheException

    cache = cache or hub_cache()
    try:
        info = scan_cache_dir(cache)
    except (CacheNotFound, CorruptedCacheException):  # a cache huggingface_hub cannot read lists nothing
        return []
    found = []
    for warning in getattr(info, "warnings", ()):  # a repository huggingface_hub could not read: said, not skipped
        named = re.search(r"models--([A-Za-z0-9._-]+?)--([A-Za-z0-9._-]+)", str(warning))
        if named:
            why = f"huggingface_hub cannot read it: {str(warning)[:200]}"
            found.append(CachedModel(f"{named[1]}/{named[2]}", (), (), False, None, why))
    for repo in sorted(info.repos, key=lambda r: r.repo_id):
        if repo.repo_type != "model":
            continue
        revisions = sorted(repo.revisions, key=lambda r: r.last_modified, reverse=True)
        newest = revisions[0].snapshot_path if revisions else None
        model_type: str | None = None
        problem: str | None = None  # why its config is not read
        complete = False
        if newest is not None and (newest / "config.json").is_file():
            try:  # the cache is untrusted input: a bad config is an incomplete repository, never a crash
                config = checkpoint_config(newest, repo_root(newest))
            except ValueError as exc:
                config, problem = None, str(exc)[:200]
            if config is not None:
                stated = config.get("model_type")
                model_type = stated[:80] if isinstance(stated, str) else None
                complete = not missing_weights(newest, repo_root(newest))
        found.append(
            CachedModel(
                repo_id=repo.repo_id,
                commits=tuple(r.commit_hash for r in revisions),
                refs=tuple(sorted(ref for r in revisions for ref in r.refs)),
                complete=complete,
                model_type=model_type,
                problem=problem,
            )
        )
    return found


def place_in_cache(source: Path, repo_id: str, cache: Path, commit: str, ref: str = "main") -> Path:
    """Copy a checkpoint folder into `cache` laid out as huggingface_hub lays it out
    (models--org--name/snapshots/<commit>/, refs/<ref>; files as blobs named by content hash,
    linked from the snapshot). For tests and for air-gapped machines given a folder."""
    import shutil

    repo = repo_folder(repo_id, cache)
    snapshot = repo / "snapshots" / commit
    blobs = repo / "blobs"
    snapshot.mkdir(parents=True, exist_ok=True)
    blobs.mkdir(parents=True, exist_ok=True)
    for file in sorted(p for p in source.rglob("*") if p.is_file()):
        digest = safefile.sha256(file)  # in chunks: a weights file of many gigabytes in bounded memory
        blob = blobs / digest
        if not blob.exists():
            shutil.copyfile(file, blob)
        target = snapshot / file.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() or target.is_symlink():
            target.unlink()
        try:
            target.symlink_to(os.path.relpath(blob, target.parent))
        except OSError:  # no symlinks (Windows without developer mode): huggingface_hub copies too
            shutil.copyfile(blob, target)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / ref).write_text(commit)
    return snapshot
