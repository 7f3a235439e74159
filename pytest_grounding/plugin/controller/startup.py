"""The controller's checks before the run, once, before any worker starts: the detectors' preflights
(weights, CUDA, a server), the frame check (calibration screens through a detector pool of its own:
for the command line's detectors sent beside the first samples, its verdict applied when it comes),
the samples' checks (a served model's context), the datasets loaded, replayed files matched, the
outputs writable, and the notes they leave. What they found (preflighted specs, frame checks, the
requests they sent) stays here, never on the frozen plan. Collection calls the same checks for a
suite's pinned detectors."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...core.budget import BudgetSpent
from ...core.paths import os_problem
from ...datasets import DatasetError, sharding
from ...detectors import bind_options
from ..common.halt import Halt
from ..common.notes import Notes
from ..common.plan import RunPlan
from ..common.settings import SettingError

Say = Callable[[str], None]


@dataclass
class Startup:
    plan: RunPlan
    notes: Notes
    preflighted: set[str] = field(default_factory=set)  # specs whose preflight passed
    frame_skipped: set[str] = field(default_factory=set)  # specs whose frame check the request budget left out
    frame_checks: dict[str, dict[str, Any]] = field(default_factory=dict)  # spec -> what its frame check found
    requests: int = 0  # HTTP requests the checks sent: spent of --grounding-budget before any sample
    seconds: float = 0.0  # the frame checks' time: spent of a --grounding-budget seconds=N before any sample
    meter: Any = None  # core/budget.Meter of every check before the run (at the start and at collection)
    halt: Halt = field(default_factory=Halt)  # a frame check that fails while samples run stops the run here
    pending: dict[str, threading.Thread] = field(default_factory=dict)  # spec -> its frame check in flight

    @contextlib.contextmanager
    def metered(self) -> Iterator[None]:
        """The checks' requests (probes, screen checks, calibration) under --grounding-budget: one meter for
        every check before the run, those at collection (a suite's pinned detectors) too; what they sent is
        `requests`, taken off the samples' share."""
        from ...core import budget

        limit = self.plan.settings.selection.budget
        if self.meter is None and limit is not None:
            self.meter = budget.Meter(limit)
        before = budget.current()
        budget.install(self.meter)
        try:
            yield
        finally:
            budget.install(before)
            if self.meter is not None:
                self.requests = self.meter.http

    def findings(self) -> dict[str, Any]:
        """What the checks found, by the report key of the section that keeps it (document.RunRecords.checks)."""
        self.settle()
        return {"frame_check": dict(self.frame_checks)} if self.frame_checks else {}

    def preflights(self) -> bool:
        """The controller checks (and may download) what detectors need; not for --collect-only."""
        option = getattr(self.plan.config, "option", None)
        return not getattr(option, "collectonly", False)

    def check_run_settings(self, say: Say, on_generate: Callable[[Path], None] | None = None) -> None:
        """Fail fast, before any worker starts, on a detector or dataset named on the command line
        or in the ini file that cannot be used, or an output path that cannot be written. Loads
        the run's datasets here too, so the controller can name them under xdist."""
        limit = self.plan.settings.selection.budget
        try:
            with self.metered():  # the start-up checks' requests (probes, calibration) are the budget's too
                self._check_run_settings(say, on_generate)
        except BudgetSpent:  # past the checks that say it in a note: a check nothing else covers
            assert limit is not None
            raise SettingError(
                f"--grounding-budget {limit.label('requests')} is spent by the checks before the run (the served "
                "detectors' probes): give a larger budget, or probe=false on the detector"
            ) from None

    def _check_run_settings(self, say: Say, on_generate: Callable[[Path], None] | None) -> None:
        plan, selection = self.plan, self.plan.settings.selection
        self.check_detector_specs(selection.detector_specs, selection.detector_source, say)
        self.note_deterministic()
        try:
            if selection.dataset_specs:
                plan.datasets_for((), Path.cwd())
            else:
                plan.catalog.default(on_generate=on_generate)
        except DatasetError as exc:
            raise SettingError(f"{selection.dataset_source}: {exc}") from None
        self.check_replays()
        self.check_errata()
        if selection.shard is not None:  # more shards than samples: said once, before any worker starts
            try:
                sharding.check_count(selection.shard, len(plan.samples_in_order()))
            except ValueError as exc:
                raise SettingError(str(exc)) from None
        self.check_detector_samples(selection.detector_specs, selection.detector_source)
        self.check_frames(selection.detector_specs, selection.detector_source, say, in_flight=True)
        items = plan.run_items()  # the items the workers will make from the run's datasets, by the same ids
        plan.index.add(selection.detector_specs, items)
        self.note_empty_variants(items)
        self.check_outputs()

    def check_outputs(self) -> None:
        from ...render.outputs import OutputUnusable, check_all

        outputs = self.plan.settings.outputs
        try:
            check_all(outputs)
        except OutputUnusable as exc:
            raise SettingError(str(exc)) from None
        if outputs.answer_cache is not None:  # before any sample, not one write error per answer
            from ...store.answers import check_folder

            try:
                check_folder(outputs.answer_cache)
            except OSError as exc:
                raise SettingError(
                    f"--grounding-cache {outputs.answer_cache}: cannot be written ({exc.strerror or exc})"
                ) from None

    # -- the detectors ------------------------------------------------------------------------------

    def check_detector_specs(self, specs: Sequence[str], source: str, say: Say) -> None:
        """The plan's checks of each spec, then what its preflight finds missing (weights, CUDA, a
        server): usage errors, said once, before any sample runs (not an error on every item)."""
        for spec, name, factory, bound in self.plan.check_specs(specs, source):
            if not self.preflights() or spec in self.preflighted:
                continue
            from ...detectors.preflight import run_preflight

            try:
                run_preflight(name, factory, bound, say)  # weights, CUDA, a server: once, before workers
            except BudgetSpent:  # an earlier detector's checks took every request
                self.note_spent(spec, "its probe")
                continue
            except ValueError as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None
            except OSError as exc:  # a path no file operation takes (a name too long): said once, not a traceback
                raise SettingError(f"{source} {spec[:300]}: {os_problem(exc)}") from None
            self.preflighted.add(spec)

    def note_spent(self, spec: str, what: str) -> None:
        """A check refused by --grounding-budget requests=N: a note, never a usage error; the samples'
        share is what the checks left (none), so every sample is not run and the report says so."""
        limit = self.plan.settings.selection.budget
        label = limit.label("requests") if limit is not None and limit.requests is not None else "requests"
        self.notes.add(
            f"{spec}: {what} not sent: --grounding-budget {label} is spent by the checks before the run "
            "(the served probes): every sample is not run"
        )

    def check_frames(self, specs: Sequence[str], source: str, say: Say, *, in_flight: bool = False) -> None:
        """Each preflighted model detector's frame check, after the samples' own checks (a server
        that shrinks the screen is named by its token count first: one request, not twelve).
        `in_flight`: the check runs beside the first samples (check_frame says when)."""
        for spec in specs:
            if spec not in self.preflighted:
                continue
            try:
                factory = self.plan.specs.get(spec).factory(self.plan.detectors)
                self.check_frame(spec, factory, say, in_flight=in_flight)
            except ValueError as exc:
                raise SettingError(f"{source} {spec}: {exc}") from None

    def settle(self) -> None:
        """Every frame check still in flight waited for (each is bounded by the run's --grounding-timeout):
        its verdict applied before the run's figures are made."""
        for spec in list(self.pending):
            self.pending.pop(spec).join()

    def _check_limits(self, meter: Any) -> tuple[float | None, float | None]:
        """(each calibration request's limit: the run's --grounding-timeout; all of them together: what its
        seconds budget leaves after the checks before); None: no limit."""
        timeout = self.plan.settings.scoring.timeout or None
        left = None
        if meter is not None and meter.budget.seconds is not None:
            left = max(0.0, meter.budget.seconds - self.seconds)
        return timeout, left

    def check_frame(self, spec: str, factory: Any, say: Say, *, in_flight: bool = False) -> None:
        """The model detector's frame check (detectors/frame_check.py), once per run, after its
        preflight (a vllm server runs by then). With `in_flight` and no --grounding-budget, its requests
        go in a thread of their own while the run goes on (the samples do not wait for a round trip);
        a frame it can name then stops the run when the verdict comes (`halt`: the samples scored are
        kept, the rest not run). Else it is waited for, and `fail` on such a frame is a ValueError
        (a usage error, before any dataset sample is sent): a budget's requests and seconds are the
        samples' share only once the check's are known."""
        from ...detectors.frame_check import needs_check

        plan = self.plan
        mode = plan.settings.selection.frame_check
        if mode == "off" or spec in self.frame_checks or spec in self.frame_skipped or spec in self.pending:
            return
        if not needs_check(factory) or plan.settings.selection.task != "grounding":
            return
        from ...core import budget
        from ...detectors.frame_check import calibration_screens
        from ...store.answers import open_store
        from ..common.pool import DetectorLoadError, DetectorPool

        meter = budget.current()
        calibration = len(calibration_screens())
        if meter is not None and meter.budget.requests is not None:
            left = meter.budget.requests - meter.http
            if left < 2 * calibration:  # the samples must keep at least as much as the check takes
                self.notes.add(
                    f"frame check {spec}: not run: --grounding-budget {meter.budget.label('requests')} leaves "
                    f"{left} requests, too few for its {calibration} calibration requests and the samples"
                )
                self.frame_skipped.add(spec)
                return

        pool = DetectorPool(plan.specs, open_store(plan.settings.outputs.answer_cache))
        try:
            detector = pool.get(spec)
        except DetectorLoadError:
            pool.close()
            return  # the workers' own loading says why, once
        say(f"grounding: frame check {plan.name_of(spec)}: calibration screens sent")
        if in_flight and plan.settings.selection.budget is None:
            thread = threading.Thread(
                target=self._frame_check_in_flight, args=(spec, mode, pool, detector), name="frame-check", daemon=True
            )
            self.pending[spec] = thread
            thread.start()
            return
        stop = self._frame_check(spec, mode, pool, detector, meter, False)
        if stop is not None:
            raise ValueError(stop)

    def _frame_check_in_flight(self, spec: str, mode: str, pool: Any, detector: Any) -> None:
        """The thread's body: what raised is a note (the run goes on), never a traceback in a thread."""
        try:
            self._frame_check(spec, mode, pool, detector, None, True)
        except Exception as exc:
            self.notes.add(f"frame check {self.plan.name_of(spec)}: not finished ({type(exc).__name__}: {exc})")

    def _frame_check(self, spec: str, mode: str, pool: Any, detector: Any, meter: Any, in_flight: bool) -> str | None:
        """The check's requests and its verdict: notes, the finding kept; the message that stops the run
        (`fail` on a frame it can name), said to `halt` when the run already goes on."""
        from ...core import frames
        from ...detectors.frame_check import run_check

        plan = self.plan
        try:
            began = time.monotonic()
            try:
                timeout, seconds_left = self._check_limits(meter)
                found = run_check(spec, detector, timeout_s=timeout, budget_s=seconds_left)
            finally:
                self.seconds += time.monotonic() - began  # the run's seconds budget pays for it
            result = replace(found, spec=plan.name_of(spec))  # its lines name the label=
        finally:
            pool.close()
        self.frame_checks[spec] = {"mode": mode, **result.as_dict()}
        self.notes.add(result.line())
        if not result.finding.mismatch:
            return None
        if mode == "fail":
            preset = getattr(getattr(detector, "preset", None), "name", None)
            message = result.message(preset if isinstance(preset, str) else None, in_flight=in_flight)
            if in_flight:
                self.notes.add(message)
                self.halt.stop(message)
            return message
        self.notes.add(
            f"frame check {result.spec}: {result.finding.evidence} (--grounding-frame-check=warn: the run goes on; "
            f"its answers read in that frame afterwards: `{frames.rescore_command(result.finding.suggestion)}`)"
        )
        return None

    def check_detector_samples(self, specs: Sequence[str], source: str) -> None:
        """A detector whose factory offers `check_samples` sees every sample's (id, size,
        instruction) before the run: a served model whose context cannot hold the largest screen
        is one message now, not an error on every such sample."""
        if not self.preflights():
            return
        from ...datasets.harness import header_size

        plan = self.plan
        samples = plan.samples_in_order()
        if plan.settings.selection.shard is not None:  # the samples this shard runs (-k is not known yet: all)
            samples = sharding.take(samples, plan.settings.selection.shard)
        for spec in specs:
            parsed = plan.specs.get(spec)
            factory = parsed.factory(plan.detectors)
            check = getattr(factory, "check_samples", None)
            if check is None:
                continue
            sized = (
                (s.id, size, s.instruction)
                for s in samples
                if (size := s.image_size or header_size(Path(s.image))) is not None
            )
            try:
                notes = check(sized, **bind_options(parsed.name, factory, parsed.options))
                for note in notes or ():  # issue 56: the server's token counts cannot be used, ...
                    self.notes.add(f"{spec}: {note}")
            except BudgetSpent:  # the checks took every request: each sample is not run (the docs), no usage error
                self.note_spent(spec, "its screen and context checks")
            except (ValueError, RuntimeError) as exc:  # ModelUnavailable (what, where, fix); a server gone since
                raise SettingError(f"{source} {spec}: {exc}") from None

    # -- notes and replays --------------------------------------------------------------------------

    def note_deterministic(self) -> None:
        """One line per deterministic detector asked for several epochs: it runs one."""
        selection = self.plan.settings.selection
        if selection.epochs <= 1:
            return
        for spec in selection.detector_specs:
            if self.plan.specs.deterministic(spec):
                self.notes.add(
                    f"--grounding-epochs {selection.epochs}: detector {spec} is deterministic (the same "
                    "answer every time): it runs one epoch"
                )

    def note_empty_variants(self, items: Sequence[Any]) -> None:
        """A --grounding-perturb variant that made no variant of any sample has no row in the
        robustness table: said once, in the header and the summary's notes."""
        sweep = self.plan.sweep
        if not sweep.perturbations:
            return
        from ...analysis.robustness import NO_VARIANT_REASONS

        made = {(s.extra or {}).get("variant", {}).get("label") for s in items}
        for perturbation in sweep.perturbations:
            if perturbation.label not in made:
                reason = NO_VARIANT_REASONS.get(perturbation.axis, "samples the axis made no variant of")
                self.notes.add(
                    f"--grounding-perturb {perturbation.label}: no variant of any sample of this run ({reason}), "
                    "so it has no row in the robustness table"
                )

    def check_errata(self) -> None:
        """--grounding-errata: entries that name no dataset in a run of several datasets are a usage error
        now (an id alone would correct each dataset's sample of that id); a fix's box off its image too."""
        plan = self.plan
        errata = plan.settings.scoring.errata
        if errata is None:
            return
        from ...analysis.errata import ErrataError, off_image

        datasets = plan.catalog.all()
        try:
            errata.check_datasets((d.name for d in datasets), f"--grounding-errata {errata.path}")
        except ErrataError as exc:
            raise SettingError(str(exc)) from None
        rows = []
        for d in datasets:
            for s in d.samples:
                row = {"id": s.id, "dataset": s.dataset, "fingerprint": d.fingerprint, "image_size": s.image_size}
                entry = errata.entry_for(row)
                if entry is None or entry.bbox is None:
                    continue
                if row["image_size"] is None:  # a set that names no sizes: the fixed sample's image header
                    row["image_size"] = _header_size(s.image)
                rows.append(row)
        off = off_image(errata, rows)
        if off:
            more = f"; and {len(off) - 3} more" if len(off) > 3 else ""
            raise SettingError(f"--grounding-errata {errata.path}: {'; '.join(off[:3])}{more}")

    def check_replays(self) -> None:
        """A replayed file for another benchmark is a usage error now; its answers that match no
        sample of the run's datasets are counted in a note."""
        from ..common.replay import check, replay_specs

        plan = self.plan
        if not replay_specs(plan.settings.selection.detector_specs):
            return
        from ...detectors.replay.files import ReplayError

        samples = [sample for dataset in plan.catalog.all() for sample in dataset.samples]
        try:
            for text in check(plan.settings.selection.detector_specs, samples, plan.catalog.fingerprints()):
                self.notes.add(text)
        except ReplayError as exc:
            raise SettingError(str(exc)) from None


def _header_size(image: Any) -> tuple[int, int] | None:
    """An image's size from its header (pixels never decoded), None where it cannot be read (the
    sample's own error then says why)."""
    from PIL import Image

    try:
        if not Path(image).is_file():
            return None
        with Image.open(image) as handle:
            return handle.size
    except Exception:  # Pillow raises several types for broken files
        return None
