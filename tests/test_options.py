"""plugin/options.py: every option with its ini twin, and the value checks that name their source."""

import pytest

from pytest_grounding.plugin.options import OPTIONS, as_list, choice, count_or_all, positive_int, share


def test_every_grounding_option_is_named_once_with_help():
    flags = [option.flag for option in OPTIONS]
    assert len(flags) == len(set(flags))
    for option in OPTIONS:
        assert option.help and option.dest.replace("_", "-") == option.flag.lstrip("-")
        assert option.ini is None or option.ini.startswith("grounding_")


def test_values_are_checked_and_a_bad_one_names_where_it_came_from():
    assert positive_int("3", "ini grounding_limit") == 3 and positive_int(None, "x") is None
    assert share("0.25", "x") == 0.25 and count_or_all("all", "x") is None and count_or_all("4", "x") == 4
    assert choice("on", "x", ("on", "off")) == "on" and as_list(["a", "b"]) == ["a", "b"]
    for check, value in ((positive_int, "-1"), (share, "1.5"), (count_or_all, "some")):
        with pytest.raises(ValueError, match="--grounding-thing"):
            check(value, "--grounding-thing")
    with pytest.raises(ValueError, match="--grounding-thing"):
        choice("maybe", "--grounding-thing", ("on", "off"))
