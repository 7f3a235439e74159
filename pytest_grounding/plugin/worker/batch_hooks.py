"""--grounding-batch-out's hooks. Where predictions run (the only process, or each xdist worker):
an item of a served detector is not sent but written (detectors/batch_files.py: the detector's own
request builder) and not run (no report: the controller lists it among the run's not_run, with
where the request went). Where results gather: the parts cleared before any worker starts, joined
into the one file (and its manifest) after the last one ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ...core.types import Query, epoch_of
from ...detectors import batch_files
from ..common.pool import DetectorLoadError
from ..common.settings import SettingError
from .pipeline import detector_spec

BATCH_DETECTORS = ("openai",)  # vllm:/llamacpp: start a server at load; openai:model=NAME writes their requests


def batch_path(settings: Any) -> Path | None:
    """The file this run (this shard) writes, or None."""
    path = settings.outputs.batch_out
    return None if path is None else batch_files.sharded_path(Path(path), settings.selection.shard)


def check_specs(plan: Any) -> None:
    """Only a plain served detector writes requests: a usage error for any other spec of the run."""
    for spec in plan.settings.selection.detector_specs:
        parsed = plan.specs.get(spec)
        if parsed.name not in BATCH_DETECTORS or parsed.chain.strategies:
            raise SettingError(
                f"--grounding-batch-out: --detector {spec}: only an openai: detector without strategies writes batch "
                "requests (give openai:model=NAME,preset=NAME, NAME as the batch engine serves it)"
            )


class BatchWriteHooks:
    def __init__(self, worker: Any, writer: batch_files.Writer) -> None:
        self.worker = worker
        self.writer = writer

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        spec = detector_spec(item)
        if spec is None:
            return None
        try:
            detector = self.worker.pool.get(spec)
        except DetectorLoadError:
            return None  # the item says why
        build = getattr(detector, "batch_request", None)
        if build is None:
            return None
        sample = item.callspec.params["grounding_sample"]
        image, problem = self.worker.screens.read(sample)
        if problem is not None:
            return None  # run as usual: the sample's error names the file
        query = Query(image=image, instruction=sample.instruction, epoch=epoch_of(sample))
        body, frame = build(query)
        entry = batch_files.sample_entry(sample, image.size, frame.model, bool(getattr(detector, "resize", True)))
        custom_id = batch_files.batch_id(sample.uid, query.epoch)
        self.writer.write(custom_id, body, entry, detector.batch_manifest())
        return True  # written, not run here: no report


class BatchJoinHooks:
    def __init__(self, controller: Any, path: Path) -> None:
        self.controller = controller
        self.path = path
        self.manifest: dict[str, Any] | None = None

    @pytest.hookimpl(hookwrapper=True, trylast=True)  # innermost: joined before the run's records close
    def pytest_runtestloop(self, session):
        yield
        plan = self.controller.plan
        shard = plan.settings.selection.shard
        extra = {
            "datasets": [
                {"name": name, "fingerprint": value} for name, value in sorted(plan.catalog.fingerprints().items())
            ],
            "shard": None if shard is None else {"index": shard.index, "count": shard.count},
        }
        order = [sample.uid for sample in plan.samples_in_order()]
        self.manifest = batch_files.join_parts(self.path, order, extra)

    def lines(self) -> list[str]:
        """The summary's lines: what was written, where, and how to continue."""
        if self.manifest is None:
            return [
                f"grounding: --grounding-batch-out {self.path}: no request written (no sample of an openai: detector)"
            ]
        return [
            f"grounding: batch requests: {self.manifest['lines']} lines written to {self.path} (sha256 "
            f"{self.manifest['sha256'][:12]}; manifest {batch_files.manifest_path(self.path).name})",
            f"grounding: {batch_files.continue_line(self.path)}",
        ]

    def pytest_terminal_summary(self, terminalreporter) -> None:
        for line in self.lines():
            terminalreporter.write_line(line)


def register(config: Any, plan: Any, worker: Any, controller: Any) -> None:
    path = batch_path(plan.settings)
    if path is None:
        batch_files.configure(None, "main")
        return
    if controller is not None:
        check_specs(plan)
        batch_files.clear_parts(path)
        config.pluginmanager.register(BatchJoinHooks(controller, path), "grounding-batch-join")
    told = getattr(config, "workerinput", None)
    batch_files.configure(path, str(told.get("workerid", "gw0")) if told is not None else "main")
    writer = batch_files.writing()
    if worker is not None and writer is not None:
        writer.start()
        config.pluginmanager.register(BatchWriteHooks(worker, writer), "grounding-batch-write")
