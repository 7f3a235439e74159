"""The run's plan, built the same way in every process (the controller and each xdist worker):
settings, registries, the datasets, the detector specs (each parsed once), the sweep, the item
index, and the one expansion of samples into the samples items are made of (`expand`).
What a plan checks before any sample runs is said once, as a usage error, not once per item."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...core.record import Record
from ...core.registry import Registry, UnknownName, installed_entry_points
from ...core.types import Sample
from ...datasets import Dataset, DatasetError, sharding
from ...datasets import builtin_registry as builtin_formats
from ...detectors import EXTRAS, OptionError, bind_options
from ...detectors import builtin_registry as builtin_detectors
from ...detectors.strategies import builtin_registry as builtin_strategies
from ...detectors.strategies import check as check_strategies
from ...evaluate.scoring import error_record
from ...perturb import ENTRY_POINT_GROUP as PERTURBATIONS_GROUP
from .catalog import Catalog
from .environment import register_project_presets
from .item_index import ItemIndex
from .perturb_state import Sweep, build_sweep
from .settings import SettingError, Settings, missing_extra
from .specs import SpecBook

ENTRY_POINT_KINDS = ("formats", "detectors", "strategies")  # pytest_grounding.<kind> entry-point groups


@dataclass(frozen=True)
class RunPlan:
    config: Any
    settings: Settings
    formats: Registry
    detectors: Registry
    strategies: Registry
    specs: SpecBook
    catalog: Catalog
    index: ItemIndex
    sweep: Sweep  # --grounding-perturb: the axes' registry and the run's variants, parsed once
    notes: list[str] = field(default_factory=list)  # said once, in the header and the summary
    preflighted: set[str] = field(default_factory=set)  # specs whose preflight passed
    marker_labels: dict[str, str] = field(default_factory=dict)  # label= of specs pinned by a suite's marker
    startup_requests: list[int] = field(default_factory=list)  # HTTP requests the checks before the run sent
    frame_skipped: set[str] = field(default_factory=set)  # specs whose frame check the request budget left out
    frame_checks: dict[str, dict[str, Any]] = field(default_factory=dict)  # spec -> what its frame check found

    @classmethod
    def build(cls, config: Any) -> RunPlan:
        formats, detectors, strategies = builtin_formats(), builtin_detectors(), builtin_strategies()
        config.hook.pytest_grounding_register_formats.call_historic(kwargs={"registry": formats})
        config.hook.pytest_grounding_register_detectors.call_historic(kwargs={"registry": detectors})
        config.hook.pytest_grounding_register_strategies.call_historic(kwargs={"registry": strategies})
        settings = Settings.from_config(config)
        register_project_presets(config, settings.selection.presets_path)
        groups = (*(f"pytest_grounding.{kind}" for kind in ENTRY_POINT_KINDS), PERTURBATIONS_GROUP)
        installed = installed_entry_points(*groups)  # one scan of the installed packages
        for kind, registry in zip(ENTRY_POINT_KINDS, (formats, detectors, strategies), strict=True):
            registry.register_entry_points(f"pytest_grounding.{kind}", installed[f"pytest_grounding.{kind}"])
        notes: list[str] = []

        def note(text: str) -> None:
            if text not in notes:
                notes.append(text)

        return cls(
            config=config,
            settings=settings,
            formats=formats,
            detectors=detectors,
            strategies=strategies,
            specs=SpecBook(detectors, strategies),
            catalog=Catalog(formats, settings.selection.language, note),
            index=ItemIndex(settings.selection.detector_specs),
            sweep=build_sweep(config, settings.selection.perturb, installed[PERTURBATIONS_GROUP]),
            notes=notes,
        )

    @property
    def controller(self) -> bool:
        return not hasattr(self.config, "workerinput")

    def note(self, text: str) -> None:
        self.catalog.note(text)

    # -- what runs --------------------------------------------------------------------------------

    def check_detector_specs(self, specs: Sequence[str], source: str, say: Callable[[str], None]) -> None:
        """Unknown names, a missing extra, option typos and (in the controller) what a detector's
        preflight finds missing (weights, CUDA, a server) are usage errors, said once, before any
        sample runs (not an error on every item)."""
        for spec in specs:
            try:
                parsed = self.specs.get(spec)
                name = parsed.name
                extra = EXTRAS.get(name) if parsed.origin == "built-in" else None
                absent = missing_extra(extra) if extra else None
                if absent:
                    raise ValueError(
                        f"detector {name!r} needs the {extra!r} extra ({absent} is not installed): "
                        f'pip install "pytest-grounding[{extra}]"'
                    )
                try:
                    factory = parsed.factory(self.detectors)
                except ImportError as exc:
                    hint = f': pip install "pytest-grounding[{extra}]"' if extra else ""
                    raise ValueError(f"detector {name!r} cannot be imported ({exc}){hint}") from None
                bound = bind_options(name, factory, parsed.options)
                check_strategies(parsed.chain.strategies, self.strategies)
                if self.preflights() and spec not in self.preflighted:
                    from ...detectors.preflight import run_preflight

                    run_preflight(name, factory, bound, say)  # weights, CUDA, a server: once, before workers
                    self.preflighted.add(spec)
            except (UnknownName, OptionError, ValueError) as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None

    def name_of(self, spec: str) -> str:
        """What the run calls a detector: its label= (--detector or a suite's marker), else its spec."""
        return self.settings.selection.detector_labels.get(spec) or self.marker_labels.get(spec) or spec

    def check_frames(self, specs: Sequence[str], source: str, say: Callable[[str], None]) -> None:
        """Each preflighted model detector's frame check, after the samples' own checks (a server
        that shrinks the screen is named by its token count first: one request, not twelve)."""
        for spec in specs:
            if spec not in self.preflighted:
                continue
            try:
                self.check_frame(spec, self.specs.get(spec).factory(self.detectors), say)
            except ValueError as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None

    def check_frame(self, spec: str, factory: Any, say: Callable[[str], None]) -> None:
        """The model detector's frame check (detectors/frame_check.py), once per run in the controller,
        after its preflight (a vllm server runs by then): a frame it can name stops the run with
        `fail` (a ValueError: a usage error, before any dataset sample is sent)."""
        from ...detectors.frame_check import needs_check

        mode = self.settings.selection.frame_check
        if mode == "off" or spec in self.frame_checks or spec in self.frame_skipped or not needs_check(factory):
            return
        if self.settings.selection.task != "grounding":
            return
        from ...core import budget, frames
        from ...detectors.frame_check import calibration_screens, run_check
        from ...store.answers import open_store
        from ..worker.pool import DetectorLoadError, DetectorPool

        meter = budget.current()
        calibration = len(calibration_screens())
        if meter is not None and meter.budget.requests is not None:
            left = meter.budget.requests - meter.http
            if left < 2 * calibration:  # the samples must keep at least as much as the check takes
                self.note(
                    f"frame check {spec}: not run: --grounding-budget {meter.budget.label('requests')} leaves "
                    f"{left} requests, too few for its {calibration} calibration requests and the samples"
                )
                self.frame_skipped.add(spec)
                return

        pool = DetectorPool(self.specs, open_store(self.settings.outputs.answer_cache))
        try:
            detector = pool.get(spec)
        except DetectorLoadError:
            return  # the workers' own loading says why, once
        try:
            say(f"grounding: frame check {self.name_of(spec)}: calibration screens sent")
            result = replace(run_check(spec, detector), spec=self.name_of(spec))  # its lines name the label=
        finally:
            pool.close()
        self.frame_checks[spec] = {"mode": mode, **result.as_dict()}
        self.note(result.line())
        if result.finding.mismatch:
            preset = getattr(getattr(detector, "preset", None), "name", None)
            if mode == "fail":
                raise ValueError(result.message(preset if isinstance(preset, str) else None))
            self.note(
                f"frame check {result.spec}: {result.finding.evidence} (--grounding-frame-check=warn: the run goes on; "
                f"its answers read in that frame afterwards: `{frames.rescore_command(result.finding.suggestion)}`)"
            )

    def epochs_for(self, specs: Sequence[str]) -> int:
        """--grounding-epochs for items of these detectors: 1 when every one is deterministic."""
        epochs = self.settings.selection.epochs
        if epochs <= 1 or all(self.specs.deterministic(spec) for spec in specs):
            return 1
        return epochs

    def note_deterministic(self) -> None:
        """One line per deterministic detector asked for several epochs: it runs one."""
        if self.settings.selection.epochs <= 1:
            return
        for spec in self.settings.selection.detector_specs:
            if self.specs.deterministic(spec):
                self.note(
                    f"--grounding-epochs {self.settings.selection.epochs}: detector {spec} is deterministic (the same "
                    "answer every time): it runs one epoch"
                )

    def check_detector_samples(self, specs: Sequence[str], source: str) -> None:
        """A detector whose factory offers `check_samples` sees every sample's (id, size,
        instruction) before the run (the controller): a served model whose context cannot hold
        the largest screen is one message now, not an error on every such sample."""
        if not self.preflights():
            return
        from ...datasets.harness import header_size

        samples = self.samples_in_order()
        if self.settings.selection.shard is not None:  # the samples this shard runs (-k is not known yet: all of them)
            samples = sharding.take(samples, self.settings.selection.shard)
        for spec in specs:
            parsed = self.specs.get(spec)
            factory = parsed.factory(self.detectors)
            check = getattr(factory, "check_samples", None)
            if check is None:
                continue
            sized = (
                (s.id, size, s.instruction)
                for s in samples
                if (size := s.image_size or header_size(Path(s.image))) is not None
            )
            try:
                check(sized, **bind_options(parsed.name, factory, parsed.options))
            except (ValueError, RuntimeError) as exc:  # ModelUnavailable (what, where, fix); a server gone since
                raise SettingError(f"{source} {spec}: {exc}") from None

    def preflights(self) -> bool:
        """The controller checks (and may download) what detectors need; not for --collect-only."""
        option = getattr(self.config, "option", None)
        return self.controller and not getattr(option, "collectonly", False)

    # -- the datasets ------------------------------------------------------------------------------

    def datasets_for(self, pinned: Sequence[str], base: Path) -> list[Dataset]:
        """A suite's pinned datasets (paths relative to its file), else the run's, else the default."""
        settings = self.settings
        run_base = (
            self.config.invocation_params.dir
            if settings.selection.dataset_source.startswith("--")
            else self.config.rootpath
        )
        return self.catalog.for_suite(pinned, base, settings.selection.dataset_specs, Path(run_base))

    def samples_in_order(self) -> list[Sample]:
        """The run's samples as collection lists them (datasets in order, each to --grounding-limit):
        what --grounding-shard splits."""
        return [sample for dataset in self.catalog.all() for sample in dataset.samples[: self.settings.selection.limit]]

    def check_run_settings(self, say: Callable[[str], None], on_generate: Callable[[Path], None] | None = None) -> None:
        """Fail fast, before any worker starts, on a detector or dataset named on the command line
        or in the ini file that cannot be used, or an output path that cannot be written. Loads
        the run's datasets here too, so the controller can name them under xdist."""
        from ...core import budget

        limit = self.settings.selection.budget
        meter = budget.Meter(limit) if limit is not None and limit.requests is not None and self.controller else None
        budget.install(meter)  # the start-up checks' requests (probes, calibration) are the budget's too
        try:
            self._check_run_settings(say, on_generate)
        except budget.BudgetSpent:
            assert limit is not None
            raise SettingError(
                f"--grounding-budget {limit.label('requests')} is spent by the checks before the run (the served "
                "detectors' probes): give a larger budget, or probe=false on the detector"
            ) from None
        finally:
            budget.install(None)
            if meter is not None:
                self.startup_requests.append(meter.http)

    def _check_run_settings(self, say: Callable[[str], None], on_generate: Callable[[Path], None] | None) -> None:
        settings = self.settings
        self.check_detector_specs(settings.selection.detector_specs, settings.selection.detector_source, say)
        self.note_deterministic()
        try:
            if settings.selection.dataset_specs:
                self.datasets_for((), Path.cwd())
            else:
                self.catalog.default(on_generate=on_generate)
        except DatasetError as exc:
            raise SettingError(f"{settings.selection.dataset_source}: {exc}") from None
        self.check_replays()
        if settings.selection.shard is not None:  # more shards than samples: said once, before any worker starts
            try:
                sharding.check_count(settings.selection.shard, len(self.samples_in_order()))
            except ValueError as exc:
                raise SettingError(str(exc)) from None
        self.check_detector_samples(settings.selection.detector_specs, settings.selection.detector_source)
        self.check_frames(settings.selection.detector_specs, settings.selection.detector_source, say)
        if self.controller:  # the items the workers will make from the run's datasets, by the same ids
            items = self.run_items()
            self.index.add(settings.selection.detector_specs, items)
            self.note_empty_variants(items)
        from ...render.outputs import OutputUnusable, check_all

        try:
            check_all(settings.outputs)
        except OutputUnusable as exc:
            raise SettingError(str(exc)) from None
        if settings.outputs.answer_cache is not None:  # before any sample, not one write error per answer
            from ...store.answers import check_folder

            try:
                check_folder(settings.outputs.answer_cache)
            except OSError as exc:
                raise SettingError(
                    f"--grounding-cache {settings.outputs.answer_cache}: cannot be written ({exc.strerror or exc})"
                ) from None

    def expand(self, samples: Sequence[Sample], specs: Sequence[str] | None = None) -> list[Sample]:
        """Samples into the samples items are made of, the one way every part does it (collection,
        the controller's index, resume, the shard's share): each sample followed by its
        --grounding-perturb variants, then each of those --grounding-epochs times, adjacent (one
        screen's items together). After any shard split: a variant and an epoch follow their sample.
        `specs`: the detectors the items run (default the run's): deterministic ones get one epoch."""
        from ...core.types import with_epochs
        from ...perturb import with_variants

        chosen = self.settings.selection.detector_specs if specs is None else specs
        return with_epochs(with_variants(samples, self.sweep.perturbations), self.epochs_for(chosen))

    def note_empty_variants(self, items: Sequence[Sample]) -> None:
        """A --grounding-perturb variant that made no variant of any sample has no row in the
        robustness table: said once, in the header and the summary's notes."""
        if not self.sweep.perturbations:
            return
        from ...analysis.robustness import NO_VARIANT_REASONS

        made = {(s.extra or {}).get("variant", {}).get("label") for s in items}
        for perturbation in self.sweep.perturbations:
            if perturbation.label not in made:
                reason = NO_VARIANT_REASONS.get(perturbation.axis, "samples the axis made no variant of")
                self.note(
                    f"--grounding-perturb {perturbation.label}: no variant of any sample of this run ({reason}), "
                    "so it has no row in the robustness table"
                )

    def run_items(self) -> list[Sample]:
        """The samples the run's own items run (shard, variants and epochs applied), as collection makes them."""
        samples = self.samples_in_order()
        if self.settings.selection.shard is not None and self.settings.selection.shard.count <= max(1, len(samples)):
            samples = sharding.take(samples, self.settings.selection.shard)
        return self.expand(samples)

    def check_replays(self) -> None:
        """A replayed file for another benchmark is a usage error now; its answers that match no
        sample of the run's datasets are counted in a note."""
        from .replay import check, replay_specs

        if not replay_specs(self.settings.selection.detector_specs):
            return
        from ...detectors.replay.files import ReplayError

        samples = [sample for dataset in self.catalog.all() for sample in dataset.samples]
        try:
            for text in check(self.settings.selection.detector_specs, samples, self.catalog.fingerprints()):
                self.note(text)
        except ReplayError as exc:
            raise SettingError(str(exc)) from None

    # -- records made here -------------------------------------------------------------------------

    def error_record(self, sample: Sample, detector: str, message: str) -> Record:
        """The one way an error record is made outside an evaluation (a detector that did not load,
        a worker that died): the run's task and the dataset's fingerprint filled in."""
        return error_record(
            sample,
            detector=detector,
            message=message,
            task=self.settings.selection.task,
            fingerprint=self.catalog.fingerprint_of(sample.dataset),
        )

    def crash_record(self, nodeid: str, message: str) -> Record | None:
        """An error record for an item whose worker died (None: not a grounding item)."""
        entry = self.index.lookup(nodeid)
        return None if entry is None else self.error_record(entry.sample, entry.spec, message)
