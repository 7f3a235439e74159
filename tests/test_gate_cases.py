"""plugin/controller/gate_cases.py: each gate and the errors-share check a test case of its own, so
`--junitxml`, the terminal's counts and the exit status agree (issue 61), serially and under xdist."""

import xml.etree.ElementTree as ET

import pytest

from helpers import FIXTURES, XDIST, assert_counts, make_project


@pytest.fixture
def project(pytester):
    return make_project(pytester)


def cases(path):
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    found = {}
    for case in suite.iter("testcase"):
        if case.get("classname") == "grounding":
            failure = case.find("failure")
            found[case.get("name")] = None if failure is None else failure.get("message")
    return suite, found


@XDIST
def test_a_failed_slice_gate_is_a_failed_junit_case_named_after_it(project, workers):
    junit = project.path / "junit.xml"
    result = project.runpytest(
        f"--dataset={FIXTURES / 'mini'}",
        "--detector=center",
        "--grounding-min-accuracy=0",
        "--grounding-min-accuracy=element_type=icon:5%",
        "--grounding-max-errors=0.5",
        f"--junitxml={junit}",
        *workers,
    )
    assert result.ret == 1
    suite, found = cases(junit)
    assert found == {
        "max-errors[center:50.0%]": None,
        "min-accuracy[center overall:0.0%]": None,
        "min-accuracy[center element_type=icon:5.0%]": (
            "gate FAILED: detector center element_type=icon: accuracy 0.0% of 3 < threshold 5.0%"
        ),
    }
    assert suite.get("failures") == "3" and suite.get("tests") == "11"  # 2 errors (samples) + the icon gate
    assert_counts(result, passed=2, failed=1, xfailed=6, errors=2)
    result.stdout.fnmatch_lines(["*FAILED*grounding::min-accuracy[[]center element_type=icon:5.0%[]]*"])


def test_the_errors_share_is_a_case_of_a_gated_run_and_an_ungated_run_fails_on_its_errors(project):
    """An ungated run whose errors pass --grounding-max-errors fails through its error items, which
    JUnit already lists as errors (no made case); a gated run has the check's case beside its gates."""
    junit = project.path / "junit.xml"
    result = project.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector=center", f"--junitxml={junit}")
    assert result.ret == 1
    suite, found = cases(junit)
    # the JUnit page is red through the samples' own errors and misses
    assert found == {} and int(suite.get("errors")) + int(suite.get("failures")) >= 2
    gated = project.runpytest(
        f"--dataset={FIXTURES / 'mini'}", "--detector=center", "--grounding-min-accuracy=0", f"--junitxml={junit}"
    )
    assert gated.ret == 1
    _, found = cases(junit)
    assert found["max-errors[center:10.0%]"].startswith("errors FAILED: detector center: 2 of 8 samples (25.0%)")
    # a run within the share and without a gate has no case: its counts are its samples'
    quiet = project.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector=center", "--grounding-max-errors=0.5")
    assert_counts(quiet, missed=6, errors=2)


def test_a_passing_gate_passes_and_the_exit_status_follows_it(project):
    junit = project.path / "junit.xml"
    result = project.runpytest(
        f"--dataset={FIXTURES / 'mini'}",
        "--detector=center",
        "--grounding-min-accuracy=0",
        "--grounding-max-errors=0.5",
        "--grounding-limit=6",
        f"--junitxml={junit}",
        "-v",
    )
    assert result.ret == 0
    _, found = cases(junit)
    assert found == {"max-errors[center:50.0%]": None, "min-accuracy[center overall:0.0%]": None}
    result.stdout.fnmatch_lines(["grounding::min-accuracy[[]center overall:0.0%[]] PASSED"])
    assert "[10" not in result.stdout.str().replace("[100%]", "")  # no progress past 100%


def test_a_typo_in_a_slice_value_fails_its_gate_with_a_did_you_mean(project):
    junit = project.path / "junit.xml"
    result = project.runpytest(
        f"--dataset={FIXTURES / 'mini'}",
        "--detector=center",
        "--grounding-max-errors=0.5",
        "--grounding-min-accuracy=element_type=icn:5%",
        f"--junitxml={junit}",
    )
    assert result.ret == 1
    said = "no sample has element_type=icn; did you mean 'icon'? (values: icon, other, text)"
    result.stdout.fnmatch_lines(
        [f"gate FAILED: detector center element_type=icn: accuracy no scored samples ({said})*"]
    )
    _, found = cases(junit)
    assert said in found["min-accuracy[center element_type=icn:5.0%]"]
