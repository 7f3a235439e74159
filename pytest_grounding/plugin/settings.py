"""The run's settings, read once from the command line and the ini file: every option checked
here, so a bad value is a usage error naming where it came from before any sample runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis import baseline as baseline_mod
from ..analysis import cost as cost_mod
from ..analysis import gates as gates_mod
from ..analysis import robustness
from ..core.profiles import Profile, get_profile
from ..core.record import MAX_EPOCHS
from ..datasets import sharding
from .options import (
    LANGUAGES,
    MISSES_MODES,
    PROGRESS_MODES,
    REFUSAL_ROWS,
    SCORING_PROFILES,
    TASKS,
    as_list,
    choice,
    count_or_all,
    lookup,
    positive_float,
    positive_int,
    share,
    switch,
)
from .replay import labelled_first


class SettingError(ValueError):
    """A bad option value; the message names where it came from."""


@dataclass(frozen=True)
class Selection:
    """What runs: the datasets and detectors (and where they were named), how much of them."""

    dataset_specs: tuple[str, ...]
    dataset_source: str
    detector_specs: tuple[str, ...]
    detector_source: str
    limit: int | None = None
    task: str = "grounding"
    language: str = "en"
    shard: sharding.Shard | None = None  # --grounding-shard: this run's share of the samples
    epochs: int = 1  # --grounding-epochs: each sample this many times (deterministic detectors: once)
    presets_path: Path | None = None
    perturb: tuple[str, ...] = ()  # --grounding-perturb: the axes' specs (plugin/perturb_state.py parses them)


@dataclass(frozen=True)
class ScoringSettings:
    """How a sample is judged."""

    timeout: float | None = None
    iou_threshold: float = 0.5
    refusal_rows: str = "include"
    scoring: str = "pixel"  # --grounding-scoring: the scoring profile (core/profiles.py)
    price: cost_mod.Price | None = None

    @property
    def profile(self) -> Profile:
        """The scoring profile of --grounding-scoring (core/profiles.py)."""
        return get_profile(self.scoring)


@dataclass(frozen=True)
class VerdictSettings:
    """What decides the exit status: gates, errors, misses, the baseline, the published figures."""

    gates: tuple[gates_mod.Gate, ...] = ()
    gate_on_interval: bool = False  # --grounding-gate-on-interval: gates on the interval's lower bound
    max_errors: float = 0.1
    misses: str = "fail"
    baseline_path: Path | None = None
    update_baseline: bool = False
    tolerances: baseline_mod.Tolerances = field(default_factory=baseline_mod.Tolerances)
    max_slowdown: float | None = None
    published_path: Path | None = None
    max_drops: tuple[robustness.MaxDrop, ...] = ()  # --grounding-max-drop: robustness gates


@dataclass(frozen=True)
class OutputSettings:
    """What the run writes and how it shows its progress and summary."""

    json_path: Path | None = None
    predictions_path: Path | None = None
    resume: bool = False
    html_path: Path | None = None
    plots_dir: Path | None = None
    progress: str = "auto"
    benchmark_table: bool = False
    show_misses: int | None = 10  # None: all
    top_apps: int | None = None
    answer_cache: Path | None = None  # --grounding-cache DIR (render/answer_store.py)
    log_targets: tuple[Any, ...] = ()  # --grounding-log: render/trackers.py's Target, each checked at start


@dataclass(frozen=True)
class Settings:
    """The run's settings, in four groups."""

    selection: Selection
    scoring: ScoringSettings = field(default_factory=ScoringSettings)
    verdict: VerdictSettings = field(default_factory=VerdictSettings)
    outputs: OutputSettings = field(default_factory=OutputSettings)

    @classmethod
    def from_config(cls, config) -> Settings:
        try:
            return cls._from_config(config)
        except ValueError as exc:
            raise SettingError(str(exc)) from None

    @classmethod
    def _from_config(cls, config) -> Settings:
        datasets, dataset_source = lookup(config, "--dataset")
        detectors, detector_source = lookup(config, "--detector")
        if not as_list(detectors):
            detectors, detector_source = [default_detector()], "default"
        gate_specs, gate_source = lookup(config, "--grounding-min-accuracy")
        gates = tuple(gates_mod.parse_gate(spec, gate_source) for spec in as_list(gate_specs))
        baseline_path = output_path(config, "--grounding-baseline")
        misses, misses_source = lookup(config, "--grounding-misses")
        max_drops = robustness.parse_max_drops(*lookup(config, "--grounding-max-drop"))
        misses = (misses or ("xfail" if gates or max_drops or baseline_path else "fail")).strip()
        if misses not in MISSES_MODES:
            raise ValueError(f"{misses_source}: {misses!r} is not one of {', '.join(MISSES_MODES)}")
        top_apps = positive_int(*lookup(config, "--grounding-top-apps"), allow_zero=True)
        json_path = config.getoption("grounding_json")
        predictions_path = config.getoption("grounding_predictions")
        resume = switch(config, "--grounding-resume")
        if resume and not predictions_path:
            raise ValueError("--grounding-resume needs --grounding-predictions PATH (the file it resumes from)")
        tolerance_specs, tolerance_source = lookup(config, "--grounding-tolerance")
        tolerances = baseline_mod.Tolerances.parse(as_list(tolerance_specs), tolerance_source)
        max_slowdown = positive_float(*lookup(config, "--grounding-max-slowdown"))
        if max_slowdown is not None and max_slowdown < 1:
            raise ValueError(f"--grounding-max-slowdown: {max_slowdown:g} is below 1 (a ratio: 1.25 = 25% slower)")
        update = switch(config, "--grounding-update-baseline")
        if baseline_path is None:
            for flag, given in (
                ("--grounding-update-baseline", update),
                ("--grounding-tolerance", tolerance_specs),
                ("--grounding-max-slowdown", max_slowdown),
            ):
                if given:
                    raise ValueError(f"{flag} needs --grounding-baseline PATH (the baseline it applies to)")
        return cls(
            selection=Selection(
                dataset_specs=tuple(as_list(datasets)),
                dataset_source=dataset_source,
                detector_specs=tuple(dict.fromkeys(labelled_first(spec) for spec in as_list(detectors))),
                detector_source=detector_source,
                limit=positive_int(*lookup(config, "--grounding-limit")),
                task=choice(*lookup(config, "--grounding-task"), TASKS),
                presets_path=output_path(config, "--grounding-presets"),
                perturb=tuple(as_list(lookup(config, "--grounding-perturb")[0])),
                language=choice(*lookup(config, "--grounding-language"), LANGUAGES),
                shard=shard_of(*lookup(config, "--grounding-shard")),
                epochs=positive_int(*lookup(config, "--grounding-epochs"), maximum=MAX_EPOCHS) or 1,
            ),
            scoring=ScoringSettings(
                timeout=positive_float(*lookup(config, "--grounding-timeout")),
                iou_threshold=share(*lookup(config, "--grounding-iou-threshold")),
                price=cost_mod.parse_price(*lookup(config, "--grounding-price")),
                refusal_rows=choice(*lookup(config, "--grounding-refusal-rows"), REFUSAL_ROWS),
                scoring=choice(*lookup(config, "--grounding-scoring"), SCORING_PROFILES),
            ),
            verdict=VerdictSettings(
                gates=gates,
                gate_on_interval=switch(config, "--grounding-gate-on-interval"),
                misses=misses,
                max_errors=share(*lookup(config, "--grounding-max-errors")),
                baseline_path=baseline_path,
                update_baseline=update,
                tolerances=tolerances,
                max_slowdown=max_slowdown,
                published_path=output_path(config, "--grounding-published"),
                max_drops=max_drops,
            ),
            outputs=OutputSettings(
                json_path=Path(json_path).resolve() if json_path else None,
                predictions_path=Path(predictions_path).resolve() if predictions_path else None,
                top_apps=top_apps or None,
                resume=resume,
                show_misses=count_or_all(*lookup(config, "--grounding-show-misses")),
                progress=choice(*lookup(config, "--grounding-progress"), PROGRESS_MODES),
                benchmark_table=switch(config, "--grounding-benchmark-table"),
                html_path=output_path(config, "--grounding-html"),
                plots_dir=output_path(config, "--grounding-plots"),
                answer_cache=output_path(config, "--grounding-cache"),
                log_targets=log_targets(*lookup(config, "--grounding-log")),
            ),
        )


