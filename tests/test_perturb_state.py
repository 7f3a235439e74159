"""plugin/common/perturb_state.py: the run's variants parsed once at configure (a bad spec is one usage
error), and the samples expanded with them in every process."""

from helpers import FIXTURES, make_project

MINI = str(FIXTURES / "mini")


def test_each_sample_is_followed_by_its_variants_in_the_ids(pytester):
    make_project(pytester)
    result = pytester.runpytest(
        f"--dataset={MINI}", "--detector=center", "--co", "-q", "--grounding-perturb", "invert,jpeg:quality=50"
    )
    ids = [line for line in result.stdout.lines if "::" in line]
    assert len(ids) == 24
    assert ids[:3] == [
        "test_suite.py::test_grounding[center-mini-m01-blender-icon]",
        "test_suite.py::test_grounding[center-mini-m01-blender-icon~invert]",
        "test_suite.py::test_grounding[center-mini-m01-blender-icon~jpeg50]",
    ]


def test_a_bad_axis_is_one_usage_error(pytester):
    make_project(pytester)
    result = pytester.runpytest(f"--dataset={MINI}", "--grounding-perturb", "nosuchaxis")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--grounding-perturb*nosuchaxis*"])
