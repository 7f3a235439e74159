"""--grounding-resume on the controller: the predictions file read back before any sample runs,
every line checked against this run (detectors, task, dataset versions) and re-scored from its
answer (evaluate/resume.py); what it keeps becomes the run's `resumed` records and the `done_keys`
that every process deselects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...core.record import Outcome, Record, Task
from ...evaluate import resume as resume_mod
from ...store.reports import OutputError, read_predictions
from ..common.plan import RunPlan
from ..common.settings import SettingError


@dataclass(frozen=True)
class Resumed:
    """What a resumed predictions file gives this run: its records kept, and the keys not to run again."""

    records: tuple[Record, ...] = ()
    done_keys: frozenset = frozenset()  # (task, detector, dataset, uid)


def load_resumed(plan: RunPlan, note: Callable[[str], None]) -> Resumed:
    """Read the predictions file being resumed: keep the records of this run's detectors and
    datasets (errors are run again); refuse a file from another dataset version or detector."""
    path = plan.settings.outputs.predictions_path
    if not plan.settings.outputs.resume or path is None or not path.exists():
        return Resumed()
    fingerprints = {d.name: d.fingerprint for d in plan.catalog.all()}
    try:
        lines = read_predictions(path)
    except OutputError as exc:
        raise SettingError(f"--grounding-resume: {exc}") from None
    kept: dict[tuple[str, str, str, str], Record] = {}
    samples = {(d.name, s.uid): s for d in plan.catalog.all() for s in plan.expand(d.samples)}  # variants, epochs
    share = _share(plan)
    for lineno, line in lines:
        where = f"{path}:{lineno}"
        if not isinstance(line, dict) or not {"detector", "dataset", "uid", "fingerprint", "outcome"} <= set(line):
            raise SettingError(
                f"--grounding-resume: {where} is not a line this plugin wrote (no detector, "
                "dataset, uid, fingerprint and outcome); refusing to mix it into this run"
            )
        if line["detector"] not in plan.settings.selection.detector_specs:
            raise SettingError(
                f"--grounding-resume: {where} is from detector {line['detector']!r}; this run's detectors are "
                f"{', '.join(plan.settings.selection.detector_specs)}. Refusing to mix them: use another "
                "predictions file or drop --grounding-resume"
            )
        task = line.get("task", Task.GROUNDING)
        if task != plan.settings.selection.task:
            raise SettingError(
                f"--grounding-resume: {where} is from the {task} task; this run measures "
                f"{plan.settings.selection.task}. Refusing to mix them: use another predictions file or drop "
                "--grounding-resume"
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
            assert plan.settings.selection.shard is not None
            raise SettingError(
                f"--grounding-resume: {where} is sample {str(line['uid'])[:80]!r} of {line['dataset']!r}, outside "
                f"shard {plan.settings.selection.shard.label}'s share: the file holds another shard's predictions. "
                "Give each shard its own --grounding-predictions file"
            )
        key = (task, line["detector"], line["dataset"], line["uid"])
        kept.pop(key, None)
        rescored = resume_mod.rescore(
            line, samples, where, plan.settings.scoring.profile
        )  # never trust a stored outcome
        if rescored.note:
            note(f"--grounding-resume: {rescored.note}")
        if rescored.record is not None and rescored.record["outcome"] != Outcome.ERROR:
            kept[key] = rescored.record
    return Resumed(tuple(kept.values()), frozenset(kept))


def _share(plan: RunPlan) -> set[tuple[str, str]] | None:
    """(dataset, uid) of the samples this shard runs (as collection splits them); None: no shard."""
    shard = plan.settings.selection.shard
    if shard is None:
        return None
    from ...datasets import sharding

    ordered = plan.samples_in_order()
    if shard.count > max(1, len(ordered)):
        return set()  # collection refuses the split
    taken = plan.expand(sharding.take(ordered, shard))
    return {(sample.dataset, sample.uid) for sample in taken}
