"""A report's results where the field publishes them (pure: a parsed report in, plain records out;
cli/export.py writes them, render/publish.py spells them).

- The Hugging Face Hub's eval results: model repositories carry `.eval_results/*.yaml`, a list of
  entries `dataset: {id, task_id, revision?}, value, date?, source: {url, name?, user?}?, notes?`
  (https://huggingface.co/docs/hub/eval-results; the dataset must be a registered Hub benchmark).
  One entry per benchmark the report scored that has a Hub id in `HUB_BENCHMARKS`; a benchmark
  without one is said, never given an invented id.
- ScreenSpot-Pro's official results file, as the authors' eval_screenspot_pro.py writes it
  (`{"details": [one row per sample], "metrics": {...}}`): what its leaderboard asks for, and what
  `replay` reads back (detectors/replay/files.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.profiles import profile_of
from ..core.record import Outcome, Task
from ..core.variants import base_uid
from .board import config_of, parse_time
from .card import rescored_by
from .official_metrics import official_metrics, official_row


@dataclass(frozen=True)
class HubBenchmark:
    dataset_id: str
    task_id: str
    confirmed: str  # where the id and task were seen


# Only ids confirmed on the Hub (../shared/reference/field-2026-11.md, section 1.6): ScreenSpot-Pro is
# a registered benchmark (likaixin/ScreenSpot-Pro carries an eval.yaml); its results use task "overall"
# (the Hub staff's community-results PRs, e.g. allenai/MolmoPoint-GUI-8B refs/pr/1).
HUB_BENCHMARKS: dict[str, HubBenchmark] = {
    "screenspot-pro": HubBenchmark(
        "likaixin/ScreenSpot-Pro",
        "overall",
        "https://huggingface.co/datasets/likaixin/ScreenSpot-Pro (eval.yaml); "
        "https://huggingface.co/allenai/MolmoPoint-GUI-8B/blob/refs%2Fpr%2F1/eval.yaml",
    ),
}


class PublishError(ValueError):
    """A report that cannot be published as asked: said in one sentence."""


@dataclass(frozen=True)
class EvalResult:
    """One `.eval_results` entry, and the file it goes in."""

    file: str  # e.g. "screenspot_pro.yaml"
    dataset_id: str
    task_id: str
    value: float  # percent, as the Hub's examples give it
    date: str | None
    notes: str
    source_url: str | None = None
    source_name: str | None = None
    source_user: str | None = None


@dataclass(frozen=True)
class NotPublished:
    dataset: str
    reason: str


def benchmark_key(dataset: Mapping[str, Any]) -> str | None:
    """The public benchmark a report's dataset is, by its format (or a Hub mirror's name)."""
    for value in (dataset.get("format"), dataset.get("name")):
        text = str(value or "").lower()
        if text == "screenspot-pro" or text.endswith("/screenspot-pro"):
            return "screenspot-pro"
    return None


def grounding_detectors(document: Mapping[str, Any]) -> list[str]:
    summary = document.get("summary") or {}
    return [str(b.get("detector")) for b in summary.values() if b.get("task", Task.GROUNDING) == Task.GROUNDING]


def pick_detector(document: Mapping[str, Any], wanted: str | None) -> str:
    """The one detector to publish: `wanted`, or the report's only one."""
    found = grounding_detectors(document)
    if wanted is not None:
        if wanted not in found:
            raise PublishError(f"detector {wanted!r} is not in the report; it holds: {', '.join(found) or 'none'}")
        return wanted
    if not found:  # every item deselected, or only element-at-click records: nothing to publish
        raise PublishError("the report holds no grounding records (no sample was scored): nothing to export")
    if len(found) != 1:
        raise PublishError(
            f"the report holds {len(found)} detectors ({', '.join(found)}): pick the model's with --detector SPEC"
        )
    return found[0]


