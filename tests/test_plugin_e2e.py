"""End-to-end runs of the plugin through pytester, each important scenario with and without xdist."""

import pytest

from helpers import FIXTURES, SERIAL, XDIST, assert_counts, read_json, read_jsonl

MINI = str(FIXTURES / "mini")


def run(project, *args):
    # `--dataset=PATH`, not `--dataset PATH`: pytest picks its rootdir before plugins' options are
    # known, so a bare path value would be taken for a test path there (see README, limitations).
    return project.runpytest(f"--dataset={MINI}", *args)


@XDIST
def test_outcomes_summary_json_and_predictions(project, workers, tmp_path):
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = run(
        project,
        "--detector",
        "colour",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *workers,
    )
    # m01-m05 hit, m06 names a colour that is not there (wrong format), m07 corrupt, m08 missing
    assert_counts(result, passed=5, missed=1, errors=2)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*grounding summary*",
            "dataset mini: pointerbench, 8 samples, fingerprint *",
            "detector colour*",
            "*accuracy 83.3%*(5/6 scored, micro)*",
            "*samples 8*hits 5*misses 0*wrong format 1*errors 2*mean IoU 1.000 over 5 boxes*",
            "*latency ms*p50*p95*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*grounding failed items*",
            "failed items (1: 1 wrong format; each fails its item, listed here once):",
            "  colour mini/m06: wrong format for 'Click the purple square'; raw *",
        ]
    )
    result.stdout.fnmatch_lines(["*cannot read image*broken.png*"])  # apart: xdist may reorder them
    result.stdout.fnmatch_lines(["*image not found:*missing.png*"])
    document = read_json(report)
    assert document["schema_version"] == 1 and document["partial"] is False
    block = document["summary"]["colour"]
    assert (block["hits"], block["scored"], block["wrong_format"], block["errors"]) == (5, 6, 1, 2)
    assert {row["value"]: row["hits"] for row in block["by"]["element_type"]} == {"icon": 2, "other": 1, "text": 2}
    outcomes = {r["id"]: r["outcome"] for r in document["samples"]}
    assert outcomes == {
        "m01": "hit",
        "m02": "hit",
        "m03": "hit",
        "m04": "hit",
        "m05": "hit",
        "m06": "wrong_format",
        "m07": "error",
        "m08": "error",
    }
    m01 = next(r for r in document["samples"] if r["id"] == "m01")
    assert m01["iou"] == 1.0 and m01["distance"] == 0.0 and m01["latency_ms"] >= 0
    assert m01["meta"] == {"pixels": 400.0} or m01["meta"] == {"pixels": 400}  # numpy int made plain
    assert document["run"]["detectors"]["colour"]["class"].endswith("Colour")
    assert document["run"]["datasets"][0]["fingerprint"]
    lines = read_jsonl(predictions)
    assert sorted(line["id"] for line in lines) == [f"m0{i}" for i in range(1, 9)]
    assert all(set(line) >= {"id", "point", "detector"} for line in lines)


@pytest.mark.slow
def test_totals_identical_with_and_without_xdist(project, tmp_path):
    summaries = []
    for workers in ([], ["-n", "2"]):
        report = tmp_path / f"r{len(workers)}.json"
        run(project, "--detector", "colour", "--detector", "center", "--grounding-json", str(report), *workers)
        document = read_json(report)
        for block in document["summary"].values():  # latency differs run to run; everything else must not
            block.pop("latency_ms")
        summaries.append(document["summary"])
        records = [{k: v for k, v in r.items() if k != "latency_ms"} for r in document["samples"]]
        summaries.append(records)
    assert summaries[0] == summaries[2]
    assert summaries[1] == summaries[3]
    assert set(summaries[0]) == {"colour", "center"}
    assert summaries[0]["center"]["hits"] == 0


@SERIAL
def test_two_detectors_give_one_item_per_sample_each_and_a_block_each(project, workers):
    result = run(project, "--detector", "colour", "--detector", "center", "--grounding-limit", "6", *workers)
    assert_counts(result, passed=5, missed=7)
    if not workers:  # the top of the run says what each detector runs on (under xdist: the summary)
        result.stdout.fnmatch_lines(["grounding: detector colour: load_s=*", "grounding: detector center: kind=floor*"])
    result.stdout.fnmatch_lines(["detector center*", "*accuracy 0.0%*(0/6 scored*"])
    result.stdout.fnmatch_lines(["detector colour*", "*accuracy 83.3%*(5/6 scored*"])


@SERIAL
def test_gate_passes_and_misses_become_xfail(project, workers):
    result = run(project, "--detector", "colour", "--grounding-limit", "6", "--grounding-min-accuracy", "0.8", *workers)
    assert_counts(result, passed=5 + 2, xfailed=1)  # and the gate's and the errors share's cases
    assert result.ret == 0
    result.stdout.fnmatch_lines(["gate passed: detector colour overall: accuracy 83.3% of 6 >= threshold 80.0%"])


