"""--grounding-log: the finished run logged to experiment trackers, MLflow (`mlflow:TRACKING_URI`)
and Weights & Biases (`wandb:PROJECT`), each behind its own extra and imported only here, when a
run asks for it.

It takes the finished report document (analysis/document.py build()) and the report files written,
never the run's state: one tracked run per detector (analysis/tracked.py: params, metrics), the JSON
and HTML reports as artifacts. A target's extra is checked when the settings are read (a usage
error before any sample); a tracker that fails at the end is a note in the summary and never fails
the run (the reports are written already)."""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..analysis.tracked import TrackedRun, tracked_runs

EXPERIMENT = "pytest-grounding"  # MLflow's experiment when $MLFLOW_EXPERIMENT_NAME names none
# kind -> (the module its extra provides, the extra's name)
KINDS = {"mlflow": ("mlflow", "mlflow"), "wandb": ("wandb", "wandb")}
PARAMS_PER_BATCH, METRICS_PER_BATCH = 100, 1000  # MLflow's log_batch limits


@dataclass(frozen=True)
class Target:
    kind: str  # mlflow | wandb
    where: str  # the tracking URI, or the W&B project

    def __str__(self) -> str:
        return f"{self.kind}:{self.where}"


def parse_target(text: str, source: str) -> Target:
    """`mlflow:URI` or `wandb:PROJECT`; a ValueError (a usage error) for anything else, and when
    the target's extra is not installed."""
    kind, _, where = str(text).strip().partition(":")
    if kind not in KINDS or not where.strip():
        raise ValueError(f"{source}: {text!r} is not mlflow:TRACKING_URI or wandb:PROJECT")
    module, extra = KINDS[kind]
    if importlib.util.find_spec(module) is None:
        raise ValueError(
            f"{source}: {text!r} needs the {extra} extra ({module} is not installed): "
            f'pip install "pytest-grounding[{extra}]"'
        )
    return Target(kind, where.strip())


TRACKER_TIMEOUT_S = 120.0  # each target's whole logging; MLflow alone retries a dead server for minutes


def _bounded(call: Any, timeout: float) -> Any:
    """`call()` in a daemon thread, waited for at most `timeout` seconds: its result, its exception
    raised here, or TimeoutError (the thread is left to end on its own; it holds no output open)."""
    import threading

    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="grounding-tracker", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout:g} s (gave up; the run's own outputs are written)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def log_all(
    document: Mapping[str, Any], targets: Sequence[Target], artifacts: Sequence[Path], sections: Any = None
) -> list[str]:
    """Each target logged, in bounded time; one note per target, saying where the runs went or why
    they did not. `sections`: the run's report sections (default: the installed ones)."""
    from ..sections import ordered

    runs = tracked_runs(document, ordered(sections))
    files = [Path(p) for p in artifacts if Path(p).is_file()]
    notes = []
    for target in targets:
        try:
            logger = LOGGERS[target.kind]
            ids = _bounded(partial(logger, target.where, runs, files, document), TRACKER_TIMEOUT_S)
        except Exception as exc:  # any library's failure: said, never a failed run
            notes.append(f"--grounding-log {target}: not logged: {type(exc).__name__}: {str(exc)[:300]}")
            continue
        notes.append(f"--grounding-log {target}: {len(ids)} run(s) logged ({', '.join(ids)})")
    return notes


def artifact_root(uri: str) -> str | None:
    """Where a new experiment keeps its artifacts: beside a local store (`sqlite:///runs.db` ->
    `mlartifacts/` in the database's folder), never MLflow's default `./mlruns` of whatever folder the
    run was started in; None for a file store (its artifacts live in its own folder) or a server."""
    from urllib.parse import urlparse

    parsed = urlparse(uri)
    if parsed.scheme == "sqlite":
        database = uri[len("sqlite:///") :] if uri.startswith("sqlite:///") else ""
        if not database or database == ":memory:":
            return None
        return (Path(database).expanduser().resolve().parent / "mlartifacts").as_uri()
    return None


def log_mlflow(uri: str, runs: Sequence[TrackedRun], files: Sequence[Path], document: Mapping[str, Any]) -> list[str]:
    """One MLflow run per detector through MlflowClient (no global state: the run's own process
    may use mlflow too). A file store needs MLFLOW_ALLOW_FILE_STORE=true in MLflow 3; sqlite:///
    needs SQLAlchemy (both in the extra)."""
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    # A server that does not answer: MLflow's defaults retry 7 times with backoff (minutes); the
    # user's own settings win.
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "20")

    client = MlflowClient(tracking_uri=uri)
    experiment_name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT
    found = client.get_experiment_by_name(experiment_name)
    if found is not None:
        experiment = found.experiment_id
    else:
        experiment = client.create_experiment(experiment_name, artifact_location=artifact_root(uri))
    ids = []
    for run in runs:
        tags = {"mlflow.runName": run.name[:250], "pytest_grounding.started": str(document.get("started"))}
        created = client.create_run(experiment, tags=tags)
        run_id = created.info.run_id
        now = int(time.time() * 1000)
        params = [Param(k, v) for k, v in run.params.items()]
        metrics = [Metric(k, v, now, 0) for k, v in run.metrics.items()]
        for start in range(0, len(metrics), METRICS_PER_BATCH):
            client.log_batch(run_id, metrics=metrics[start : start + METRICS_PER_BATCH])
        for start in range(0, len(params), PARAMS_PER_BATCH):
            client.log_batch(run_id, params=params[start : start + PARAMS_PER_BATCH])
        client.log_batch(run_id, tags=[RunTag("pytest_grounding.partial", str(bool(document.get("partial"))))])
        for path in files:
            client.log_artifact(run_id, str(path))
        client.set_terminated(run_id, "FINISHED")
        ids.append(run_id)
    return ids


def log_wandb(
    project: str, runs: Sequence[TrackedRun], files: Sequence[Path], document: Mapping[str, Any]
) -> list[str]:
    """One W&B run per detector: params as its config, metrics logged once and as its summary,
    the reports as one artifact. WANDB_MODE=offline writes the run under WANDB_DIR with no account."""
    import wandb

    ids = []
    for run in runs:
        handle = wandb.init(
            project=project,
            name=run.name[:128],
            config=dict(run.params),
            reinit="create_new",
            settings=wandb.Settings(console="off", quiet=True),
        )
        try:
            handle.log(dict(run.metrics), step=0)
            handle.summary.update(dict(run.metrics))
            if files:
                artifact = wandb.Artifact(f"grounding-report-{handle.id}", type="grounding-report")
                for path in files:
                    artifact.add_file(str(path))
                handle.log_artifact(artifact)
        finally:
            handle.finish()
        ids.append(str(handle.id))
    return ids


LOGGERS = {"mlflow": log_mlflow, "wandb": log_wandb}


def log_report(document: Mapping[str, Any], outputs: Any, problems: Sequence[str], sections: Any = None) -> list[str]:
    """The plugin's one call (plugin/controller/controller_session.py write_outputs): the OutputSettings'
    targets, with the JSON and HTML reports as artifacts where they were written (not named in
    `problems`)."""
    targets = outputs.log_targets
    if not targets:
        return []
    written = [
        path
        for path in (outputs.json_path, outputs.html_path)
        if path is not None and not any(str(path) in problem for problem in problems)
    ]
    return log_all(document, targets, written, sections)