def incomplete(document: Mapping[str, Any], dataset: Mapping[str, Any], detector: str | None = None) -> str | None:
    """Why a report's figure on a dataset is not the benchmark's figure (a part of it), or None.
    With `detector`, the records themselves are counted too: a run cut with `-k`, `--lf`, a shard
    or a report with records deleted scores fewer of the dataset's samples than it holds."""
    settings = (document.get("run") or {}).get("settings") or {}
    if document.get("partial"):
        return "the run is partial (interrupted, or a merge with shards missing)"
    if settings.get("limit"):
        return f"the run scored at most {settings['limit']} samples per dataset (--grounding-limit)"
    if document.get("shard") and not document.get("merge"):
        return "the report is one shard's (merge the shards first)"
    merge = document.get("merge") or {}
    missing = [m for m in merge.get("missing_samples") or [] if m.get("dataset") == dataset.get("name")]
    if any(m.get("missing") for m in missing):
        return "the merge lacks samples of this dataset"
    if detector is not None:
        total = dataset.get("samples")
        scored = len({base_uid(r) for r in _records(document, detector, str(dataset.get("name")))})
        if not isinstance(total, int) or isinstance(total, bool) or scored < total:
            return f"{detector} scored {scored} of the dataset's {total} samples (a selection: -k, --lf, a shard)"
    return None


def _records(document: Mapping[str, Any], detector: str, dataset: str) -> list[Mapping[str, Any]]:
    """The records that make the benchmark's figure: the dataset's own samples (never a
    --grounding-perturb variant) and, of a --grounding-epochs run, the first epoch only."""
    return [
        r
        for r in document.get("samples") or []
        if r.get("detector") == detector
        and r.get("dataset") == dataset
        and r.get("task", Task.GROUNDING) == Task.GROUNDING
        and r.get("variant") is None
        and r.get("epoch") in (None, 1)
    ]


def published_path(image: str, root: str) -> str:
    """An image as the official file names it: below the dataset's folder, never a local path
    (an image elsewhere, such as a cached variant, is named from its `images/` folder on, else by
    its file name alone)."""
    image = image.replace("\\", "/")
    root = root.replace("\\", "/").rstrip("/")
    if root and image.startswith(root + "/"):
        relative = image[len(root) + 1 :]
        if ".." not in relative.split("/"):
            return relative
    if "images/" in image:
        below = image[image.rindex("images/") :]
        if ".." not in below.split("/"):
            return below
    return image.rsplit("/", 1)[-1]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "result"


def notes_of(document: Mapping[str, Any], detector: str, dataset: Mapping[str, Any], errors: int) -> str:
    """The setup in one line: what decided the answers and how they were judged."""
    run = document.get("run") or {}
    info = (run.get("detectors") or {}).get(detector) or {}
    config = config_of(detector, info, profile_of(document))
    version = (document.get("versions") or {}).get("pytest-grounding")
    parts = [f"pytest-grounding {version}" if version else "pytest-grounding", f"detector {detector}"]
    rescored = rescored_by(document)
    if rescored:
        parts.append(rescored)
    parts += [f"{name} {value}" for name, value in config.details() if value and name != "scoring"]
    profile = document.get("scoring_profile") or {}
    parts.append(f"scoring profile {config.scoring}" + (f" ({profile['rule']})" if profile.get("rule") else ""))
    language = (run.get("settings") or {}).get("language")
    if language and language != "en":
        parts.append(f"instructions in {language}")
    parts.append(f"{dataset.get('samples')} samples, dataset fingerprint {dataset.get('fingerprint')}")
    epochs = (run.get("settings") or {}).get("epochs")
    if isinstance(epochs, int) and epochs > 1:
        parts.append(f"the first of {epochs} epochs")
    if errors:
        parts.append(f"{errors} samples with no answer (errors) counted wrong, as the official script has none")
    return "; ".join(parts)