@SERIAL
def test_gate_failure_sets_exit_status_and_names_slice(project, workers):
    result = run(
        project,
        "--detector",
        "colour",
        "--grounding-limit",
        "6",
        "--grounding-min-accuracy",
        "0.5",
        "--grounding-min-accuracy",
        "element_type=icon:70%",
        *workers,
    )
    assert_counts(result, passed=5 + 2, failed=1, xfailed=1)  # the cases: overall and errors pass, icon fails
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "gate passed: detector colour overall*",
            "gate FAILED: detector colour element_type=icon: accuracy 66.7% of 3 < threshold 70.0%",
        ]
    )


def test_gate_from_ini_and_a_slice_with_no_samples_fails(project):
    project.makeini(
        "[pytest]\naddopts = -p no:cacheprovider\ngrounding_min_accuracy =\n    0.5\n    app=Photoshop:0.1\n"
    )
    result = run(project, "--detector", "colour", "--grounding-limit", "6")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*gate FAILED: detector colour app=Photoshop: accuracy no scored samples*"])


def test_misses_fail_explicitly_even_with_a_gate(project):
    result = run(
        project,
        "--detector",
        "center",
        "--grounding-limit",
        "6",
        "--grounding-min-accuracy",
        "0",
        "--grounding-misses",
        "fail",
    )
    assert_counts(result, missed=6, passed=2)  # passed: the gate's and the errors share's cases
    result.stdout.fnmatch_lines(["  center mini/m01: clicked (80, 60), * px off for *"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--grounding-min-accuracy", "icon:0.3"], "*bad accuracy gate 'icon:0.3' (from --grounding-min-accuracy)*"),
        (["--grounding-min-accuracy", "1.5"], "*'1.5' is not a share (0 to 1): write a share (0.05) or a percent*"),
        (["--grounding-misses", "maybe"], "*--grounding-misses: 'maybe' is not one of fail, xfail*"),
        (["--grounding-limit", "x"], "*--grounding-limit: 'x' is not a whole number*"),
        (["--detector", "centre"], "*unknown detector 'centre'. Did you mean 'center'? Known: *colour*"),
        (["--dataset=/no/such/folder"], "*--dataset: dataset '/no/such/folder': /no/such/folder does not exist*"),
        ([f"--dataset={FIXTURES}"], "*not a dataset this plugin recognises*force one with FORMAT:PATH*"),
    ],
)
def test_bad_settings_are_usage_errors(project, args, message):
    result = project.runpytest(*args) if args[0].startswith("--dataset") else run(project, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@XDIST
def test_detector_that_raises_is_an_error_for_that_sample_only(project, workers):
    result = run(project, "--detector", "boom", "--grounding-limit", "5", *workers)
    assert_counts(result, passed=4, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR*m03*", "*detector boom raised RuntimeError on *s2.png: model backend unavailable*"]
    )
    result.stdout.fnmatch_lines(["*accuracy 100.0%*(4/4 scored*", "*errors 1*"])


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_detector_that_hangs_times_out(project):
    result = run(project, "--detector", "sleepy", "--grounding-limit", "5", "--grounding-timeout", "0.5")
    assert_counts(result, passed=3, errors=2)
    result.stdout.fnmatch_lines(["*detector sleepy timed out on *: no answer within 0.5 s*"])


@XDIST
def test_detector_that_cannot_load_stops_the_run_with_one_message(project, workers):
    result = run(project, "--detector", "broken", "--grounding-limit", "3", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert output.count("weights not found") == 1, output
    result.stderr.fnmatch_lines(
        ["ERROR: grounding: detector 'broken' could not be loaded: OSError: weights not found at /nowhere/model.onnx"]
    )
    assert "ERROR at setup" not in output and "INTERNALERROR" not in output


def test_detector_returning_garbage_is_an_error_not_a_crash(project):
    result = run(project, "--detector", "garbage", "--grounding-limit", "2")
    assert_counts(result, errors=2)
    result.stdout.fnmatch_lines(["*detector garbage gave an invalid answer*expected a Prediction*"])


@pytest.mark.slow
def test_interrupted_run_keeps_predictions_and_writes_partial_report(project, tmp_path):
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    # In a subprocess: pytester re-raises an in-process KeyboardInterrupt into this session.
    result = project.runpytest_subprocess(
        f"--dataset={MINI}",
        "--detector",
        "interrupting",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert [line["id"] for line in read_jsonl(predictions)] == ["m01", "m02"]
    document = read_json(report)
    assert document["partial"] is True and len(document["samples"]) == 2


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@XDIST
def test_benchmark_records_each_sample_when_it_can_and_our_timer_always(project, workers, tmp_path, monkeypatch):
    # pytest-benchmark also switches off when it sees this variable, set when *these* tests run under xdist
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    bench, report = tmp_path / "bench.json", tmp_path / "r.json"
    run(
        project,
        "--detector",
        "colour",
        "--grounding-limit",
        "3",
        "--benchmark-json",
        str(bench),
        "--grounding-json",
        str(report),
        *workers,
    )
    assert all(r["latency_ms"] is not None for r in read_json(report)["samples"])
    if workers:  # pytest-benchmark switches itself off under xdist (it may leave an empty file)
        assert not bench.exists() or not bench.read_text().strip()
    else:
        benchmarks = read_json(bench)["benchmarks"]
        assert len(benchmarks) == 3
        assert {b["extra_info"]["id"] for b in benchmarks} == {"m01", "m02", "m03"}
        assert all(b["extra_info"]["outcome"] == "hit" for b in benchmarks)


@pytest.mark.slow
def test_ids_are_readable_unique_and_selectable(project):
    result = run(project, "--detector", "colour", "--co", "-q")
    result.stdout.fnmatch_lines(
        [
            "test_suite.py::test_grounding[colour-mini-m01-blender-icon]",
            "test_suite.py::test_grounding[colour-mini-m04-excel-icon]",
        ]
    )
    ids = [line for line in result.stdout.lines if "::" in line]
    assert len(ids) == len(set(ids)) == 8
    selected = run(project, "--detector", "colour", "--co", "-q", "-k", "excel and icon")
    assert [line for line in selected.stdout.lines if "::" in line] == [
        "test_suite.py::test_grounding[colour-mini-m04-excel-icon]"
    ]


@pytest.mark.slow
def test_suite_pins_dataset_and_detector_with_a_marker(project):
    project.makepyfile(
        test_pinned=f"""
import pytest

@pytest.mark.grounding(dataset={str(FIXTURES / "screenspot")!r}, detector="colour")
def test_pinned(grounding_sample, grounding_detector, grounding_check):
    grounding_check(grounding_sample, grounding_detector)
"""
    )
    result = project.runpytest("test_pinned.py")
    assert_counts(result, passed=5)
    result.stdout.fnmatch_lines(["dataset screenspot: screenspot, 5 samples*", "detector colour*"])


@pytest.mark.slow
def test_a_broken_pinned_dataset_is_a_collection_error_naming_the_file(project, tmp_path):
    (tmp_path / "metadata.jsonl").write_text("{not json\n")
    project.makepyfile(
        test_pinned=f"""
import pytest

@pytest.mark.grounding(dataset={str(tmp_path)!r}, detector="center")
def test_pinned(grounding_sample, grounding_detector, grounding_check):
    grounding_check(grounding_sample, grounding_detector)
"""
    )
    result = project.runpytest("test_pinned.py")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # pytest stops on collection errors
    result.stdout.fnmatch_lines(["*test_pinned.py::test_pinned: *metadata.jsonl:1: invalid JSON*"])


def test_plugin_can_be_disabled(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:grounding", "--co")
    assert result.ret == 0
    assert "grounding" not in result.stdout.str()


def test_a_project_can_hand_in_its_own_detector_by_overriding_the_fixture(project):
    project.makeconftest(
        __import__("conftest").PROJECT_CONFTEST
        + """
import pytest

@pytest.fixture
def grounding_detector():
    return Colour()
"""
    )
    result = run(project, "--grounding-limit", "2", "-v")
    result.stdout.fnmatch_lines(["*test_grounding[[]mini-m01-blender-icon[]] PASSED*"])
    result.stdout.fnmatch_lines(["detector colour*"])


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@XDIST
def test_a_miss_reports_its_explanation_alone_and_fulltrace_keeps_the_frames(project, workers, tmp_path):
    """A miss's failure (JUnit XML, -rf) is its one-line explanation: no traceback, so pytest need not
    walk the frames of every miss; --fulltrace still shows them."""
    import xml.etree.ElementTree as ET

    xml = tmp_path / "junit.xml"
    args = ("--detector", "center", "--grounding-limit", "2", "--grounding-misses", "fail", f"--junitxml={xml}")
    result = run(project, *args, *workers)
    assert_counts(result, missed=2)
    failures = [f.text or "" for f in ET.parse(xml).getroot().iter("failure")]
    assert len(failures) == 2
    for text in failures:
        assert text.startswith("miss: clicked (80, 60)") and "in mini/m0" in text, text
        assert "fixtures.py" not in text and "def check" not in text and "Traceback" not in text
    run(project, *args, "--fulltrace", *workers)
    failures = [f.text or "" for f in ET.parse(xml).getroot().iter("failure")]
    assert len(failures) == 2 and all("fixtures.py" in text for text in failures)
