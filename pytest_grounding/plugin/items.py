"""Collection: samples and detectors become parametrized items (a suite's pinned datasets and
detectors, the run's, else the default), shards and --dist loadgroup's screen groups applied, and
the samples a resumed run already has deselected. The same on every xdist worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..core.types import Sample, epoch_of
from ..datasets import DatasetError, sharding
from .common.item_index import item_params, spec_id
from .common.settings import split_labels
from .compat.pytest_compat import name_groups
from .sessions import is_worker, local_startup, local_worker, plan_of


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
    plan = plan_of(metafunc.config)
    marker = metafunc.definition.get_closest_marker("grounding")
    specs = specs_of(metafunc, marker, plan)
    if wants_detector:
        where = f"@pytest.mark.grounding in {metafunc.definition.nodeid}"
        try:
            specs = pinned_labels(specs, plan, where)
        except ValueError as exc:  # a collection error naming the test function, no traceback
            pytest.fail(str(exc), pytrace=False)
        startup = local_startup(metafunc.config)
        if startup is None:
            plan.check_specs(specs, where)
        else:  # the controller: a pinned detector's preflight and frame check, as the run's own had
            with startup.metered():  # under the run's budget, as the start's checks
                startup.check_detector_specs(specs, where, _no_progress)
                startup.check_frames(specs, where, _no_progress)
            worker = local_worker(metafunc.config)
            if worker is not None:  # the only process: its samples' share is what every check left
                worker.startup_requests, worker.startup_seconds = startup.requests, startup.seconds
        metafunc.parametrize("grounding_detector_name", specs, ids=[spec_id(s) for s in specs])
    if wants_sample:
        samples: list[Sample] = []
        try:
            datasets = plan.datasets_for(marker_list(marker, "dataset"), Path(metafunc.definition.path).parent)
        except DatasetError as exc:  # a pinned dataset: a collection error naming the file, no traceback
            pytest.fail(f"{metafunc.definition.nodeid}: {exc}", pytrace=False)
        for dataset in datasets:
            samples.extend(dataset.samples[: plan.settings.selection.limit])
        if plan.settings.selection.shard is not None:  # other shards' samples never become items (ids unchanged)
            problem = None
            try:  # a test function pinned to a smaller dataset than the run's (the run checked its own)
                sharding.check_count(plan.settings.selection.shard, len(samples))
            except ValueError as exc:
                problem = str(exc)
            if problem is not None:  # a collection error naming the split, no traceback
                pytest.fail(f"{metafunc.definition.nodeid}: {problem}", pytrace=False)
            taken = sharding.take(samples, plan.settings.selection.shard)
            _plan_shard(metafunc.config, sharding.planned_by_dataset(samples, taken))
            samples = taken
        samples = plan.expand(samples, specs)  # variants and epochs: after the shard's split
        if wants_detector:
            plan.index.add(specs, samples)
        else:
            plan.index.add_samples(samples)
        if groups_screens(metafunc.config):
            metafunc.parametrize("grounding_sample", grouped(samples, metafunc.config.workerinput["workercount"]))
        else:
            metafunc.parametrize("grounding_sample", samples, ids=[s.uid for s in samples])


def specs_of(metafunc: Any, marker: Any, plan: Any) -> list[str]:
    """The detectors a test function's items run (its pinned ones, else the run's)."""
    if "grounding_detector_name" not in metafunc.fixturenames:
        return list(plan.settings.selection.detector_specs)
    return marker_list(marker, "detector") or list(plan.settings.selection.detector_specs)


def pinned_labels(specs: list[str], plan: Any, where: str) -> list[str]:
    """A marker's specs without their `label=`, each label kept in the plan (the worker's detector
    record carries it to the reports): the same rules as --detector's labels, across the run."""
    plain, labels = split_labels(tuple(specs), where)
    known = {**plan.settings.selection.detector_labels, **plan.index.labels}
    for spec, label in labels.items():
        if known.get(spec, label) != label:
            raise ValueError(f"{where}: detector {spec!r} is labelled {known[spec]!r} elsewhere, not {label!r}")
        other = next((s for s, name in known.items() if name == label and s != spec), None)
        if other is not None:
            raise ValueError(f"{where}: label {label!r} names two detectors ({other!r} and {spec!r})")
    plan.index.labels.update(labels)
    return list(plain)


def _no_progress(line: str) -> None:
    """Collection says nothing while a preflight runs (the controller's checks said it already)."""


def _plan_shard(config: Any, planned: dict[str, Any]) -> None:
    """The samples this shard was to score, per dataset: the report's shard block (the worker
    session hands them to the controller; the only process keeps them itself)."""
    worker = local_worker(config)
    if worker is not None:
        sharding.merge_planned(worker.shard_planned, planned)


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


def deselect(config: Any, items: list[pytest.Item]) -> None:
    """--grounding-resume: the samples already in the predictions file are deselected (the same
    on every xdist worker: the keys come from the controller). --grounding-epochs: a deterministic
    detector's epochs after the first too."""
    if groups_screens(config):
        name_groups(items)
    plan = plan_of(config)
    worker = local_worker(config)
    done = worker.done_keys if worker is not None else frozenset()
    repeated = plan.settings.selection.epochs > 1
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
                once[name] = plan.specs.deterministic(name)
            if once[name]:  # a deterministic detector beside a sampled one: its first epoch only
                skip.append(item)
                continue
        key = (
            plan.settings.selection.task,
            params.get("grounding_detector_name"),
            getattr(sample, "dataset", None),
            getattr(sample, "uid", None),
        )
        (skip if key in done else keep).append(item)
    if skip:
        config.hook.pytest_deselected(items=skip)
        items[:] = keep
