"""Baselines (--grounding-baseline): written on the first run, compared per sample and per slice on
the next, rewritten on purpose; refused for another dataset version or detector spec. The pure
module's units first, then end-to-end runs through pytester, with and without xdist."""

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from helpers import FIXTURES, SERIAL, XDIST, assert_counts, read_json
from pytest_grounding.analysis import baseline as bl

MINI = str(FIXTURES / "mini")

# A detector whose behaviour the test changes between runs (a model change, under the same spec):
# blind to the instructions naming GROUNDING_TEST_BLIND, slowed by GROUNDING_TEST_DELAY_MS.
TUNABLE = """

import os


class Tunable(Colour):
    name = "tunable"

    def predict(self, query):
        delay = float(os.environ.get("GROUNDING_TEST_DELAY_MS") or 0)
        if delay:
            time.sleep(delay / 1000.0)
        blind = os.environ.get("GROUNDING_TEST_BLIND")
        if blind and blind in query.instruction:
            return Prediction(point=(0.0, 0.0), raw="looked elsewhere")
        return Colour.predict(self, query)


_register_base = pytest_grounding_register_detectors


def pytest_grounding_register_detectors(registry):
    _register_base(registry)
    registry.register("tunable", Tunable)
"""


@pytest.fixture
def tuned(project, monkeypatch):
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + TUNABLE)
    monkeypatch.delenv("GROUNDING_TEST_BLIND", raising=False)
    monkeypatch.delenv("GROUNDING_TEST_DELAY_MS", raising=False)
    return project


def run(project, baseline, *args):
    # m01-m05 hit for the tunable detector, m06 is a wrong format (no purple): m07/m08 (broken images) left out
    chosen = (f"--dataset={MINI}", "--detector", "tunable", "--grounding-limit", "6")
    return project.runpytest(*chosen, f"--grounding-baseline={baseline}", *args)


# ---- the pure module -------------------------------------------------------------------------------


def test_tolerance_grammar_is_the_gates_grammar():
    assert bl.parse_tolerance("0.02") == bl.Tolerance(0.02)
    assert bl.parse_tolerance("5%") == bl.Tolerance(0.05)
    assert bl.parse_tolerance("element_type=icon:0.1", "ini") == bl.Tolerance(0.1, "element_type", "icon", "ini")
    tolerances = bl.Tolerances.parse(["0.02", "app=Excel:0.5"])
    assert tolerances.of("overall") == 0.02 and tolerances.of("app=excel") == 0.5 and tolerances.of("app=QGIS") == 0.02
    assert bl.Tolerances.parse([]).of("overall") == 0.0
    for bad, says in (("colour=red:0.1", "unknown slice 'colour'"), ("1.5", "not a share"), ("app:0.1", "KEY=VALUE")):
        with pytest.raises(ValueError, match=says):
            bl.parse_tolerance(bad, "--grounding-tolerance")


@pytest.mark.parametrize(
    "now, before, verdict",
    [
        ("hit", "hit", bl.STILL_HIT),
        ("hit", "miss", bl.IMPROVED),
        ("hit", "error", bl.IMPROVED),
        ("miss", "hit", bl.REGRESSION),
        ("wrong_format", "hit", bl.REGRESSION),
        ("miss", "wrong_format", bl.KNOWN_MISS),
        ("miss", None, bl.NEW),
        ("error", "hit", bl.ERROR),
    ],
)
def test_sample_verdicts(now, before, verdict):
    assert bl.sample_verdict(now, before) == verdict


def record(sample_id, outcome, element_type="icon", detector="d", uid=None):
    return {
        "task": "grounding",
        "detector": detector,
        "dataset": "set",
        "fingerprint": "f1",
        "id": sample_id,
        "uid": uid or f"set-{sample_id}-app-{element_type}",
        "outcome": outcome,
        "element_type": element_type,
        "app": "App",
        "app_category": "cat",
        "platform": "linux",
        "size": "<32",
        "iou": None,
        "latency_ms": 1.0,
    }


