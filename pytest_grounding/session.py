"""The run's state, kept on one object in `config.stash` (module-level state would leak between
in-process pytester runs). Worker side: datasets and loaded detectors. Controller side: the
records from every worker, the predictions stream, the summary and the gates' verdicts."""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import baseline as baseline_mod
from . import cost as cost_mod
from . import gates as gates_mod
from . import metrics, reproduce
from . import resume as resume_mod
from .datasets import Dataset, DatasetError, load_dataset, with_language
from .datasets import builtin_registry as builtin_formats
from .detectors import EXTRAS, OptionError, bind_options, describe, parse_spec
from .detectors import builtin_registry as builtin_detectors
from .detectors import close as close_detector
from .output import (
    SCHEMA_VERSION,
    OutputError,
    PredictionsWriter,
    check_writable,
    read_predictions,
    write_atomic,
    write_json,
)
from .registry import Registry, UnknownName
from .settings import SettingError, Settings, missing_extra
from .strategies import builtin_registry as builtin_strategies
from .strategies import check as check_strategies
from .strategies import split_chain
from .strategies import wrap as wrap_strategies

DEFAULT_DATASET_NAME = "synthetic"

__all__ = ["DetectorLoadError", "GroundingRun", "SettingError", "Settings"]  # SettingError: the plugin's


class DetectorLoadError(Exception):
    pass


