"""Every use of pytest's private internals, in one place (the versions tested are bounded in
pyproject.toml; tests/test_pytest_compat.py fails when pytest changes under them):

- a line of its own amid xdist's progress dots: the terminal writer's `_tw.width_of_current_line`;
- xdist's loadgroup suffix written where this pytest keeps node ids (`item._id`, a `NodeId`, from
  pytest 9.2; `item._nodeid` before: pytest-xdist#1386);
- how many `pytest.main` calls this thread is inside: a frame walk for `_pytest.config.main`;
- pytest's own `-k` grammar (`_pytest.mark.expression`), for `board -k`;
- a test case no item ran (a gate, judged after the loop) reported as an item's are: the terminal
  reporter's `_show_progress_info` (its percentage counts collected items) and `currentfspath`,
  and `_pytest._code.code.ReprFileLocation` (the one-line message of the short summary and JUnit)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any


def write_own_line(terminalreporter: Any, line: str) -> None:
    """A line of its own amid the progress dots (xdist writes them past the reporter's tracking)."""
    terminalreporter.ensure_newline()
    if getattr(terminalreporter._tw, "width_of_current_line", 0):
        terminalreporter._tw.line()
    terminalreporter.write_line(line)


def name_groups(items: Iterable[Any]) -> None:
    """xdist's loadgroup scheduler reads a test's group from an "@group" suffix of its node id,
    which xdist writes into `item._nodeid`; pytest 9.2 keeps node ids in `item._id`, so the suffix
    is lost and the screens are spread over the workers (pytest-xdist#1386). Write it where this
    pytest reads it."""
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None or "@" in item.nodeid.rpartition("]")[2]:
            continue
        named = f"{item.nodeid}@{mark.args[0]}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import NodeId  # type: ignore[import-not-found,unused-ignore]  # pytest >= 9.2

            item._id = NodeId.parse(named)
        else:
            item._nodeid = named


def mains_running() -> int:
    """How many `pytest.main` calls this thread is inside: two for pytester's in-process runs or a
    test calling `pytest.main`, whether or not the outer session loaded this plugin; none in an
    xdist worker (xdist starts the session itself)."""
    from _pytest.config import main

    frame: FrameType | None = sys._getframe()
    count = 0
    while frame is not None:
        count += frame.f_code is main.__code__
        frame = frame.f_back
    return count


def keyword_matcher(expression: str) -> Callable[[str], bool]:
    """pytest's `-k` on a text: its words matched as case-insensitive substrings, joined by `and`,
    `or`, `not` and parentheses. A ValueError naming the expression when pytest cannot parse it."""
    from _pytest.mark import expression as grammar

    malformed = (SyntaxError, getattr(grammar, "ParseError", SyntaxError))  # pytest 9: SyntaxError; 8: ParseError
    try:
        if not expression.strip():
            raise SyntaxError("an empty expression")
        compiled = grammar.Expression.compile(expression)
    except malformed as exc:
        raise ValueError(f"-k {expression!r}: not an expression of words with and, or, not, ( ): {exc}") from None

    def matches(text: str) -> bool:
        haystack = text.lower()

        def word(name: str, /, **_: str | int | bool | None) -> bool:
            return name.lower() in haystack

        return bool(compiled.evaluate(word))

    return matches


class MadeFailure:
    """A failed made case's long report: its message as the one line pytest's short summary and
    JUnit's `message` show (`reprcrash`), and as the FAILURES section's text."""

    def __init__(self, path: str, message: str) -> None:
        from _pytest._code.code import ReprFileLocation

        self.message = message
        self.reprcrash = ReprFileLocation(path, 0, message)

    def toterminal(self, tw: Any) -> None:
        tw.line(self.message, red=True, bold=True)

    def __str__(self) -> str:
        return self.message


def log_made_cases(config: Any, cases: Iterable[tuple[str, str, bool, str]]) -> None:
    """Test cases that no item ran (`(path, name, passed, message)`) reported as an item's are, so
    the terminal's counts, the exit status, `--junitxml` and every plugin reading reports see them:
    set-up, call and tear-down through `pytest_runtest_logreport`, on a line of their own and
    without pytest's percentage (it counts the collected items, which these are not)."""
    import pytest

    terminal: Any = config.pluginmanager.get_plugin("terminalreporter")
    shown = getattr(terminal, "_show_progress_info", None)
    if terminal is not None:
        terminal._show_progress_info = False
        starts_line = terminal.showfspath or terminal.showlongtestinfo  # the path's or the case's name, on a new line
        if not starts_line and int(getattr(terminal._tw, "width_of_current_line", 0) or 0):
            terminal._tw.line()
        terminal.currentfspath = None
    try:
        for path, name, passed, message in cases:
            nodeid = f"{path}::{name}"
            location = (path, None, name)
            config.hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
            for when in ("setup", "call", "teardown"):
                failed = when == "call" and not passed
                config.hook.pytest_runtest_logreport(
                    report=pytest.TestReport(
                        nodeid,
                        location,
                        {name: 1, path: 1},
                        "failed" if failed else "passed",
                        MadeFailure(path, message) if failed else None,  # type: ignore[arg-type]
                        when,
                        user_properties=[("grounding_check", message)],  # JUnit reads the tear-down's
                    )
                )
            config.hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
    finally:
        if terminal is not None:
            terminal._show_progress_info = shown