def test_file_is_sorted_one_line_per_sample_and_reads_back():
    records = [record("b", "miss"), record("a", "hit", "text"), record("a", "hit", uid="set-a-app-icon-dup2")]
    text = bl.dumps(bl.build(records, "grounding"))
    assert text == bl.dumps(bl.build(list(reversed(records)), "grounding"))  # order of arrival does not matter
    lines = text.splitlines()
    sample_lines = [line for line in lines if '"outcome"' in line]
    assert [json.loads(line.rstrip(","))["id"] for line in sample_lines] == ["a", "a#2", "b"]  # a repeated id stays two
    loaded = bl.loads(text, "b.json")
    assert loaded.outcomes == {("f1", "a", "d"): "hit", ("f1", "a#2", "d"): "hit", ("f1", "b", "d"): "miss"}
    assert loaded.datasets == {"set": "f1"} and loaded.detectors == ("d",)
    with pytest.raises(bl.BaselineError, match="not a pytest-grounding baseline"):
        bl.loads('{"samples": []}', "x.json")
    with pytest.raises(bl.BaselineError, match="not JSON"):
        bl.loads("{", "x.json")


def test_compatibility_names_what_differs():
    base = bl.loads(bl.dumps(bl.build([record("a", "hit")], "grounding")), "b.json")
    bl.check_compatible(base, where="b.json", task="grounding", datasets={"set": "f1"}, detectors=["d"])
    with pytest.raises(bl.BaselineError, match=r"dataset set changed: its fingerprint is f2, b\.json was written on f"):
        bl.check_compatible(base, where="b.json", task="grounding", datasets={"set": "f2"}, detectors=["d"])
    with pytest.raises(bl.BaselineError, match=r"detector 'd:x=1' is not in b\.json, which holds d"):
        bl.check_compatible(base, where="b.json", task="grounding", datasets={"set": "f1"}, detectors=["d:x=1"])
    with pytest.raises(bl.BaselineError, match="locate"):
        bl.check_compatible(base, where="b.json", task="locate", datasets={"set": "f1"}, detectors=["d"])


def test_comparison_names_regressions_improvements_and_slice_drops_beyond_tolerance():
    then = [record("a", "hit"), record("b", "hit"), record("c", "miss", "text"), record("d", "hit", "text")]
    base = bl.loads(bl.dumps(bl.build(then, "grounding")), "b.json")
    now = [record("a", "hit"), record("b", "miss"), record("c", "hit", "text"), record("d", "hit", "text")]
    found = bl.compare(base, now, bl.Tolerances.parse(["0.3"]))
    assert [r["id"] for r in found.regressions] == ["b"] and [r["id"] for r in found.improvements] == ["c"]
    failed = {v.label: round(v.drop, 3) for v in found.failed_slices}
    assert failed == {"element_type=icon": 0.5}  # overall 75% -> 75%; icons 100% -> 50%; text up
    assert not found.passed
    lenient = bl.compare(base, now, bl.Tolerances.parse(["0.3", "element_type=icon:0.5"]))
    assert lenient.failed_slices == [] and not lenient.passed  # the regression itself still fails
    assert bl.compare(base, then, bl.Tolerances()).passed  # the same run passes
    typo = bl.compare(base, then, bl.Tolerances.parse(["app=Nowhere:0.1"]))
    assert [v.label for v in typo.failed_slices] == ["app=Nowhere"]
    text = "\n".join(bl.comparison_lines(found, "b.json"))
    assert "regression: d set/b" in text and "improvement: d set/c" in text
    assert "baseline FAILED: detector d element_type=icon: accuracy 50.0% (baseline 100.0%, -50.0 points)" in text


def test_latency_ratio():
    then = [record("a", "hit")]
    base = bl.loads(bl.dumps(bl.build(then, "grounding")), "b.json")
    slow = [{**record("a", "hit"), "latency_ms": 2.0}]
    assert not bl.compare(base, slow, bl.Tolerances(), max_slowdown=1.5).passed
    assert bl.compare(base, slow, bl.Tolerances(), max_slowdown=2.5).passed
    assert bl.compare(base, slow, bl.Tolerances()).latency == ()  # off unless asked


# ---- end to end ------------------------------------------------------------------------------------


