"""Every run keeps its report: the folder a run's JSON report, HTML page and predictions go to when
no path was given for them (`grounding-runs/<time>-<dataset>-<detector>[-shardKofN]-<suffix>/`),
and the folder `board`, `compare` and `report` read when given no path. Pure apart from reading
the folder: the run folder is only named here; it is made by the first file written into it,
so a run that scores nothing (`--co`, a test suite with no grounding item) leaves nothing."""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Sequence
from pathlib import Path

DEFAULT_RUNS_DIR = "grounding-runs"
ENV_RUNS_DIR = "GROUNDING_RUNS_DIR"  # the default's default: a CI job or a test session points it elsewhere
OFF = ("off", "none", "no", "false", "0")  # --grounding-runs-dir=off: no run folder
REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
PREDICTIONS = "predictions.jsonl"
POINTER = "report.path"  # a run whose JSON report went elsewhere (--grounding-json PATH): its path, for `board`
_SLUG_PART = 40  # characters of a dataset's or detector's name in the folder name


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+_-]+", "-", text).strip("-.")[:_SLUG_PART]


def detector_slug(spec: str) -> str:
    """`openai:base_url=http://h:8000/v1,label=tars` -> `tars`; `ocr:semantic=false+zoom` -> `ocr+zoom`
    (the whole spec stays in the report)."""
    label = re.search(r"(?:^|[:,])label=([^,+]+)", spec)
    if label:
        return _clean(label.group(1)) or "detector"
    return _clean("+".join(part.split(":", 1)[0] for part in spec.split("+"))) or "detector"


def dataset_slug(spec: str) -> str:
    """`screenspot-pro:/data/ScreenSpot-Pro` -> `ScreenSpot-Pro`; `hf:org/name:test` -> `name`."""
    text = spec.rstrip("/\\")
    if text.startswith("hf:"):
        text = text[3:].split(":", 1)[0]
    elif re.match(r"^[a-z0-9_-]{2,}:", text):  # FORMAT:PATH (not a drive letter)
        text = text.split(":", 1)[1]
    return _clean(re.split(r"[/\\]", text.rstrip("/\\"))[-1]) or "dataset"


def folder_name(
    started: float,
    datasets: Sequence[str],
    detectors: Sequence[str],
    shard: tuple[int, int] | None = None,
    suffix: str | None = None,
) -> str:
    """`20261128-001500-synthetic-ocr-shard1of2-3fa9`: sorts by time; the suffix keeps two runs
    started in the same second (or two shards on one shared volume) apart."""
    when = time.strftime("%Y%m%d-%H%M%S", time.localtime(started))
    dataset = "+".join(dataset_slug(spec) for spec in datasets[:2]) + ("+more" if len(datasets) > 2 else "")
    detector = "+".join(detector_slug(spec) for spec in detectors[:2]) + ("+more" if len(detectors) > 2 else "")
    parts = [when, dataset or "synthetic", detector or "default"]
    if shard is not None:
        parts.append(f"shard{shard[0]}of{shard[1]}")
    parts.append(suffix or secrets.token_hex(3))
    return "-".join(parts)


def resolve_runs_dir(value: str | None, base: Path) -> Path | None:
    """The runs folder of `--grounding-runs-dir` (relative to `base`; not given: $GROUNDING_RUNS_DIR,
    else ./grounding-runs), None when switched off."""
    text = (os.environ.get(ENV_RUNS_DIR) or DEFAULT_RUNS_DIR) if value is None else str(value).strip()
    if not text or text.lower() in OFF:
        return None
    return (base / text).resolve()


def check_runs_dir(runs_dir: Path) -> str | None:
    """Before any sample runs: can the runs folder be made and written? A reason, or None. Nothing
    is created here (a run that scores nothing leaves nothing)."""
    probe = runs_dir
    while not probe.exists():
        if probe.parent == probe:
            return f"{runs_dir}: no folder of it exists"
        probe = probe.parent
    if not probe.is_dir():
        return f"{runs_dir}: {probe} is a file, not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{runs_dir}: {probe} is not writable"
    return None


class NoRunFound(Exception):
    """No run folder with the file asked for."""


def runs(runs_dir: Path, name: str = REPORT_JSON) -> list[Path]:
    """The runs' files called `name`, newest first (by the folder's name: it starts with the time,
    then by the file's time for runs of one second)."""
    if not runs_dir.is_dir():
        return []
    found = [folder / name for folder in runs_dir.iterdir() if (folder / name).is_file()]
    return sorted(found, key=lambda path: (path.parent.name[:15], path.stat().st_mtime), reverse=True)


def newest(runs_dir: Path, name: str = REPORT_JSON) -> Path:
    """The newest run's file `name`, or NoRunFound saying where it looked."""
    found = runs(runs_dir, name)
    if not found:
        raise NoRunFound(
            f"no run in {runs_dir} has a {name} (a run writes one there unless --grounding-runs-dir=off); "
            "give a path instead"
        )
    return found[0]


def newest_reports(runs_dir: Path, count: int) -> list[Path]:
    """The `count` newest runs' JSON reports, oldest first (a comparison's baseline first)."""
    newest(runs_dir)  # NoRunFound when there is none
    return list(reversed(runs(runs_dir)[:count]))


def default_runs_dir() -> Path:
    """Where the commands look when given no path: $GROUNDING_RUNS_DIR, else ./grounding-runs."""
    return resolve_runs_dir(None, Path.cwd()) or Path(DEFAULT_RUNS_DIR).resolve()


def point_to(run_dir: Path, report: Path) -> None:
    """The run's folder names the JSON report written elsewhere (`--grounding-json PATH`), so the
    default board finds it (issue 61): one line, the report's absolute path."""
    from ..store.reports import write_atomic

    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(run_dir / POINTER, str(Path(report).resolve()) + "\n")


def pointed(pointer: Path) -> Path | None:
    """The report a run folder's pointer names (None: an unreadable or empty pointer)."""
    from ..core import safefile

    try:
        text = safefile.read_text(pointer, limit=4096).strip()
    except (OSError, ValueError):
        return None
    return Path(text) if text and "\n" not in text and "\x00" not in text else None
