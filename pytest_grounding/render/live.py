"""--grounding-html (or the run's folder's page) while the run goes (issue 49): the page is written
when the run starts (before the detectors load), again when the items are counted, and rewritten
every few seconds as records arrive (atomically: a reader never sees half a page), showing that
the run is running, the samples done of the total, hits, misses, wrong formats and errors so far,
the accuracy so far, the rate and the time left; the run's end replaces it with the final report
page. Beside it, `PAGE.running.json` says the same for `board DIR`, and is removed when the final
page is written.

The cost is bounded by the interval: one small page per `EVERY_S` seconds whatever the rate
(benchmarks/bench_live.py measures it against a run without)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from ..core import safefile, safejson
from ..core.numbers import pct
from ..core.paths import shown_text
from ..store.reports import write_atomic

EVERY_S = 3.0  # seconds between two writes
MARKER = "grounding-running"  # the running page's <body> carries data-state="running"
SUFFIX = ".running.json"


def sidecar(page: Path) -> Path:
    return page.with_name(page.name + SUFFIX)


def is_sidecar(path: Path) -> bool:
    return path.name.endswith(SUFFIX)


@dataclass
class LivePage:
    """The running page's state; `update` writes at most once per `every` seconds."""

    path: Path
    total: int = 0
    started: float = field(default_factory=time.time)
    every: float = EVERY_S
    counts: dict[str, int] = field(default_factory=dict)
    last: float = 0.0
    writes: int = 0
    failed: str | None = None  # the first write that failed: no further tries
    made: Path | None = None  # the topmost folder the page's writing made (the run's folder): removed if left empty
    kept: Path | None = None  # the page that was at `path` before the run: put back if the run writes none

    def start(self, total: int, args: Any = ()) -> None:
        """Written now: with total 0 when the run starts (the detectors not loaded, the items not
        counted yet), again with the items' count before the first sample."""
        self.total = total
        self.args = [str(a) for a in args]
        if self.writes == 0 and self.kept is None:
            self.keep_previous()
        self.write()

    def keep_previous(self) -> None:
        """A finished page already at `path` (an earlier run's) is moved aside, not overwritten: a run
        that ends before its own page is written (a usage error, nothing selected) puts it back."""
        aside = self.path.with_name(f".{self.path.name}.before-run")
        with contextlib.suppress(OSError):
            if self.path.is_file() and not self.path.is_symlink() and not _is_running(self.path):
                os.replace(self.path, aside)
                self.kept = aside

    def add(self, record: Mapping[str, Any]) -> None:
        outcome = str(record.get("outcome"))
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        if time.monotonic() - self.last >= self.every:
            self.write()

    def state(self) -> dict[str, Any]:
        done = sum(self.counts.values())
        elapsed = max(1e-9, time.time() - self.started)
        rate = done / elapsed
        scored = done - self.counts.get("error", 0)
        left = max(0, self.total - done)
        return {
            "state": "running",
            "page": self.path.name,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "elapsed_s": round(elapsed, 1),
            "total": self.total,
            "done": done,
            "counts": dict(sorted(self.counts.items())),
            "accuracy": (self.counts.get("hit", 0) / scored) if scored else None,
            "samples_per_s": round(rate, 3),
            "eta_s": round(left / rate, 1) if rate > 0 else None,
            "args": getattr(self, "args", []),
        }

    def write(self) -> None:
        if self.failed is not None:
            return
        self.last = time.monotonic()
        found = self.state()
        try:
            write_atomic(self.path, shown_text(page(found)))  # a shared page: no absolute home path
            write_atomic(sidecar(self.path), json.dumps(found, indent=1) + "\n")
            self.writes += 1
        except OSError as exc:  # the final page's writer says so at the end; the run goes on
            self.failed = str(exc)

    def finish(self) -> None:
        """The final page has replaced the running one, or could not: then the running page goes
        too (the summary says the page was not written; a page left saying "running" would lie).
        The sidecar goes in both cases."""
        with contextlib.suppress(OSError):
            sidecar(self.path).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            if _is_running(self.path):
                self.path.unlink()
        if self.kept is not None:
            with contextlib.suppress(OSError):
                if self.path.exists():  # this run's own page replaced it
                    self.kept.unlink()
                else:  # this run wrote no page: the earlier one is back where it was
                    os.replace(self.kept, self.path)
        folder = self.path.parent
        while self.made is not None and folder.is_relative_to(self.made):  # made for the running page alone
            try:
                folder.rmdir()  # only when nothing else came into it
            except OSError:
                break
            folder = folder.parent


