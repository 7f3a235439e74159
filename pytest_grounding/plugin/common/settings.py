"""The run's settings, read once from the command line and the ini file. Each option is declared
once, on the field it fills (`options.declare`: flag, ini key, help, metavar, default, parser):
`pytest --help` and the docs' options page are built from these declarations, grouped as the
settings are. Every value is checked here, so a bad one is a usage error naming where it came from
before any sample runs."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cache, partial
from pathlib import Path
from typing import Any

from ...analysis import baseline as baseline_mod
from ...analysis import cost as cost_mod
from ...analysis import errata as errata_mod
from ...analysis import gates as gates_mod
from ...analysis import robustness
from ...core.budget import Budget, parse_budget
from ...core.profiles import Profile, get_profile
from ...core.record import MAX_EPOCHS
from ...datasets import sharding
from .extras import default_detector
from .options import (
    FRAME_CHECK_MODES,
    LANGUAGES,
    MISSES_MODES,
    NOT_GIVEN,
    PROGRESS_MODES,
    REFUSAL_ROWS,
    SCORING_PROFILES,
    TASKS,
    Option,
    add_group,
    count_or_all,
    declare,
    one_of,
    option_value,
    positive_float,
    positive_int,
    share,
    texts,
)
from .values import (
    accuracy_gates,
    all_or_count,
    detector_specs,
    parse_log_targets,
    parse_tolerances,
    ratio,
    read_errata,
    shard_of,
    split_labels,
)


class SettingError(ValueError):
    """A bad option value; the message names where it came from."""


@dataclass(frozen=True)
class Selection:
    """What runs: the datasets and detectors (and where they were named), how much of them."""

    dataset_specs: tuple[str, ...] = declare(
        "--dataset",
        "dataset to run: a folder or file in any supported format, or hf:ID (repeatable)",
        doc=(
            "dataset to run (repeatable; ini: one per line). The format is recognised from the path "
            "(pointerbench, screenspot, screenspot-pro, harness, hf: a folder of parquet/arrow files); "
            "FORMAT:PATH forces one; hf:NAME[:SPLIT][:key=value] reads a Hugging Face hub dataset or table folder"
            " (the hf extra). Default: the embedded synthetic benchmark."
        ),
        ini="grounding_datasets",
        metavar="[FORMAT:]PATH",
        repeat=True,
        parse=texts,
    )
    dataset_source: str = "default"
    detector_specs: tuple[str, ...] = declare(
        "--detector",
        "detector to evaluate, with options and cropping strategies (repeatable)",
        doc=(
            "detector to evaluate (repeatable: one test item per sample and detector), optionally wrapped in "
            "cropping strategies: ocr+zoom, ocr+screenseeker:depth=2 (docs: strategies). Two or more end with a "
            "comparison table. label=NAME in a spec names it in every table and line (docs: detectors). Default: ocr "
            "when its extra is installed, else center."
        ),
        ini="grounding_detectors",
        metavar="NAME[:key=value,...][+STRATEGY[:key=value,...]]",
        repeat=True,
        parse=detector_specs,
    )
    detector_source: str = "default"
    detector_labels: dict[str, str] = field(default_factory=dict)  # {spec: label=} (issue 51)
    limit: int | None = declare(
        "--grounding-limit",
        "run only the first N samples (by id) of each dataset",
        doc="run only the first N samples (by id) of each dataset.",
        ini="grounding_limit",
        metavar="N",
        parse=positive_int,
    )
    budget: Budget | None = declare(
        "--grounding-budget",
        "what the run may spend: requests=N,tokens=N,seconds=N,cost=X",
        doc=(
            "what the run may spend, any of requests=N,tokens=N,seconds=N,cost=X (cost in USD, needs "
            "--grounding-price): once one is spent nothing more is sent, what is in flight finishes, the rest is "
            "not run and the report is partial (--grounding-resume continues it; docs: budgets)."
        ),
        ini="grounding_budget",
        metavar="requests=N,tokens=N,seconds=N,cost=X",
        parse=parse_budget,
    )
    task: str = declare(
        "--grounding-task",
        "what each item asks: grounding (default) or locate (the element at a click)",
        doc=(
            "what each item asks: grounding (default: instruction -> click point) or locate (the element-at-click"
            " task: recorded click point -> the element's box, with retries over transforms)."
        ),
        ini="grounding_task",
        metavar="grounding|locate",
        default="grounding",
        parse=one_of(TASKS),
    )
    language: str = declare(
        "--grounding-language",
        "instruction language where a dataset carries a translation: en (default) or cn",
        doc=(
            "instruction language for datasets that carry a translation: cn asks ScreenSpot-Pro's instruction_cn "
            "(a row without one is an error for that sample). Default en."
        ),
        ini="grounding_language",
        metavar="en|cn",
        default="en",
        parse=one_of(LANGUAGES),
    )
    shard: sharding.Shard | None = declare(
        "--grounding-shard",
        "run only the K-th of N disjoint shares of the samples (K/N)",
        doc=(
            "run only the K-th of N disjoint shares of the samples (1-based; a screen's samples stay together; "
            "the same shares on every machine), for CI matrices and clusters; merge the N JSON reports with "
            "`python -m pytest_grounding merge`. env: read K/N from GROUNDING_SHARD (K/N) or the scheduler's "
            "variables (Slurm, Kubernetes, AWS Batch, Google Cloud Batch, SkyPilot, GitLab, CircleCI, Buildkite; "
            "docs: running across machines)."
        ),
        ini="grounding_shard",
        metavar="K/N|env",
        parse=shard_of,
    )
    epochs: int = declare(
        "--grounding-epochs",
        "run each sample N times (default 1): mean accuracy, pass@k, stability",
        doc=(
            "run each sample N times (default 1): N items per sample, ids suffixed -e1 .. -eN, each a distinct "
            "request (a served model gets seed=k on epoch k). The summary adds the mean accuracy over epochs, "
            "pass@N, the majority answer's accuracy and the share of samples whose outcome changed "
            "(docs/measured.md). A deterministic detector (center, random, ocr, omniparser, replay) runs once, "
            "with one note."
        ),
        ini="grounding_epochs",
        metavar="N",
        default="1",
        parse=partial(positive_int, maximum=MAX_EPOCHS),  # at most 1,000: a typo must not plan billions of items
    )
    presets_path: Path | None = declare(
        "--grounding-presets",
        "a TOML file of model presets for the VLM detectors",
        doc=(
            "a TOML file of model presets for the VLM detectors ([presets.NAME] tables; docs: presets), then "
            "--detector openai:preset=NAME. From the ini file: relative to the rootdir."
        ),
        ini="grounding_presets",
        metavar="PATH",
        path=True,
    )
    perturb: tuple[str, ...] = declare(
        "--grounding-perturb",
        "robustness sweep: every sample also runs under each named variant (repeatable)",
        doc=(
            "robustness sweep: every sample also runs under each named variant, as its own item (id suffix "
            "~LABEL, e.g. ~zoom70), its target mapped into the variant's pixels. Axes: downscale (max_pixels or "
            "long_edge), zoom (scale; default 0.7 and 1.25), invert, jpeg (quality; default 30 and 70), occlude "
            "(size), paraphrase (file=PATH: JSONL of id -> instruction), format (served detectors: the same samples "
            "asked in pixels, rel1, rel1000 and point_2d, or those named: format:pixels,rel1; the summary names the "
            "best format). The summary adds a robustness table: the"
            " change per variant with its 95% interval and McNemar p, and the flips (docs: robustness)."
        ),
        ini="grounding_perturb",
        metavar="AXIS[:key=value,...][,AXIS...]",
        repeat=True,
        parse=texts,
    )
    frame_check: str = declare(
        "--grounding-frame-check",
        "check each model detector's coordinate frame as the run starts: fail (default), warn, off",
        doc=(
            "as the run starts, show each model detector (openai, vllm, qwenvl, uitars; agent=crop too) 12 calibration "
            "screens of a red square and fit the coordinate frame it really answers in (docs: why it misses); its "
            "requests go beside the first samples (with --grounding-budget: before them). fail (default): a frame "
            "other than the preset's stops the run when the verdict comes (exit 4), naming the frame and what to "
            "try: the samples scored by then are kept, the rest not run (with a budget: no dataset sample is sent); "
            "warn: says so and runs; off: no check. Answers that cannot be read never stop a run. Detectors that "
            "need no check (ocr, floors, replay) get none."
        ),
        ini="grounding_frame_check",
        metavar="fail|warn|off",
        default="fail",
        parse=one_of(FRAME_CHECK_MODES),
    )


@dataclass(frozen=True)
class ScoringSettings:
    """How a sample is judged."""

    timeout: float | None = declare(
        "--grounding-timeout",
        "per-prediction time limit in seconds; past it, that sample is an error",
        doc="per-prediction time limit; a detector past it gets an error for that sample and the run goes on.",
        ini="grounding_timeout",
        metavar="SECONDS",
        parse=positive_float,
    )
    iou_threshold: float = declare(
        "--grounding-iou-threshold",
        "--grounding-task locate: the IoU at which a returned box is a hit (default 0.5)",
        doc=(
            "--grounding-task locate: a returned box is a hit at IoU >= this with the target (default 0.5), a "
            "false positive below it."
        ),
        ini="grounding_iou_threshold",
        metavar="IOU",
        default="0.5",
        parse=share,
    )
    refusal_rows: str = declare(
        "--grounding-refusal-rows",
        "absent-target rows in the pooled accuracy: include (default) or exclude",
        doc=(
            "absent-target rows (the element is not on the screen; a refusal is the right answer) in the pooled "
            "accuracy and its breakdowns: include (default, as OSWorld-G's authors count them) or exclude (as "
            "ClawGUI does by default). Either way they are counted in their own summary line, and each "
            "benchmark's headline follows its authors."
        ),
        ini="grounding_refusal_rows",
        metavar="include|exclude",
        default="include",
        parse=one_of(REFUSAL_ROWS),
    )
    scoring: str = declare(
        "--grounding-scoring",
        "the scoring profile answers are judged by: pixel (default), gui-owl-1.5, half-open",
        doc=(
            "the scoring profile every answer is judged by: pixel (default: the click in pixels inside the "
            "target, edges included), gui-owl-1.5 (GUI-Owl-1.5's scorer: the 0-1000 integer point inside the box "
            "rounded outward; no point counts as (0, 0)), half-open (OmniParser's: the click truncated to integer"
            " pixels inside [x1, x2) x [y1, y2)). Recorded in the report; `rescore --scoring` applies one to a "
            "run already made (docs/measured.md)."
        ),
        ini="grounding_scoring",
        metavar="PROFILE",
        default="pixel",
        parse=one_of(SCORING_PROFILES),
    )
    price: cost_mod.Price | None = declare(
        "--grounding-price",
        "price of a served model's tokens, USD per million: prompt=X,completion=Y",
        doc=(
            "price of a served model's tokens in USD per million, e.g. prompt=0.3,completion=1.2: the summary and"
            " the JSON add the cost of the run and per 1,000 samples to the token counts the detector reported."
        ),
        ini="grounding_price",
        metavar="prompt=X,completion=Y",
        parse=cost_mod.parse_price,
    )
    errata: errata_mod.Errata | None = declare(
        "--grounding-errata",
        "an errata file: each detector's corrected accuracy beside the official one",
        doc=(
            "an errata file (JSONL: id, action fix|drop, bbox?, instruction?, reason; `review --audit` writes it): "
            "the summary and the JSON give each detector's corrected accuracy beside the official one, which stays "
            "exactly as scored; the file's sha256 is recorded (docs: audit)."
        ),
        ini="grounding_errata",
        metavar="FILE",
        parse=read_errata,
    )

    @property
    def profile(self) -> Profile:
        """The scoring profile of --grounding-scoring (core/profiles.py)."""
        return get_profile(self.scoring)


@dataclass(frozen=True)
class VerdictSettings:
    """What decides the exit status: gates, errors, misses, the baseline, the published figures."""

    gates: tuple[gates_mod.Gate, ...] = declare(
        "--grounding-min-accuracy",
        "accuracy gate, overall or on one slice: [SELECTOR:]AMOUNT (repeatable)",
        doc=(
            "accuracy gate, e.g. 0.40 or 40% (overall) or element_type=icon:30% (one slice; repeatable; ini: one "
            "per line). AMOUNT is a share or a percent, as for every threshold. Applies to every detector; a "
            "failed gate makes the exit status non-zero."
        ),
        ini="grounding_min_accuracy",
        metavar="[KEY=VALUE:]AMOUNT",
        repeat=True,
        parse=accuracy_gates,
    )
    gate_on_interval: bool = declare(
        "--grounding-gate-on-interval",
        "judge the accuracy gates on the lower bound of the 95% interval",
        doc=(
            "judge each --grounding-min-accuracy gate on the lower bound of the accuracy's 95% interval "
            "(clustered by screen; docs: measured) instead of the accuracy itself: a gate then passes only when "
            "the run shows, beyond its noise, that the accuracy reaches the threshold."
        ),
        ini="grounding_gate_on_interval",
        switch=True,
    )
    max_errors: float = declare(
        "--grounding-max-errors",
        "largest share of a detector's samples that may be errors (default 0.1)",
        doc=(
            "largest share of a detector's samples that may be errors (a share or a percent: 0.1 or 10%; default "
            "0.1) before its figures are called not meaningful and its gates fail: an outage must not pass for a "
            "bad model."
        ),
        ini="grounding_max_errors",
        metavar="AMOUNT",
        default="0.1",
        parse=share,
    )
    misses: str = declare(
        "--grounding-misses",
        "how a miss is reported: fail or xfail",
        doc=(
            "how a miss is reported: fail (default without gates) or xfail (default when a gate or a baseline is "
            "set, so the exit status is their verdict plus real errors)."
        ),
        ini="grounding_misses",
        metavar="fail|xfail",
        parse=one_of(MISSES_MODES),
        otherwise="fail",
    )
    baseline_path: Path | None = declare(
        "--grounding-baseline",
        "compare with a baseline kept in the repository (per sample and per slice)",
        doc=(
            "compare with a baseline kept in the repository (per sample and per slice, keyed by dataset "
            "fingerprint, sample id and detector spec): a hit that became a miss fails its item as a regression, "
            "a known miss is xfail, a slice that drops beyond its --grounding-tolerance fails the run. No file "
            "yet: the run writes it and fails, saying so."
        ),
        ini="grounding_baseline",
        metavar="PATH",
        path=True,
    )
    update_baseline: bool = declare(
        "--grounding-update-baseline",
        "with --grounding-baseline: rewrite the baseline from this run",
        doc=(
            "with --grounding-baseline: rewrite the baseline from this run (on purpose: a model change that is "
            "accepted) instead of comparing with it."
        ),
        switch=True,
    )
    tolerances: baseline_mod.Tolerances = declare(
        "--grounding-tolerance",
        "with --grounding-baseline: how far a slice may drop, [SELECTOR:]AMOUNT (repeatable)",
        doc=(
            "with --grounding-baseline: how far a slice's accuracy may drop below the baseline, e.g. 0.02 or 2% "
            "(every slice) or element_type=icon:5% (one slice; repeatable; ini: one per line). Default 0: any "
            "drop fails."
        ),
        ini="grounding_tolerance",
        metavar="[KEY=VALUE:]AMOUNT",
        repeat=True,
        parse=parse_tolerances,
    )
    max_slowdown: float | None = declare(
        "--grounding-max-slowdown",
        "with --grounding-baseline: fail when p50 or p95 latency exceeds the baseline's x RATIO",
        doc=(
            "with --grounding-baseline: fail when a detector's p50 or p95 latency exceeds the baseline's times "
            "RATIO (e.g. 1.25). Off by default: timings are noisy on shared machines."
        ),
        ini="grounding_max_slowdown",
        metavar="RATIO",
        parse=ratio,
    )
    published_path: Path | None = declare(
        "--grounding-published",
        "a JSON file of published figures added to the shipped ones (reproduction check)",
        doc=(
            "a JSON file of published figures (the shape of the shipped published.json) added to the shipped "
            "ones: your own benchmarks and models for the reproduction check (docs: reproduction)."
        ),
        ini="grounding_published",
        metavar="PATH",
        path=True,
    )
    max_drops: tuple[robustness.MaxDrop, ...] = declare(
        "--grounding-max-drop",
        "robustness gate: fail when a variant costs more than [SELECTOR:]AMOUNT (repeatable)",
        doc=(
            "robustness gate: fail the run when a variant (a label such as zoom70, or an axis such as zoom: each "
            "of its variants) costs more than AMOUNT of accuracy against the same samples' originals, a share or "
            "a percent (0.05 or 5%: five points); AMOUNT alone applies to every variant, zoom70:5% to one "
            "(repeatable; docs: robustness)."
        ),
        ini="grounding_max_drop",
        metavar="[VARIANT:]AMOUNT",
        repeat=True,
        parse=robustness.parse_max_drops,
    )


@dataclass(frozen=True)
class OutputSettings:
    """What the run writes and how it shows its progress and summary."""

    json_path: Path | None = declare(
        "--grounding-json",
        "write the whole result as JSON",
        doc="write the whole result (settings, versions, breakdowns, every sample) as JSON.",
        metavar="PATH",
        path=True,
    )
    predictions_path: Path | None = declare(
        "--grounding-predictions",
        "write one JSONL line per sample as it finishes",
        doc="write JSONL {id, point, detector, dataset, outcome} per sample as it finishes.",
        metavar="PATH",
        path=True,
    )
    batch_out: Path | None = declare(
        "--grounding-batch-out",
        "write an openai: detector's requests to FILE (OpenAI Batch JSONL) instead of sending them",
        doc=(
            "instead of sending, an openai: detector writes one OpenAI Batch request line per sample to FILE "
            "(and FILE.manifest.json; a shard's file has the shard in its name); the items are not run here: "
            "score the engine's results with --detector replay:path=RESULTS,requests=FILE "
            "(docs: running across machines)."
        ),
        metavar="FILE",
        path=True,
    )
    resume: bool = declare(
        "--grounding-resume",
        "with --grounding-predictions: skip the samples already in that file",
        doc=(
            "with --grounding-predictions: skip the samples already in that file (same detector spec and dataset "
            "fingerprint; errors are run again) and report all of them as one run."
        ),
        ini="grounding_resume",
        switch=True,
    )
    html_path: Path | None = declare(
        "--grounding-html",
        "write one self-contained HTML page (written while the run goes)",
        doc=(
            "write one self-contained HTML page: the run's header, the summary tables and charts, the figures and"
            " a gallery of every miss, wrong-format answer and error with a crop of the screen (also for an "
            "interrupted run, marked partial). The same page as `python -m pytest_grounding report REPORT.json "
            "--html PATH`."
        ),
        ini="grounding_html",
        metavar="PATH",
        path=True,
    )
    plots_dir: Path | None = declare(
        "--grounding-plots",
        "write the figures as PNGs into DIR (the plots extra)",
        doc=(
            "write the figures as PNGs into DIR (accuracy by target size, latency against accuracy, accuracy by "
            "app category, the element-at-click IoU histogram); needs the plots extra (matplotlib)."
        ),
        ini="grounding_plots",
        metavar="DIR",
        path=True,
    )
    progress: str = declare(
        "--grounding-progress",
        "a progress line per detector every few seconds: auto (default), on, off",
        doc="a progress line per detector (samples done, rate, ETA) every few seconds: auto = on a terminal "
        "unless -qq.",
        ini="grounding_progress",
        metavar="auto|on|off",
        default="auto",
        parse=one_of(PROGRESS_MODES),
    )
    benchmark_table: bool = declare(
        "--grounding-benchmark-table",
        "also print pytest-benchmark's table for the grounding items",
        doc=(
            "also print pytest-benchmark's table for the grounding items (one row per sample; off by default: its"
            " --benchmark-json is written either way)."
        ),
        ini="grounding_benchmark_table",
        switch=True,
    )
    show_misses: int | None = declare(
        "--grounding-show-misses",
        "misses listed one line each above the summary (default 10; 0 = none; all)",
        doc=(
            "misses listed one line each above the summary (default 10; 0 = none; all). Every miss is in the JSON"
            " report and the predictions file."
        ),
        ini="grounding_show_misses",
        metavar="N|all",
        default="10",
        parse=count_or_all,
    )
    top_apps: int | None = declare(
        "--grounding-top-apps",
        "apps shown in the terminal's app table (0 = all)",
        doc="apps shown in the terminal's app table (most samples first; all are in the JSON); 0 = all.",
        ini="grounding_top_apps",
        metavar="N",
        default="15",
        parse=all_or_count,
    )
    answer_cache: Path | None = declare(
        "--grounding-cache",
        "keep served and in-process VLM answers in DIR across runs",
        doc=(
            "keep served and in-process VLM answers (openai, vllm, qwenvl, uitars) in DIR across runs: a rerun of"
            " the same request (model and revision, engine and version, image, prompt, decoding, epoch and seed) "
            "takes the stored answer and sends nothing; records say `cached: true`, the summary counts hits and "
            "answers stored. Only complete answers are stored (never errors or cut answers). Off by default "
            "(docs: answer-cache)."
        ),
        ini="grounding_cache",
        metavar="DIR",
        path=True,
    )
    log_targets: tuple[Any, ...] = declare(
        "--grounding-log",
        "log the finished run to an experiment tracker: mlflow, wandb (repeatable)",
        doc=(
            "log the finished run to an experiment tracker (repeatable): params (detector, preset, engine, "
            "dataset fingerprint, settings), metrics (headline and slice accuracies with their intervals, "
            "latency, throughput, cost) and the JSON and HTML reports as artifacts. Needs the mlflow or wandb "
            "extra; a tracker that fails is a note in the summary, never a failed run (docs: trackers)."
        ),
        ini="grounding_log",
        metavar="mlflow:TRACKING_URI|wandb:PROJECT",
        repeat=True,
        parse=parse_log_targets,
    )
    runs_dir: str | None = declare(
        "--grounding-runs-dir",
        "every run keeps its report in its own folder under DIR (default ./grounding-runs; off)",
        doc=(
            "every run keeps its report: the JSON report, the HTML page and the predictions not given a path of their "
            "own go to DIR/<time>-<dataset>-<detector>/ (default ./grounding-runs, or $GROUNDING_RUNS_DIR; from the "
            "ini file, relative to it; old runs are never deleted). `board`, `compare` and `report` read the newest "
            "run there when given no path. off: keep nothing."
        ),
        ini="grounding_runs_dir",
        metavar="DIR|off",
    )
    run_dir: Path | None = None  # this run's folder under runs_dir (render/run_folder.py), made on first write


# The groups as `pytest --help` and the options page show them: (name, what it decides, the class).
GROUPS = (
    ("selection", "what runs", Selection),
    ("scoring", "how a sample is judged", ScoringSettings),
    ("verdict", "what decides the exit status", VerdictSettings),
    ("outputs", "what the run writes and shows", OutputSettings),
)


@cache
def option_groups() -> tuple[tuple[str, str, tuple[Option, ...]], ...]:
    """(name, title, options) per settings group, in the order `pytest --help` and the docs show them:
    every group's options read from its fields' declarations (each knowing its group and field)."""
    return tuple(
        (
            name,
            title,
            tuple(
                replace(f.metadata["option"], group=name, field=f.name) for f in fields(cls) if "option" in f.metadata
            ),
        )
        for name, title, cls in GROUPS
    )


def all_options() -> tuple[Option, ...]:
    """Every declared option, in the groups' order."""
    return tuple(option for _, _, options in option_groups() for option in options)


