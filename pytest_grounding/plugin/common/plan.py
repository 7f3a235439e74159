"""The run's plan, built the same way in every process (the controller and each xdist worker), and
frozen: settings, registries (formats, detectors, strategies, the specs parsed once, the sweep's
axes), the datasets' catalog and the item index, and the one expansion of samples into the samples
items are made of (`expand`). The checks before the run (preflights, the frame check, the samples'
checks) are the controller's: plugin/controller/startup.py; the run's notes: common/notes.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.record import Record
from ...core.registry import Registry, UnknownName, installed_entry_points
from ...core.types import Sample
from ...datasets import Dataset, sharding
from ...datasets import builtin_registry as builtin_formats
from ...detectors import EXTRAS, OptionError, bind_options
from ...detectors import builtin_registry as builtin_detectors
from ...detectors.strategies import builtin_registry as builtin_strategies
from ...detectors.strategies import check as check_strategies
from ...evaluate.scoring import error_record
from ...perturb import ENTRY_POINT_GROUP as PERTURBATIONS_GROUP
from ...sections import registry as section_registry
from .catalog import Catalog
from .environment import register_project_presets
from .extras import missing_extra
from .item_index import ItemIndex
from .notes import Notes
from .perturb_state import Sweep, build_sweep
from .settings import SettingError, Settings
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
    index: ItemIndex  # test id -> (spec, sample); the label= of specs pinned by a suite's marker
    sweep: Sweep  # --grounding-perturb: the axes' registry and the run's variants, parsed once
    sections: section_registry.SectionRegistry  # the report sections: built-ins, the hook's, entry points'

    @classmethod
    def build(cls, config: Any, notes: Notes | None = None) -> RunPlan:
        """`notes`: where the catalog says what it finds once (the process's Notes)."""
        formats, detectors, strategies = builtin_formats(), builtin_detectors(), builtin_strategies()
        config.hook.pytest_grounding_register_formats.call_historic(kwargs={"registry": formats})
        config.hook.pytest_grounding_register_detectors.call_historic(kwargs={"registry": detectors})
        config.hook.pytest_grounding_register_strategies.call_historic(kwargs={"registry": strategies})
        settings = Settings.from_config(config)
        register_project_presets(config, settings.selection.presets_path)
        groups = (
            *(f"pytest_grounding.{kind}" for kind in ENTRY_POINT_KINDS),
            PERTURBATIONS_GROUP,
            section_registry.ENTRY_POINTS,
        )
        installed = installed_entry_points(*groups)  # one scan of the installed packages
        for kind, registry in zip(ENTRY_POINT_KINDS, (formats, detectors, strategies), strict=True):
            registry.register_entry_points(f"pytest_grounding.{kind}", installed[f"pytest_grounding.{kind}"])
        return cls(
            config=config,
            settings=settings,
            formats=formats,
            detectors=detectors,
            strategies=strategies,
            specs=SpecBook(detectors, strategies),
            catalog=Catalog(formats, settings.selection.language, (notes if notes is not None else Notes()).add),
            index=ItemIndex(settings.selection.detector_specs),
            sweep=build_sweep(config, settings.selection.perturb, installed[PERTURBATIONS_GROUP]),
            sections=section_registry.configure(config, installed[section_registry.ENTRY_POINTS]),
        )

    @property
    def controller(self) -> bool:
        return not hasattr(self.config, "workerinput")

    # -- what runs --------------------------------------------------------------------------------

    def check_specs(self, specs: Sequence[str], source: str) -> list[tuple[str, Any, Any, dict[str, Any]]]:
        """Unknown names, a missing extra, option typos, unknown strategies: usage errors, said once,
        before any sample runs (not an error on every item). Every process checks the same; nothing
        is sent anywhere. (spec, name, factory, bound options) of each."""
        checked = []
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
            except (UnknownName, OptionError, ValueError) as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None
            checked.append((spec, name, factory, bound))
        return checked

    def name_of(self, spec: str) -> str:
        """What the run calls a detector: its label= (--detector or a suite's marker), else its spec."""
        return self.settings.selection.detector_labels.get(spec) or self.index.labels.get(spec) or spec

    def epochs_for(self, specs: Sequence[str]) -> int:
        """--grounding-epochs for items of these detectors: 1 when every one is deterministic."""
        epochs = self.settings.selection.epochs
        if epochs <= 1 or all(self.specs.deterministic(spec) for spec in specs):
            return 1
        return epochs

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

    def run_items(self) -> list[Sample]:
        """The samples the run's own items run (shard, variants and epochs applied), as collection makes them."""
        samples = self.samples_in_order()
        if self.settings.selection.shard is not None and self.settings.selection.shard.count <= max(1, len(samples)):
            samples = sharding.take(samples, self.settings.selection.shard)
        return self.expand(samples)

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
