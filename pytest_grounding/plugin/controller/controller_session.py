"""The side of a run that sees every result (the xdist controller, or the only process): one
record per item (the ledger), the predictions file, when records arrived, the baseline and the
resumed file, what the workers reported at their end; and `finish()`, called once, which makes the
run's one `RunResult`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...analysis.result import BaselineResult, RunResult, View
from ...analysis.throughput import Timeline, merge_served
from ...core.record import Record
from ...datasets import sharding
from ...render import run_folder
from ...render.notes import not_run_line
from ...store.reports import interrupts_held
from ..common.environment import registered_preset, versions
from ..common.plan import RunPlan
from ..common.settings import SettingError
from .baseline_state import BaselineCheck
from .ledger import Ledger, NotRun
from .predictions import PredictionsStream
from .resume_state import Resumed, load_resumed
from .startup import Startup

if TYPE_CHECKING:  # the figures are the controller's, at the run's end
    from ...analysis import document as document_mod


@dataclass
class WorkerReports:
    """What each process that predicted said at its end (wire.WorkerOutput; the only process: itself)."""

    detector_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)  # dataset summaries
    served: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # spec -> process -> HTTP figures
    shard_planned: dict[str, dict[str, Any]] = field(default_factory=dict)  # --grounding-shard: per dataset
    budget: list[dict[str, Any]] = field(default_factory=list)  # --grounding-budget: each process's spending


@dataclass
class ControllerSession:
    plan: RunPlan
    startup: Startup  # the checks before the run: what they found, the run's notes
    baseline: BaselineCheck
    predictions: PredictionsStream
    ledger: Ledger = field(default_factory=Ledger)  # every item to score, one record each
    records: list[Record] = field(default_factory=list)
    timeline: Timeline = field(default_factory=Timeline)  # when records arrived: throughput
    reports: WorkerReports = field(default_factory=WorkerReports)
    resumed: Resumed = field(default_factory=Resumed)
    published: Any = None  # reproduce.Table: the figures the reproduction check reads
    not_run: list[NotRun] = field(default_factory=list)  # items no report came for
    started: float = field(default_factory=time.time)
    result: RunResult | None = None  # made once, by finish()
    interrupted_writing: bool = False  # Ctrl-C came while the outputs were written (held until whole)
    live: Any = None  # render/live.py's LivePage: --grounding-html written while the run goes
    page_restored: bool = False  # the live page gave an earlier run's page back: no empty page over it
    thumbs: Any = None  # render/html/thumbs.py's Prefetch: the page's screens drawn as non-hits arrive

    @classmethod
    def open(cls, plan: RunPlan, startup: Startup) -> ControllerSession:
        outputs = plan.settings.outputs
        if outputs.predictions_path is None and outputs.run_dir is not None:  # the run's own folder: nobody else's
            stream = PredictionsStream(outputs.run_dir / run_folder.PREDICTIONS, held=False)
        else:
            stream = PredictionsStream(outputs.predictions_path)
        return cls(plan, startup, BaselineCheck(plan.settings), stream)

    # -- before the first sample ------------------------------------------------------------------

    def prepare(self, args: Sequence[str]) -> None:
        """The predictions file held, the resumed file read back, the baseline and the published
        figures read and checked, the predictions file opened: before any sample runs."""
        self.predictions.hold(args, self.started)  # before it is read to resume
        self.resumed = load_resumed(self.plan, self.startup.notes.add)
        self.records.extend(self.resumed.records)
        self.baseline.load(self.plan.catalog.fingerprints())
        self.load_published()
        self.predictions.open(self.resumed.records)

    def load_published(self) -> None:
        """The shipped figures plus the project's (--grounding-published)."""
        from ...analysis import reproduce

        path = self.plan.settings.verdict.published_path
        try:
            table = reproduce.shipped_table()
            if path is not None:
                table = table.merged(reproduce.read_table(path)).check(str(path))
        except reproduce.PublishedError as exc:
            raise SettingError(f"--grounding-published: {exc}") from None
        self.published = table

    def live_path(self) -> Path | None:
        """Where the running page goes: --grounding-html, else the run's folder's page (issue 51:
        `board` with no argument shows a default run as running); None: no page, or not a file."""
        outputs = self.plan.settings.outputs
        path = outputs.html_path
        if path is None and outputs.run_dir is not None:
            path = outputs.run_dir / run_folder.REPORT_HTML
        if path is None or (path.exists() and not path.is_file()):  # a FIFO, a device: the final page only, once
            return None
        return path

    def begin_live(self) -> None:
        """The running page before the detectors load (a vllm server's start, the frame check's
        requests), its total not known yet: for --grounding-html, and for the run's folder when the
        command line or ini names a detector or dataset (a plain test run that may hold no
        grounding item writes nothing until collection says it does)."""
        selection = self.plan.settings.selection
        asked = self.plan.settings.outputs.html_path is not None
        named = selection.detector_source != "default" or selection.dataset_source != "default"
        if getattr(getattr(self.plan.config, "option", None), "collectonly", False) or not (asked or named):
            return
        self.start_live(0)

    def start_live(self, total: int) -> None:
        """The running page (render/live.py): begun early or before the first sample; a later call
        gives it the items' count and writes it again."""
        if self.live is not None:
            self.live.start(total, self.plan.config.invocation_params.args)
            return
        path = self.live_path()
        if path is None:
            return
        from ...render.live import LivePage

        made = next((p for p in reversed(path.parents) if not p.exists()), None)  # what the page's write makes
        self.live = LivePage(path, started=self.started, made=made)
        self.live.start(total, self.plan.config.invocation_params.args)

    def close_live(self) -> None:
        """The running page and its sidecar gone unless the final page replaced it (a run stopped
        by a usage error before its first sample, or one with no grounding item)."""
        if self.live is not None:
            self.live.finish()
            self.page_restored = self.live.kept is not None and self.live.path.is_file()
            self.live = None

    # -- as records arrive ------------------------------------------------------------------------

    def add_record(self, record: Record, item: str | None = None, *, crash: bool = False) -> bool:
        """One record per item (`ledger.py` says which one an item keeps; False: the item had one).
        A crash record reaches the predictions file at the end, if no real one replaced it."""
        if not self.ledger.place(self.records, item, record, crash=crash):
            return False
        self.timeline.add(record, time.monotonic())
        if not crash:
            self.predictions.write(record)
        if self.live is not None:
            self.live.add(record)
        if not crash:
            self._prefetch_thumbnail(record)
        return True

    def _prefetch_thumbnail(self, record: Record) -> None:
        """A non-hit's screen drawn now, in the background, for the final page (not at the end)."""
        if self.thumbs is None:
            outputs = self.plan.settings.outputs
            if outputs.html_path is None and outputs.run_dir is None:
                self.thumbs = False  # no page: nothing drawn
                return
            from ...render.html import thumbs
            from ...render.html.page import NON_HITS

            self.thumbs = thumbs.Prefetch(NON_HITS, self._targets_by_image)
            thumbs.install(self.thumbs)
        if self.thumbs:
            self.thumbs.add(record)

    def _targets_by_image(self) -> dict[str, list[Any]]:
        found: dict[str, list[Any]] = {}
        for sample in self.plan.samples_in_order():
            found.setdefault(str(sample.image), []).append(sample.bbox.as_list())
        return found

    def keep_unscored(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Answers that came back for items the interruption kept from running: into the predictions
        file (a resumed run keeps them, nobody pays twice), not into this run's summary."""
        if self.predictions.path is None or not records:
            return
        for record in records:
            self.predictions.write(record)  # type: ignore[arg-type]
        self.startup.notes.add(
            f"{len(records)} answers came back for items the interruption kept from running: they are in the "
            "predictions file (--grounding-resume keeps them), not in this summary"
        )

    # -- the end ----------------------------------------------------------------------------------

    def finish(self, interrupted: bool) -> RunResult:
        """Called once (later calls return the same result): the figures, the baseline, the notes.
        Ctrl-C is held from its first line (the figures' lazy imports, numpy's included, are a
        window a key press would otherwise cut the JSON and HTML off in); it ends the run after."""
        if self.result is not None:
            return self.result
        taken: list[int] = []
        with interrupts_held(taken):
            result = self._finish(interrupted)
        if taken:
            self.interrupted_writing = True
        return result

    def _finish(self, interrupted: bool) -> RunResult:
        from ...analysis import document as document_mod

        settings = self.plan.settings
        self.startup.settle()  # a frame check still in flight: its verdict (and a stop) before the figures
        for record in self.ledger.take_stand_ins():
            self.predictions.write(record)
        self._account_not_run(interrupted)
        interrupted = interrupted or bool(self.not_run)
        problem = self.predictions.close()
        found = None
        detector_info = self.detector_info()
        self.baseline.finish(self.records, interrupted)
        if self.baseline.note:
            self.startup.notes.add(self.baseline.note)
        checks = self.startup.findings()  # the frame check's: the frame_check section keeps them
        if self.records:
            baseline = self.baseline.document()
            if baseline is not None:  # --grounding-baseline: the baseline section keeps it
                checks["baseline"] = baseline
            found = document_mod.figures(
                self.records,
                self.scoring(),
                datasets=self.dataset_summaries(),
                detector_info=detector_info,
                interrupted=interrupted,
                registered=registered_preset,
                sections=self.plan.sections.sections(),
                checks=checks,
            )
        self._note_unmatched_errata()
        from ..common.replay import findings as replay_findings

        self.result = RunResult(
            records=tuple(self.records),
            summary=found.summary if found else None,
            verdicts=found.verdicts if found else (),
            datasets=tuple(self.dataset_summaries()),
            detector_info=detector_info,
            partial=interrupted,
            resumed=len(self.resumed.records),
            notes=tuple(self.startup.notes),
            view=View(
                order=settings.selection.detector_specs,
                top_apps=settings.outputs.top_apps,
                show_misses=settings.outputs.show_misses,
                misses_as=settings.verdict.misses,
                gated=bool(settings.verdict.gates or settings.verdict.max_drops),  # --grounding-max-drop too
                price=settings.scoring.price,
                profile=settings.scoring.profile.describe(),
            ),
            baseline=self._baseline_result(),
            replay=replay_findings(self.records, settings.selection.detector_specs) if self.records else None,
            outputs=self._outputs(),
            output_errors=(problem,) if problem else (),
            shard=self.shard_entry(),
            run=found.run if found else checks,  # no sample scored: what the checks found still stands
            sections=tuple(self.plan.sections.sections()),
        )
        return self.result

    def _note_unmatched_errata(self) -> None:
        """--grounding-errata: the ids that match no sample of the run's datasets (every sample, not only
        this shard's or the --grounding-limit's), named once; the errata block counts what applied."""
        errata = self.plan.settings.scoring.errata
        if errata is None:
            return
        from ...analysis.errata import unmatched_note

        rows: list[Mapping[str, Any]] = [
            {"id": s.id, "dataset": s.dataset, "fingerprint": dataset.fingerprint}
            for dataset in self.plan.catalog.all()
            for s in dataset.samples
        ]
        rows += self.records  # datasets a suite pinned on workers
        note = unmatched_note(errata, rows)
        if note:
            self.startup.notes.add(note)

    def _baseline_result(self) -> BaselineResult | None:
        path = self.plan.settings.verdict.baseline_path
        if path is None:
            return None
        check = self.baseline
        return BaselineResult(str(path), check.status, check.problem, check.loaded, check.comparison)

    def _outputs(self) -> tuple[tuple[str, str], ...]:
        from ...render.outputs import asked_for

        # a run that scored nothing keeps nothing
        outputs = asked_for(self.plan.settings.outputs, kept=bool(self.records))
        return tuple((output.title, str(path)) for output, path in outputs)

    def _account_not_run(self, interrupted: bool) -> None:
        """The items the run was to score that no report came for: listed, and the run is partial."""
        missing = self.plan.index.identify(self.ledger.missing())
        self.not_run = [NotRun(nodeid, e.spec, e.sample.dataset, e.sample.id, e.sample.uid) for nodeid, e in missing]
        if self.not_run:
            total = len(self.ledger.placed) + len(self.not_run)
            resumable = self.plan.settings.outputs.predictions_path is not None
            crashes = self.ledger.crashes
            ended = (self.budget_entry() or {}).get("ended")
            reason = f"the budget {ended} was spent" if ended else None
            if reason is None and self.startup.halt.message is not None:
                reason = "the frame check stopped the run"
            batch = self.plan.settings.outputs.batch_out
            if batch is not None and reason is None:
                from ...detectors.batch_files import continue_line, sharded_path

                reason = continue_line(sharded_path(Path(batch), self.plan.settings.selection.shard))
            self.startup.notes.add(
                not_run_line(
                    self.not_run, total, crashes=crashes, interrupted=interrupted, resumable=resumable, reason=reason
                )
            )

    def shard_entry(self) -> dict[str, Any] | None:
        """The report's `shard` (None: not a shard): K/N and per dataset what this shard was to score."""
        settings = self.plan.settings
        if settings.selection.shard is None:
            return None
        fingerprints: dict[str, str | None] = dict(self.plan.catalog.fingerprints())
        for name, summary in self.reports.datasets.items():
            fingerprints.setdefault(name, summary.get("fingerprint"))
        return sharding.document(
            settings.selection.shard, self.reports.shard_planned, fingerprints, settings.selection.detector_specs
        )

    def budget_entry(self) -> dict[str, Any] | None:
        """The report's `budget`: the limits, what the run spent, which budget ended it (None: none set)."""
        from ...core.budget import merged

        limits = self.plan.settings.selection.budget
        if limits is None:
            return None
        found = merged(self.reports.budget) or {"ended": None, "spent": {}}
        ended = found["ended"] and limits.label(found["ended"])  # the run's limit, not a worker's share
        startup = self.startup.requests  # the probes' and the frame check's, sent before any sample
        spent = {**found["spent"], "requests": found["spent"].get("requests", 0) + startup}
        if limits.seconds is not None and self.startup.seconds:  # the frame check's time came first
            spent["seconds"] = round(spent.get("seconds", 0) + self.startup.seconds, 3)
        return {
            "limits": limits.as_dict(),
            **found,
            "spent": spent,
            "ended": ended,
            "per_worker": len(self.reports.budget) > 1,
            "startup_requests": startup,
        }

    def dataset_summaries(self) -> list[dict[str, Any]]:
        """The datasets the records came from: loaded here, or (pinned by a suite under xdist)
        described by the workers."""
        from ...analysis import document as document_mod

        found: dict[str, dict[str, Any]] = dict(self.reports.datasets)
        for name, summary in self.plan.catalog.summaries().items():
            found.setdefault(name, summary)
        return document_mod.dataset_entries(found, self.records, self.plan.settings.selection.limit)

    def detector_info(self) -> dict[str, dict[str, Any]]:
        info = dict(self.reports.detector_info)
        for spec, processes in self.reports.served.items():  # served figures of every process, merged
            if spec in info:
                info[spec] = {**info[spec], "served": merge_served(processes)}
        for spec, figures in self.timeline.figures().items():  # this run's own records (not resumed ones)
            if spec in info:
                info[spec] = {**info[spec], "throughput": figures}
        for spec, label in self.plan.settings.selection.detector_labels.items():  # label= (issue 51)
            if spec in info:
                info[spec] = {**info[spec], "label": label}
        for spec, found in info.items():  # a describe() that raised: said once, the run goes on
            if found.get("describe_error"):
                self.startup.notes.add(f"detector {spec}: describe() raised {found['describe_error']}")
        return info

    def scoring(self) -> document_mod.Scoring:
        from ...analysis import document as document_mod

        settings = self.plan.settings
        return document_mod.Scoring(
            refusal_rows=settings.scoring.refusal_rows,
            price=settings.scoring.price,
            gates=tuple(settings.verdict.gates),
            max_errors=settings.verdict.max_errors,
            limit=settings.selection.limit,
            published=self.published,
            gate_on_interval=settings.verdict.gate_on_interval,
            max_drops=settings.verdict.max_drops,  # --grounding-max-drop
            profile=settings.scoring.profile.describe(),
            errata=settings.scoring.errata,  # --grounding-errata
        )

    # -- outputs ----------------------------------------------------------------------------------

    def document(self, result: RunResult) -> dict[str, Any]:
        """The JSON report's document, from the run's result."""
        from ...analysis import document as document_mod

        config, settings = self.plan.config, self.plan.settings
        found = None
        if result.summary is not None:
            found = document_mod.Figures(result.summary, result.verdicts, result.run)
        extra: dict[str, Any] = {"not_run": [entry.to_json() for entry in self.not_run]}
        if found is None:  # no sample scored: the start-up checks' findings (the frame check's) still go in
            extra.update(result.run)
        if settings.selection.budget is not None:
            extra["budget"] = self.budget_entry()
        if settings.selection.shard is not None:
            extra["shard"] = self.shard_entry()
        header = document_mod.Header(
            started=self.started,
            duration_s=time.time() - self.started,
            args=tuple(config.invocation_params.args),
            settings=document_mod.settings_entry(settings),
            workers=config.getoption("numprocesses", None) if config.pluginmanager.hasplugin("xdist") else None,
            versions=versions(),
            partial=result.partial,
            resumed=result.resumed,
            notes=result.notes,
            extra=extra,
        )
        return document_mod.build(
            list(result.records),
            found,
            self.scoring(),
            header,
            datasets=list(result.datasets),
            detector_info=result.detector_info,
        )

    def write_outputs(self, result: RunResult) -> RunResult:
        """The JSON report, the HTML page and the plots, all from one document (render/outputs.py).
        One that cannot be written is said in the summary; it never ends the run."""
        if self.thumbs:
            self.thumbs.close()  # what it drew is taken by the page; the rest is drawn now
        try:
            return self._write_outputs(result)
        finally:
            if self.thumbs:
                from ...render.html import thumbs

                thumbs.install(None)
                self.thumbs = False

    def _write_outputs(self, result: RunResult) -> RunResult:
        from ...render.outputs import asked_for, write_all

        outputs = self.plan.settings.outputs
        kept = bool(result.records)  # the run's folder only for a run that scored something
        if not kept and self.page_restored:
            outputs = replace(outputs, html_path=None)  # nothing scored: the earlier page stays at the path
        if any(output.write is not None for output, _ in asked_for(outputs, kept=kept)) or outputs.log_targets:
            taken: list[int] = []
            with interrupts_held(taken):  # before any import: the trackers' module is imported inside
                from ...render.trackers import log_report

                document = self.document(result)
                errors = write_all(document, outputs, kept=kept, sections=self.plan.sections)
                # --grounding-log: a failure is a note
                notes = log_report(document, outputs, errors, self.plan.sections)
            if notes:
                result = replace(result, notes=(*result.notes, *notes))
            if taken:
                self.interrupted_writing = True
            if errors:
                result = result.with_output_errors((*result.output_errors, *errors))
        self.close_live()  # the final page replaced the running one
        self.result = result
        return result