def add_options(parser) -> None:
    for name, title, options in option_groups():
        add_group(parser, parser.getgroup(f"grounding {name}", f"grounding: {name} ({title})"), options)


def lookup(config, flag: str) -> tuple[Any, str]:
    """(value, source) for an option named by its flag: the command line wins over the ini file."""
    return option_value(config, next(o for o in all_options() if o.flag == flag))


@dataclass(frozen=True)
class Settings:
    """The run's settings, in four groups."""

    selection: Selection = Selection()
    scoring: ScoringSettings = ScoringSettings()
    verdict: VerdictSettings = VerdictSettings()
    outputs: OutputSettings = OutputSettings()

    @classmethod
    def from_config(cls, config) -> Settings:
        try:
            return cls._from_config(config)
        except ValueError as exc:
            raise SettingError(str(exc)) from None

    @classmethod
    def _from_config(cls, config) -> Settings:
        given: dict[str, dict[str, Any]] = {}
        sources: dict[str, str] = {}
        for name, _, options in option_groups():
            given[name] = {}
            for option in options:
                value, source = option_value(config, option)
                typed = option.read(value, source, config)
                if typed is not NOT_GIVEN and not (option.switch and not typed):
                    given[name][option.field] = typed
                    sources[option.flag] = source
        selection, verdict, outputs = given["selection"], given["verdict"], given["outputs"]
        # What one option means depends on another: the rules across fields, here only.
        selection["dataset_source"] = sources.get("--dataset", "default")
        if "detector_specs" in selection:
            selection["detector_source"] = sources["--detector"]
            selection["detector_specs"], selection["detector_labels"] = split_labels(
                selection["detector_specs"], sources["--detector"]
            )
        else:
            selection["detector_specs"], selection["detector_source"] = (default_detector(),), "default"
        if "misses" not in verdict:
            gated = verdict.get("gates") or verdict.get("max_drops") or verdict.get("baseline_path")
            verdict["misses"] = "xfail" if gated else "fail"
        budget = selection.get("budget")
        if budget is not None and budget.cost is not None and given["scoring"].get("price") is None:
            raise ValueError("--grounding-budget cost=X needs --grounding-price (what a token costs)")
        if "batch_out" in outputs and selection.get("epochs", 1) > 1:
            raise ValueError("--grounding-batch-out writes one request per sample: not with --grounding-epochs")
        if outputs.get("resume") and "predictions_path" not in outputs:
            raise ValueError("--grounding-resume needs --grounding-predictions PATH (the file it resumes from)")
        if "baseline_path" not in verdict:
            for flag, field_name in (
                ("--grounding-update-baseline", "update_baseline"),
                ("--grounding-tolerance", "tolerances"),
                ("--grounding-max-slowdown", "max_slowdown"),
            ):
                if field_name in verdict:
                    raise ValueError(f"{flag} needs --grounding-baseline PATH (the baseline it applies to)")
        outputs["run_dir"] = run_dir_of(config, selection)
        return cls(
            selection=Selection(**selection),
            scoring=ScoringSettings(**given["scoring"]),
            verdict=VerdictSettings(**verdict),
            outputs=OutputSettings(**outputs),
        )


def run_dir_of(config, selection: dict[str, Any]) -> Path | None:
    """This run's folder under --grounding-runs-dir (None: switched off). Named here, made by the
    first file written into it (render/run_folder.py)."""
    import time

    from ...core.paths import shown_path, unusable
    from ...render import run_folder

    value, source = lookup(config, "--grounding-runs-dir")
    base = Path(config.invocation_params.dir) if source.startswith("--") or value is None else Path(config.rootpath)
    runs_dir = run_folder.resolve_runs_dir(value, base)
    if runs_dir is None:
        return None
    problem = unusable(runs_dir)
    if problem is not None:  # before anything looks for the run's live files there
        named = source if value is not None else f"${run_folder.ENV_RUNS_DIR}"
        raise ValueError(f"{named} {shown_path(runs_dir)[:200]}: {problem}")
    shard = selection.get("shard")
    where = (shard.index, shard.count) if shard is not None else None
    datasets, specs = selection.get("dataset_specs", ()), selection["detector_specs"]
    labels = selection.get("detector_labels") or {}
    detectors = [labels.get(spec, spec) for spec in specs]  # a label= names the folder too (issue 51)
    return runs_dir / run_folder.folder_name(time.time(), list(datasets), list(detectors), where)