class DetectorPool:
    """Detectors loaded once per process (per xdist worker) and reused for every sample."""

    def __init__(self, registry: Registry, strategies: Registry | None = None) -> None:
        self.registry = registry
        self.strategies = strategies if strategies is not None else builtin_strategies()
        self._loaded: dict[str, Any] = {}
        self._failed: dict[str, str] = {}
        self.info: dict[str, dict[str, Any]] = {}

    def get(self, spec: str) -> Any:
        if spec in self._failed:
            raise DetectorLoadError(self._failed[spec])
        if spec not in self._loaded:
            started = time.perf_counter()
            try:
                chain = split_chain(spec, self.strategies)
                name, options = parse_spec(chain.detector, raw=True)
                factory = self.registry.get(name).load()
                detector = factory(**bind_options(name, factory, options))
                self._loaded[spec] = wrap_strategies(detector, chain.strategies, self.strategies)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit from a model's import too: an error per item, not a dead run
                self._failed[spec] = f"detector {spec!r} could not be loaded: {type(exc).__name__}: {exc}"
                raise DetectorLoadError(self._failed[spec]) from exc
            self.info[spec] = metrics.plain(
                {**describe(self._loaded[spec]), "load_s": round(time.perf_counter() - started, 3)}
            )
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
    strategies: Registry = field(default_factory=builtin_strategies)
    datasets: dict[tuple[str, str], Dataset] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    detector_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    verdicts: list[Any] = field(default_factory=list)  # gates_mod.Verdict | gates_mod.ErrorVerdict
    interrupted: bool = False
    started: float = field(default_factory=time.time)
    notes: list[str] = field(default_factory=list)  # said once, in the header and the summary
    worker_datasets: dict[str, dict[str, Any]] = field(default_factory=dict)  # summaries sent by xdist workers
    resumed: list[dict[str, Any]] = field(default_factory=list)  # records kept from the file resumed
    done_keys: frozenset = frozenset()  # (task, detector, dataset, uid) not to run again
    output_errors: list[str] = field(default_factory=list)
    baseline: baseline_mod.Baseline | None = None  # controller: the baseline compared with, if any
    expected: dict[baseline_mod.Key, str] = field(default_factory=dict)  # its outcomes (workers: from workerinput)
    baseline_loaded: bool = False  # a baseline is compared with (not absent, not being rewritten)
    comparison: baseline_mod.Comparison | None = None
    baseline_status: str | None = None  # written | updated | compared | not written
    baseline_problem: str | None = None  # why the baseline fails the run (written on a first run, ...)
    published: reproduce.Table | None = None  # controller: the figures the reproduction check reads
    reproductions: list[reproduce.Reproduction] = field(default_factory=list)
    cost: dict[str, dict[str, Any]] = field(default_factory=dict)  # per summary block: tokens (and cost)
    _writer: PredictionsWriter | None = None

    @classmethod
    def create(cls, config) -> GroundingRun:
        formats, detectors, strategies = builtin_formats(), builtin_detectors(), builtin_strategies()
        config.hook.pytest_grounding_register_formats.call_historic(kwargs={"registry": formats})
        config.hook.pytest_grounding_register_detectors.call_historic(kwargs={"registry": detectors})
        config.hook.pytest_grounding_register_strategies.call_historic(kwargs={"registry": strategies})
        settings = Settings.from_config(config)
        register_project_presets(config, settings.presets_path)
        formats.register_entry_points("pytest_grounding.formats")
        detectors.register_entry_points("pytest_grounding.detectors")
        strategies.register_entry_points("pytest_grounding.strategies")
        return cls(
            config=config,
            settings=settings,
            formats=formats,
            detectors=detectors,
            pool=DetectorPool(detectors, strategies),
            strategies=strategies,
        )

    # -- what runs --------------------------------------------------------------------------------

    def check_detector_specs(self, specs: Sequence[str], source: str) -> None:
        """Unknown names, a missing extra and option typos are usage errors, said once, before any
        sample runs (not an error on every item)."""
        for spec in specs:
            try:
                chain = split_chain(spec, self.strategies)
                name, options = parse_spec(chain.detector, raw=True)
                entry = self.detectors.get(name)
                extra = EXTRAS.get(name) if entry.origin == "built-in" else None
                absent = missing_extra(extra) if extra else None
                if absent:
                    raise ValueError(
                        f"detector {name!r} needs the {extra!r} extra ({absent} is not installed): "
                        f'pip install "pytest-grounding[{extra}]"'
                    )
                try:
                    factory = entry.load()
                except ImportError as exc:
                    hint = f': pip install "pytest-grounding[{extra}]"' if extra else ""
                    raise ValueError(f"detector {name!r} cannot be imported ({exc}){hint}") from None
                bind_options(name, factory, options)
                check_strategies(chain.strategies, self.strategies)
            except (UnknownName, OptionError, ValueError) as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None

    def dataset(self, spec: str, base: Path) -> Dataset:
        """Loaded once per process; named uniquely within the run. The same folder given twice (by
        two specs) is one dataset, run once."""
        key = (spec, str(base))
        if key not in self.datasets:
            dataset = with_language(load_dataset(spec, base=base, registry=self.formats), self.settings.language)
            same = next((d for d in self.datasets.values() if _identity(d) == _identity(dataset)), None)
            if same is not None:
                self.note(f"dataset {spec!r} is {same.name} ({same.path}) given again: it runs once")
                self.datasets[key] = same
                return same
            taken = {d.name for d in self.datasets.values()}
            if dataset.name in taken:
                suffix = 2
                while f"{dataset.name}-{suffix}" in taken:
                    suffix += 1
                dataset = with_language(
                    load_dataset(spec, base=base, registry=self.formats, name=f"{dataset.name}-{suffix}"),
                    self.settings.language,
                )
            self._note_duplicate_ids(dataset)
            self.datasets[key] = dataset
        return self.datasets[key]

    def _note_duplicate_ids(self, dataset: Dataset) -> None:
        seen: set = set()
        repeated = []
        for sample in dataset.samples:
            if sample.id in seen:
                repeated.append(sample.id)
            seen.add(sample.id)
        if repeated:
            self.note(
                f"dataset {dataset.name}: {len(repeated)} samples reuse an id (first: {repeated[0]!r}); their "
                f"predictions lines share it (python -m pytest_grounding validate {dataset.path} lists them)"
            )

    def fingerprint_of(self, dataset_name: str) -> str | None:
        return next((d.fingerprint for d in self.datasets.values() if d.name == dataset_name), None)

    def crash_record(self, nodeid: str, message: str) -> dict[str, Any] | None:
        """An error record for an item whose worker died: the sample is found by its test id among
        the run's datasets; a sample this process never loaded (pinned by a suite) gets a record
        that names the test id."""
        from .datasets import slug
        from .datasets._common import PLACEHOLDER_BOX
        from .types import Sample

        if "@" in nodeid.rpartition("]")[2]:  # xdist's loadgroup suffix: "...[params]@group"
            nodeid = nodeid[: nodeid.rindex("@")]
        params = nodeid.rpartition("[")[2].rstrip("]")
        specs = {(slug(spec).replace("_", "-") if ":" in spec else spec): spec for spec in self.settings.detector_specs}
        detector = next(
            (spec for key, spec in sorted(specs.items(), key=lambda kv: -len(kv[0])) if params.startswith(key + "-")),
            "?",
        )
        samples = (sample for dataset in self.datasets.values() for sample in dataset.samples)
        sample = next((s for s in samples if params.endswith("-" + s.uid) or params == s.uid), None)
        if sample is None and detector == "?":
            return None  # not a grounding item (another test of the same session)
        if sample is None:
            sample = Sample(dataset="?", id=params, uid=params, image=Path("?"), instruction="", bbox=PLACEHOLDER_BOX)
        record = metrics.error_record(sample, detector=detector, message=message)
        record["task"] = self.settings.task
        record["fingerprint"] = self.fingerprint_of(sample.dataset)
        return record

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def default_dataset(self, on_generate=None) -> Dataset:
        from .synth import default_dataset_dir

        path = default_dataset_dir(on_generate=on_generate)
        key = ("<default>", str(path))
        if key not in self.datasets:
            self.datasets[key] = with_language(
                load_dataset(f"pointerbench:{path}", registry=self.formats, name=DEFAULT_DATASET_NAME),
                self.settings.language,
            )
        return self.datasets[key]

    def datasets_for(self, pinned: Sequence[str], base: Path) -> list[Dataset]:
        """A suite's pinned datasets (paths relative to its file), else the run's, else the default."""
        if pinned:
            found = [self.dataset(spec, base) for spec in pinned]
        elif self.settings.dataset_specs:
            base = (
                self.config.invocation_params.dir
                if self.settings.dataset_source.startswith("--")
                else self.config.rootpath
            )
            found = [self.dataset(spec, Path(base)) for spec in self.settings.dataset_specs]
        else:
            found = [self.default_dataset()]
        return list({id(d): d for d in found}.values())

    def check_run_settings(self, on_generate=None) -> None:
        """Fail fast, before any worker starts, on a detector or dataset named on the command line
        or in the ini file that cannot be used, or an output path that cannot be written. Loads
        the run's datasets here too, so the controller can name them under xdist."""
        self.check_detector_specs(self.settings.detector_specs, self.settings.detector_source)
        try:
            if self.settings.dataset_specs:
                self.datasets_for((), Path.cwd())
            else:
                self.default_dataset(on_generate=on_generate)
        except DatasetError as exc:
            raise SettingError(f"{self.settings.dataset_source}: {exc}") from None
        if self.settings.plots_dir is not None:
            from .plots import PlotsUnavailable, check_plots

            try:
                check_plots(self.settings.plots_dir)
            except PlotsUnavailable as exc:
                raise SettingError(f"--grounding-plots: {exc}") from None
        for flag, path in (
            ("--grounding-json", self.settings.json_path),
            ("--grounding-predictions", self.settings.predictions_path),
            ("--grounding-html", self.settings.html_path),
        ):
            if path is not None:
                try:
                    check_writable(path)
                except OutputError as exc:
                    raise SettingError(f"{flag}: {exc}") from None

    # -- controller: baseline -------------------------------------------------------------------

    def load_baseline(self) -> None:
        """Read and check the baseline before any sample runs: another dataset version, detector spec
        or task is a usage error. Absent (or to be rewritten): the folder must be writable."""
        path = self.settings.baseline_path
        if path is None:
            return
        if self.settings.update_baseline or not path.exists():
            try:
                check_writable(path)
            except OutputError as exc:
                raise SettingError(f"--grounding-baseline: {exc}") from None
            return
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingError(f"--grounding-baseline: cannot read {path}: {exc}") from None
        try:
            baseline = baseline_mod.loads(text, str(path))
            baseline_mod.check_compatible(
                baseline,
                where=str(path),
                task=self.settings.task,
                datasets={d.name: d.fingerprint for d in self.datasets.values()},
                detectors=self.settings.detector_specs,
            )
        except baseline_mod.BaselineError as exc:
            raise SettingError(f"--grounding-baseline: {exc}") from None
        self.baseline = baseline
        self.expected = dict(baseline.outcomes)
        self.baseline_loaded = True

    def _finish_baseline(self) -> None:
        path = self.settings.baseline_path
        if path is None:
            return
        if self.interrupted or not self.records:
            # Neither a partial run nor an empty one (--co, -k matching nothing) is a baseline.
            self.baseline_status = "not written" if self.baseline is None else None
            return
        if self.baseline is not None:
            self.comparison = baseline_mod.compare(
                self.baseline, self.records, self.settings.tolerances, self.settings.max_slowdown
            )
            self.baseline_status = "compared"
            if not self.comparison.passed:
                found = self.comparison
                worse = [f"{len(found.regressions)} regressions"] if found.regressions else []
                worse += [f"{len(found.failed_slices)} slices beyond their tolerance"] if found.failed_slices else []
                slower = [v for v in found.latency if not v.passed]
                worse += [f"{len(slower)} latency figures beyond --grounding-max-slowdown"] if slower else []
                self.baseline_problem = f"the run is worse than the baseline {path}: {', '.join(worse)}"
            return
        document = baseline_mod.build(self.records, self.settings.task)
        try:
            write_atomic(path, baseline_mod.dumps(document))
        except OSError as exc:
            self.baseline_status = "not written"
            self.baseline_problem = f"baseline {path} not written: {exc}"
            return
        samples = len(document["samples"])
        if self.settings.update_baseline:
            self.baseline_status = "updated"
            self.note(f"baseline {path} rewritten from this run: {samples} samples (--grounding-update-baseline)")
        else:
            self.baseline_status = "written"
            self.baseline_problem = (
                f"baseline {path} did not exist: written now with {samples} samples; check it, commit it and "
                "run again to compare with it"
            )

    @property
    def baseline_failed(self) -> bool:
        return self.baseline_problem is not None

    def baseline_document(self) -> dict[str, Any] | None:
        if self.settings.baseline_path is None:
            return None
        found: dict[str, Any] = {
            "path": str(self.settings.baseline_path),
            "status": self.baseline_status,
            "problem": self.baseline_problem,
            "tolerance": self.settings.tolerances.default,
            "tolerances": [{"slice": t.label, "tolerance": t.share} for t in self.settings.tolerances.per_slice],
            "max_slowdown": self.settings.max_slowdown,
        }
        if self.comparison is not None:
            found.update(baseline_mod.document_of(self.comparison))
        return found

    # -- controller: published figures -------------------------------------------------------------

    def load_published(self) -> None:
        """The shipped figures plus the project's (--grounding-published), read and checked before
        any sample runs."""
        path = self.settings.published_path
        try:
            table = reproduce.shipped_table()
            if path is not None:
                table = table.merged(reproduce.read_table(path)).check(str(path))
        except reproduce.PublishedError as exc:
            raise SettingError(f"--grounding-published: {exc}") from None
        self.published = table

    # -- controller: resume -----------------------------------------------------------------------

    def load_resume(self) -> None:
        """Read the predictions file being resumed: keep the records of this run's detectors and
        datasets (errors are run again); refuse a file from another dataset version or detector."""
        path = self.settings.predictions_path
        if not self.settings.resume or path is None or not path.exists():
            return
        fingerprints = {d.name: d.fingerprint for d in self.datasets.values()}
        try:
            lines = read_predictions(path)
        except OutputError as exc:
            raise SettingError(f"--grounding-resume: {exc}") from None
        kept: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        samples = {(d.name, s.uid): s for d in self.datasets.values() for s in d.samples}
        for lineno, line in lines:
            where = f"{path}:{lineno}"
            if not isinstance(line, dict) or not {"detector", "dataset", "uid", "fingerprint", "outcome"} <= set(line):
                raise SettingError(
                    f"--grounding-resume: {where} is not a line this plugin wrote (no detector, "
                    "dataset, uid, fingerprint and outcome); refusing to mix it into this run"
                )
            if line["detector"] not in self.settings.detector_specs:
                raise SettingError(
                    f"--grounding-resume: {where} is from detector {line['detector']!r}; this run's detectors are "
                    f"{', '.join(self.settings.detector_specs)}. Refusing to mix them: use another predictions file "
                    "or drop --grounding-resume"
                )
            task = line.get("task", metrics.GROUNDING)
            if task != self.settings.task:
                raise SettingError(
                    f"--grounding-resume: {where} is from the {task} task; this run measures {self.settings.task}. "
                    "Refusing to mix them: use another predictions file or drop --grounding-resume"
                )
            if fingerprints.get(line["dataset"]) != line["fingerprint"]:
                now = fingerprints.get(line["dataset"])
                what = f"fingerprint {now}" if now else "no such dataset"
                raise SettingError(
                    f"--grounding-resume: {where} is from dataset {line['dataset']!r} with fingerprint "
                    f"{line['fingerprint']}; this run has {what}. Refusing to mix dataset versions: use another "
                    "predictions file or drop --grounding-resume"
                )
            key = (task, line["detector"], line["dataset"], line["uid"])
            kept.pop(key, None)
            rescored = resume_mod.rescore(line, samples, where)  # never trust a stored outcome
            if rescored.note:
                self.note(f"--grounding-resume: {rescored.note}")
            if rescored.record is not None and rescored.record["outcome"] != metrics.ERROR:
                kept[key] = rescored.record
        self.resumed = list(kept.values())
        self.done_keys = frozenset(kept)
        self.records.extend(self.resumed)

    def open_predictions(self) -> None:
        """Opened before the first sample runs: a resumed run rewrites what it keeps first."""
        if self.settings.predictions_path is not None and self._writer is None:
            self._writer = PredictionsWriter(self.settings.predictions_path)
            for record in self.resumed:
                self._writer.write(record)

    # -- controller: results ----------------------------------------------------------------------

    def add_record(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.settings.predictions_path is not None:
            self.open_predictions()
            assert self._writer is not None
            self._writer.write(record)

    def finish(self, interrupted: bool) -> None:
        self.interrupted = interrupted
        if self._writer is not None:
            self._writer.close()
            if self._writer.error:
                self.output_errors.append(self._writer.error)
        if not self.records:
            self._finish_baseline()
            return
        self.summary = metrics.summarize(self.records, refusal_rows=self.settings.refusal_rows)
        self.cost = cost_mod.summarize(self.records, self.settings.price, key=metrics.summary_key)
        if self.published is not None:
            self.reproductions = reproduce.check(
                self.records,
                self.dataset_summaries(),
                self.all_detector_info(),
                self.published,
                interrupted=interrupted,
                limit=self.settings.limit,
                registered=registered_preset,
            )
        if not interrupted:
            self.verdicts = gates_mod.judge(
                list(self.settings.gates), self.summary, max_errors=self.settings.max_errors
            )
        self._finish_baseline()

    @property
    def failed_gates(self) -> list[Any]:
        return [v for v in self.verdicts if not v.passed]

    def dataset_summaries(self) -> list[dict[str, Any]]:
        """The datasets the records came from: loaded here, or (pinned by a suite under xdist)
        described by the workers."""
        used = {r["dataset"] for r in self.records}
        found: dict[str, dict[str, Any]] = dict(self.worker_datasets)
        for dataset in self.datasets.values():
            found.setdefault(dataset.name, dataset.summary())
        out = []
        for name in sorted(used & set(found)):
            summary = dict(found[name])
            if self.settings.limit is not None and self.settings.limit < summary["samples"]:
                summary["limit"] = self.settings.limit
            out.append(summary)
        return out

    def all_detector_info(self) -> dict[str, dict[str, Any]]:
        found = {**self.pool.info, **self.detector_info}
        for spec, info in found.items():  # a describe() that raised: said once, the run goes on
            if info.get("describe_error"):
                self.note(f"detector {spec}: describe() raised {info['describe_error']}")
        return found

    def document(self) -> dict[str, Any]:
        self.all_detector_info()  # first: its notes belong in this document
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": "pytest-grounding",
            "partial": self.interrupted,
            "resumed": len(self.resumed),
            "notes": list(self.notes),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "duration_s": round(time.time() - self.started, 3),
            "run": {
                "args": list(self.config.invocation_params.args),
                "datasets": self.dataset_summaries(),
                "detectors": self.all_detector_info(),
                "settings": {
                    "misses": self.settings.misses,
                    "limit": self.settings.limit,
                    "max_errors": self.settings.max_errors,
                    "resume": self.settings.resume,
                    "task": self.settings.task,
                    "iou_threshold": self.settings.iou_threshold,
                    "refusal_rows": self.settings.refusal_rows,
                    "language": self.settings.language,
                    "timeout_s": self.settings.timeout,
                    "top_apps": self.settings.top_apps,
                    "gates": [
                        {"slice": g.label, "threshold": g.threshold, "source": g.source} for g in self.settings.gates
                    ],
                },
                "workers": self.config.getoption("numprocesses", None)
                if self.config.pluginmanager.hasplugin("xdist")
                else None,
            },
            "versions": versions(),
            "summary": self.summary or {},
            "gates": [
                {
                    "detector": v.detector,
                    "slice": v.gate.label,
                    "threshold": v.gate.threshold,
                    "accuracy": v.accuracy,
                    "scored": v.scored,
                    "passed": v.passed,
                }
                for v in self.verdicts
                if isinstance(v, gates_mod.Verdict)
            ],
            "errors_check": [
                {
                    "detector": v.detector,
                    "errors": v.errors,
                    "samples": v.samples,
                    "max_share": v.max_share,
                    "passed": v.passed,
                }
                for v in self.verdicts
                if isinstance(v, gates_mod.ErrorVerdict)
            ],
            "baseline": self.baseline_document(),
            "reproduction": [found.as_dict() for found in self.reproductions],
            "cost": cost_mod.document(self.cost, self.settings.price),
            "samples": sorted(self.records, key=metrics.record_order),
        }

    def write_report(self) -> None:
        """The JSON report, the HTML page and the plots, all from one document. One that cannot be
        written is said in the summary; it never ends the run."""
        settings = self.settings
        if settings.json_path is None and settings.html_path is None and settings.plots_dir is None:
            return
        document = self.document()
        if settings.json_path is not None:
            try:
                write_json(settings.json_path, document)
            except (OSError, ValueError) as exc:
                self.output_errors.append(f"JSON report {settings.json_path} not written: {exc}")
        if settings.html_path is not None:
            from .htmlreport import write_html

            try:
                write_html(document, settings.html_path)
            except Exception as exc:  # a page that fails must not end the run: the JSON is written
                self.output_errors.append(f"HTML report {settings.html_path} not written: {type(exc).__name__}: {exc}")
        if settings.plots_dir is not None:
            from .plots import write_plots

            try:
                write_plots(document, settings.plots_dir)
            except Exception as exc:
                self.output_errors.append(f"plots in {settings.plots_dir} not written: {type(exc).__name__}: {exc}")


