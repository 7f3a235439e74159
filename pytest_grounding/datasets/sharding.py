"""Shards: the K-th of N disjoint shares of a run's samples (`--grounding-shard K/N`), for CI
matrices, Slurm arrays and Kubernetes indexed jobs. Pure: samples in, a plan out.

The plan depends only on the samples (their order, which every machine and xdist worker loads
the same, and which screen each is on), so every copy of a run computes the same shares. A
screen's samples stay together (a detector's per-screen caches), the largest screens first,
each to the least loaded shard; only when whole screens cannot meet the balance bound are the
largest cut into parts."""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.record import MAX_SHARDS
from ..core.types import Sample

BALANCE = 1.2  # no shard more than this times the mean share (or ceil(mean), for tiny shares)
ENV_SHARD = "GROUNDING_SHARD"  # "K/N", 1-based: the GitHub Actions example sets it from the matrix
ENV_COUNT = "GROUNDING_SHARD_COUNT"  # N, for an engine that gives only an index (Kubernetes)


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int
    source: str  # where K/N came from: "--grounding-shard 2/4", "SLURM_ARRAY_TASK_ID=3 ..."

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(value: str, source: str, environ: Mapping[str, str] | None = None) -> Shard:
    """`K/N` (1 <= K <= N) or `env` (read from the engine's environment); a ValueError naming
    `source` otherwise."""
    text = str(value).strip()
    if text.lower() == "env":
        return shard_from_env(os.environ if environ is None else environ, source)
    return _k_of_n(text, source, f"{source} {text}")


def _k_of_n(text: str, source: str, described: str) -> Shard:
    head, sep, tail = text.partition("/")
    try:
        index, count = int(head[:20]), int(tail[:20])  # no int() of a thousand digits
        if len(head) > 20 or len(tail) > 20:
            index, count = max(index, MAX_SHARDS + 1), max(count, MAX_SHARDS + 1)
    except ValueError:
        raise ValueError(f"{source}: {text!r} is not K/N (e.g. 2/4: the second of four shares), nor 'env'") from None
    if not sep or count < 1 or not 1 <= index <= count:
        raise ValueError(f"{source}: {text!r}: K/N needs 1 <= K <= N (K is 1-based)")
    if count > MAX_SHARDS:
        raise ValueError(f"{source}: {text!r}: at most {MAX_SHARDS:,} shards (and never more than the samples)")
    return Shard(index, count, described)


def check_count(shard: Shard, samples: int) -> None:
    """A split into more shares than samples leaves shares empty by construction: a ValueError."""
    if shard.count > max(1, samples):
        raise ValueError(
            f"{shard.source}: {shard.count:,} shards of {samples:,} samples: give at most as many shards as samples"
        )


