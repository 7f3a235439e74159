"""Collection: samples and detectors become parametrized items (a suite's pinned datasets and
detectors, the run's, else the default), shards and --dist loadgroup's screen groups applied, and
the samples a resumed run already has deselected. The same on every xdist worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..core.types import Sample, epoch_of, with_epochs
from ..datasets import DatasetError, sharding
from . import perturb_state
from .state import get_run, is_worker


def item_params(item: Any) -> dict[str, Any]:
    return getattr(getattr(item, "callspec", None), "params", {})


def detector_specs_of(items: Any) -> list[str]:
    return list(
        dict.fromkeys(
            item_params(item)["grounding_detector_name"]
            for item in items
            if "grounding_detector_name" in item_params(item)
        )
    )


def marker_list(marker, key: str) -> list:
    if marker is None:
        return []
    value = marker.kwargs.get(key)
    if value is None and key == "dataset" and marker.args:
        value = marker.args[0]
    return [value] if isinstance(value, str) else list(value or [])


def parametrize(metafunc: Any) -> None:
    """pytest_generate_tests: the grounding_sample and grounding_detector_name parameters."""
    wants_sample = "grounding_sample" in metafunc.fixturenames
    wants_detector = "grounding_detector_name" in metafunc.fixturenames
    if not (wants_sample or wants_detector):
        return
    run = get_run(metafunc.config)
    marker = metafunc.definition.get_closest_marker("grounding")
    if wants_detector:
        specs = marker_list(marker, "detector") or list(run.settings.detector_specs)
        run.check_detector_specs(specs, f"@pytest.mark.grounding in {metafunc.definition.nodeid}")
        metafunc.parametrize("grounding_detector_name", specs, ids=[spec_id(s) for s in specs])
    if wants_sample:
        samples: list[Sample] = []
        try:
            datasets = run.datasets_for(marker_list(marker, "dataset"), Path(metafunc.definition.path).parent)
        except DatasetError as exc:  # a pinned dataset: a collection error naming the file, no traceback
            pytest.fail(f"{metafunc.definition.nodeid}: {exc}", pytrace=False)
        for dataset in datasets:
            samples.extend(dataset.samples[: run.settings.limit])
        if run.settings.shard is not None:  # other shards' samples never become items (ids unchanged)
            problem = None
            try:  # a test function pinned to a smaller dataset than the run's (the run checked its own)
                sharding.check_count(run.settings.shard, len(samples))
            except ValueError as exc:
                problem = str(exc)
            if problem is not None:  # a collection error naming the split, no traceback
                pytest.fail(f"{metafunc.definition.nodeid}: {problem}", pytrace=False)
            taken = sharding.take(samples, run.settings.shard)
            sharding.merge_planned(run.shard_planned, sharding.planned_by_dataset(samples, taken))
            samples = taken
        samples = perturb_state.expand(metafunc.config, samples)  # --grounding-perturb: after the shard's split
        # --grounding-epochs: after the shard's split (an epoch follows its sample), adjacent (one screen)
        samples = with_epochs(samples, run.epochs_for(specs_of(metafunc, marker, run)))
        if groups_screens(metafunc.config):
            metafunc.parametrize("grounding_sample", grouped(samples, metafunc.config.workerinput["workercount"]))
        else:
            metafunc.parametrize("grounding_sample", samples, ids=[s.uid for s in samples])


def specs_of(metafunc: Any, marker: Any, run: Any) -> list[str]:
    """The detectors a test function's items run (its pinned ones, else the run's)."""
    if "grounding_detector_name" not in metafunc.fixturenames:
        return list(run.settings.detector_specs)
    return marker_list(marker, "detector") or list(run.settings.detector_specs)


def groups_screens(config: Any) -> bool:
    """On an xdist worker of a `--dist loadgroup` run (the only mode that reads xdist_group marks;
    elsewhere no marks, so no cost at collection and test ids without the `@group` suffix)."""
    return is_worker(config) and bool(getattr(config.option, "loadgroup", False))


def grouped(samples, workers: int) -> list:
    from ..datasets import screen_groups

    marks: dict[str, Any] = {}
    params = []
    for sample, group in zip(samples, screen_groups(samples, workers), strict=True):
        if group not in marks:
            marks[group] = pytest.mark.xdist_group(group)  # one mark object per group, shared
        params.append(pytest.param(sample, marks=marks[group], id=sample.uid))
    return params


def name_groups(items) -> None:
    """xdist's loadgroup scheduler reads a test's group from an "@group" suffix of its node id,
    which xdist writes into `item._nodeid`; pytest 9.2 keeps node ids in `item._id`, so the suffix
    is lost and the screens are spread over the workers (pytest-xdist#1386). Write it where this
    pytest reads it."""
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None or "@" in item.nodeid.rpartition("]")[2]:
            continue
        named = f"{item.nodeid}@{mark.args[0]}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import NodeId  # type: ignore[import-not-found,unused-ignore]  # pytest >= 9.2

            item._id = NodeId.parse(named)
        else:
            item._nodeid = named


def spec_id(spec: str) -> str:
    from ..datasets import slug

    return slug(spec).replace("_", "-") if ":" in spec else spec


def deselect(config: Any, items: list[pytest.Item]) -> None:
    """--grounding-resume: the samples already in the predictions file are deselected (the same
    on every xdist worker: the keys come from the controller). --grounding-epochs: a deterministic
    detector's epochs after the first too."""
    if groups_screens(config):
        name_groups(items)
    run = get_run(config)
    done = run.done_keys
    repeated = run.settings.epochs > 1
    if not done and not repeated:
        return
    once: dict[str, bool] = {}  # detector spec -> deterministic (runs its first epoch only)
    keep: list[pytest.Item] = []
    skip: list[pytest.Item] = []
    for item in items:
        params = item_params(item)
        sample = params.get("grounding_sample")
        name = params.get("grounding_detector_name")
        epoch = epoch_of(sample) if repeated and isinstance(sample, Sample) else None
        if epoch is not None and epoch > 1 and isinstance(name, str):
            if name not in once:
                once[name] = run.deterministic(name)
            if once[name]:  # a deterministic detector beside a sampled one: its first epoch only
                skip.append(item)
                continue
        key = (
            run.settings.task,
            params.get("grounding_detector_name"),
            getattr(sample, "dataset", None),
            getattr(sample, "uid", None),
        )
        (skip if key in done else keep).append(item)
    if skip:
        config.hook.pytest_deselected(items=skip)
        items[:] = keep
