"""The run's state, kept on one object in `config.stash` (module-level state would leak between
in-process pytester runs). Worker side: datasets and loaded detectors. Controller side: the
records from every worker, the predictions stream, the summary and the gates' verdicts. Steps of
their own elsewhere: `ledger.py` (one record per item, the items not run), `baseline_state.py`
(the baseline read, compared or written), `resume_state.py` (a resumed predictions file read back)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..analysis import baseline as baseline_mod
from ..analysis.throughput import Timeline, merge_served
from ..core.record import Record
from ..core.registry import Registry, UnknownName, installed_entry_points
from ..datasets import Dataset, DatasetError, load_dataset, sharding, with_language
from ..datasets import builtin_registry as builtin_formats
from ..detectors import EXTRAS, OptionError, bind_options, parse_spec
from ..detectors import builtin_registry as builtin_detectors
from ..detectors.strategies import builtin_registry as builtin_strategies
from ..detectors.strategies import check as check_strategies
from ..detectors.strategies import split_chain
from ..evaluate.scoring import error_record
from ..render.answer_store import open_store
from ..render.output import OutputError, PredictionsHold, PredictionsWriter
from . import baseline_state, resume_state
from .environment import register_project_presets, registered_preset, versions
from .ledger import Ledger, NotRun, identify, not_run_line
from .pool import DetectorLoadError, DetectorPool
from .screens import ScreenReader
from .settings import SettingError, Settings, missing_extra

if TYPE_CHECKING:  # the controller's end of a run: imported there, not by every worker
    from ..analysis import document as document_mod
    from ..analysis import reproduce

DEFAULT_DATASET_NAME = "synthetic"
ENTRY_POINT_KINDS = ("formats", "detectors", "strategies")  # pytest_grounding.<kind> entry-point groups
RUN_KEY = pytest.StashKey["GroundingRun"]()

__all__ = ["DetectorLoadError", "GroundingRun", "SettingError", "Settings"]  # SettingError: the plugin's


def get_run(config: Any) -> GroundingRun:
    return config.stash[RUN_KEY]


def is_worker(config: Any) -> bool:
    return hasattr(config, "workerinput")


@dataclass
class GroundingRun:
    config: Any
    settings: Settings
    formats: Registry
    detectors: Registry
    pool: DetectorPool
    strategies: Registry = field(default_factory=builtin_strategies)
    datasets: dict[tuple[str, str], Dataset] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    detector_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    verdicts: list[Any] = field(default_factory=list)  # gates_mod.Verdict | gates_mod.ErrorVerdict
    interrupted: bool = False
    started: float = field(default_factory=time.time)
    notes: list[str] = field(default_factory=list)  # said once, in the header and the summary
    worker_datasets: dict[str, dict[str, Any]] = field(default_factory=dict)  # summaries sent by xdist workers
    resumed: list[Record] = field(default_factory=list)  # records kept from the file resumed
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
    shard_planned: dict[str, dict[str, Any]] = field(default_factory=dict)  # --grounding-shard: per dataset
    preflighted: set[str] = field(default_factory=set)  # detector specs whose preflight passed
    timeline: Timeline = field(default_factory=Timeline)  # when records arrived: throughput
    served: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # spec -> process -> HTTP figures
    ledger: Ledger = field(default_factory=Ledger)  # controller: every item to score, one record each
    not_run: list[NotRun] = field(default_factory=list)  # controller: items no report came for
    screens: ScreenReader = field(default_factory=ScreenReader)  # screens decoded once for their samples
    _writer: PredictionsWriter | None = None
    _hold: PredictionsHold | None = None  # the predictions file, held by this run alone
    interrupted_writing: bool = False  # Ctrl-C came while the outputs were written (held until whole)

    @classmethod
    def create(cls, config) -> GroundingRun:
        formats, detectors, strategies = builtin_formats(), builtin_detectors(), builtin_strategies()
        config.hook.pytest_grounding_register_formats.call_historic(kwargs={"registry": formats})
        config.hook.pytest_grounding_register_detectors.call_historic(kwargs={"registry": detectors})
        config.hook.pytest_grounding_register_strategies.call_historic(kwargs={"registry": strategies})
        settings = Settings.from_config(config)
        register_project_presets(config, settings.presets_path)
        installed = installed_entry_points(*(f"pytest_grounding.{kind}" for kind in ENTRY_POINT_KINDS))
        for kind, registry in zip(ENTRY_POINT_KINDS, (formats, detectors, strategies), strict=True):
            registry.register_entry_points(f"pytest_grounding.{kind}", installed[f"pytest_grounding.{kind}"])
        return cls(
            config=config,
            settings=settings,
            formats=formats,
            detectors=detectors,
            pool=DetectorPool(detectors, strategies, open_store(settings.answer_cache)),  # --grounding-cache
            strategies=strategies,
        )

    # -- what runs --------------------------------------------------------------------------------

    def check_detector_specs(self, specs: Sequence[str], source: str) -> None:
        """Unknown names, a missing extra, option typos and (in the controller) what a detector's
        preflight finds missing (weights, CUDA, a server) are usage errors, said once, before any
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
                bound = bind_options(name, factory, options)
                check_strategies(chain.strategies, self.strategies)
                if self._preflights() and spec not in self.preflighted:
                    from ..detectors.preflight import run_preflight  # urllib, ssl: the controller's

                    run_preflight(name, factory, bound, self._say)  # weights, CUDA, a server: once, before workers
                    self.preflighted.add(spec)
            except (UnknownName, OptionError, ValueError) as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None

    def deterministic(self, spec: str) -> bool:
        """The detector's class says it gives the same answer every time (`deterministic = True`)."""
        try:
            name, _ = parse_spec(split_chain(spec, self.strategies).detector, raw=True)
            factory = self.detectors.get(name).load()
        except Exception:  # an unusable spec is check_detector_specs' message, not this one's
            return False
        return getattr(factory, "deterministic", False) is True

    def epochs_for(self, specs: Sequence[str]) -> int:
        """--grounding-epochs for items of these detectors: 1 when every one is deterministic."""
        epochs = self.settings.epochs
        if epochs <= 1 or all(self.deterministic(spec) for spec in specs):
            return 1
        return epochs

    def note_deterministic(self) -> None:
        """One line per deterministic detector asked for several epochs: it runs one."""
        if self.settings.epochs <= 1:
            return
        for spec in self.settings.detector_specs:
            if self.deterministic(spec):
                self.note(
                    f"--grounding-epochs {self.settings.epochs}: detector {spec} is deterministic (the same "
                    "answer every time): it runs one epoch"
                )

    def check_detector_samples(self, specs: Sequence[str], source: str) -> None:
        """A detector whose factory offers `check_samples` sees every sample's (id, size,
        instruction) before the run (the controller): a served model whose context cannot hold
        the largest screen is one message now, not an error on every such sample."""
        if not self._preflights():
            return
        from ..datasets.harness import header_size

        samples = [s for dataset in self.datasets.values() for s in dataset.samples[: self.settings.limit]]
        if self.settings.shard is not None:  # the samples this shard runs (-k is not known yet: all of them)
            samples = sharding.take(samples, self.settings.shard)
        for spec in specs:
            name, options = parse_spec(split_chain(spec, self.strategies).detector, raw=True)
            factory = self.detectors.get(name).load()
            check = getattr(factory, "check_samples", None)
            if check is None:
                continue
            sized = (
                (s.id, size, s.instruction)
                for s in samples
                if (size := s.image_size or header_size(Path(s.image))) is not None
            )
            try:
                check(sized, **bind_options(name, factory, options))
            except (ValueError, RuntimeError) as exc:  # ModelUnavailable (what, where, fix); a server gone since
                raise SettingError(f"{source} {spec}: {exc}") from None

    def detector_lines(self, specs: Sequence[str]) -> list[str]:
        """Load each detector (once per process) and say what it runs on. A DetectorLoadError
        propagates: the caller stops the run with it (one message, not an error per item)."""
        from ..render.terminal import runtime_line

        lines = []
        for spec in specs:
            self.pool.get(spec)
            lines.append(f"grounding: detector {spec}: {runtime_line(self.pool.info[spec])}")
        return lines

    def _say(self, line: str) -> None:
        """A preflight's progress line (a server loading), on the terminal."""
        from ..core.safetext import terminal_line

        writer = self.config.pluginmanager.get_plugin("terminalreporter")
        if writer is not None:
            writer.write_line(terminal_line(line))

    def _preflights(self) -> bool:
        """The controller checks (and may download) what detectors need; not for --collect-only."""
        option = getattr(self.config, "option", None)
        return not hasattr(self.config, "workerinput") and not getattr(option, "collectonly", False)

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

    def crash_record(self, nodeid: str, message: str) -> Record | None:
        """An error record for an item whose worker died (None: not a grounding item)."""
        for _, detector, sample in identify([nodeid], self.settings.detector_specs, self.datasets.values()):
            fingerprint = self.fingerprint_of(sample.dataset)
            return error_record(
                sample, detector=detector, message=message, task=self.settings.task, fingerprint=fingerprint
            )
        return None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def default_dataset(self, on_generate=None) -> Dataset:
        from ..datasets.synth import default_dataset_dir

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
        self.note_deterministic()
        try:
            if self.settings.dataset_specs:
                self.datasets_for((), Path.cwd())
            else:
                self.default_dataset(on_generate=on_generate)
        except DatasetError as exc:
            raise SettingError(f"{self.settings.dataset_source}: {exc}") from None
        self.check_replays()
        if self.settings.shard is not None:  # more shards than samples: said once, before any worker starts
            try:
                sharding.check_count(self.settings.shard, len(self.samples_in_order()))
            except ValueError as exc:
                raise SettingError(str(exc)) from None
        self.check_detector_samples(self.settings.detector_specs, self.settings.detector_source)
        from ..render.outputs import OutputUnusable, check_all

        try:
            check_all(self.settings)
        except OutputUnusable as exc:
            raise SettingError(str(exc)) from None

    def samples_in_order(self) -> list[Any]:
        """The run's samples as collection lists them (datasets in order, each to --grounding-limit):
        what --grounding-shard splits."""
        return [sample for dataset in self.datasets.values() for sample in dataset.samples[: self.settings.limit]]

    def check_replays(self) -> None:
        """A replayed file for another benchmark is a usage error now; its answers that match no
        sample of the run's datasets are counted in a note."""
        from .replay import check, replay_specs

        if not replay_specs(self.settings.detector_specs):
            return
        from ..detectors.replay.files import ReplayError

        samples = [sample for dataset in self.datasets.values() for sample in dataset.samples]
        try:
            fingerprints = {dataset.name: dataset.fingerprint for dataset in self.datasets.values()}
            for text in check(self.settings.detector_specs, samples, fingerprints):
                self.note(text)
        except ReplayError as exc:
            raise SettingError(str(exc)) from None

    # -- controller: baseline -------------------------------------------------------------------

    def load_baseline(self) -> None:
        """Read and check the baseline before any sample runs (baseline_state.py)."""
        baseline_state.load(self)

    @property
    def baseline_failed(self) -> bool:
        return self.baseline_problem is not None

    def baseline_document(self) -> dict[str, Any] | None:
        return baseline_state.document(self)

    # -- controller: published figures -------------------------------------------------------------

    def load_published(self) -> None:
        """The shipped figures plus the project's (--grounding-published), read and checked before
        any sample runs."""
        from ..analysis import reproduce

        path = self.settings.published_path
        try:
            table = reproduce.shipped_table()
            if path is not None:
                table = table.merged(reproduce.read_table(path)).check(str(path))
        except reproduce.PublishedError as exc:
            raise SettingError(f"--grounding-published: {exc}") from None
        self.published = table

    # -- controller: resume -----------------------------------------------------------------------

    def hold_predictions(self, args: Sequence[str] = ()) -> None:
        """The predictions file taken for this run before it is read or written (a SettingError
        naming the run that holds it); let go when the run ends."""
        path = self.settings.predictions_path
        if path is None or self._hold is not None:
            return
        import os
        import socket

        when = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started))
        holder = f"pid {os.getpid()} on {socket.gethostname()}, started {when}: pytest {' '.join(args)}"[:1000]
        try:
            self._hold = PredictionsHold(path, holder)
        except OutputError as exc:
            raise SettingError(f"--grounding-predictions: {exc}") from None

    def let_go_of_predictions(self) -> None:
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    def load_resume(self) -> None:
        """Keep what a resumed predictions file holds for this run (resume_state.py)."""
        resume_state.load(self)

    def open_predictions(self) -> None:
        """Opened before the first sample runs: a resumed run rewrites what it keeps first."""
        if self.settings.predictions_path is not None and self._writer is None:
            self._writer = PredictionsWriter(self.settings.predictions_path)
            for record in self.resumed:
                self._writer.write(record)

    # -- controller: results ----------------------------------------------------------------------

    def add_record(self, record: Record, item: str | None = None, *, crash: bool = False) -> bool:
        """One record per item (`ledger.py` says which one an item keeps; False: the item had one).
        A crash record reaches the predictions file at the end, if no real one replaced it."""
        if not self.ledger.place(self.records, item, record, crash=crash):
            return False
        self.timeline.add(record, time.monotonic())
        if not crash:
            self._stream(record)
        return True

    def _stream(self, record: Record) -> None:
        if self.settings.predictions_path is not None:
            self.open_predictions()
            assert self._writer is not None
            self._writer.write(record)

    def _account_not_run(self, interrupted: bool) -> None:
        """The items the run was to score that no report came for: listed, and the run is partial."""
        missing = identify(self.ledger.missing(), self.settings.detector_specs, self.datasets.values())
        self.not_run = [NotRun(nodeid, spec, sample.dataset, sample.id, sample.uid) for nodeid, spec, sample in missing]
        if self.not_run:
            total = len(self.ledger.placed) + len(self.not_run)
            resumable = self.settings.predictions_path is not None
            crashes = self.ledger.crashes
            self.note(not_run_line(self.not_run, total, crashes=crashes, interrupted=interrupted, resumable=resumable))

    def finish(self, interrupted: bool) -> None:
        for record in self.ledger.take_stand_ins():
            self._stream(record)
        self._account_not_run(interrupted)
        interrupted = interrupted or bool(self.not_run)
        self.interrupted = interrupted
        if self._writer is not None:
            self._writer.close()
            if self._writer.error:
                self.output_errors.append(self._writer.error)
        if not self.records:
            baseline_state.finish(self)
            return
        from ..analysis import document as document_mod

        found = document_mod.figures(
            self.records,
            self.scoring(),
            datasets=self.dataset_summaries(),
            detector_info=self.all_detector_info(),
            interrupted=interrupted,
            registered=registered_preset,
        )
        self.summary, self.cost = found.summary, found.cost
        self.reproductions, self.verdicts = list(found.reproductions), list(found.verdicts)
        baseline_state.finish(self)

    @property
    def failed_gates(self) -> list[Any]:
        return [v for v in self.verdicts if not v.passed]

    def dataset_summaries(self) -> list[dict[str, Any]]:
        """The datasets the records came from: loaded here, or (pinned by a suite under xdist)
        described by the workers."""
        from ..analysis import document as document_mod

        found: dict[str, dict[str, Any]] = dict(self.worker_datasets)
        for dataset in self.datasets.values():
            found.setdefault(dataset.name, dataset.summary())
        return document_mod.dataset_entries(found, self.records, self.settings.limit)

    def all_detector_info(self) -> dict[str, dict[str, Any]]:
        info = {**self.pool.info, **self.detector_info}
        for spec, processes in self.served.items():  # served figures of every process, merged
            if spec in info:
                info[spec] = {**info[spec], "served": merge_served(processes)}
        for spec, figures in self.timeline.figures().items():  # this run's own records (not resumed ones)
            if spec in info:
                info[spec] = {**info[spec], "throughput": figures}
        for spec, found in info.items():  # a describe() that raised: said once, the run goes on
            if found.get("describe_error"):
                self.note(f"detector {spec}: describe() raised {found['describe_error']}")
        return info

    def scoring(self) -> document_mod.Scoring:
        from ..analysis import document as document_mod

        settings = self.settings
        return document_mod.Scoring(
            refusal_rows=settings.refusal_rows,
            price=settings.price,
            gates=tuple(settings.gates),
            max_errors=settings.max_errors,
            limit=settings.limit,
            published=self.published,
            gate_on_interval=settings.gate_on_interval,
            profile=settings.profile.describe(),
        )

    def document(self) -> dict[str, Any]:
        from ..analysis import document as document_mod

        detector_info = self.all_detector_info()  # first: its notes belong in this document
        found = None
        if self.summary is not None:
            found = document_mod.Figures(self.summary, self.cost, tuple(self.reproductions), tuple(self.verdicts))
        extra: dict[str, Any] = {"not_run": [entry.to_json() for entry in self.not_run]}
        if self.settings.shard is not None:
            fingerprints: dict[str, str | None] = {d.name: d.fingerprint for d in self.datasets.values()}
            for name, summary in self.worker_datasets.items():
                fingerprints.setdefault(name, summary.get("fingerprint"))
            extra["shard"] = sharding.document(
                self.settings.shard, self.shard_planned, fingerprints, self.settings.detector_specs
            )
        header = document_mod.Header(
            started=self.started,
            duration_s=time.time() - self.started,
            args=tuple(self.config.invocation_params.args),
            settings=document_mod.settings_entry(self.settings),
            workers=self.config.getoption("numprocesses", None)
            if self.config.pluginmanager.hasplugin("xdist")
            else None,
            versions=versions(),
            partial=self.interrupted,
            resumed=len(self.resumed),
            notes=tuple(self.notes),
            baseline=self.baseline_document(),
            extra=extra,
        )
        return document_mod.build(
            self.records,
            found,
            self.scoring(),
            header,
            datasets=self.dataset_summaries(),
            detector_info=detector_info,
        )

    def write_report(self) -> None:
        """The JSON report, the HTML page and the plots, all from one document (render/outputs.py).
        One that cannot be written is said in the summary; it never ends the run."""
        from ..render.outputs import asked_for, write_all

        if any(output.write is not None for output, _ in asked_for(self.settings)) or self.settings.log_targets:
            from ..render.output import interrupts_held
            from ..render.trackers import log_report

            taken: list[int] = []
            with interrupts_held(taken):
                document = self.document()
                self.output_errors += write_all(document, self.settings)
                for line in log_report(document, self.settings, self.output_errors):  # --grounding-log
                    self.note(line)
            if taken:
                self.interrupted_writing = True


def _identity(dataset: Dataset) -> tuple[str, str, str]:
    """Two specs name the same dataset when they read the same annotations for the same images
    (a folder and its metadata.jsonl, a path through a symlink)."""
    return (dataset.format, dataset.fingerprint, str(dataset.samples[0].image.resolve()))
