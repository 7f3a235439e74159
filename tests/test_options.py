"""plugin/common/options.py: every option with its ini twin, and the value checks that name their source."""

from pathlib import Path

import pytest

from pytest_grounding.plugin.common.options import as_list, choice, count_or_all, positive_int, share
from pytest_grounding.plugin.common.settings import all_options

OPTIONS = all_options()


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


def test_each_option_is_declared_once_on_the_settings_field_it_fills():
    from dataclasses import fields

    from pytest_grounding.plugin.common.settings import GROUPS, option_groups

    classes = {name: cls for name, _, cls in GROUPS}
    assert [name for name, _, _ in option_groups()] == ["selection", "scoring", "verdict", "outputs"]
    for name, _, options in option_groups():
        declared = {f.name: f for f in fields(classes[name]) if "option" in f.metadata}
        assert [o.field for o in options] == list(declared)  # every declared field, in its order, once
        for option in options:
            assert option.group == name and declared[option.field].metadata["option"].flag == option.flag


def test_a_field_default_is_its_option_default_parsed():
    """One declaration: the default the docs show is the default a run gets and a bare Settings() has."""
    from dataclasses import fields

    from pytest_grounding.plugin.common.options import NOT_GIVEN
    from pytest_grounding.plugin.common.settings import GROUPS

    for _, _, cls in GROUPS:
        for f in fields(cls):
            option = f.metadata.get("option")
            if option is not None and option.default is not None:
                parsed = option.read(option.default, "default", None)
                assert parsed is not NOT_GIVEN and parsed == f.default, option.flag


def test_a_declared_option_is_read_with_its_parser_and_names_its_source():
    from pytest_grounding.plugin.common.options import NOT_GIVEN, declare

    field = declare("--grounding-x", "help", metavar="N", default="3", parse=positive_int)
    option = field.metadata["option"]
    assert field.default == 3 and option.read("7", "--grounding-x", None) == 7
    assert option.read("", "ini grounding_x", None) is NOT_GIVEN
    with pytest.raises(ValueError, match="ini grounding_x"):
        option.read("-2", "ini grounding_x", None)
    assert declare("--grounding-y", "help", switch=True).default is False
    assert declare("--grounding-z", "help", repeat=True).default == ()
    assert declare("--grounding-w", "help", parse=positive_int, otherwise=5).default == 5


def test_each_options_help_is_one_line_and_its_whole_text_is_on_the_options_page():
    """`pytest --help` stays a list: one line per option, then where the rest is (the generated page)."""
    from pytest_grounding.plugin.common.options import OPTIONS_PAGE

    page = (Path(__file__).parent.parent / OPTIONS_PAGE).read_text(encoding="utf-8")
    for option in OPTIONS:
        assert "\n" not in option.help and len(option.help) <= 90, option.flag
        assert len(option.doc) > len(option.help), option.flag  # the page says more than the line
        assert option.pointer == f"{OPTIONS_PAGE}#{option.flag.lstrip('-')}"
        assert f'id="{option.flag.lstrip("-")}"' in page, option.flag