def _is_running(path: Path) -> bool:
    """The file at `path` is a running page (its first bytes carry the marker). Opened without
    blocking and read only if it is a regular file: a FIFO given as the page never hangs the run."""
    import stat

    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(descriptor).st_mode) and f'class="{MARKER}"'.encode() in os.read(descriptor, 4096)
    except OSError:
        return False
    finally:
        os.close(descriptor)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h {rest // 60:02d}m" if hours else f"{rest // 60}m {rest % 60:02d}s"


def page(state: Mapping[str, Any]) -> str:
    """A small self-contained page that reloads itself every few seconds."""
    counts = state.get("counts") or {}
    done, total = int(state.get("done") or 0), int(state.get("total") or 0)
    share = done / total if total else 0.0
    rows = "".join(f"<tr><th>{escape(str(k))}</th><td>{v}</td></tr>" for k, v in counts.items())
    progress = (
        f"<b>{done}</b> of <b>{total}</b> samples ({share * 100:.1f}%) · "
        f"accuracy so far {pct(state.get('accuracy'))} · {state.get('samples_per_s')} samples/s · "
        f"time left {_duration(state.get('eta_s'))} · running for {_duration(state.get('elapsed_s'))}"
    )
    if not total and not done:  # the run has started; its items are not counted yet
        progress = (
            "starting: loading the datasets and the detectors (a served model's start, the frame check) "
            f"· running for {_duration(state.get('elapsed_s'))}"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="{int(EVERY_S) + 2}"><title>running: pytest-grounding</title>'
        "<style>body{font:14px system-ui,sans-serif;margin:24px;color:#1f2933}"
        ".bar{background:#e3e6ea;height:12px;border-radius:6px;max-width:480px}"
        ".bar i{display:block;height:12px;border-radius:6px;background:#3b6fd8}"
        "td,th{padding:2px 10px;text-align:left}</style></head>"
        f'<body data-state="running" class="{MARKER}"><h1>Running</h1>'
        f'<p id="progress">{progress}</p>'
        f'<div class="bar"><i style="width:{share * 100:.1f}%"></i></div>'
        f"<table>{rows}</table>"
        f"<p>Updated {escape(str(state.get('updated')))}; this page reloads itself and is replaced by the report "
        "when the run ends.</p></body></html>\n"
    )


SIDECAR_LIMIT = 100_000  # bytes: a sidecar is a few hundred


def running_state(path: Path) -> dict[str, Any]:
    """A sidecar read back (`board DIR`); a ValueError saying why a file of that name is not one (unreadable,
    too large, not JSON, nested too deep, not a running state), so that the board names it and goes on."""
    try:
        text = safefile.read_text(path, limit=SIDECAR_LIMIT)  # a regular file; a sidecar is small
        found = safejson.loads(text, numbers_beyond="null")  # bounded depth and numbers; NaN reads as null
    except OSError as exc:
        raise ValueError(f"not a running page's sidecar: cannot be read ({exc.strerror or exc})") from None
    except safefile.FileTooLarge:
        raise ValueError(f"not a running page's sidecar: more than {SIDECAR_LIMIT:,} bytes") from None
    except UnicodeDecodeError:
        raise ValueError("not a running page's sidecar: not UTF-8 text") from None
    except ValueError as exc:
        raise ValueError(f"not a running page's sidecar: not JSON it reads ({str(exc)[:120]})") from None
    if not isinstance(found, dict) or found.get("state") != "running":
        raise ValueError('not a running page\'s sidecar: no JSON object with "state": "running"')
    return found


def read_running(path: Path) -> dict[str, Any] | None:
    """A sidecar read back (`board DIR`); None when it is not one."""
    try:
        return running_state(path)
    except ValueError:
        return None
