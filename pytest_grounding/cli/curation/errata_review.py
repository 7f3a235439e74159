"""`review --audit AUDIT.json --errata ERRATA.jsonl`: an audit's findings walked one sample at a time,
each decision written to the errata file at once (the whole file replaced atomically).

`FindingsReview` is the state (pure): the samples with findings, in the audit's rank order, the
decisions taken (keep, drop, fix with a box and/or an instruction) and the errata they make. A
sample already in the errata file or in its `.reviewed` list (the ones kept as they are) is not
asked again. The loop (`run`) reuses the curation TUI's keys, box editor and previews."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ...analysis.errata import ErrataError, Erratum, dumps, parse
from ...core import safefile, safejson

KEYS = {
    "k": "keep (the label is right)",
    "d": "drop the sample",
    "e": "fix the box",
    "i": "fix the instruction",
    "s": "skip",
    "q": "quit",
}
HELP = "  ".join(f"[{key}] {what}" for key, what in KEYS.items())


@dataclass
class FindingsReview:
    samples: list[list[Mapping[str, Any]]]  # each sample's findings, best first; samples in rank order
    errata: dict[str, Erratum] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)
    position: int = 0
    dataset: str | None = None  # the audited dataset's name and fingerprint: each erratum names them
    fingerprint: str | None = None
    others: list[Erratum] = field(default_factory=list)  # the file's entries for other datasets: written back

    @classmethod
    def start(
        cls, findings: Sequence[Mapping[str, Any]], errata: Mapping[str, Erratum] = {}, kept: Sequence[str] = ()
    ) -> FindingsReview:
        by_id: dict[str, list[Mapping[str, Any]]] = {}
        for finding in findings:
            by_id.setdefault(str(finding["id"]), []).append(finding)
        review = cls(list(by_id.values()), dict(errata), set(kept))
        review.position = review._next(0)
        return review

    def _decided(self, sid: str) -> bool:
        return sid in self.errata or sid in self.kept

    def _next(self, start: int) -> int:
        index = start
        while index < len(self.samples) and self._decided(str(self.samples[index][0]["id"])):
            index += 1
        return index

    @property
    def done(self) -> bool:
        return self.position >= len(self.samples)

    @property
    def current(self) -> list[Mapping[str, Any]]:
        return self.samples[self.position]

    @property
    def sample_id(self) -> str:
        return str(self.current[0]["id"])

    def said(self) -> str:
        """What the audit said of the current sample (shown when a reason is asked, never written as one)."""
        return "; ".join(f"{f['kind']}: {f['message']}" for f in self.current)

    def reason_so_far(self) -> str:
        """The reason a fix of this sample was given already (a box, then an instruction: asked once)."""
        before = self.errata.get(self.sample_id)
        return before.reason if before is not None else ""

    def keep(self) -> None:
        self.kept.add(self.sample_id)
        self.position = self._next(self.position + 1)

    def drop(self, reason: str) -> None:
        """Drop the sample, for the reviewer's `reason` (issue 61: a person's reason, not the finding)."""
        self.errata[self.sample_id] = Erratum(
            self.sample_id, "drop", reason, dataset=self.dataset, fingerprint=self.fingerprint
        )
        self.position = self._next(self.position + 1)

    def fix(
        self,
        bbox: tuple[float, float, float, float] | None = None,
        instruction: str | None = None,
        reason: str | None = None,
    ) -> None:
        before = self.errata.get(self.sample_id)
        reason = reason if reason else (before.reason if before is not None else "")
        if before is not None and before.action == "fix":  # a box and then an instruction: one erratum
            bbox = bbox if bbox is not None else before.bbox
            instruction = instruction if instruction is not None else before.instruction
        box = tuple(round(v, 1) for v in bbox) if bbox is not None else None
        self.errata[self.sample_id] = Erratum(
            self.sample_id,
            "fix",
            reason,
            box,  # type: ignore[arg-type]
            instruction,
            self.dataset,
            self.fingerprint,
        )

    def next(self) -> None:
        """Past the current sample after its fixes (it stays decided)."""
        self.position = self._next(self.position + 1)

    def skip(self) -> None:
        self.position += 1
        self.position = self._next(self.position)

    def text(self) -> str:
        return dumps([*self.others, *self.errata.values()])


def reviewed_path(errata: Path) -> Path:
    return errata.with_name(errata.name + ".reviewed")


def load_state(
    errata: Path, dataset: str | None = None, fingerprint: str | None = None
) -> tuple[dict[str, Erratum], list[str], list[Erratum]]:
    """The errata file's entries for the audited dataset (by id), the ids kept as they are, and the file's
    entries for other datasets or versions (written back untouched: one file may serve several datasets)."""
    entries = parse(safefile.read_bytes(errata), str(errata)).entries if errata.exists() else ()
    own: dict[str, Erratum] = {}
    others: list[Erratum] = []
    for entry in entries:
        if entry.matches({"id": entry.id, "dataset": dataset, "fingerprint": fingerprint}):
            own[entry.id] = entry  # parse refused two entries that may correct one sample
        else:
            others.append(entry)
    side = reviewed_path(errata)
    kept = safejson.read_path(side) if side.exists() else []  # regular files only, bounded
    return own, [str(k) for k in kept] if isinstance(kept, list) else [], others


def save_state(review: FindingsReview, errata: Path) -> None:
    from ...store.reports import write_atomic

    write_atomic(errata, review.text().encode("utf-8"))
    write_atomic(reviewed_path(errata), json.dumps(sorted(review.kept)).encode("utf-8"))


def finding_problem(finding: Mapping[str, Any]) -> str | None:
    """What in a finding is not what `audit` writes (None: it is): ids and texts are strings, the box four
    finite numbers, the score a finite number."""
    for key in ("id", "instruction"):
        if not isinstance(finding.get(key), str):
            return f"{key} is not a string"
    for key in ("kind", "message"):
        if key in finding and not isinstance(finding[key], str):
            return f"{key} is not a string"
    box = finding.get("bbox")
    if not (
        isinstance(box, list)
        and len(box) == 4
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in box)
    ):
        return "bbox is not four finite numbers"
    score = finding.get("score", 0.0)
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return "score is not a finite number"
    return None


@dataclass(frozen=True)
class Screens:
    """The audited dataset's screens by sample id, from the dataset itself (loaded from the audit's format and
    path, its fingerprint the audit's), never from a path a finding names; `reason` why none are shown."""

    root: Path | None
    by_id: Mapping[str, Path]
    reason: str = ""


