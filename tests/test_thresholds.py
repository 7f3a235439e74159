"""analysis/thresholds.py: one grammar for every threshold, `[SELECTOR:]AMOUNT`, AMOUNT a share or a
percent; and every threshold option read through it (the same gate from 0.05 and 5%)."""

import pytest

from helpers import FIXTURES
from pytest_grounding.analysis import thresholds
from pytest_grounding.plugin.common.settings import SettingError, Settings

MINI = str(FIXTURES / "mini")


@pytest.mark.parametrize(
    ("text", "share", "selector"),
    [
        ("0.05", 0.05, None),
        ("5%", 0.05, None),
        (" 5 % ", 0.05, None),
        ("1", 1.0, None),
        ("0", 0.0, None),
        ("100%", 1.0, None),
        ("zoom70:5%", 0.05, "zoom70"),
        ("element_type=icon:0.3", 0.3, "element_type=icon"),
        ("size=<32:10%", 0.1, "size=<32"),
        ("app=a:b:0.5", 0.5, "app=a:b"),  # the amount follows the last colon
    ],
)
def test_an_amount_is_a_share_or_a_percent(text, share, selector):
    found = thresholds.parse_threshold(text)
    assert found.amount == pytest.approx(share) and found.selector == selector


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("5", r"'5' is not a share \(0 to 1\): write a share \(0.05\) or a percent \(5%\); 5 percent is 0.05 or 5%"),
        ("1.5", "not a share"),
        ("150%", "above 100%"),
        ("-0.1", "at least 0"),
        ("nan", "at least 0"),
        ("lots", "not an amount"),
        (":0.1", "nothing before ':'"),
    ],
)
def test_a_bad_amount_says_how_to_write_it(text, says):
    with pytest.raises(ValueError, match=says):
        thresholds.parse_threshold(text)


def _settings(pytester, *args):
    return Settings.from_config(pytester.parseconfig(*args))


def test_share_and_percent_are_the_same_gate_for_every_threshold_option(pytester, tmp_path):
    base = tmp_path / "b.json"
    for share, percent in (("0.05", "5%"), ("0.4", "40%")):
        a = _settings(
            pytester,
            f"--grounding-min-accuracy={share}",
            f"--grounding-max-drop={share}",
            f"--grounding-max-errors={share}",
            f"--grounding-baseline={base}",
            f"--grounding-tolerance=element_type=icon:{share}",
        )
        b = _settings(
            pytester,
            f"--grounding-min-accuracy={percent}",
            f"--grounding-max-drop={percent}",
            f"--grounding-max-errors={percent}",
            f"--grounding-baseline={base}",
            f"--grounding-tolerance=element_type=icon:{percent}",
        )
        assert a.verdict.gates == b.verdict.gates
        assert a.verdict.max_drops == b.verdict.max_drops
        assert a.verdict.max_errors == b.verdict.max_errors == pytest.approx(float(share))
        assert a.verdict.tolerances == b.verdict.tolerances
    drops = _settings(pytester, "--grounding-max-drop=zoom70:5%", "--grounding-max-drop=2%").verdict.max_drops
    assert [(d.variant, d.points) for d in drops] == [("zoom70", 5.0), (None, 2.0)]
    (gate,) = _settings(pytester, "--grounding-min-accuracy=element_type=icon:30%").verdict.gates
    assert (gate.key, gate.value, gate.threshold) == ("element_type", "icon", pytest.approx(0.3))


@pytest.mark.parametrize(
    "flag", ["--grounding-min-accuracy", "--grounding-max-drop", "--grounding-max-errors", "--grounding-iou-threshold"]
)
def test_a_bare_number_that_cannot_be_a_share_is_one_usage_message(pytester, flag):
    with pytest.raises(SettingError, match=rf"{flag}\b.*'5' is not a share .*0\.05 or 5%"):
        _settings(pytester, f"{flag}=5")


def test_the_usage_message_through_pytest(project):
    result = project.runpytest(f"--dataset={MINI}", "--detector=center", "--grounding-max-drop", "5")
    assert result.ret == 4
    errors = [line for line in result.stderr.lines if "ERROR" in line]
    assert len(errors) == 1, result.stderr.str()
    assert "bad max drop '5' (from --grounding-max-drop)" in errors[0] and "0.05 or 5%" in errors[0]


def test_the_same_gate_through_pytest(project):
    """The colour detector scores 83.3% on the first 6 samples: 0.9 and 90% fail it the same way,
    0.8 and 80% pass it."""
    outcomes = {}
    for amount in ("0.9", "90%", "0.8", "80%"):
        result = project.runpytest(
            f"--dataset={MINI}", "--detector=colour", "--grounding-limit=6", "--grounding-min-accuracy", amount
        )
        outcomes[amount] = result.ret
        relation = "<" if amount in ("0.9", "90%") else ">="
        result.stdout.fnmatch_lines([f"*gate * detector colour overall: accuracy 83.3% of 6 {relation} threshold *"])
    assert outcomes == {"0.9": 1, "90%": 1, "0.8": 0, "80%": 0}
