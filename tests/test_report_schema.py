"""The published JSON Schema of the `--grounding-json` report: real reports, produced by the plugin
through pytester with and without xdist, must validate; broken ones must not."""

import copy
import json
from importlib.resources import files

import pytest

from helpers import FIXTURES, SERIAL, read_json

jsonschema = pytest.importorskip("jsonschema")

MINI = str(FIXTURES / "mini")


@pytest.fixture(scope="module")
def validator():
    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(validator, document):
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(document)]


def report_of(project, tmp_path, *args):
    path = tmp_path / "report.json"
    project.runpytest(*args, "--grounding-json", str(path))
    return read_json(path)


@SERIAL
def test_report_with_hits_wrong_format_errors_and_gates_validates(project, validator, workers, tmp_path):
    document = report_of(
        project,
        tmp_path,
        f"--dataset={MINI}",
        "--detector",
        "colour",
        "--detector",
        "center",
        "--grounding-min-accuracy",
        "0.5",
        "--grounding-min-accuracy",
        "app=Nowhere:0.1",
        "--grounding-timeout",
        "20",
        *workers,
    )
    outcomes = {r["outcome"] for r in document["samples"]}
    assert outcomes == {"hit", "miss", "wrong_format", "error"}  # every kind of record is in what we validate
    assert any(v["accuracy"] is None for v in document["gates"])  # the null of a slice with no samples
    assert problems(validator, document) == []


def test_report_of_detectors_that_fail_validates(project, validator, tmp_path):
    document = report_of(
        project,
        tmp_path,
        f"--dataset={MINI}",
        "--detector",
        "boom",
        "--detector",
        "garbage",
        "--grounding-limit",
        "4",
    )
    # (a detector that cannot be built stops the run with one message and writes no report: test_hub.py)
    assert document["summary"]["garbage"]["accuracy"] is None and document["summary"]["garbage"]["errors"] == 4
    assert document["summary"]["boom"]["errors"] >= 1
    assert problems(validator, document) == []


@SERIAL
def test_report_on_the_embedded_default_validates(project, validator, workers, tmp_path):
    # the session's default set (tests/conftest.py links it into pytester's HOME): not drawn again
    document = report_of(project, tmp_path, "--detector", "center", "--grounding-limit", "3", *workers)
    assert document["summary"]["center"]["samples"] == 3
    assert problems(validator, document) == []


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_partial_report_of_an_interrupted_run_validates(project, validator, tmp_path):
    path = tmp_path / "report.json"
    # In a subprocess: pytester re-raises an in-process KeyboardInterrupt into this session.
    project.runpytest_subprocess(f"--dataset={MINI}", "--detector", "interrupting", "--grounding-json", str(path))
    document = read_json(path)
    assert document["partial"] is True
    assert problems(validator, document) == []


def test_report_with_no_finished_sample_validates(project, validator, tmp_path):
    document = report_of(project, tmp_path, f"--dataset={MINI}", "--detector", "center", "-k", "no_such_item")
    assert document["summary"] == {} and document["samples"] == []
    assert problems(validator, document) == []


# ---- the schema is strict where it must be and open where the report is open ---------------------


@pytest.fixture(scope="module")
def made_once():
    return {}


@pytest.fixture
def document(request, made_once, tmp_path):
    """One real report for the module, made by the first test that asks (pytester is per test)."""
    if "report" not in made_once:
        made_once["report"] = report_of(
            request.getfixturevalue("project"),
            tmp_path,
            f"--dataset={MINI}",
            "--detector",
            "colour",
            "--grounding-limit",
            "6",
        )
    return made_once["report"]