def audit_screens(path: Path) -> Screens:
    from .loading import AuditError, load

    try:
        dataset = safejson.read_path(path).get("dataset") or {}
    except (OSError, ValueError, AttributeError):
        return Screens(None, {}, "the audit cannot be read again")
    fmt, where, fingerprint = (
        dataset.get(k) if isinstance(dataset, dict) else None for k in ("format", "path", "fingerprint")
    )
    if not all(isinstance(v, str) and v for v in (fmt, where, fingerprint)):
        return Screens(None, {}, "the audit names no dataset format, path and fingerprint: screens not read")
    if not Path(str(where)).is_absolute() or not Path(str(where)).exists():  # never a hub download or the cwd
        return Screens(None, {}, "the audit's dataset path is no folder or file on this machine: screens not read")
    try:
        loaded = load(f"{fmt}:{where}")
    except (AuditError, OSError, ValueError) as exc:
        return Screens(None, {}, f"the audited dataset cannot be loaded ({exc}): screens not read")
    if loaded.fingerprint != fingerprint:
        return Screens(None, {}, "the dataset at the audit's path is not the version audited: screens not read")
    root = Path(loaded.path)
    root = root if root.is_dir() else root.parent
    return Screens(root, {s.id: Path(s.image) for s in loaded.samples})


def screen_path(finding: Mapping[str, Any], dataset_root: Path) -> Path | None:
    """The finding's screen, only when it lies inside the audited dataset's folder."""
    path = Path(str(finding.get("image", ""))).resolve()
    root = dataset_root.resolve()
    return path if root == path or root in path.parents else None


