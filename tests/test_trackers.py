"""--grounding-log: runs logged to a real local MLflow tracking store (file and SQLite backends,
read back with MLflow's own client) and to W&B in offline mode (the run's own file read back),
figures compared with the JSON report and recounted from its records; a missing extra is a usage
error at start, a tracker that fails a note."""

import glob
import importlib.util
import json
import subprocess
import sys
from collections import defaultdict

import pytest

from helpers import FIXTURES, SERIAL, read_json
from pytest_grounding.analysis import tracked
from pytest_grounding.render import trackers
from pytest_grounding.sections import sections

MINI = str(FIXTURES / "mini")
# The trackers' libraries are never imported into this process: MLflow and W&B pull in numpy's and
# protobuf's extension modules, which pytester's in-process runs (here and in other test files of the
# same worker) cannot load a second time. Runs and read-backs go to processes of their own.
needs_mlflow = pytest.mark.skipif(importlib.util.find_spec("mlflow") is None, reason="the mlflow extra")
needs_wandb = pytest.mark.skipif(importlib.util.find_spec("wandb") is None, reason="the wandb extra")
READ_MLFLOW = """
import json, sys
from mlflow.tracking import MlflowClient
client = MlflowClient(tracking_uri=sys.argv[1])
experiment = client.get_experiment_by_name(sys.argv[2])
out = {}
for run in client.search_runs([experiment.experiment_id]):
    copy = client.download_artifacts(run.info.run_id, "r.json", sys.argv[3]) if sys.argv[3] != "-" else None
    out[run.data.tags["mlflow.runName"]] = {
        "status": run.info.status, "metrics": run.data.metrics, "params": run.data.params,
        "artifacts": sorted(a.path for a in client.list_artifacts(run.info.run_id)),
        "report": json.load(open(copy)) if copy else None,
    }
print(json.dumps(out))
"""
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


@needs_mlflow
def test_targets_are_parsed_and_a_missing_extra_is_named(monkeypatch):
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
    (run,) = tracked.tracked_runs(document, sections())
    assert run.metrics["by.app.Qt_ Designer_.accuracy.ci95_high"] == 1.0
    assert run.metrics["benchmarks.osworld-g.ci95_low"] == 0.1 and run.metrics["benchmarks.osworld-g.accuracy"] == 0.25
    assert run.metrics["throughput.samples_per_s"] == 9.5 and run.metrics["cost.cost_usd"] == 0.01
    assert run.metrics["cache.hits"] == 2 and "latency_ms.p95" not in run.metrics


# -- MLflow ----------------------------------------------------------------------------------------


def mlflow_runs(uri, download=None):
    """What MLflow's own client reads back from the store: per run name, its status, metrics,
    params, artifacts and (with `download`, a folder) the JSON report it holds."""
    command = [sys.executable, "-c", READ_MLFLOW, uri, trackers.EXPERIMENT, str(download or "-")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow  # a pytest process of its own that imports MLflow: 6 s
@needs_mlflow
@SERIAL
def test_a_run_logged_to_a_local_mlflow_file_store_reads_back_with_the_report_s_figures(
    project, tmp_path, monkeypatch, workers
):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps its file store for those who ask
    uri = (tmp_path / "mlruns").as_uri()
    result, document = run(project, tmp_path, f"mlflow:{uri}", *workers)
    result.stdout.fnmatch_lines([f"note: --grounding-log mlflow:{uri}: 2 run(s) logged (*"])
    (tmp_path / "copies").mkdir()
    found = mlflow_runs(uri, tmp_path / "copies")
    assert sorted(found) == ["center", "colour"]
    for spec, logged in found.items():
        assert logged["status"] == "FINISHED" and logged["artifacts"] == ["r.html", "r.json"]
        check_figures(document, spec, logged["metrics"], logged["params"])
        assert logged["report"]["summary"][spec]["hits"] == document["summary"][spec]["hits"]
    assert found["colour"]["metrics"]["accuracy"] > found["center"]["metrics"]["accuracy"]


@pytest.mark.slow  # MLflow creates its SQLite schema (its migrations) on first use: ~15 s
@needs_mlflow
def test_a_run_logged_to_a_local_mlflow_sqlite_store_reads_back_with_the_report_s_figures(project, tmp_path):
    if importlib.util.find_spec("sqlalchemy") is None:
        pytest.skip("MLflow's sqlite store needs SQLAlchemy (the mlflow extra)")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    _, document = run(project, tmp_path, f"mlflow:{uri}")
    found = mlflow_runs(uri)
    assert sorted(found) == ["center", "colour"]
    for spec, logged in found.items():
        check_figures(document, spec, logged["metrics"], logged["params"])


@pytest.mark.slow  # a pytest process of its own that imports MLflow: 7 s
@needs_mlflow
def test_a_tracker_that_fails_is_a_note_and_the_run_passes(project, tmp_path, monkeypatch):
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


# A W&B run file (`run-ID.wandb`) read with W&B's own protobuf classes: a 7-byte header, then
# 32 KiB blocks of chunks, each `crc32, length (2 bytes), type (1 full, 2 first, 3 middle, 4 last)`,
# every record a `Record` message. Printed: the run's name, project and config, the logged metrics
# and the artifact's files.
READ_WANDB = """
import json, struct, sys
from wandb.proto import wandb_internal_pb2
data = open(sys.argv[1], "rb").read()
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
out = {"metrics": {}, "artifacts": []}
for record in records:
    kind = record.WhichOneof("record_type")
    if kind == "run":
        out["name"], out["project"] = record.run.display_name, record.run.project
        out["config"] = {u.key: json.loads(u.value_json) for u in record.run.config.update if u.key != "_wandb"}
    elif kind == "history":
        out["metrics"].update({".".join(i.nested_key) or i.key: json.loads(i.value_json) for i in record.history.item})
    elif kind == "artifact":
        out["artifacts"] += [e.path for e in record.artifact.manifest.contents]
print(json.dumps(out))
"""


@needs_wandb
@pytest.mark.slow  # W&B starts its service process: a few seconds
def test_a_run_logged_to_wandb_offline_reads_back_with_the_report_s_figures(project, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    result, document = run(project, tmp_path, "wandb:grounding")
    result.stdout.fnmatch_lines(["note: --grounding-log wandb:grounding: 2 run(s) logged (*"])
    files = glob.glob(str(tmp_path / "wandb" / "offline-run-*" / "run-*.wandb"))
    assert len(files) == 2
    names = []
    for path in files:
        done = subprocess.run([sys.executable, "-c", READ_WANDB, path], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        found = json.loads(done.stdout.splitlines()[-1])
        assert found["project"] == "grounding" and sorted(found["artifacts"]) == ["r.html", "r.json"]
        check_figures(document, found["name"], found["metrics"], found["config"])
        names.append(found["name"])
    assert sorted(names) == ["center", "colour"]