def registered_preset(name: str) -> dict[str, Any] | None:
    """A preset as registered (its describe(), in the report's plain types), or None when the name
    is not one (a detector's own preset)."""
    try:
        from .vlm.library import PRESETS
        from .vlm.presets import get_preset

        # A project preset that takes a built-in's name is compared with the built-in (the published setup)
        shipped = {preset.name: preset for preset in PRESETS}
        return metrics.plain((shipped.get(name) or get_preset(name)).describe())
    except Exception:  # an unknown name (or presets that cannot be read): nothing to compare with
        return None


def _identity(dataset: Dataset) -> tuple[str, str, str]:
    """Two specs name the same dataset when they read the same annotations for the same images
    (a folder and its metadata.jsonl, a path through a symlink)."""
    return (dataset.format, dataset.fingerprint, str(dataset.samples[0].image.resolve()))


def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in (
        "pytest-grounding",
        "pytest",
        "pytest-xdist",
        "pytest-benchmark",
        "pillow",
        "numpy",
        "onnxruntime-gpu",
        "onnxruntime",
        "rapidocr",
        "torch",
        "transformers",
    ):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found


def register_project_presets(config, toml_path: Path | None) -> None:
    """Presets a project defines: the register_presets hook (conftest.py), then --grounding-presets.
    A file that cannot be read or a table that is not a preset is a usage error naming it."""
    from .vlm.presets import ProjectPresets, unregister_project_presets

    unregister_project_presets()  # a fresh run (pytester runs several in one process)
    registry = ProjectPresets()
    try:
        config.hook.pytest_grounding_register_presets.call_historic(kwargs={"registry": registry})
        if toml_path is not None:
            registry.load_toml(toml_path)
    except (ValueError, LookupError) as exc:  # LookupError: a conftest preset based on an unknown one
        message = str(exc)
        raise SettingError(f"--grounding-presets: {message}" if "presets file" in message else message) from None