WRITTEN_BY = "the JSON that `python -m pytest_grounding audit --dataset DATASET --json OUT` writes"


def read_audit(path: Path) -> tuple[list[dict[str, Any]], Path]:
    """An audit's findings and its dataset's folder; any other file is a ValueError saying what it is
    and what review --audit takes."""
    try:
        document = safejson.read_path(path)  # a regular file, bounded
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON ({exc}): review --audit takes {WRITTEN_BY}") from None
    if not isinstance(document, dict):
        what = f"not an audit (a JSON {type(document).__name__})"
        raise ValueError(f"{path} is {what}: review --audit takes {WRITTEN_BY}")
    if document.get("kind") not in (None, "audit") or not isinstance(document.get("findings"), list):
        if document.get("kind") == "audit-diff":
            what = "an `audit --diff` of two dataset versions"
        elif "samples" in document and "summary" in document:
            what = "a run's report (--grounding-json; it goes to `audit --runs` for the consensus kind)"
        else:
            what = "not an audit (no kind 'audit' with a findings list)"
        raise ValueError(f"{path} is {what}: review --audit takes {WRITTEN_BY}")
    findings = document["findings"]
    needed = ("id", "instruction", "bbox")  # what a decision is made on
    for number, finding in enumerate(findings, 1):
        missing = [k for k in needed if not isinstance(finding, dict) or finding.get(k) is None]
        if missing:
            raise ValueError(f"{path}: finding {number} has no {', '.join(missing)}: review --audit takes {WRITTEN_BY}")
        wrong = finding_problem(finding)
        if wrong:
            raise ValueError(f"{path}: finding {number}: {wrong}: review --audit takes {WRITTEN_BY}")
    dataset = document.get("dataset")
    if not isinstance(dataset, dict) or not isinstance(dataset.get("path"), str):
        raise ValueError(f"{path}: the audit names no dataset path (its screens are read there)")
    return findings, Path(dataset["path"])


def audit_dataset(path: Path) -> tuple[str | None, str | None]:
    """The audited dataset's name and fingerprint (read_audit has checked the file)."""
    try:
        dataset = safejson.read_path(path).get("dataset") or {}
    except (OSError, ValueError, AttributeError):
        return None, None
    name, fingerprint = dataset.get("name"), dataset.get("fingerprint")
    return (
        name if isinstance(name, str) and name else None,
        fingerprint if isinstance(fingerprint, str) and fingerprint else None,
    )


def run(audit_path: Path, errata_path: Path, mode: str = "auto", out: TextIO | None = None) -> int:
    from ...core.safetext import terminal_line
    from .tui import ask_key, ask_text

    out = out or sys.stdout
    try:
        findings, _named_root = read_audit(audit_path)
        dataset, fingerprint = audit_dataset(audit_path)
        errata, kept, others = load_state(errata_path, dataset, fingerprint)
    except (OSError, ValueError, ErrataError) as exc:
        print(f"error: {terminal_line(f'review --audit: {exc}')}", file=sys.stderr)
        return 2
    review = FindingsReview.start(findings, errata, kept)
    review.dataset, review.fingerprint, review.others = dataset, fingerprint, others
    if review.done:
        said = f"{audit_path}: nothing left to review ({len(review.errata)} errata in {errata_path})"
        print(terminal_line(said), file=out)
        return 0
    if not sys.stdin.isatty():
        print("error: review reads keys from a terminal; standard input is not one", file=sys.stderr)
        return 2
    import os

    from . import preview

    attributes = preview.query_device_attributes() if mode == "auto" else None
    mode = preview.choose_mode(mode, os.environ, attributes)
    screens = audit_screens(audit_path)  # the dataset's own screens, never a folder the audit file names
    while not review.done:
        show(review, screens, errata_path, mode, out)
        key = ask_key(f"{HELP}\n> ", set(KEYS))
        if key == "q":
            break
        if key == "k":
            review.keep()
        elif key == "d":
            reason = ask_reason(review, "drop", out)
            if not reason:
                continue
            review.drop(reason)
        elif key == "s":
            review.skip()
            continue
        elif key == "e":
            box = edit_box(review, screens)
            reason = ask_reason(review, "fix", out) if box is not None else ""
            if not reason:
                continue
            review.fix(bbox=box, reason=reason)
        elif key == "i":
            text = ask_text("instruction: ", str(review.current[0]["instruction"]))
            reason = ask_reason(review, "fix", out) if text else ""
            if not reason:
                continue
            review.fix(instruction=text, reason=reason)
        save_state(review, errata_path)
        print(terminal_line(f"saved {errata_path.name}: {KEYS[key]}"), file=out)
        if key in ("e", "i") and ask_key("[n] next sample  [e/i] fix more\n> ", {"n", "e", "i"}) == "n":
            review.next()
    save_state(review, errata_path)
    print(terminal_line(f"{errata_path}: {len(review.errata)} errata, {len(review.kept)} kept as they are"), file=out)
    return 0


