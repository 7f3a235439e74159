"""A report as Every Eval Ever files (issue 58): EEE (evaleval/every_eval_ever, schema 0.3.0) is
the cross-harness interchange format. Per detector x benchmark, one aggregate document
(`eval.schema.json`) and its samples sidecar (`instance_level_eval.schema.json`: one
InstanceLevelEvaluationLog line per sample). Pure: a parsed report in, plain documents out;
cli/export.py writes them.

- The figure is the run's: the accuracy of the dataset's records (hits over scored; errors left
  out, as the report counts them) with its cluster-robust 95% interval (analysis/intervals.py).
- A part of a benchmark (`-k`, `--lf`, a shard, --grounding-limit, an interrupted run) is not the
  benchmark's figure: it is left out unless asked (`allow_partial`), and then named partial in its
  evaluation name and details. A --grounding-perturb variant is its own result (its own file),
  never mixed into the benchmark's; of a --grounding-epochs run, the first epoch.
- The run's card (analysis/card.py) travels in `eval_library.additional_details`, so the card and
  the file carry the same fields.
- The sidecar line: the instruction as input (the screen in metadata), the raw answer as output,
  the parsed click as the extracted value and the scoring profile as the extraction method,
  `is_correct` true exactly for the hits, the outcome, miss kind, distance and slices in metadata,
  a record's error as `error`. `replay` reads it back (detectors/replay/eee.py)."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.identity import display_name, engine_of, found
from ..core.profiles import profile_of
from ..core.record import Outcome, Task
from . import intervals
from .card import card_dict, command_line
from .metrics import tally
from .publish import HUB_BENCHMARKS, NotPublished, PublishError, benchmark_key, incomplete, published_path

SCHEMA_VERSION = "0.3.0"
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
EXTRACTION = "pytest-grounding scoring profile {profile}"  # the sidecar's extraction_method
# metadata keys a sidecar line carries from its record (all as strings, as EEE asks)
METADATA = (
    "outcome", "miss_kind", "distance_px", "iou", "element_type", "app", "app_category", "platform", "size",
    "uid", "dataset", "fingerprint", "detector", "variant", "epoch", "negative", "refusal", "box", "points",
)  # fmt: skip


@dataclass(frozen=True)
class EeeFile:
    """One aggregate document, its sidecar lines, and where the EEE datastore keeps them."""

    dataset: str
    variant: str | None
    aggregate: dict[str, Any]
    samples: list[dict[str, Any]]
    folder: str  # data/<benchmark>/<developer>/<model>, as the datastore lays files out
    uuid: str

    @property
    def aggregate_path(self) -> str:
        return f"{self.folder}/{self.uuid}.json"

    @property
    def samples_path(self) -> str:
        return f"{self.folder}/{self.uuid}_samples.jsonl"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "unknown"


def stable_uuid(*parts: str) -> str:
    """A version-4-shaped UUID made from `parts` (EEE's file names ask for a v4 UUID): exporting one
    report twice names its files the same."""
    digest = bytearray(hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40
    digest[8] = (digest[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(digest)))


def model_id_of(document: Mapping[str, Any], detector: str) -> str:
    """The model's id as EEE wants it (Hugging Face form where the detector names a model), else the
    detector's display name."""
    info = _mapping(_mapping(_mapping(document.get("run")).get("detectors")).get(detector))
    model = found(info, ("model",))
    if isinstance(model, str) and model.strip():
        return model.strip()
    return display_name(detector, info)


def _records(document: Mapping[str, Any], detector: str, dataset: str) -> list[Mapping[str, Any]]:
    """The detector's grounding records of a dataset, the first epoch only, variants included."""
    return [
        r
        for r in document.get("samples") or []
        if isinstance(r, Mapping)
        and r.get("detector") == detector
        and r.get("dataset") == dataset
        and r.get("task", Task.GROUNDING) == Task.GROUNDING
        and r.get("epoch") in (None, 1)
    ]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def extracted_value(record: Mapping[str, Any]) -> str:
    """The parsed click as EEE's extracted value: `[x, y]` in the screen's pixels, `refusal` for a
    refusal, the empty string when no click could be read (a wrong format, an error)."""
    point = record.get("point")
    if isinstance(point, Sequence) and not isinstance(point, str) and len(point) == 2:
        return json.dumps([float(point[0]), float(point[1])])
    if record.get("refusal"):
        return "refusal"
    return ""


def sample_line(
    record: Mapping[str, Any], *, evaluation_id: str, model_id: str, name: str, result_id: str, profile: str, root: str
) -> dict[str, Any]:
    """One InstanceLevelEvaluationLog line of a record."""
    instruction = str(record.get("instruction") or "")
    target = record.get("target")
    reference = [json.dumps(target) if target is not None else "absent"]
    hit = record.get("outcome") == Outcome.HIT
    line: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": name,
        "evaluation_result_id": result_id,
        "sample_id": str(record.get("id")),
        "sample_hash": hashlib.sha256((instruction + "\n" + reference[0]).encode("utf-8")).hexdigest(),
        "interaction_type": "single_turn",
        "input": {"raw": instruction, "reference": reference},
        "output": {"raw": [record["raw"] if isinstance(record.get("raw"), str) else ""]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": extracted_value(record),
                "extraction_method": EXTRACTION.format(profile=profile),
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": 1.0 if hit else 0.0, "is_correct": hit},
    }
    usage = _mapping(_mapping(record.get("meta")).get("usage"))
    tokens = [usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")]
    if all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in tokens):
        line["token_usage"] = dict(zip(("input_tokens", "output_tokens", "total_tokens"), tokens, strict=True))
    latency = record.get("latency_ms")
    if isinstance(latency, (int, float)) and not isinstance(latency, bool) and latency >= 0:
        line["performance"] = {"latency_ms": float(latency)}
    if record.get("outcome") == Outcome.ERROR:
        line["error"] = str(record.get("error") or "error")
    metadata = {k: _text(record[k]) for k in METADATA if record.get(k) is not None}
    image = record.get("image")
    if isinstance(image, str) and image:
        metadata["screen"] = published_path(image, root)
    if record.get("image_size") is not None:
        metadata["image_size"] = _text(record.get("image_size"))
    line["metadata"] = metadata
    return line


def _source_data(document: Mapping[str, Any], dataset: Mapping[str, Any], ids: list[str]) -> dict[str, Any]:
    details = {
        "format": str(dataset.get("format")),
        "fingerprint": str(dataset.get("fingerprint")),
        "dataset_samples": str(dataset.get("samples")),
    }
    key = benchmark_key(dataset)
    hub = HUB_BENCHMARKS.get(key) if key else None
    if hub is not None:
        return {
            "dataset_name": str(dataset.get("name")),
            "source_type": "hf_dataset",
            "hf_repo": hub.dataset_id,
            "hf_split": "test",
            "samples_number": len(ids),
            "sample_ids": ids,
            "additional_details": details,
        }
    return {"dataset_name": str(dataset.get("name")), "source_type": "other", "additional_details": details}


def _generation_config(info: Mapping[str, Any], document: Mapping[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"execution_command": command_line(document)}
    preset = found(info, ("preset",))
    if isinstance(preset, Mapping):
        decoding = _mapping(preset.get("decoding"))
        for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"), ("top_k", "top_k")):
            value = decoding.get(ours)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                args[theirs] = value
        tokens = decoding.get("max_new_tokens")
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 1:
            args["max_tokens"] = tokens
        prompt = preset.get("prompt")
        if prompt:
            args["prompt_template"] = json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)
    return {"generation_args": args}


def eee_files(
    document: Mapping[str, Any],
    detector: str,
    *,
    retrieved: str,
    organization: str = "unknown",
    relationship: str = "other",
    allow_partial: bool = False,
) -> tuple[list[EeeFile], list[NotPublished]]:
    """The EEE files of one detector of a report (one per dataset, and one per --grounding-perturb
    variant of it), and the datasets not exported, each with why. `retrieved`: the export's time
    (Unix seconds, as EEE asks)."""
    if relationship not in RELATIONSHIPS:
        raise PublishError(f"evaluator relationship {relationship!r} is not one of {', '.join(RELATIONSHIPS)}")
    run = _mapping(document.get("run"))
    info = _mapping(_mapping(run.get("detectors")).get(detector))
    summary_key = next(
        (k for k, b in _mapping(document.get("summary")).items() if _mapping(b).get("detector") == detector
         and _mapping(b).get("task", Task.GROUNDING) == Task.GROUNDING),
        detector,
    )  # fmt: skip
    profile = profile_of(document)
    profile_info = _mapping(document.get("scoring_profile"))
    model_id = model_id_of(document, detector)
    developer, _, model_name = model_id.rpartition("/")
    engine = found(info, ("engine",))
    engine_block = (
        {"name": str(engine["name"]), **({"version": str(engine["version"])} if engine.get("version") else {})}
        if isinstance(engine, Mapping) and engine.get("name")
        else {"name": "pytest-grounding (in process)", "version": str(_mapping(document.get("versions")).get(
            "pytest-grounding") or "unknown")}
    )  # fmt: skip
    versions = _mapping(document.get("versions"))
    level = _mapping(document.get("intervals")).get("level") or intervals.LEVEL
    out: list[EeeFile] = []
    skipped: list[NotPublished] = []
    for dataset in run.get("datasets") or []:
        if not isinstance(dataset, Mapping):
            continue
        label = str(dataset.get("name"))
        records = _records(document, detector, label)
        if not records:
            skipped.append(NotPublished(label, f"{detector} scored no sample of it"))
            continue
        why = incomplete(document, dataset, detector)
        if why is not None and not allow_partial:
            skipped.append(NotPublished(label, f"{why}: not the benchmark's figure (--allow-partial writes it)"))
            continue
        card = card_dict(document, summary_key, label)
        groups: dict[str | None, list[Mapping[str, Any]]] = {}
        for record in records:
            variant = record.get("variant")
            groups.setdefault(None if variant is None else str(variant), []).append(record)
        for variant, group in groups.items():
            name = label + (f" ~ {variant}" if variant else "") + (" (partial)" if why else "")
            evaluation_id = f"{_slug(name)}/{model_id}/{retrieved}"
            result_id = f"{_slug(label)}{'~' + _slug(variant) if variant else ''}:accuracy"
            counts = tally(group)
            found_interval = intervals.proportion(intervals.Outcomes.of(group))
            bounds = intervals.ci95(found_interval)
            ids = [str(r.get("id")) for r in group]
            score_details: dict[str, Any] = {
                "score": counts["accuracy"] if counts["accuracy"] is not None else 0.0,
                "details": {
                    "hits": str(counts["hits"]),
                    "scored": str(counts["scored"]),
                    "samples": str(counts["samples"]),
                    "errors": str(counts["errors"]),
                    "wrong_format": str(counts[Outcome.WRONG_FORMAT.value]),
                    "accuracy_counts": "hits over scored samples; errors (no answer) are left out and counted apart",
                    **({"partial": why} if why else {}),
                    **({"variant": variant} if variant else {}),
                },
            }
            if bounds is not None:
                score_details["uncertainty"] = {
                    "confidence_interval": {
                        "lower": bounds[0],
                        "upper": bounds[1],
                        "confidence_level": float(level),
                        "method": f"{intervals.METHOD}, clustered by {intervals.CLUSTER}",
                    },
                    "num_samples": counts["scored"],
                }
            result = {
                "evaluation_result_id": result_id,
                "evaluation_name": name,
                "source_data": _source_data(document, dataset, ids),
                "metric_config": {
                    "evaluation_description": "GUI grounding: the share of instructions whose click the scoring "
                    f"profile {profile} judges inside the target ({profile_info.get('rule') or 'point in box'})",
                    "metric_id": "accuracy",
                    "metric_name": "Accuracy (click in target)",
                    "metric_kind": "accuracy",
                    "metric_unit": "proportion",
                    "metric_parameters": {"scoring_profile": profile},
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": 0.0,
                    "max_score": 1.0,
                    "additional_details": {
                        k: str(v)
                        for k, v in (("rule", profile_info.get("rule")), ("source", profile_info.get("source")))
                        if v
                    },
                },
                "score_details": score_details,
                "generation_config": _generation_config(info, document),
            }
            if isinstance(document.get("started"), str):
                result["evaluation_timestamp"] = document["started"]
            # the run's own start, not the export's time: the same report exported again gives the same file
            file_uuid = stable_uuid(
                _slug(name), model_id, str(document.get("started") or ""), detector, label, variant or ""
            )
            folder = f"data/{_slug(label)}/{_slug(developer or 'unknown')}/{_slug(model_name)}"
            samples = [
                sample_line(r, evaluation_id=evaluation_id, model_id=model_id, name=name, result_id=result_id,
                            profile=profile, root=str(dataset.get("path") or ""))
                for r in group
            ]  # fmt: skip
            aggregate: dict[str, Any] = {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "retrieved_timestamp": retrieved,
                "source_metadata": {
                    "source_name": "pytest-grounding",
                    "source_type": "evaluation_run",  # raw per-item outputs: the sidecar
                    "source_organization_name": organization,
                    "evaluator_relationship": relationship,
                },
                "eval_library": {
                    "name": "pytest-grounding",
                    "version": str(versions.get("pytest-grounding") or "unknown"),
                    "additional_details": {f"card.{k}": v for k, v in card.items()},
                },
                "model_info": {
                    "name": display_name(detector, info),
                    "id": model_id,
                    **({"developer": developer} if developer else {}),
                    "inference_engine": engine_block,
                    "additional_details": {
                        "deployment_type": "unknown",
                        "model_availability": "unknown",
                        "detector": detector,
                        **({"engine": engine_of(info)} if engine_of(info) else {}),
                    },
                },
                "evaluation_results": [result],
                "detailed_evaluation_results": {
                    "format": "jsonl",
                    "file_path": f"{folder}/{file_uuid}_samples.jsonl",
                    "hash_algorithm": "sha256",
                    "total_rows": len(samples),
                },
            }
            if isinstance(document.get("started"), str):
                aggregate["evaluation_timestamp"] = document["started"]
            out.append(EeeFile(label, variant, aggregate, samples, folder, file_uuid))
    return out, skipped


def samples_text(lines: Sequence[Mapping[str, Any]]) -> str:
    """The sidecar as JSON Lines."""
    return "".join(json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n" for line in lines)


def with_checksum(file: EeeFile, text: str) -> dict[str, Any]:
    """The aggregate with its sidecar's sha256 (of the text as written)."""
    aggregate = dict(file.aggregate)
    detailed = dict(aggregate["detailed_evaluation_results"])
    detailed["checksum"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    aggregate["detailed_evaluation_results"] = detailed
    return aggregate
