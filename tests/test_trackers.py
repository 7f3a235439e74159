"""--grounding-log: runs logged to a real local MLflow tracking store (file and SQLite backends,
read back with MLflow's own client) and to W&B in offline mode (the run's own file read back),
figures compared with the JSON report and recounted from its records; a missing extra is a usage
error at start, a tracker that fails a note."""

import glob
import json
import struct
from collections import defaultdict
from pathlib import Path

import pytest

from helpers import FIXTURES, XDIST, read_json
from pytest_grounding.analysis import tracked
from pytest_grounding.render import trackers

MINI = str(FIXTURES / "mini")
DETECTORS = ["--detector", "colour", "--detector", "center"]
FEW = ["-k", "not m07 and not m08"]


def run(project, tmp_path, target, *extra):
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    # its own process: a tracker's library (MLflow's SQLAlchemy store, W&B's service) leaves state
    # behind that pytester's in-process runs do not undo (the next run found no plugin entry points)
    result = project.runpytest_subprocess(
        f"--dataset={MINI}",
        *DETECTORS,
        *FEW,
        "--grounding-log",
        target,
        "--grounding-json",
        str(report),
        "--grounding-html",
        str(page),
        "--grounding-misses",
        "xfail",
        *extra,
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    return result, read_json(report)


def recount(document, spec):
    """The headline and each app's accuracy from the records alone."""
    records = [r for r in document["samples"] if r["detector"] == spec and r["outcome"] != "error"]
    apps = defaultdict(list)
    for r in records:
        apps[r["app"]].append(r["outcome"] == "hit")
    overall = sum(r["outcome"] == "hit" for r in records) / len(records)
    return overall, {app: sum(hits) / len(hits) for app, hits in apps.items()}


def check_figures(document, spec, metrics, params):
    block = document["summary"][spec]
    overall, apps = recount(document, spec)
    assert metrics["accuracy"] == pytest.approx(overall) == pytest.approx(block["accuracy"])
    assert [metrics["accuracy.ci95_low"], metrics["accuracy.ci95_high"]] == pytest.approx(block["ci95"])
    for row in block["by"]["app"]:
        assert metrics[f"by.app.{row['value']}.accuracy"] == pytest.approx(apps[row["value"]])
        assert metrics[f"by.app.{row['value']}.accuracy.ci95_low"] == pytest.approx(row["ci95"][0])
        assert metrics[f"by.app.{row['value']}.accuracy.ci95_high"] == pytest.approx(row["ci95"][1])
    assert metrics["latency_ms.p50"] == pytest.approx(block["latency_ms"]["p50"])
    assert metrics["samples"] == block["samples"] == 6
    dataset = document["run"]["datasets"][0]
    assert params["detector"] == spec and params["dataset.mini.fingerprint"] == dataset["fingerprint"]


# -- the pure parts --------------------------------------------------------------------------------


def test_targets_are_parsed_and_a_missing_extra_is_named(monkeypatch):
    pytest.importorskip("mlflow")
    assert trackers.parse_target("mlflow:sqlite:///x.db", "--grounding-log") == trackers.Target(
        "mlflow", "sqlite:///x.db"
    )
    for bad in ("mlflow", "mlflow:", "neptune:x", "x"):
        with pytest.raises(ValueError, match="is not mlflow:TRACKING_URI or wandb:PROJECT"):
            trackers.parse_target(bad, "--grounding-log")
    monkeypatch.setattr(trackers.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ValueError, match=r'needs the wandb extra .*pip install "pytest-grounding\[wandb\]"'):
        trackers.parse_target("wandb:proj", "--grounding-log")


def test_names_trackers_refuse_are_made_safe_and_intervals_are_two_metrics():
    document = {
        "summary": {
            "d": {
                "accuracy": 0.5,
                "ci95": [0.2, 0.8],
                "by": {"app": [{"value": "Qt: Designer?", "accuracy": 1.0, "ci95": [0.3, 1.0], "samples": 2}]},
                "latency_ms": {"p50": 3.0, "p95": None},
                "benchmarks": {"osworld-g": {"accuracy": 0.25, "ci95": [0.1, 0.4], "label": "x"}},
                "cache": {"hits": 2, "stored": 0, "asked": 0},
            }
        },
        "run": {"detectors": {"d": {"throughput": {"samples_per_s": 9.5}}}},
        "cost": {"detectors": {"d": {"cost_usd": 0.01}}},
    }
    (run,) = tracked.tracked_runs(document)
    assert run.metrics["by.app.Qt_ Designer_.accuracy.ci95_high"] == 1.0
    assert run.metrics["benchmarks.osworld-g.ci95_low"] == 0.1 and run.metrics["benchmarks.osworld-g.accuracy"] == 0.25
    assert run.metrics["throughput.samples_per_s"] == 9.5 and run.metrics["cost.cost_usd"] == 0.01
    assert run.metrics["cache.hits"] == 2 and "latency_ms.p95" not in run.metrics


# -- MLflow ----------------------------------------------------------------------------------------


def mlflow_runs(uri):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(trackers.EXPERIMENT)
    return client, {r.data.tags["mlflow.runName"]: r for r in client.search_runs([experiment.experiment_id])}


@pytest.mark.slow  # a pytest process of its own that imports MLflow: 6 s
@XDIST
def test_a_run_logged_to_a_local_mlflow_file_store_reads_back_with_the_report_s_figures(
    project, tmp_path, monkeypatch, workers
):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps its file store for those who ask
    uri = (tmp_path / "mlruns").as_uri()
    result, document = run(project, tmp_path, f"mlflow:{uri}", *workers)
    result.stdout.fnmatch_lines([f"note: --grounding-log mlflow:{uri}: 2 run(s) logged (*"])
    client, found = mlflow_runs(uri)
    assert sorted(found) == ["center", "colour"]
    for spec, logged in found.items():
        assert logged.info.status == "FINISHED"
        check_figures(document, spec, logged.data.metrics, logged.data.params)
        assert sorted(a.path for a in client.list_artifacts(logged.info.run_id)) == ["r.html", "r.json"]
        copy = client.download_artifacts(logged.info.run_id, "r.json", str(tmp_path / spec))
        assert json.loads(Path(copy).read_text())["summary"][spec]["hits"] == document["summary"][spec]["hits"]
    assert found["colour"].data.metrics["accuracy"] > found["center"].data.metrics["accuracy"]


@pytest.mark.slow  # MLflow creates its SQLite schema (its migrations) on first use: ~15 s
def test_a_run_logged_to_a_local_mlflow_sqlite_store_reads_back_with_the_report_s_figures(project, tmp_path):
    pytest.importorskip("mlflow")
    pytest.importorskip("sqlalchemy")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    _, document = run(project, tmp_path, f"mlflow:{uri}")
    _, found = mlflow_runs(uri)
    for spec, logged in found.items():
        check_figures(document, spec, logged.data.metrics, logged.data.params)


@pytest.mark.slow  # a pytest process of its own that imports MLflow: 7 s
def test_a_tracker_that_fails_is_a_note_and_the_run_passes(project, tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)  # MLflow 3 refuses a file store without it
    uri = (tmp_path / "refused").as_uri()
    result, document = run(project, tmp_path, f"mlflow:{uri}")
    result.stdout.fnmatch_lines([f"note: --grounding-log mlflow:{uri}: not logged: MlflowException: *"])
    assert document["summary"]["colour"]["samples"] == 6  # the reports were written first


def test_an_unknown_tracker_is_a_usage_error_before_any_sample(project):
    result = project.runpytest(f"--dataset={MINI}", "--detector", "colour", "--grounding-log", "tensorboard:x")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--grounding-log: 'tensorboard:x' is not mlflow:TRACKING_URI or wandb:PROJECT*"])


# -- W&B offline -----------------------------------------------------------------------------------


def wandb_records(path):
    """The records of a W&B run file (`run-ID.wandb`): a 7-byte header, then 32 KiB blocks of
    chunks, each `crc32, length (2 bytes), type (1 full, 2 first, 3 middle, 4 last)`, every record
    a protobuf `Record` (W&B's own message, read with its own classes)."""
    from wandb.proto import wandb_internal_pb2

    data = Path(path).read_bytes()
    assert data[:4] == b":W&B"
    position, pending, records = 7, b"", []
    while position + 7 <= len(data):
        left = 32768 - position % 32768
        if left < 7:
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        if kind == 0:
            position += left
            continue
        chunk = data[position + 7 : position + 7 + length]
        position += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
    return records


@pytest.mark.slow  # W&B starts its service process: a few seconds
def test_a_run_logged_to_wandb_offline_reads_back_with_the_report_s_figures(project, tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    result, document = run(project, tmp_path, "wandb:grounding")
    result.stdout.fnmatch_lines(["note: --grounding-log wandb:grounding: 2 run(s) logged (*"])
    files = glob.glob(str(tmp_path / "wandb" / "offline-run-*" / "run-*.wandb"))
    assert len(files) == 2
    for path in files:
        records = wandb_records(path)
        (start,) = [r.run for r in records if r.WhichOneof("record_type") == "run"]
        spec = start.display_name
        params = {u.key: json.loads(u.value_json) for u in start.config.update if u.key != "_wandb"}
        (history,) = [r.history for r in records if r.WhichOneof("record_type") == "history"]
        metrics = {".".join(i.nested_key) or i.key: json.loads(i.value_json) for i in history.item}
        assert start.project == "grounding"
        check_figures(document, spec, metrics, params)
        (artifact,) = [r.artifact for r in records if r.WhichOneof("record_type") == "artifact"]
        assert sorted(e.path for e in artifact.manifest.contents) == ["r.html", "r.json"]