@pytest.mark.slow
@XDIST
def test_first_run_writes_and_fails_second_passes_regression_fails_update_rewrites(
    tuned, workers, tmp_path, monkeypatch
):
    path = tmp_path / "baseline.json"
    first = run(tuned, path, *workers)
    assert first.ret == 1
    assert_counts(first, passed=6, failed=1, xfailed=1)  # the baseline's case fails, the errors share's passes
    first.stdout.fnmatch_lines(["baseline FAILED: baseline *baseline.json did not exist: written now with 6 samples*"])
    written = path.read_text()
    assert '"id": "m06", "outcome": "wrong_format"' in written

    second = run(tuned, path, *workers)
    assert second.ret == 0, second.stdout.str()[-2000:]
    assert_counts(second, passed=7, xfailed=1)  # the samples, the baseline's case, the errors share's
    second.stdout.fnmatch_lines(["baseline *: 6 samples compared: 0 regressions, 0 improvements, 1 known misses"])
    assert path.read_text() == written  # compared, not rewritten

    monkeypatch.setenv("GROUNDING_TEST_BLIND", "red")  # m01 and m04: both Blender/Excel icons
    worse = run(tuned, path, *workers)
    assert worse.ret == 1
    assert_counts(worse, passed=4, failed=3, xfailed=1)
    worse.stdout.fnmatch_lines(["*REGRESSION against the baseline*mini/m01*"])
    out = worse.stdout.str()
    assert "regression: tunable mini/m01" in out and "regression: tunable mini/m04" in out
    assert "baseline FAILED: detector tunable element_type=icon: accuracy 0.0% (baseline 66.7%, -66.7 points)" in out
    assert "baseline FAILED: detector tunable overall: accuracy 50.0% (baseline 83.3%, -33.3 points)" in out
    assert "element_type=text" not in out  # a slice that did not drop is not listed

    update = run(tuned, path, "--grounding-update-baseline", *workers)
    assert update.ret == 0
    assert '"id": "m01", "outcome": "miss"' in path.read_text()
    assert run(tuned, path, *workers).ret == 0  # the rewritten baseline is the new reference


@pytest.mark.slow
@SERIAL
def test_an_improvement_passes_and_is_reported(tuned, workers, tmp_path, monkeypatch):
    path = tmp_path / "baseline.json"
    monkeypatch.setenv("GROUNDING_TEST_BLIND", "blue")
    run(tuned, path, *workers)
    monkeypatch.delenv("GROUNDING_TEST_BLIND")
    better = run(tuned, path, *workers)
    assert better.ret == 0
    better.stdout.fnmatch_lines(
        [
            "baseline *: 6 samples compared: 0 regressions, 2 improvements, 1 known misses",
            "  improvement: tunable mini/m02 (not a hit in the baseline, now a hit)",
            "  improvement: tunable mini/m05 (not a hit in the baseline, now a hit)",
        ]
    )
    assert "verdict: baseline: 0 regressions, 2 improvements" in better.stdout.str()


@pytest.mark.slow
@XDIST
def test_slice_drop_beyond_its_tolerance_fails_within_it_only_the_regression_fails(
    tuned, workers, tmp_path, monkeypatch
):
    path = tmp_path / "baseline.json"
    run(tuned, path, *workers)
    monkeypatch.setenv("GROUNDING_TEST_BLIND", "green")  # m03: one of two text targets, the only Excel text
    report = ("--grounding-json", str(tmp_path / "lenient.json"))
    lenient = run(tuned, path, "--grounding-tolerance", "0.5", *report, *workers)
    assert lenient.ret == 1  # the regressed item fails; no slice beyond its tolerance
    assert_counts(lenient, passed=5, failed=2, xfailed=1)  # the regressed item and the baseline's case
    found = read_json(tmp_path / "lenient.json")["baseline"]
    assert found["status"] == "compared" and [r["id"] for r in found["regressions"]] == ["m03"]
    assert [s["slice"] for s in found["slices"] if not s["passed"]] == []
    tolerances = ("--grounding-tolerance", "0.2", "--grounding-tolerance", "element_type=text:0.5")
    strict = run(tuned, path, *tolerances, "--grounding-json", str(tmp_path / "strict.json"), *workers)
    assert strict.ret == 1
    failed = [s for s in read_json(tmp_path / "strict.json")["baseline"]["slices"] if not s["passed"]]
    assert {s["slice"]: (s["baseline"], s["accuracy"], s["tolerance"]) for s in failed} == {
        "app=Excel": (1.0, 0.5, 0.2),
        "app_category=office": (1.0, 0.5, 0.2),
        "platform=windows": (1.0, 0.5, 0.2),
    }  # overall dropped 16.7 points (within 20), text 50 points (within its own 50)
    strict.stdout.fnmatch_lines(["baseline FAILED: detector tunable app=Excel: accuracy 50.0% (baseline 100.0%*"])