# Schedulers that give a task its index and the number of tasks in two variables:
# (name, index variable, count variable, base of the index). Each checked against its scheduler's docs:
# AWS Batch array jobs (docs.aws.amazon.com/batch/latest/userguide/job_env_vars.html), Google Cloud
# Batch task groups (TaskGroup.taskEnvironments: "0 through BATCH_TASK_COUNT - 1"), SkyPilot
# (docs.skypilot.co, distributed jobs), GitLab `parallel:` (1-based), CircleCI `parallelism`
# (circleci.com/docs/variables: "0 to CIRCLE_NODE_TOTAL - 1"), Buildkite `parallelism` (0-based).
SCHEDULERS: tuple[tuple[str, str, str, int], ...] = (
    ("AWS Batch", "AWS_BATCH_JOB_ARRAY_INDEX", "AWS_BATCH_JOB_ARRAY_SIZE", 0),
    ("Google Cloud Batch", "BATCH_TASK_INDEX", "BATCH_TASK_COUNT", 0),
    ("SkyPilot", "SKYPILOT_NODE_RANK", "SKYPILOT_NUM_NODES", 0),
    ("GitLab CI", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    ("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    ("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
)


def shard_from_env(environ: Mapping[str, str], source: str) -> Shard:
    """GROUNDING_SHARD=K/N (any engine; the GitHub Actions example), else Slurm's array variables,
    else Kubernetes' JOB_COMPLETION_INDEX (0-based) with GROUNDING_SHARD_COUNT, else the first of
    SCHEDULERS whose index variable is set (its count variable required)."""
    where = f"{source} env"
    if environ.get(ENV_SHARD, "").strip():
        text = environ[ENV_SHARD].strip()
        return _k_of_n(text, f"{where}: {ENV_SHARD}", f"{ENV_SHARD}={text}")
    if environ.get("SLURM_ARRAY_TASK_ID", "").strip():
        names = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP")
        values = {name: environ.get(name, "").strip() for name in names}
        if not values["SLURM_ARRAY_TASK_COUNT"]:
            raise ValueError(f"{where}: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")
        try:
            task, count = int(values["SLURM_ARRAY_TASK_ID"]), int(values["SLURM_ARRAY_TASK_COUNT"])
            low = int(values["SLURM_ARRAY_TASK_MIN"] or 0)  # --array=1-8 starts at 1, --array=0-7 at 0
            step = int(values["SLURM_ARRAY_TASK_STEP"] or 1)
        except ValueError:
            raise ValueError(f"{where}: Slurm's array variables are not integers: {values}") from None
        if step < 1 or (task - low) % step:
            raise ValueError(f"{where}: SLURM_ARRAY_TASK_ID={task} is not on the array's steps ({low}, step {step})")
        said = " ".join(f"{k}={v}" for k, v in values.items() if v)
        return _k_of_n(f"{(task - low) // step + 1}/{count}", f"{where}: {said}", said)
    if environ.get("JOB_COMPLETION_INDEX", "").strip():
        return _indexed(environ, where, "Kubernetes", "JOB_COMPLETION_INDEX", ENV_COUNT, 0)
    for engine, index_name, count_name, base in SCHEDULERS:
        if environ.get(index_name, "").strip():
            return _indexed(environ, where, engine, index_name, count_name, base)
    others = ", ".join(f"{index} with {count}" for _, index, count, _ in SCHEDULERS)
    raise ValueError(
        f"{where}: none of {ENV_SHARD} (K/N), SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, "
        f"JOB_COMPLETION_INDEX with {ENV_COUNT}, {others} is set"
    )


def _indexed(environ: Mapping[str, str], where: str, engine: str, index_name: str, count_name: str, base: int) -> Shard:
    """K/N from a scheduler's index variable (0- or 1-based) and its count variable."""
    index = environ[index_name].strip()
    count_text = environ.get(count_name, "").strip()
    if not count_text:
        raise ValueError(f"{where}: {index_name}={index[:40]} ({engine}) needs {count_name} set to the number of tasks")
    try:
        position = int(index[:20])
    except ValueError:
        raise ValueError(f"{where}: {index_name}={index[:40]!r} ({engine}) is not an integer") from None
    said = f"{index_name}={index[:40]} {count_name}={count_text[:40]}"
    return _k_of_n(f"{position - base + 1}/{count_text}", f"{where}: {said} ({engine})", said)


def bound(total: int, count: int) -> int:
    """The most samples a shard may hold: 1.2 x the mean, or ceil(mean) when shares are so small
    that no whole number of samples fits under 1.2 x."""
    if total == 0:
        return 0
    return max(math.ceil(total / count), math.floor(BALANCE * total / count))


def plan(samples: Sequence[Sample], count: int) -> list[int]:
    """The shard (1-based) of each sample: screens whole where the balance bound allows."""
    screens: dict[tuple[str, str], list[int]] = {}
    for position, sample in enumerate(samples):
        screens.setdefault((sample.dataset, str(sample.image)), []).append(position)
    groups = list(screens.values())
    count = max(1, min(count, len(samples)))  # shares past the samples' number stay empty: never allocated
    limit = bound(len(samples), count)
    cap = max((len(g) for g in groups), default=1)
    while True:
        shards = _assign(groups, count, cap)
        loads = [0] * count
        for index in shards.values():
            loads[index] += 1
        if cap <= 1 or max(loads, default=0) <= limit:
            return [shards[position] + 1 for position in range(len(samples))]
        cap = max(1, min(cap - 1, math.floor(cap * 0.75)))


def _assign(groups: Sequence[Sequence[int]], count: int, cap: int) -> dict[int, int]:
    """Longest-processing-time first: the largest unit to the least loaded shard (ties: the first
    unit, the lowest shard), units being screens cut into parts of at most `cap` samples."""
    units = [group[start : start + cap] for group in groups for start in range(0, len(group), cap)]
    units.sort(key=lambda unit: (-len(unit), unit[0]))
    heap = [(0, index) for index in range(count)]
    found: dict[int, int] = {}
    for unit in units:
        load, index = heapq.heappop(heap)
        for position in unit:
            found[position] = index
        heapq.heappush(heap, (load + len(unit), index))
    return found


def take(samples: Sequence[Sample], shard: Shard) -> list[Sample]:
    """The shard's samples, in the order given."""
    if shard.count == 1:
        return list(samples)
    return [s for s, k in zip(samples, plan(samples, shard.count), strict=True) if k == shard.index]


def planned_by_dataset(samples: Sequence[Sample], taken: Sequence[Sample]) -> dict[str, dict[str, Any]]:
    """Per dataset: how many samples the whole set holds and the uids this shard was to score."""
    found: dict[str, dict[str, Any]] = {}
    for sample in samples:
        found.setdefault(sample.dataset, {"samples": 0, "uids": []})["samples"] += 1
    for sample in taken:
        found[sample.dataset]["uids"].append(sample.uid)
    return found


def merge_planned(into: dict[str, dict[str, Any]], more: Mapping[str, Mapping[str, Any]]) -> None:
    """Two test functions over the same dataset plan the same shares: kept once."""
    for name, entry in more.items():
        kept = into.setdefault(name, {"samples": entry["samples"], "uids": []})
        kept["samples"] = max(kept["samples"], entry["samples"])
        kept["uids"] = list(dict.fromkeys([*kept["uids"], *entry["uids"]]))


def document(
    shard: Shard,
    planned: Mapping[str, Mapping[str, Any]],
    fingerprints: Mapping[str, str | None],
    detectors: Sequence[str],
) -> dict:
    """The report's `shard` entry: K, N, where they came from, the run's detectors and per dataset
    what this shard was to score (a merge counts what a missing shard leaves out from these)."""
    return {
        "index": shard.index,
        "count": shard.count,
        "source": shard.source,
        "detectors": list(detectors),
        "datasets": [
            {
                "name": name,
                "fingerprint": fingerprints.get(name),
                "samples": entry["samples"],
                "planned": len(entry["uids"]),
                "uids": list(entry["uids"]),
            }
            for name, entry in sorted(planned.items())
        ],
    }
