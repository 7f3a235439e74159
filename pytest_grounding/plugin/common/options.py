"""How an option is declared, once, on the settings field it fills (`declare`, used in
plugin/common/settings.py): its flag, ini twin, help, metavar, default and parser. From the declarations:
the options `pytest --help` lists (grouped as the settings are), the options page of the docs, and
the resolution of a value to where it came from, so a bad value can be named by its source."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...core.profiles import PROFILES

MISSES_MODES = ("fail", "xfail")
PROGRESS_MODES = ("auto", "on", "off")
TASKS = ("grounding", "locate")
REFUSAL_ROWS = ("include", "exclude")
FRAME_CHECK_MODES = ("fail", "warn", "off")  # --grounding-frame-check (detectors/frame_check.py)
LANGUAGES = ("en", "cn")
SCORING_PROFILES = tuple(PROFILES)

OPTIONS_PAGE = "docs/options.md"  # generated from the declarations (docs/_hooks/grounding_docs.py)
Parse = Callable[[Any, str], Any]  # (the value as given, where it came from) -> the typed value; ValueError if bad


@dataclass(frozen=True)
class Option:
    """One option as declared on its settings field; `group` and `field` are filled in from where
    it is declared (plugin/common/settings.py's option_groups())."""

    flag: str
    ini: str | None
    help: str  # one line: `pytest --help` shows it with a pointer to the options page
    repeat: bool = False
    metavar: str | None = None
    default: Any = None  # as written (text): shown in the docs, parsed like a given value
    switch: bool = False  # a flag without a value (store_true; ini: a bool)
    parse: Parse | None = None  # None: the text as given
    path: bool = False  # a path: relative to where pytest started (command line) or to the rootdir (ini)
    group: str = ""
    field: str = ""
    doc: str = ""  # the whole text: the generated options page (docs/options.md) shows it

    @property
    def pointer(self) -> str:
        """Where the whole text is: this option's row of the generated options page."""
        return f"{OPTIONS_PAGE}#{self.flag.lstrip('-')}"

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def read(self, value: Any, source: str, config: Any) -> Any:
        """The typed value of what `lookup` found, or NOT_GIVEN (the field's default applies)."""
        if self.switch:
            return bool(value)
        if value in (None, "", [], ()):
            return NOT_GIVEN
        if self.path:
            from pathlib import Path

            from ...core.paths import shown_path, unusable

            base = Path(config.invocation_params.dir) if source.startswith("--") else Path(config.rootpath)
            resolved = (base / str(value).strip()).resolve()
            problem = unusable(resolved)
            if problem is not None:  # refused here, before anything reads or writes it
                raise ValueError(f"{source} {shown_path(resolved)[:200]}: {problem}")
            return resolved
        return value if self.parse is None else self.parse(value, source)


NOT_GIVEN: Any = object()


def declare(
    flag: str,
    help: str,
    *,
    ini: str | None = None,
    metavar: str | None = None,
    default: str | None = None,
    parse: Parse | None = None,
    repeat: bool = False,
    switch: bool = False,
    path: bool = False,
    otherwise: Any = None,
    doc: str = "",
) -> Any:
    """A settings field and its option, declared once: `limit: int | None = declare("--grounding-limit",
    "...", ini="grounding_limit", metavar="N", parse=positive_int)`. The field's default is the
    option's default parsed as a given value would be (none: `otherwise`, or () for a repeatable option)."""
    option = Option(
        flag,
        ini,
        help,
        repeat=repeat,
        metavar=metavar,
        default=default,
        switch=switch,
        parse=parse,
        path=path,
        doc=doc,
    )
    if switch:
        typed: Any = False
    elif default is not None:
        typed = option.read(default, "default", None)
    elif repeat:
        typed = parse([], "default") if parse is not None else ()
    else:
        typed = otherwise
    return dataclasses.field(default=typed, metadata={"option": option})


def argparse_text(text: str) -> str:
    """A help text as argparse wants it: argparse %-formats help (`%(default)s`), so a literal `%`
    ("95% interval") would crash `pytest --help`. Every text passes here where it is registered."""
    return text.replace("%", "%%")


def add_group(parser, group, options: tuple[Option, ...]) -> None:
    """Each option on `pytest --help` (in `group`) and, where it has one, as an ini key: its one line
    and where the options page says the rest."""
    for option in options:
        text = argparse_text(f"{option.help} ({option.pointer})")
        if option.switch:
            group.addoption(option.flag, dest=option.dest, help=text, action="store_true", default=None)
        else:
            group.addoption(
                option.flag,
                dest=option.dest,
                metavar=option.metavar,
                help=text,
                action="append" if option.repeat else "store",
                default=None,
            )
        if option.ini:
            kind = "bool" if option.switch else "linelist" if option.repeat else "string"
            default = False if option.switch else [] if option.repeat else (option.default or "")
            parser.addini(option.ini, help=text, type=kind, default=default)


def option_value(config, option: Option) -> tuple[Any, str]:
    """(value, source) for an option: the command line wins over the ini file."""
    value = config.getoption(option.dest)
    if value not in (None, []):
        return value, option.flag
    if option.ini:
        ini_value = config.getini(option.ini)
        if ini_value not in (None, "", [], False):
            return ini_value, f"ini {option.ini}"
    return option.default, "default"


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def positive_int(value: Any, source: str, *, allow_zero: bool = False, maximum: int | None = None) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source}: {value!r} is not a whole number") from None
    if number < 0 or (number == 0 and not allow_zero):
        raise ValueError(f"{source}: {value!r} must be {'>= 0' if allow_zero else '> 0'}")
    if maximum is not None and number > maximum:
        raise ValueError(f"{source}: {value!r} is more than {maximum:,}")
    return number


def positive_float(value: Any, source: str) -> float | None:
    if value in (None, ""):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source}: {value!r} is not a number of seconds") from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{source}: {value!r} must be a finite number > 0")
    return number


def share(value: Any, source: str) -> float:
    """0.1 or 10%: a share between 0 and 1, in the one grammar of thresholds (analysis/thresholds.py)."""
    from ...analysis.thresholds import share_option

    return share_option(value, source)


def count_or_all(value: Any, source: str) -> int | None:
    """A whole number >= 0, or `all` (None)."""
    if str(value).strip().lower() == "all":
        return None
    return positive_int(value, source, allow_zero=True)


def one_of(choices: tuple[str, ...]) -> Parse:
    """The parser of an option that takes one of `choices`."""

    def parse(value: Any, source: str) -> str:
        return choice(value, source, choices)

    return parse


def texts(value: Any, source: str) -> tuple[str, ...]:
    """A repeatable option's texts, as given."""
    return tuple(as_list(value))


def choice(value: Any, source: str, choices: tuple[str, ...]) -> str:
    text = str(value).strip()
    if text not in choices:
        raise ValueError(f"{source}: {value!r} is not one of {', '.join(choices)}")
    return text