@pytest.mark.slow
def test_verdicts_identical_with_and_without_xdist(tuned, tmp_path, monkeypatch):
    path = tmp_path / "baseline.json"
    run(tuned, path)
    monkeypatch.setenv("GROUNDING_TEST_BLIND", "red")
    found = []
    for workers in ([], ["-n", "2"]):
        report = tmp_path / f"r{len(workers)}.json"
        result = run(tuned, path, "--grounding-json", str(report), *workers)
        document = read_json(report)
        found.append(
            (
                result.ret,
                {k: v for k, v in document["baseline"].items() if k != "latency"},
                {r["id"]: r["baseline"] for r in document["samples"]},
            )
        )
    assert found[0] == found[1]
    assert found[0][2] == {
        "m01": "regression",
        "m02": "still_hit",
        "m03": "still_hit",
        "m04": "regression",
        "m05": "still_hit",
        "m06": "known_miss",
    }


@pytest.mark.slow
@SERIAL
def test_another_dataset_version_or_detector_spec_is_a_usage_error(tuned, workers, tmp_path):
    data = tmp_path / "mini"
    shutil.copytree(MINI, data)
    path = tmp_path / "baseline.json"
    base = ("--detector", "tunable", "--grounding-limit", "6", f"--grounding-baseline={path}", *workers)
    assert tuned.runpytest(f"--dataset={data}", *base).ret == 1  # written
    metadata = data / "data" / "test" / "metadata.jsonl"
    metadata.write_text(metadata.read_text().replace("Click the red square", "Click the red box", 1))
    changed = tuned.runpytest(f"--dataset={data}", *base)
    assert changed.ret == pytest.ExitCode.USAGE_ERROR
    changed.stderr.fnmatch_lines(
        ["*--grounding-baseline: dataset mini changed: its fingerprint is *, *baseline.json was written on finger*"]
    )
    other = tuned.runpytest(f"--dataset={MINI}", f"--grounding-baseline={path}", "--detector", "tunable:x=1", *workers)
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    path.write_text(path.read_text().replace(json.loads(path.read_text())["datasets"]["mini"], "0000"))
    spec = tuned.runpytest(f"--dataset={MINI}", f"--grounding-baseline={path}", "--detector", "center", *workers)
    assert spec.ret == pytest.ExitCode.USAGE_ERROR
    spec.stderr.fnmatch_lines(["*dataset mini changed*"])


def test_usage_errors_of_the_options(tuned, tmp_path):
    result = tuned.runpytest(f"--dataset={MINI}", "--grounding-tolerance", "0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--grounding-tolerance needs --grounding-baseline PATH*"])
    result = run(tuned, tmp_path / "b.json", "--grounding-tolerance", "kind=icon:0.1")
    result.stderr.fnmatch_lines(["*bad tolerance 'kind=icon:0.1' (from --grounding-tolerance): unknown slice 'kind'*"])
    result = run(tuned, tmp_path / "b.json", "--grounding-max-slowdown", "0.5")
    result.stderr.fnmatch_lines(["*--grounding-max-slowdown: 0.5 is below 1*"])
    (tmp_path / "bad.json").write_text("{}")
    result = run(tuned, tmp_path / "bad.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*is not a pytest-grounding baseline*"])


@pytest.mark.slow
def test_baseline_from_the_ini_file_is_relative_to_it(tuned, tmp_path):
    tuned.makeini(
        "[pytest]\naddopts = -p no:cacheprovider\ngrounding_baseline = ci/base.json\ngrounding_tolerance = 0.05\n"
    )
    result = tuned.runpytest(f"--dataset={MINI}", "--detector", "tunable", "--grounding-limit", "6")
    assert result.ret == 1
    assert (tuned.path / "ci" / "base.json").is_file()
    result = tuned.runpytest(f"--dataset={MINI}", "--detector", "tunable", "--grounding-limit", "6")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["grounding baseline: */ci/base.json (compared; tolerance 5.0 points)"])