def eval_results(
    document: Mapping[str, Any],
    detector: str,
    *,
    source: tuple[str | None, str | None, str | None] = (None, None, None),
    allow_partial: bool = False,
) -> tuple[list[EvalResult], list[NotPublished]]:
    """The eval-results entries of one detector of a report, and the datasets not published, each
    with why. `source`: (url, name, user) of where the result can be checked (the Hub needs a url
    when there is a source). The value is the benchmark's official figure in percent (for
    ScreenSpot-Pro, `action_acc` of its overall metrics, official_metrics.py)."""
    url, name, user = source
    if url is None and (name or user):
        raise PublishError("a source name or user needs a source url (the Hub requires url when source is given)")
    started = parse_time(document.get("started") if isinstance(document.get("started"), str) else None)
    date = started.isoformat() if started is not None else None
    language = ((document.get("run") or {}).get("settings") or {}).get("language") or "en"
    results, skipped = [], []
    for dataset in (document.get("run") or {}).get("datasets") or []:
        key = benchmark_key(dataset)
        label = str(dataset.get("name"))
        if key is None or key not in HUB_BENCHMARKS:
            skipped.append(NotPublished(label, "no Hub benchmark id is known for it (only registered benchmarks)"))
            continue
        records = _records(document, detector, label)
        if not records:
            skipped.append(NotPublished(label, f"{detector} scored no sample of it"))
            continue
        why = incomplete(document, dataset, detector)
        if why is not None and not allow_partial:
            skipped.append(NotPublished(label, f"{why}: not the benchmark's figure (--allow-partial writes it)"))
            continue
        hub = HUB_BENCHMARKS[key]
        overall = official_metrics(records)["overall"]
        errors = sum(1 for r in records if r.get("outcome") == Outcome.ERROR)
        notes = notes_of(document, detector, dataset, errors) + (f"; PARTIAL: {why}" if why else "")
        info = ((document.get("run") or {}).get("detectors") or {}).get(detector) or {}
        strategy = config_of(detector, info, profile_of(document)).strategy
        file = (
            slug(key) + (f"_{slug(language)}" if language != "en" else "") + (f"_{slug(strategy)}" if strategy else "")
        )
        results.append(
            EvalResult(f"{file}.yaml", hub.dataset_id, hub.task_id, round(overall["action_acc"] * 100, 2), date, notes,
                       url, name, user)
        )  # fmt: skip
    return results, skipped


def screenspot_pro_results(document: Mapping[str, Any], detector: str, dataset: Mapping[str, Any]) -> dict[str, Any]:
    """The official results document of one detector on one ScreenSpot-Pro dataset: each record as
    the authors' script writes a row (img_path below the dataset's folder, pred in pixels or null,
    bbox for a positive row), and the `metrics` block as their script computes it."""
    root = str(dataset.get("path") or "").rstrip("/\\")
    language = ((document.get("run") or {}).get("settings") or {}).get("language") or "en"
    records = _records(document, detector, str(dataset.get("name")))
    details = []
    for record in records:
        row = official_row(record)
        image = str(record.get("image") or "")
        relative = published_path(image, root)
        below = relative.split("images/", 1)[1] if "images/" in relative else relative
        point = record.get("point")
        detail = {
            "img_path": relative,
            "group": row["group"],
            "platform": row["platform"],
            "application": row["application"],
            "lang": language,
            "instruction_style": row["instruction_style"],
            "prompt_to_evaluate": record.get("instruction"),
            "gt_type": row["gt_type"],
            "ui_type": row["ui_type"],
            "task_filename": below.split("/", 1)[0] if "/" in below else None,
            "pred": list(point) if isinstance(point, Sequence) and len(point) == 2 else None,
            "raw_response": record.get("raw"),
        }
        if row["gt_type"] == "positive":
            detail["bbox"] = record.get("target")
        detail["correctness"] = row["correctness"]
        details.append(detail)
    return {"details": details, "metrics": official_metrics(records)}
