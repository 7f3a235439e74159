"""The run's state, kept on one object in `config.stash` (module-level state would leak between
in-process pytester runs). Worker side: datasets and loaded detectors. Controller side: the
records from every worker, the predictions stream, the summary and the gates' verdicts."""

from __future__ import annotations

import importlib.util
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import gates as gates_mod
from . import metrics
from .datasets import Dataset, DatasetError, builtin_registry as builtin_formats, load_dataset
from .detectors import builtin_registry as builtin_detectors, describe, parse_spec, close as close_detector
from .options import MISSES_MODES, as_list, lookup, positive_float, positive_int
from .output import SCHEMA_VERSION, PredictionsWriter, write_json
from .registry import Registry, UnknownName

DEFAULT_DATASET_NAME = "synthetic"


class SettingError(ValueError):
    """A bad option value; the message names where it came from."""


@dataclass(frozen=True)
class Settings:
    dataset_specs: Tuple[str, ...]
    dataset_source: str
    detector_specs: Tuple[str, ...]
    detector_source: str
    json_path: Optional[Path]
    predictions_path: Optional[Path]
    gates: Tuple[gates_mod.Gate, ...]
    misses: str
    top_apps: Optional[int]
    limit: Optional[int]
    timeout: Optional[float]

    @classmethod
    def from_config(cls, config) -> "Settings":
        try:
            return cls._from_config(config)
        except ValueError as exc:
            raise SettingError(str(exc)) from None

    @classmethod
    def _from_config(cls, config) -> "Settings":
        datasets, dataset_source = lookup(config, "--dataset")
        detectors, detector_source = lookup(config, "--detector")
        if not as_list(detectors):
            detectors, detector_source = [default_detector()], "default"
        gate_specs, gate_source = lookup(config, "--grounding-min-accuracy")
        gates = tuple(gates_mod.parse_gate(spec, gate_source) for spec in as_list(gate_specs))
        misses, misses_source = lookup(config, "--grounding-misses")
        misses = (misses or ("xfail" if gates else "fail")).strip()
        if misses not in MISSES_MODES:
            raise ValueError(f"{misses_source}: {misses!r} is not one of {', '.join(MISSES_MODES)}")
        top_apps = positive_int(*lookup(config, "--grounding-top-apps"), allow_zero=True)
        json_path = config.getoption("grounding_json")
        predictions_path = config.getoption("grounding_predictions")
        return cls(
            dataset_specs=tuple(as_list(datasets)), dataset_source=dataset_source,
            detector_specs=tuple(dict.fromkeys(as_list(detectors))), detector_source=detector_source,
            json_path=Path(json_path).resolve() if json_path else None,
            predictions_path=Path(predictions_path).resolve() if predictions_path else None,
            gates=gates, misses=misses, top_apps=top_apps or None,
            limit=positive_int(*lookup(config, "--grounding-limit")),
            timeout=positive_float(*lookup(config, "--grounding-timeout")),
        )


def default_detector() -> str:
    """The real OCR detector when its extra is installed, so a new user sees a real model first."""
    return "ocr" if importlib.util.find_spec("rapidocr") is not None else "center"


class DetectorLoadError(Exception):
    pass


