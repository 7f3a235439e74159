"""Command-line options and their ini twins, with one help text each (pytest-timeout style), and
the resolution of a value to where it came from, so a bad value can be named by its source."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core.profiles import PROFILES

MISSES_MODES = ("fail", "xfail")
PROGRESS_MODES = ("auto", "on", "off")
TASKS = ("grounding", "locate")
REFUSAL_ROWS = ("include", "exclude")
LANGUAGES = ("en", "cn")
SCORING_PROFILES = tuple(PROFILES)


@dataclass(frozen=True)
class Option:
    flag: str
    ini: str | None
    help: str
    repeat: bool = False
    metavar: str | None = None
    default: Any = None
    switch: bool = False  # a flag without a value (store_true; ini: a bool)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


OPTIONS = (
    Option(
        "--dataset",
        "grounding_datasets",
        repeat=True,
        metavar="[FORMAT:]PATH",
        help="dataset to run (repeatable; ini: one per line). The format is recognised from the path "
        "(pointerbench, screenspot, screenspot-pro, harness, hf: a folder of parquet/arrow files); FORMAT:PATH "
        "forces one; hf:NAME[:SPLIT][:key=value] reads a Hugging Face hub dataset or table folder (the hf extra). "
        "Default: the embedded synthetic benchmark.",
    ),
    Option(
        "--detector",
        "grounding_detectors",
        repeat=True,
        metavar="NAME[:key=value,...][+STRATEGY[:key=value,...]]",
        help="detector to evaluate (repeatable: one test item per sample and detector), optionally wrapped "
        "in cropping strategies: ocr+zoom, ocr+screenseeker:depth=2 (docs: strategies). Two or more end "
        "with a comparison table. Default: ocr when its extra is installed, else center.",
    ),
    Option(
        "--grounding-json",
        None,
        metavar="PATH",
        help="write the whole result (settings, versions, breakdowns, every sample) as JSON.",
    ),
    Option(
        "--grounding-html",
        "grounding_html",
        metavar="PATH",
        help="write one self-contained HTML page: the run's header, the summary tables and charts, the figures "
        "and a gallery of every miss, wrong-format answer and error with a crop of the screen (also for an "
        "interrupted run, marked partial). The same page as `python -m pytest_grounding report REPORT.json "
        "--html PATH`.",
    ),
    Option(
        "--grounding-plots",
        "grounding_plots",
        metavar="DIR",
        help="write the figures as PNGs into DIR (accuracy by target size, latency against accuracy, accuracy "
        "by app category, the element-at-click IoU histogram); needs the plots extra (matplotlib).",
    ),
    Option(
        "--grounding-predictions",
        None,
        metavar="PATH",
        help="write JSONL {id, point, detector, dataset, outcome} per sample as it finishes.",
    ),
    Option(
        "--grounding-min-accuracy",
        "grounding_min_accuracy",
        repeat=True,
        metavar="[KEY=VALUE:]THRESHOLD",
        help="accuracy gate, e.g. 0.40 or element_type=icon:0.30 (repeatable; ini: one per line). "
        "Applies to every detector; a failed gate makes the exit status non-zero.",
    ),
    Option(
        "--grounding-gate-on-interval",
        "grounding_gate_on_interval",
        switch=True,
        help="judge each --grounding-min-accuracy gate on the lower bound of the accuracy's 95% interval "
        "(clustered by screen; docs: measured) instead of the accuracy itself: a gate then passes only when the "
        "run shows, beyond its noise, that the accuracy reaches the threshold.",
    ),
    Option(
        "--grounding-presets",
        "grounding_presets",
        metavar="PATH",
        help="a TOML file of model presets for the VLM detectors ([presets.NAME] tables; docs: presets), "
        "then --detector openai:preset=NAME. From the ini file: relative to the rootdir.",
    ),
    Option(
        "--grounding-baseline",
        "grounding_baseline",
        metavar="PATH",
        help="compare with a baseline kept in the repository (per sample and per slice, keyed by dataset "
        "fingerprint, sample id and detector spec): a hit that became a miss fails its item as a regression, a "
        "known miss is xfail, a slice that drops beyond its --grounding-tolerance fails the run. No file yet: "
        "the run writes it and fails, saying so.",
    ),
    Option(
        "--grounding-update-baseline",
        None,
        switch=True,
        help="with --grounding-baseline: rewrite the baseline from this run (on purpose: a model change that "
        "is accepted) instead of comparing with it.",
    ),
    Option(
        "--grounding-tolerance",
        "grounding_tolerance",
        repeat=True,
        metavar="[KEY=VALUE:]TOL",
        help="with --grounding-baseline: how far a slice's accuracy may drop below the baseline, e.g. 0.02 (every "
        "slice) or element_type=icon:0.05 (one slice; repeatable; ini: one per line). Default 0: any drop fails.",
    ),
    Option(
        "--grounding-max-slowdown",
        "grounding_max_slowdown",
        metavar="RATIO",
        help="with --grounding-baseline: fail when a detector's p50 or p95 latency exceeds the baseline's times "
        "RATIO (e.g. 1.25). Off by default: timings are noisy on shared machines.",
    ),
    Option(
        "--grounding-price",
        "grounding_price",
        metavar="prompt=X,completion=Y",
        help="price of a served model's tokens in USD per million, e.g. prompt=0.3,completion=1.2: the summary "
        "and the JSON add the cost of the run and per 1,000 samples to the token counts the detector reported.",
    ),
    Option(
        "--grounding-published",
        "grounding_published",
        metavar="PATH",
        help="a JSON file of published figures (the shape of the shipped published.json) added to the shipped "
        "ones: your own benchmarks and models for the reproduction check (docs: reproduction).",
    ),
    Option(
        "--grounding-misses",
        "grounding_misses",
        metavar="fail|xfail",
        help="how a miss is reported: fail (default without gates) or xfail (default when a gate or a baseline "
        "is set, so the exit status is their verdict plus real errors).",
    ),
    Option(
        "--grounding-top-apps",
        "grounding_top_apps",
        metavar="N",
        default="15",
        help="apps shown in the terminal's app table (most samples first; all are in the JSON); 0 = all.",
    ),
    Option(
        "--grounding-limit",
        "grounding_limit",
        metavar="N",
        help="run only the first N samples (by id) of each dataset.",
    ),
    Option(
        "--grounding-shard",
        "grounding_shard",
        metavar="K/N|env",
        help="run only the K-th of N disjoint shares of the samples (1-based; a screen's samples stay together; "
        "the same shares on every machine), for CI matrices and clusters; merge the N JSON reports with "
        "`python -m pytest_grounding merge`. env: read K/N from GROUNDING_SHARD (K/N), Slurm's "
        "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or Kubernetes' JOB_COMPLETION_INDEX with "
        "GROUNDING_SHARD_COUNT (docs: running across machines).",
    ),
    Option(
        "--grounding-timeout",
        "grounding_timeout",
        metavar="SECONDS",
        help="per-prediction time limit; a detector past it gets an error for that sample and the run goes on.",
    ),
    Option(
        "--grounding-max-errors",
        "grounding_max_errors",
        metavar="SHARE",
        default="0.1",
        help="largest share of a detector's samples that may be errors (a number 0..1 or a percentage; default "
        "0.1) before its figures are called not meaningful and its gates fail: an outage must not pass "
        "for a bad model.",
    ),
    Option(
        "--grounding-task",
        "grounding_task",
        metavar="grounding|locate",
        default="grounding",
        help="what each item asks: grounding (default: instruction -> click point) or locate (the "
        "element-at-click task: recorded click point -> the element's box, with retries over transforms).",
    ),
    Option(
        "--grounding-iou-threshold",
        "grounding_iou_threshold",
        metavar="IOU",
        default="0.5",
        help="--grounding-task locate: a returned box is a hit at IoU >= this with the target (default 0.5), "
        "a false positive below it.",
    ),
    Option(
        "--grounding-refusal-rows",
        "grounding_refusal_rows",
        metavar="include|exclude",
        default="include",
        help="absent-target rows (the element is not on the screen; a refusal is the right answer) in the "
        "pooled accuracy and its breakdowns: include (default, as OSWorld-G's authors count them) or exclude "
        "(as ClawGUI does by default). Either way they are counted in their own summary line, and each "
        "benchmark's headline follows its authors.",
    ),
    Option(
        "--grounding-scoring",
        "grounding_scoring",
        metavar="PROFILE",
        default="pixel",
        help="the scoring profile every answer is judged by: pixel (default: the click in pixels inside the "
        "target, edges included), gui-owl-1.5 (GUI-Owl-1.5's scorer: the 0-1000 integer point inside the box "
        "rounded outward; no point counts as (0, 0)), half-open (OmniParser's: the click truncated to integer "
        "pixels inside [x1, x2) x [y1, y2)). Recorded in the report; `rescore --scoring` applies one to a run "
        "already made (docs/measured.md).",
    ),
    Option(
        "--grounding-epochs",
        "grounding_epochs",
        metavar="N",
        default="1",
        help="run each sample N times (default 1): N items per sample, ids suffixed -e1 .. -eN, each a distinct "
        "request (a served model gets seed=k on epoch k). The summary adds the mean accuracy over epochs, pass@N, "
        "the majority answer's accuracy and the share of samples whose outcome changed (docs/measured.md). A "
        "deterministic detector (center, random, ocr, omniparser, replay) runs once, with one note.",
    ),
    Option(
        "--grounding-perturb",
        "grounding_perturb",
        repeat=True,
        metavar="AXIS[:key=value,...][,AXIS...]",
        help="robustness sweep: every sample also runs under each named variant, as its own item (id suffix "
        "~LABEL, e.g. ~zoom70), its target mapped into the variant's pixels. Axes: downscale (max_pixels or "
        "long_edge), zoom (scale; default 0.7 and 1.25), invert, jpeg (quality; default 30 and 70), occlude "
        "(size), paraphrase (file=PATH: JSONL of id -> instruction). The summary adds a robustness table: the "
        "change per variant with its 95% interval and McNemar p, and the flips (docs: robustness).",
    ),
    Option(
        "--grounding-max-drop",
        "grounding_max_drop",
        repeat=True,
        metavar="[VARIANT=]POINTS",
        help="robustness gate: fail the run when a variant (a label such as zoom70, or an axis such as zoom: "
        "each of its variants) costs more than POINTS accuracy points against the same samples' originals; "
        "POINTS alone applies to every variant (repeatable; docs: robustness).",
    ),
    Option(
        "--grounding-language",
        "grounding_language",
        metavar="en|cn",
        default="en",
        help="instruction language for datasets that carry a translation: cn asks ScreenSpot-Pro's "
        "instruction_cn (a row without one is an error for that sample). Default en.",
    ),
    Option(
        "--grounding-resume",
        "grounding_resume",
        switch=True,
        help="with --grounding-predictions: skip the samples already in that file (same detector spec and "
        "dataset fingerprint; errors are run again) and report all of them as one run.",
    ),
    Option(
        "--grounding-show-misses",
        "grounding_show_misses",
        metavar="N|all",
        default="10",
        help="misses listed one line each above the summary (default 10; 0 = none; all). Every miss is in "
        "the JSON report and the predictions file.",
    ),
    Option(
        "--grounding-progress",
        "grounding_progress",
        metavar="auto|on|off",
        default="auto",
        help="a progress line per detector (samples done, rate, ETA) every few seconds: auto = on a terminal "
        "unless -qq.",
    ),
    Option(
        "--grounding-cache",
        "grounding_cache",
        metavar="DIR",
        help="keep served and in-process VLM answers (openai, vllm, qwenvl, uitars) in DIR across runs: a rerun "
        "of the same request (model and revision, engine and version, image, prompt, decoding, epoch and seed) "
        "takes the stored answer and sends nothing; records say `cached: true`, the summary counts hits and "
        "answers stored. Only complete answers are stored (never errors or cut answers). Off by default "
        "(docs: answer-cache).",
    ),
    Option(
        "--grounding-log",
        "grounding_log",
        repeat=True,
        metavar="mlflow:TRACKING_URI|wandb:PROJECT",
        help="log the finished run to an experiment tracker (repeatable): params (detector, preset, engine, "
        "dataset fingerprint, settings), metrics (headline and slice accuracies with their intervals, latency, "
        "throughput, cost) and the JSON and HTML reports as artifacts. Needs the mlflow or wandb extra; a "
        "tracker that fails is a note in the summary, never a failed run (docs: trackers).",
    ),
    Option(
        "--grounding-benchmark-table",
        "grounding_benchmark_table",
        switch=True,
        help="also print pytest-benchmark's table for the grounding items (one row per sample; off by "
        "default: its --benchmark-json is written either way).",
    ),
)


def add_options(parser) -> None:
    group = parser.getgroup("grounding", "GUI-grounding benchmark (pytest-grounding)")
    for option in OPTIONS:
        if option.switch:
            group.addoption(option.flag, dest=option.dest, help=option.help, action="store_true", default=None)
        else:
            group.addoption(
                option.flag,
                dest=option.dest,
                metavar=option.metavar,
                help=option.help,
                action="append" if option.repeat else "store",
                default=None,
            )
        if option.ini:
            kind = "bool" if option.switch else "linelist" if option.repeat else "string"
            default = False if option.switch else [] if option.repeat else (option.default or "")
            parser.addini(option.ini, help=option.help, type=kind, default=default)


def lookup(config, flag: str) -> tuple[Any, str]:
    """(value, source) for an option: the command line wins over the ini file."""
    option = next(o for o in OPTIONS if o.flag == flag)
    value = config.getoption(option.dest)
    if value not in (None, []):
        return value, flag
    if option.ini:
        ini_value = config.getini(option.ini)
        if ini_value not in (None, "", [], False):
            return ini_value, f"ini {option.ini}"
    return option.default, "default"


def switch(config, flag: str) -> bool:
    value, _ = lookup(config, flag)
    return bool(value)


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
    """0.1 or 10%: a share between 0 and 1."""
    text = str(value).strip()
    try:
        number = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        raise ValueError(f"{source}: {value!r} is not a share (0.1 or 10%)") from None
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ValueError(f"{source}: {value!r} must lie between 0 and 1 (0% and 100%)")
    return number


def count_or_all(value: Any, source: str) -> int | None:
    """A whole number >= 0, or `all` (None)."""
    if str(value).strip().lower() == "all":
        return None
    return positive_int(value, source, allow_zero=True)


def choice(value: Any, source: str, choices: tuple[str, ...]) -> str:
    text = str(value).strip()
    if text not in choices:
        raise ValueError(f"{source}: {value!r} is not one of {', '.join(choices)}")
    return text
