"""plugin/common/environment.py: the package versions a report records, and a preset as registered."""

from pytest_grounding.plugin.common.environment import registered_preset, versions


def test_versions_name_python_pytest_and_this_package():
    found = versions()
    assert found["pytest"] and found["pytest-grounding"] and found["python"]


def test_a_registered_preset_is_found_by_name_and_an_unknown_one_is_none():
    assert registered_preset("qwen2.5-vl") is not None
    assert registered_preset("no-such-preset") is None
