"""plugin/common/settings.py: the run's settings read once, in four groups, each bad value a usage error
naming where it came from."""

import pytest

from pytest_grounding.plugin.common.settings import SettingError, Settings


def settings_of(pytester, *args, ini=""):
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    return Settings.from_config(pytester.parseconfig(*args))


def test_each_option_lands_in_its_group(pytester, tmp_path):
    found = settings_of(
        pytester,
        "--detector=center",
        "--grounding-limit=7",
        "--grounding-iou-threshold=0.3",
        "--grounding-min-accuracy=0.4",
        f"--grounding-json={tmp_path / 'r.json'}",
        "--grounding-top-apps=3",
    )
    assert found.selection.detector_specs == ("center",) and found.selection.limit == 7
    assert found.scoring.iou_threshold == 0.3 and found.scoring.profile.name == "pixel"
    assert [g.threshold for g in found.verdict.gates] == [0.4] and found.verdict.misses == "xfail"
    assert found.outputs.json_path == (tmp_path / "r.json").resolve() and found.outputs.top_apps == 3


def test_the_ini_file_counts_and_the_command_line_wins(pytester):
    found = settings_of(pytester, "--grounding-limit=2", ini="grounding_limit = 5\ngrounding_task = locate")
    assert found.selection.limit == 2 and found.selection.task == "locate"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grounding-limit=-1"], "--grounding-limit"),
        (["--grounding-resume"], "--grounding-resume needs --grounding-predictions"),
        (["--grounding-update-baseline"], "needs --grounding-baseline"),
        (["--grounding-misses=sometimes"], "--grounding-misses"),
    ],
)
def test_a_bad_value_is_one_message_naming_its_source(pytester, args, message):
    with pytest.raises(SettingError, match=message):
        settings_of(pytester, *args)