@pytest.mark.parametrize(
    "path, key",
    [
        ((), "summary"),
        (("run",), "settings"),
        (("summary", "colour"), "accuracy"),
        (("summary", "colour", "latency_ms"), "p95"),
        (("samples", 0), "outcome"),
        (("samples", 0), "iou"),
        (("run", "datasets", 0), "fingerprint"),
    ],
    ids=lambda v: v if isinstance(v, str) else "/".join(map(str, v)) or "top",
)
def test_a_missing_field_fails(validator, document, path, key):
    broken = copy.deepcopy(document)
    target = broken
    for step in path:
        target = target[step]
    del target[key]
    assert problems(validator, broken)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(schema_version="1"),
        lambda d: d.update(partial="no"),
        lambda d: d["summary"]["colour"].update(hits=5.5),
        lambda d: d["summary"]["colour"].update(accuracy="83%"),
        lambda d: d["samples"][0].update(outcome="almost"),
        lambda d: d["samples"][0].update(point=[1, 2, 3]),
        lambda d: d["samples"][0].update(unexpected=1),
        lambda d: d["run"]["settings"].update(misses="maybe"),
        lambda d: d["summary"]["colour"]["by"]["size"][0].update(value="tiny"),
    ],
    ids=[
        "version-as-string",
        "partial-not-bool",
        "hits-not-int",
        "accuracy-as-text",
        "unknown-outcome",
        "point-of-three",
        "extra-record-field",
        "bad-misses-mode",
        "unknown-size-bucket",
    ],
)
def test_a_mistyped_field_fails(validator, document, mutate):
    broken = copy.deepcopy(document)
    mutate(broken)
    assert problems(validator, broken)


def test_open_places_accept_new_fields(validator, document):
    extended = copy.deepcopy(document)
    extended["provenance"] = True  # new optional top-level keys
    extended["task"] = {"name": "anything"}
    extended["versions"]["some-package"] = "1.0"
    extended["run"]["detectors"]["colour"]["device"] = "cuda:0"
    extended["samples"][0]["meta"] = {"candidates": [{"text": "OK", "score": 0.9}]}
    assert problems(validator, extended) == []


@pytest.mark.slow
@SERIAL
def test_report_with_a_baseline_written_then_compared_validates(project, validator, workers, tmp_path):
    baseline = tmp_path / "baseline.json"
    args = (f"--dataset={MINI}", "--detector", "colour", "--grounding-limit", "6", f"--grounding-baseline={baseline}")
    written = report_of(project, tmp_path, *args, *workers)
    assert written["baseline"]["status"] == "written" and written["baseline"]["problem"]
    assert problems(validator, written) == []
    # A crafted baseline: m01 was a miss (now an improvement), m06 was a hit (now a regression).
    text = baseline.read_text()
    text = text.replace('"id": "m01", "outcome": "hit"', '"id": "m01", "outcome": "miss"')
    baseline.write_text(text.replace('"id": "m06", "outcome": "wrong_format"', '"id": "m06", "outcome": "hit"'))
    compared = report_of(
        project, tmp_path, *args, "--grounding-max-slowdown", "1000", "--grounding-tolerance", "0.5", *workers
    )
    found = compared["baseline"]
    assert found["status"] == "compared" and found["passed"] is False
    assert [r["id"] for r in found["regressions"]] == ["m06"] and [r["id"] for r in found["improvements"]] == ["m01"]
    assert found["latency"] and {s["baseline"] for s in found["slices"]} and found["tolerance"] == 0.5
    assert {r["id"]: r["baseline"] for r in compared["samples"]}["m06"] == "regression"
    assert problems(validator, compared) == []
    plain = report_of(project, tmp_path, f"--dataset={MINI}", "--detector", "center", "--grounding-limit", "1")
    assert "baseline" not in plain and problems(validator, plain) == []  # without the option: no key


def test_the_schema_names_every_built_in_format():
    """The schema's format examples list the formats this plugin reads (issue 19: the new formats
    are added to the JSON schema); a format added without it fails here."""
    from pytest_grounding.datasets import builtin_registry

    schema = json.loads(files("pytest_grounding").joinpath("schema/report.schema.json").read_text())
    assert sorted(schema["$defs"]["dataset"]["properties"]["format"]["examples"]) == sorted(builtin_registry().names())
