"""plugin/fixtures.py: grounding_check turns a sample's outcome into its item's: a hit passes, a
miss fails with its one-line explanation (xfails under --grounding-misses xfail), an error is an
error naming the sample."""

from helpers import FIXTURES, make_project

MINI = str(FIXTURES / "mini")


def test_outcomes_become_item_outcomes(pytester):
    make_project(pytester)
    result = pytester.runpytest(f"--dataset={MINI}", "--detector=center", "-rf")
    counts = result.parseoutcomes()  # a miss is a failed item, shown as "missed"; the broken rows are errors
    assert counts.get("passed", 0) + counts["missed"] + counts.get("errors", 0) == 8 and counts["missed"] >= 1
    result.stdout.fnmatch_lines(["failed items (*; each fails its item, listed here once):"])
    xfailed = pytester.runpytest(f"--dataset={MINI}", "--detector=center", "--grounding-misses=xfail")
    assert xfailed.parseoutcomes().get("xfailed") == counts["missed"]


def test_an_unreadable_image_is_an_error_naming_the_sample(pytester, tmp_path):
    import shutil

    folder = tmp_path / "broken"
    shutil.copytree(MINI, folder)
    first = sorted((folder / "images").iterdir())[0] if (folder / "images").exists() else None
    target = first or sorted(p for p in folder.rglob("*.png"))[0]
    target.write_bytes(b"not a png")
    make_project(pytester)
    result = pytester.runpytest(f"--dataset={folder}", "--detector=center")
    assert result.parseoutcomes().get("errors", 0) >= 1
    assert "cannot read image" in result.stdout.str()
