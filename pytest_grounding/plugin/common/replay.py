"""The run's side of replays, on the controller: before any sample runs, each replayed file is
matched against the run's datasets (answers for samples not in them are counted; a file none of
whose answers matches is a usage error: a file for another benchmark); at the end, the findings
(agreement with the file's own verdicts, ScreenSpot-Pro's `metrics` recomputed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the rest is imported when a run replays: every process imports this module
    from ...analysis.agreement import MetricsCheck, ReplayFindings
    from ...core.types import Sample
    from ...detectors.replay.files import ReplayFile

REPLAY = "replay"
SHOWN_IDS = 5


def labelled_first(spec: str) -> str:
    """A replay spec with its `name=LABEL` first (`replay:name=a,path=...`): the spec is the
    detector's name in every table, and tables cut long names at the end."""
    head, sep, rest = spec.partition(":")
    if head.strip() != REPLAY or not sep:
        return spec
    options = [part.strip() for part in rest.split(",") if part.strip()]
    named = [part for part in options if part.partition("=")[0].strip() == "name"]
    return f"{REPLAY}:{','.join(named + [p for p in options if p not in named])}" if named else spec


def replay_specs(specs: Sequence[str]) -> list[str]:
    """Replays of predictions files (a batch engine's results, `requests=`, have no verdicts of their own)."""
    return [spec for spec in specs if spec.partition(":")[0].strip() == REPLAY and not _batch(spec)]


def _batch(spec: str) -> bool:
    return any(part.partition("=")[0].strip() == "requests" for part in spec.partition(":")[2].split(","))


def load(spec: str) -> ReplayFile:
    """The file a replay spec names, read as the detector reads it (ReplayError, ValueError)."""
    from ...detectors import bind_options, parse_spec
    from ...detectors.replay import ReplayDetector

    name, options = parse_spec(spec, raw=True)
    return ReplayDetector(**bind_options(name, ReplayDetector, options)).file


def check(specs: Sequence[str], samples: Iterable[Sample], fingerprints: Mapping[str, str] | None = None) -> list[str]:
    """Notes for the run: how many answers of each replayed file match no sample. Raises
    ReplayError when a file cannot be read, none of its answers matches, or it holds this plugin's
    predictions of another version of a dataset of the run (their fingerprint differs)."""
    from ...detectors.replay.files import ReplayError
    from ...detectors.replay.match import Index

    pool = list(samples)
    notes: list[str] = []
    for spec in replay_specs(specs):
        try:
            replay = load(spec)
        except (ReplayError, ValueError) as exc:
            raise ReplayError(f"--detector {spec}: {exc}") from None
        for answer in replay.answers:
            now = (fingerprints or {}).get(answer.dataset or "")
            if answer.fingerprint is not None and now is not None and answer.fingerprint != now:
                raise ReplayError(
                    f"--detector {spec}: {replay.path} row {answer.line} answers dataset {answer.dataset!r} with "
                    f"fingerprint {answer.fingerprint}; this run has fingerprint {now}: predictions of another "
                    "version of the dataset are not replayed against this one"
                )
        index = Index(replay)
        _one_sample_per_row(spec, index, pool)
        extra = index.unmatched(pool)
        answers = len(replay.answers)
        if answers and len(extra) == answers:
            raise ReplayError(
                f"--detector {spec}: none of the {answers} answers in {replay.path} ({replay.format}, matched by "
                f"{replay.by}) matches a sample of this run's datasets: a file for another benchmark or version?"
                f"{_first(extra)}"
            )
        if not answers:
            raise ReplayError(f"--detector {spec}: {replay.path} holds no answers ({len(replay.skipped)} rows skipped)")
        if extra:
            notes.append(
                f"replay {replay.path}: {len(extra)} of its {answers} answers match no sample of this run's "
                f"datasets (not scored){_first(extra)}"
            )
        if replay.skipped:
            notes.append(f"replay {replay.path}: {len(replay.skipped)} rows skipped ({replay.skipped[0]}, ...)")
    return notes


def _one_sample_per_row(spec: str, index: Any, samples: Sequence[Sample]) -> None:
    """A row matched by screen and instruction with no `bbox` cannot say which target it answers:
    where two samples of different targets share its screen and instruction it would answer both,
    so the file is refused naming the row (ReplayError). (A row with a bbox is narrowed to the
    sample whose target it names, as match.py does.)"""
    from ...detectors.replay.files import BY_SCREEN, ReplayError

    if index.file.by != BY_SCREEN:
        return
    targets: dict[int, set[tuple[float, ...]]] = {}
    for sample in samples:
        answer = index.match(sample).answer
        if answer is None or answer.bbox is not None:
            continue
        targets.setdefault(answer.line, set()).add(tuple(sample.bbox.as_list()))
        if len(targets[answer.line]) > 1:
            raise ReplayError(
                f"--detector {spec}: row {answer.line} of {index.file.path} has no bbox and matches several "
                "samples with this screen and instruction and different targets: give the row its target's bbox"
            )


def _first(extra: Sequence[Any]) -> str:
    shown = [a.id if a.id is not None else f"{a.image} {a.prompt!r}" for a in extra[:SHOWN_IDS]]
    more = ", ..." if len(extra) > SHOWN_IDS else ""
    return f"; first: {', '.join(repr(s) for s in shown)}{more}" if shown else ""


def findings(records: Sequence[Mapping[str, Any]], specs: Sequence[str]) -> ReplayFindings | None:
    """Agreement per replayed detector, and for a ScreenSpot-Pro results file that carries
    `metrics`, ours recomputed beside them (sections/replay_text.py says it)."""
    replays = replay_specs(specs)
    if not replays:
        return None
    from ...analysis.agreement import ReplayFindings, tally

    blocks = tally(records)
    metrics = {}
    for spec in replays:
        check = metrics_check(spec, [r for r in records if r.get("detector") == spec])
        if check is not None:
            metrics[spec] = check
    return ReplayFindings({spec: blocks[spec] for spec in replays if spec in blocks}, metrics)


def metrics_check(spec: str, records: Sequence[Mapping[str, Any]]) -> MetricsCheck | None:
    from ...analysis.agreement import MetricsCheck
    from ...detectors.replay.files import ReplayError

    try:
        replay = load(spec)
    except (ReplayError, ValueError):
        return None
    if not replay.metrics or not records:
        return None
    if len(records) != len(replay.answers):
        return MetricsCheck(len(records), len(replay.answers), None)
    from ...analysis.official_metrics import compare_metrics, official_metrics

    differences = compare_metrics(official_metrics(records), replay.metrics)
    return MetricsCheck(len(records), len(replay.answers), tuple(differences))
