"""--grounding-resume on the controller: the predictions file read back before any sample runs,
every line checked against this run (detectors, task, dataset versions) and re-scored from its
answer (evaluate/resume.py); what it keeps becomes the run's `resumed` records and the `done_keys`
that every process deselects."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.record import Outcome, Record, Task
from ..core.types import with_epochs
from ..evaluate import resume as resume_mod
from ..render.output import OutputError, read_predictions
from .perturb_state import expand
from .settings import SettingError

if TYPE_CHECKING:
    from .state import GroundingRun


def load(run: GroundingRun) -> None:
    """Read the predictions file being resumed: keep the records of this run's detectors and
    datasets (errors are run again); refuse a file from another dataset version or detector."""
    path = run.settings.predictions_path
    if not run.settings.resume or path is None or not path.exists():
        return
    fingerprints = {d.name: d.fingerprint for d in run.datasets.values()}
    try:
        lines = read_predictions(path)
    except OutputError as exc:
        raise SettingError(f"--grounding-resume: {exc}") from None
    kept: dict[tuple[str, str, str, str], Record] = {}
    epochs = run.epochs_for(run.settings.detector_specs)
    samples = {  # --grounding-perturb: the variants too
        (d.name, s.uid): s for d in run.datasets.values() for s in with_epochs(expand(run.config, d.samples), epochs)
    }
    share = _share(run)
    for lineno, line in lines:
        where = f"{path}:{lineno}"
        if not isinstance(line, dict) or not {"detector", "dataset", "uid", "fingerprint", "outcome"} <= set(line):
            raise SettingError(
                f"--grounding-resume: {where} is not a line this plugin wrote (no detector, "
                "dataset, uid, fingerprint and outcome); refusing to mix it into this run"
            )
        if line["detector"] not in run.settings.detector_specs:
            raise SettingError(
                f"--grounding-resume: {where} is from detector {line['detector']!r}; this run's detectors are "
                f"{', '.join(run.settings.detector_specs)}. Refusing to mix them: use another predictions file "
                "or drop --grounding-resume"
            )
        task = line.get("task", Task.GROUNDING)
        if task != run.settings.task:
            raise SettingError(
                f"--grounding-resume: {where} is from the {task} task; this run measures {run.settings.task}. "
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
        if share is not None and (line["dataset"], line["uid"]) not in share:
            assert run.settings.shard is not None
            raise SettingError(
                f"--grounding-resume: {where} is sample {str(line['uid'])[:80]!r} of {line['dataset']!r}, outside "
                f"shard {run.settings.shard.label}'s share: the file holds another shard's predictions. Give each "
                "shard its own --grounding-predictions file"
            )
        key = (task, line["detector"], line["dataset"], line["uid"])
        kept.pop(key, None)
        rescored = resume_mod.rescore(line, samples, where, run.settings.profile)  # never trust a stored outcome
        if rescored.note:
            run.note(f"--grounding-resume: {rescored.note}")
        if rescored.record is not None and rescored.record["outcome"] != Outcome.ERROR:
            kept[key] = rescored.record
    run.resumed = list(kept.values())
    run.done_keys = frozenset(kept)
    run.records.extend(run.resumed)


def _share(run: GroundingRun) -> set[tuple[str, str]] | None:
    """(dataset, uid) of the samples this shard runs (as collection splits them); None: no shard."""
    shard = run.settings.shard
    if shard is None:
        return None
    from ..datasets import sharding

    ordered = run.samples_in_order()
    if shard.count > max(1, len(ordered)):
        return set()  # collection refuses the split
    taken = with_epochs(expand(run.config, sharding.take(ordered, shard)), run.epochs_for(run.settings.detector_specs))
    return {(sample.dataset, sample.uid) for sample in taken}