def ask_reason(review: FindingsReview, action: str, out: TextIO) -> str:
    """The reviewer's reason for a drop or a fix (the errata file's `reason`; a fix asks once per
    sample). The audit's words are shown, not written: an empty answer takes nothing (issue 61)."""
    from ...core.safetext import terminal_line
    from .tui import ask_text

    if action == "fix" and review.reason_so_far():
        return review.reason_so_far()
    print(terminal_line(f"the audit said: {review.said()}"), file=out)
    reason = ask_text(f"why {action} it? (your reason, written to the errata; empty: not saved) ", "")
    if not reason:
        print(f"not saved: a {action} needs a reason", file=out)
    return reason


def _image(review: FindingsReview, screens: Screens) -> Any:
    from PIL import Image

    if screens.root is None:
        return screens.reason
    image = screens.by_id.get(str(review.current[0]["id"]))
    path = screen_path({"image": str(image)}, screens.root) if image is not None else None
    if path is None:
        return "the screen lies outside the audited dataset's folder (or the sample is none of it): not read"
    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (OSError, ValueError) as exc:
        return f"cannot read {path.name}: {type(exc).__name__}"


def show(review: FindingsReview, screens: Screens, errata_path: Path, mode: str, out: TextIO) -> None:
    from ...core.safetext import terminal_line
    from . import preview

    first = review.current[0]
    print("", file=out)
    where = f"[{review.position + 1}/{len(review.samples)}]"
    print(terminal_line(f"{where} {first['id']}: {first['instruction']!r}"), file=out)
    print(terminal_line(f"box: {first['bbox']}"), file=out)
    for finding in review.current:
        score = finding.get("score")
        shown = f"{score:.2f}" if isinstance(score, (int, float)) and not isinstance(score, bool) else "-"
        print(terminal_line(f"  {finding.get('kind')} ({shown}): {finding.get('message')}"), file=out)
        if finding.get("clicks"):
            print(terminal_line(f"    clicks: {finding['clicks']}"), file=out)
    screen = _image(review, screens)
    if isinstance(screen, str):
        print(f"image: {terminal_line(screen)}", file=out)
        return
    image = preview.render(screen, tuple(first["bbox"]), str(first["instruction"]))
    if mode == preview.KITTY:
        out.write(preview.kitty_sequence(preview.png_bytes(preview.fit(image))) + "\n")
    elif mode == preview.SIXEL:
        out.write(preview.sixel_sequence(preview.fit(image)) + "\n")
    else:
        from .tui import write_preview

        print(terminal_line(f"preview: {write_preview(image, errata_path)}"), file=out)
    out.flush()


def edit_box(review: FindingsReview, screens: Screens) -> tuple[float, float, float, float] | None:
    from .boxedit import BoxEdit, clamp_box
    from .tui import run_box_editor

    screen = _image(review, screens)
    if isinstance(screen, str):
        return None
    width, height = screen.size
    return run_box_editor(BoxEdit(clamp_box(tuple(review.current[0]["bbox"]), width, height), width, height))