class DetectorPool:
    """Detectors loaded once per process (per xdist worker) and reused for every sample."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._loaded: Dict[str, Any] = {}
        self._failed: Dict[str, str] = {}
        self.info: Dict[str, Dict[str, Any]] = {}

    def get(self, spec: str) -> Any:
        if spec in self._failed:
            raise DetectorLoadError(self._failed[spec])
        if spec not in self._loaded:
            started = time.perf_counter()
            try:
                name, options = parse_spec(spec)
                factory = self.registry.get(name).load()
                self._loaded[spec] = factory(**options)
            except Exception as exc:
                self._failed[spec] = f"detector {spec!r} could not be loaded: {type(exc).__name__}: {exc}"
                raise DetectorLoadError(self._failed[spec]) from exc
            self.info[spec] = metrics.plain({**describe(self._loaded[spec]),
                                             "load_s": round(time.perf_counter() - started, 3)})
        return self._loaded[spec]

    def close(self) -> None:
        for detector in self._loaded.values():
            close_detector(detector)
        self._loaded.clear()


@dataclass
class GroundingRun:
    config: Any
    settings: Settings
    formats: Registry
    detectors: Registry
    pool: DetectorPool
    datasets: Dict[Tuple[str, str], Dataset] = field(default_factory=dict)
    records: List[Dict[str, Any]] = field(default_factory=list)
    detector_info: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    summary: Optional[Dict[str, Any]] = None
    verdicts: List[gates_mod.Verdict] = field(default_factory=list)
    interrupted: bool = False
    started: float = field(default_factory=time.time)
    _writer: Optional[PredictionsWriter] = None

    @classmethod
    def create(cls, config) -> "GroundingRun":
        formats, detectors = builtin_formats(), builtin_detectors()
        config.hook.pytest_grounding_register_formats.call_historic(kwargs={"registry": formats})
        config.hook.pytest_grounding_register_detectors.call_historic(kwargs={"registry": detectors})
        formats.register_entry_points("pytest_grounding.formats")
        detectors.register_entry_points("pytest_grounding.detectors")
        return cls(config=config, settings=Settings.from_config(config), formats=formats,
                   detectors=detectors, pool=DetectorPool(detectors))

    # -- what runs --------------------------------------------------------------------------------

    def check_detector_specs(self, specs: Sequence[str], source: str) -> None:
        for spec in specs:
            try:
                name, _ = parse_spec(spec)
                self.detectors.get(name)
            except (UnknownName, ValueError) as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None

    def dataset(self, spec: str, base: Path) -> Dataset:
        """Loaded once per process; named uniquely within the run."""
        key = (spec, str(base))
        if key not in self.datasets:
            dataset = load_dataset(spec, base=base, registry=self.formats)
            taken = {d.name for d in self.datasets.values()}
            if dataset.name in taken:
                suffix = 2
                while f"{dataset.name}-{suffix}" in taken:
                    suffix += 1
                dataset = load_dataset(spec, base=base, registry=self.formats, name=f"{dataset.name}-{suffix}")
            self.datasets[key] = dataset
        return self.datasets[key]

    def default_dataset(self) -> Dataset:
        from .synth import default_dataset_dir

        path = default_dataset_dir()
        key = ("<default>", str(path))
        if key not in self.datasets:
            self.datasets[key] = load_dataset(f"pointerbench:{path}", registry=self.formats,
                                              name=DEFAULT_DATASET_NAME)
        return self.datasets[key]

    def datasets_for(self, pinned: Sequence[str], base: Path) -> List[Dataset]:
        """A suite's pinned datasets (paths relative to its file), else the run's, else the default."""
        if pinned:
            return [self.dataset(spec, base) for spec in pinned]
        if self.settings.dataset_specs:
            base = self.config.invocation_params.dir if self.settings.dataset_source.startswith("--") \
                else self.config.rootpath
            return [self.dataset(spec, Path(base)) for spec in self.settings.dataset_specs]
        return [self.default_dataset()]

    def check_run_settings(self) -> None:
        """Fail fast, before any worker starts, on a detector or dataset named on the command line
        or in the ini file that cannot be used."""
        self.check_detector_specs(self.settings.detector_specs, self.settings.detector_source)
        if self.settings.dataset_specs:
            try:
                self.datasets_for((), Path.cwd())
            except DatasetError as exc:
                raise SettingError(f"{self.settings.dataset_source}: {exc}") from None

    # -- controller: results ----------------------------------------------------------------------

    def add_record(self, record: Dict[str, Any]) -> None:
        self.records.append(record)
        if self.settings.predictions_path is not None:
            if self._writer is None:
                self._writer = PredictionsWriter(self.settings.predictions_path)
            self._writer.write(record)

    def finish(self, interrupted: bool) -> None:
        self.interrupted = interrupted
        if self._writer is not None:
            self._writer.close()
        if not self.records:
            return
        self.summary = metrics.summarize(self.records)
        if not interrupted:
            self.verdicts = gates_mod.judge(list(self.settings.gates), self.summary)

    @property
    def failed_gates(self) -> List[gates_mod.Verdict]:
        return [v for v in self.verdicts if not v.passed]

    def dataset_summaries(self) -> List[Dict[str, Any]]:
        used = {r["dataset"] for r in self.records}
        seen, out = set(), []
        for dataset in self.datasets.values():
            if dataset.name in used and dataset.name not in seen:
                seen.add(dataset.name)
                out.append(dataset.summary())
        return sorted(out, key=lambda d: d["name"])

    def all_detector_info(self) -> Dict[str, Dict[str, Any]]:
        return {**self.pool.info, **self.detector_info}

    def document(self) -> Dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": "pytest-grounding",
            "partial": self.interrupted,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "duration_s": round(time.time() - self.started, 3),
            "run": {
                "args": list(self.config.invocation_params.args),
                "datasets": self.dataset_summaries(),
                "detectors": self.all_detector_info(),
                "settings": {
                    "misses": self.settings.misses, "limit": self.settings.limit,
                    "timeout_s": self.settings.timeout, "top_apps": self.settings.top_apps,
                    "gates": [{"slice": g.label, "threshold": g.threshold, "source": g.source}
                              for g in self.settings.gates],
                },
                "workers": self.config.getoption("numprocesses", None) if self.config.pluginmanager.hasplugin("xdist") else None,
            },
            "versions": versions(),
            "summary": self.summary or {},
            "gates": [{"detector": v.detector, "slice": v.gate.label, "threshold": v.gate.threshold,
                       "accuracy": v.accuracy, "scored": v.scored, "passed": v.passed} for v in self.verdicts],
            "samples": sorted(self.records, key=lambda r: (r["detector"], r["dataset"], r["uid"])),
        }

    def write_report(self) -> None:
        if self.settings.json_path is not None:
            write_json(self.settings.json_path, self.document())


def versions() -> Dict[str, Optional[str]]:
    from importlib.metadata import PackageNotFoundError, version

    found: Dict[str, Optional[str]] = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in ("pytest-grounding", "pytest", "pytest-xdist", "pytest-benchmark", "pillow", "numpy",
                    "onnxruntime-gpu", "onnxruntime", "rapidocr", "torch", "transformers"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found
