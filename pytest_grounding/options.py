"""Command-line options and their ini twins, with one help text each (pytest-timeout style), and
the resolution of a value to where it came from, so a bad value can be named by its source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

MISSES_MODES = ("fail", "xfail")


@dataclass(frozen=True)
class Option:
    flag: str
    ini: Optional[str]
    help: str
    repeat: bool = False
    metavar: Optional[str] = None
    default: Any = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


OPTIONS = (
    Option("--dataset", "grounding_datasets", repeat=True, metavar="[FORMAT:]PATH",
           help="dataset to run (repeatable; ini: one per line). The format is recognised from the path "
                "(pointerbench, screenspot, screenspot-pro, harness); FORMAT:PATH forces one. "
                "Default: the embedded synthetic benchmark."),
    Option("--detector", "grounding_detectors", repeat=True, metavar="NAME[:key=value,...]",
           help="detector to evaluate (repeatable: one test item per sample and detector). "
                "Default: ocr when its extra is installed, else center."),
    Option("--grounding-json", None, metavar="PATH",
           help="write the whole result (settings, versions, breakdowns, every sample) as JSON."),
    Option("--grounding-predictions", None, metavar="PATH",
           help="write JSONL {id, point, detector, dataset, outcome} per sample as it finishes."),
    Option("--grounding-min-accuracy", "grounding_min_accuracy", repeat=True, metavar="[KEY=VALUE:]THRESHOLD",
           help="accuracy gate, e.g. 0.40 or element_type=icon:0.30 (repeatable; ini: one per line). "
                "Applies to every detector; a failed gate makes the exit status non-zero."),
    Option("--grounding-misses", "grounding_misses", metavar="fail|xfail",
           help="how a miss is reported: fail (default without gates) or xfail (default when a gate is set, "
                "so the exit status is the gates' verdict plus real errors)."),
    Option("--grounding-top-apps", "grounding_top_apps", metavar="N", default="15",
           help="apps shown in the terminal's app table (most samples first; all are in the JSON); 0 = all."),
    Option("--grounding-limit", "grounding_limit", metavar="N",
           help="run only the first N samples (by id) of each dataset."),
    Option("--grounding-timeout", "grounding_timeout", metavar="SECONDS",
           help="per-prediction time limit; a detector past it gets an error for that sample and the run goes on."),
)


def add_options(parser) -> None:
    group = parser.getgroup("grounding", "GUI-grounding benchmark (pytest-grounding)")
    for option in OPTIONS:
        group.addoption(option.flag, dest=option.dest, metavar=option.metavar, help=option.help,
                        action="append" if option.repeat else "store", default=None)
        if option.ini:
            parser.addini(option.ini, help=option.help, type="linelist" if option.repeat else "string",
                          default=[] if option.repeat else (option.default or ""))


def lookup(config, flag: str) -> Tuple[Any, str]:
    """(value, source) for an option: the command line wins over the ini file."""
    option = next(o for o in OPTIONS if o.flag == flag)
    value = config.getoption(option.dest)
    if value not in (None, []):
        return value, flag
    if option.ini:
        ini_value = config.getini(option.ini)
        if ini_value not in (None, "", []):
            return ini_value, f"ini {option.ini}"
    return option.default, "default"


def as_list(value: Any) -> List[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def positive_int(value: Any, source: str, *, allow_zero: bool = False) -> Optional[int]:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source}: {value!r} is not a whole number") from None
    if number < 0 or (number == 0 and not allow_zero):
        raise ValueError(f"{source}: {value!r} must be {'>= 0' if allow_zero else '> 0'}")
    return number


def positive_float(value: Any, source: str) -> Optional[float]:
    if value in (None, ""):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source}: {value!r} is not a number of seconds") from None
    if number <= 0:
        raise ValueError(f"{source}: {value!r} must be > 0")
    return number
