"""`pytest --help` and `python -m pytest_grounding COMMAND --help` work wherever the plugin is
installed (pytest-benchmark's first test does the same): argparse %-formats every help text."""

import argparse
import os
import subprocess
import sys

import pytest

from helpers import REPO
from pytest_grounding.cli.main import build_parser


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}


def test_pytest_help_lists_the_grounding_options_beside_xdist_and_benchmark(pytester):
    pytest.importorskip("xdist")
    pytest.importorskip("pytest_benchmark")
    from pytest_grounding.plugin.common.settings import all_options

    result = pytester.runpytest_subprocess("--help")  # an empty folder: only installed plugins
    assert result.ret == 0, result.stderr.str()[-2000:]
    text = result.stdout.str()
    assert "--numprocesses" in text and "--benchmark-json" in text  # the other plugins were there too
    flat = " ".join(text.split())
    for option in all_options():
        assert option.flag in text, option.flag
        assert f"{option.help} ({option.pointer})" in flat, option.flag  # one line, and where the rest is
        if option.ini:
            assert option.ini in text, option.ini
    groups = [text.index(f"grounding: {name} (") for name in ("selection", "scoring", "verdict", "outputs")]
    assert groups == sorted(groups)  # grouped as the settings are
    assert groups[0] < text.index("--grounding-limit") < groups[1] < text.index("--grounding-timeout") < groups[2]
    assert groups[2] < text.index("--grounding-max-drop") < groups[3] < text.index("--grounding-html")
    assert "95% interval" in " ".join(text.split())  # the text that once crashed argparse, shown as written


def test_a_percent_in_any_help_text_is_escaped_where_options_are_registered():
    from pytest_grounding.plugin.common.options import argparse_text

    parser = argparse.ArgumentParser()
    parser.add_argument("--x", help=argparse_text("a 95% interval, 100%"))
    assert "a 95% interval, 100%" in " ".join(parser.format_help().split())


def _commands() -> list[str]:
    """The CLI's own table of subcommands: a new command is covered without a change here."""
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(subparsers.choices)


def test_the_cli_table_is_read():
    assert {"generate", "validate", "report", "merge", "rescore", "board", "export", "doctor"} <= set(_commands())


@pytest.mark.parametrize("command", _commands())
def test_every_command_prints_its_help(command):
    done = subprocess.run(
        [sys.executable, "-m", "pytest_grounding", command, "--help"],
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"usage: pytest-grounding {command}" in done.stdout