def log_targets(value, source: str) -> tuple[Any, ...]:
    """--grounding-log: each target parsed and its extra found (a usage error at start, not at the end)."""
    if not as_list(value):
        return ()
    from ..render.trackers import parse_target

    return tuple(parse_target(text, source) for text in as_list(value))


def shard_of(value, source: str) -> sharding.Shard | None:
    """K/N or env; 1/1 is a plain run."""
    if value in (None, ""):
        return None
    return sharding.parse_shard(str(value), source)


def output_path(config, flag: str) -> Path | None:
    """An output path: from the command line, relative to where pytest was started; from the ini
    file, relative to the rootdir (where the ini file is)."""
    value, source = lookup(config, flag)
    if not value:
        return None
    base = Path(config.invocation_params.dir) if source.startswith("--") else Path(config.rootpath)
    return (base / str(value).strip()).resolve()


def default_detector() -> str:
    """The real OCR detector when its extra is installed, so a new user sees a real model first."""
    return "ocr" if missing_extra("ocr") is None else "center"


def missing_extra(extra: str) -> str | None:
    """The first distribution of `pytest-grounding[extra]` that is not installed, or None. Read
    from the package's own metadata, so it cannot drift from pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, requires, version

    try:
        requirements = requires("pytest-grounding") or []
    except PackageNotFoundError:  # run from a checkout that is not installed: nothing to compare with
        return None
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    for requirement in requirements:
        if not marker.search(requirement):
            continue
        name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]
        if name.startswith("pytest-grounding"):
            continue
        try:
            version(name)
        except PackageNotFoundError:
            return name
    return None