@pytest.mark.slow
@SERIAL
def test_junit_xml_carries_each_samples_outcome_and_figures(tuned, workers, tmp_path, monkeypatch):
    path, xml = tmp_path / "baseline.json", tmp_path / "junit.xml"
    run(tuned, path)
    monkeypatch.setenv("GROUNDING_TEST_BLIND", "red")
    run(tuned, path, f"--junitxml={xml}", *workers)
    cases = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        if case.get("classname") == "grounding":
            continue  # the baseline's and the errors share's own cases (issue 61)
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        cases[props["grounding_sample_id"]] = (props, [child.tag for child in case])
    assert sorted(cases) == ["m01", "m02", "m03", "m04", "m05", "m06"]
    m01, children = cases["m01"]
    assert m01["grounding_outcome"] == "miss" and m01["grounding_baseline"] == "regression"
    assert m01["grounding_point"] == "0,0" and m01["grounding_detector"] == "tunable"
    assert "failure" in children
    m02, children = cases["m02"]
    assert (m02["grounding_outcome"], m02["grounding_baseline"], m02["grounding_iou"]) == ("hit", "still_hit", "1.0")
    assert float(m02["grounding_latency_ms"]) >= 0 and m02["grounding_element_type"] == "text"
    assert "failure" not in children
    m06, children = cases["m06"]
    assert m06["grounding_outcome"] == "wrong_format" and "skipped" in children  # xfail: a known miss
    assert not any(name == "grounding_record" for props, _ in cases.values() for name in props)


@pytest.mark.slow
def test_latency_ratio_gate_is_off_unless_asked(tuned, tmp_path, monkeypatch):
    path = tmp_path / "baseline.json"
    run(tuned, path)  # no delay: a fraction of a millisecond per prediction
    monkeypatch.setenv("GROUNDING_TEST_DELAY_MS", "30")
    assert run(tuned, path).ret == 0
    slow = run(tuned, path, "--grounding-max-slowdown", "1.25", "-n", "2")
    assert slow.ret == 1
    slow.stdout.fnmatch_lines(["latency FAILED: detector tunable p50 *ms, baseline *ms: x* (at most x1.25*"])
    assert run(tuned, path, "--grounding-max-slowdown", "100000").ret == 0


@pytest.mark.slow
def test_pytest_benchmark_autosave_and_compare_fail_work_on_each_sample(tuned, tmp_path, monkeypatch):
    pytest.importorskip("pytest_benchmark")
    # pytest-benchmark switches itself off when it sees this variable, which an outer -n sets.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    args = (f"--dataset={MINI}", "--detector", "tunable", "--grounding-limit", "6", "-k", "not m06")  # the hits
    storage = f"--benchmark-storage=file://{tmp_path / 'bench'}"
    monkeypatch.setenv("GROUNDING_TEST_DELAY_MS", "20")  # well above the noise of a busy machine
    saved = tuned.runpytest(*args, storage, "--benchmark-autosave")
    assert_counts(saved, passed=5, deselected=1)
    files = list((tmp_path / "bench").rglob("*.json"))
    assert len(files) == 1
    assert len(json.loads(files[0].read_text())["benchmarks"]) == 5  # one per sample
    compare = (storage, "--benchmark-compare", "--benchmark-compare-fail=mean:300%")
    same = tuned.runpytest_subprocess(*args, *compare)
    assert same.ret == 0, same.stdout.str()[-2000:] + same.stderr.str()[-2000:]
    monkeypatch.setenv("GROUNDING_TEST_DELAY_MS", "250")
    slower = tuned.runpytest_subprocess(*args, *compare)
    assert slower.ret != 0
    regressed = slower.stderr.str()  # pytest-benchmark's logger and its exception
    assert "Performance has regressed" in regressed and "test_grounding[tunable-mini-m0" in regressed
    slower.stdout.fnmatch_lines(["*grounding summary*"])  # ours is still printed
