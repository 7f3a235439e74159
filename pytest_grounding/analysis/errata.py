"""Errata: reviewed corrections of a dataset's labels, and the corrected figure beside the official one (pure).

An errata file is JSONL, one correction per line: `{"id", "action": "fix"|"drop", "bbox"?, "instruction"?,
"reason", "dataset"?, "fingerprint"?}` (`review --audit` writes it). An entry names the dataset it corrects
(its name, its fingerprint, or both; the fingerprint decides where both are named, as a run may rename a
dataset): it corrects that dataset's sample of that id only. An entry naming
neither applies to a one-dataset run only; a run or a report of several datasets refuses it. One entry per
(dataset, id): a second is refused, never a silent replacement. A box must be finite, inside the image
where the sample's size is known (checked against the records).

`--grounding-errata FILE` never changes how a run is scored: the official figure is the run's own;
the corrected one is computed from the same records afterwards: a dropped sample leaves the
denominator, a fixed box judges the same click again (edges included), a fixed instruction alone
cannot be judged without asking the model again: that sample keeps its verdict and is counted as
`instruction_only`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ACTIONS = ("fix", "drop")


class ErrataError(ValueError):
    """The errata file cannot be used: the message names the line."""


@dataclass(frozen=True)
class Erratum:
    id: str
    action: str
    reason: str
    bbox: tuple[float, float, float, float] | None = None
    instruction: str | None = None
    dataset: str | None = None  # the dataset's name it corrects (None: any, in a one-dataset run only)
    fingerprint: str | None = None  # the dataset version it corrects
    line: int = field(default=0, compare=False)  # its line in the file (0: made here), for messages

    @property
    def bound(self) -> bool:
        return self.dataset is not None or self.fingerprint is not None

    def overlaps(self, other: Erratum) -> bool:
        """Whether one sample could be corrected by both entries: the same id, and scopes that meet (two
        fingerprints when equal; else two names when equal, an entry naming no dataset meeting any)."""
        if self.id != other.id:
            return False
        if self.fingerprint is not None and other.fingerprint is not None:
            return self.fingerprint == other.fingerprint
        return self.dataset is None or other.dataset is None or self.dataset == other.dataset

    @property
    def where(self) -> str:
        """`line 3: id 'a'` (or `id 'a'` for an entry made here)."""
        said = f"id {self.id[:60]!r}"
        return f"line {self.line}: {said}" if self.line else said

    def matches(self, record: Mapping[str, Any]) -> bool:
        """Whether this entry corrects `record` (its id, and its dataset where the entry names one)."""
        if str(record.get("id")) != self.id:
            return False
        if self.fingerprint is not None:  # the version decides (a run may rename a dataset: `mini-2`);
            return str(record.get("fingerprint")) == self.fingerprint  # a record naming none: not this one
        return self.dataset is None or str(record.get("dataset")) == self.dataset

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "action": self.action}
        if self.dataset is not None:
            out["dataset"] = self.dataset
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        if self.bbox is not None:
            out["bbox"] = list(self.bbox)
        if self.instruction is not None:
            out["instruction"] = self.instruction
        out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Errata:
    entries: tuple[Erratum, ...]  # one per (dataset, id): a second line for one is refused
    digest: str  # sha256 of the file's bytes: which corrections a corrected figure used
    path: str = ""

    @property
    def by_id(self) -> dict[str, Erratum]:
        return {e.id: e for e in self.entries}

    def entry_for(self, record: Mapping[str, Any]) -> Erratum | None:
        """The entry that corrects `record`, or None."""
        index = self._index()
        return next((e for e in index.get(str(record.get("id")), ()) if e.matches(record)), None)

    def _index(self) -> dict[str, list[Erratum]]:
        found = self.__dict__.get("_by_id_list")
        if found is None:
            found = {}
            for entry in self.entries:
                found.setdefault(entry.id, []).append(entry)
            object.__setattr__(self, "_by_id_list", found)
        return found

    def check_datasets(self, names: Iterable[str], source: str = "errata") -> None:
        """ErrataError when the file holds entries naming no dataset and `names` are several datasets: an id
        alone would correct every dataset's sample of that id."""
        several = sorted(set(names))
        unbound = [e.id for e in self.entries if not e.bound]
        if len(several) > 1 and unbound:
            raise ErrataError(
                f"{source}: {len(unbound)} entries name no dataset (first: id {unbound[0][:60]!r}) but the run holds "
                f"{len(several)} datasets ({', '.join(n[:40] for n in several[:5])}): an errata file for a run of "
                'several datasets names each entry\'s dataset ("dataset": NAME and/or "fingerprint": FP)'
            )


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse(data: bytes, source: str = "errata", path: str = "") -> Errata:
    from ..core import safejson

    entries: list[Erratum] = []
    by_id: dict[str, list[Erratum]] = {}
    for number, line in enumerate(data.decode("utf-8-sig", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = safejson.loads(line)  # bounded: depth and number size (a 400-digit box is refused)
        except ValueError as exc:
            raise ErrataError(f"{source} line {number}: not JSON this reader takes ({exc})") from None
        sid = _str(row, "id", source, number)
        entry = _entry(row, source, number)
        first = next((e for e in by_id.get(sid, ()) if e.overlaps(entry)), None)
        if first is not None:  # whatever scope each names: one sample, one correction
            raise ErrataError(
                f"{source} line {number}: a second entry for id {sid[:60]!r} (first: line {first.line}) that may "
                "correct the same sample: one correction per sample (two datasets' samples of one id: name each "
                "entry's dataset or fingerprint)"
            )
        by_id.setdefault(sid, []).append(entry)
        entries.append(entry)
    return Errata(tuple(entries), digest(data), path)


def _str(row: Any, key: str, source: str, number: int) -> str:
    value = row.get(key) if isinstance(row, dict) else None
    if not isinstance(value, str) or not value:
        raise ErrataError(f"{source} line {number}: {key!r} must be a non-empty string")
    return value


def _entry(row: dict[str, Any], source: str, number: int) -> Erratum:
    action = row.get("action")
    if action not in ACTIONS:
        raise ErrataError(f"{source} line {number}: action must be one of {', '.join(ACTIONS)}, not {action!r}")
    bbox = row.get("bbox")
    box: tuple[float, float, float, float] | None = None
    if bbox is not None:
        if not (
            isinstance(bbox, list)
            and len(bbox) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in bbox)
            and min(bbox) >= 0
            and bbox[2] > bbox[0]
            and bbox[3] > bbox[1]
        ):
            raise ErrataError(
                f"{source} line {number}: bbox must be [x1, y1, x2, y2] finite px, none negative, with x2 > x1, y2 > y1"
            )
        box = (float(bbox[0]), float(bbox[1]), float(bbox[2]), float(bbox[3]))
    instruction = row.get("instruction")
    if instruction is not None and (not isinstance(instruction, str) or not instruction.strip()):
        raise ErrataError(f"{source} line {number}: instruction must be a non-empty string")
    if action == "fix" and box is None and instruction is None:
        raise ErrataError(f"{source} line {number}: a fix needs a bbox or an instruction")
    reason = row.get("reason", "")
    bound = {}
    for key in ("dataset", "fingerprint"):
        value = row.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise ErrataError(f"{source} line {number}: {key!r} must be a non-empty string")
        bound[key] = value
    reason_text = str(reason) if reason is not None else ""
    return Erratum(str(row.get("id")), action, reason_text, box, instruction, **bound, line=number)


def off_image(errata: Errata, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The fixes whose box lies outside the image of a record they correct (`image_size` [w, h]):
    `line 3: id 'a': box [..] off the W x H image`."""
    out = []
    for record in records:
        entry = errata.entry_for(record)
        size = record.get("image_size")
        if entry is None or entry.bbox is None or not isinstance(size, (list, tuple)) or len(size) != 2:
            continue
        try:
            width, height = float(size[0]), float(size[1])
        except (TypeError, ValueError):
            continue
        if entry.bbox[2] > width or entry.bbox[3] > height:
            out.append(f"{entry.where}: box {list(entry.bbox)} off the {width:g} x {height:g} image")
    return list(dict.fromkeys(out))


def dumps(entries: Sequence[Erratum]) -> str:
    return "".join(json.dumps(e.as_dict(), ensure_ascii=False) + "\n" for e in entries)


def _inside(point: Any, box: tuple[float, float, float, float]) -> bool:
    try:
        x, y = float(point[0]), float(point[1])
    except (TypeError, ValueError, IndexError):
        return False
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def corrected(records: Sequence[Mapping[str, Any]], errata: Errata) -> dict[str, dict[str, Any]]:
    """Per detector: the official accuracy (as the run scored it) and the corrected one, with counts.

    Only grounding records of original samples count; errors stay out of both denominators, as
    the official accuracy keeps them out of its own."""
    by_detector: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.get("task", "grounding") != "grounding" or record.get("variant") is not None:
            continue
        outcome = record.get("outcome")
        if outcome == "error":
            continue
        tally = by_detector.setdefault(
            str(record.get("detector")),
            {
                "n": 0,
                "hits": 0,
                "corrected_n": 0,
                "corrected_hits": 0,
                "dropped": 0,
                "refixed": 0,
                "flipped": 0,
                "instruction_only": 0,
            },
        )
        hit = outcome == "hit"
        tally["n"] += 1
        tally["hits"] += hit
        entry = errata.entry_for(record)
        if entry is not None and entry.action == "drop":
            tally["dropped"] += 1
            continue
        if entry is not None and entry.bbox is not None and not record.get("negative"):
            now = _inside(record.get("point"), entry.bbox)
            tally["refixed"] += 1
            tally["flipped"] += now != hit
            hit = now
        elif entry is not None:
            tally["instruction_only"] += 1
        tally["corrected_n"] += 1
        tally["corrected_hits"] += hit
    for tally in by_detector.values():
        tally["official"] = tally["hits"] / tally["n"] if tally["n"] else None
        tally["corrected"] = tally["corrected_hits"] / tally["corrected_n"] if tally["corrected_n"] else None
    return by_detector


def _scored(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [
        r
        for r in records
        if r.get("task", "grounding") == "grounding" and r.get("variant") is None and r.get("outcome") != "error"
    ]


def _scored_ids(records: Sequence[Mapping[str, Any]]) -> set[str]:
    """The ids of the records an erratum can correct (grounding records of original samples)."""
    return {
        str(r.get("id"))
        for r in records
        if r.get("task", "grounding") == "grounding" and r.get("variant") is None and r.get("outcome") != "error"
    }


def unmatched(errata: Errata, rows: Iterable[Mapping[str, Any] | str]) -> list[str]:
    """The errata's ids that correct none of `rows` (records, or `{id, dataset, fingerprint}` of samples; a
    bare id stands for a sample of any dataset): a typo, another dataset's or version's id, in file order."""
    hit: set[int] = set()
    for row in rows:
        entry = errata.entry_for({"id": row} if isinstance(row, str) else row)
        if entry is not None:
            hit.add(id(entry))
    return [e.id for e in errata.entries if id(e) not in hit]


def unmatched_note(
    errata: Errata, rows: Iterable[Mapping[str, Any] | str], where: str = "the run's datasets"
) -> str | None:
    """One line naming the errata ids that match no sample of `where` (None: every id matches)."""
    missing = unmatched(errata, rows)
    if not missing:
        return None
    shown = ", ".join(repr(i) for i in missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
    return (
        f"errata {errata.path or 'file'}: {len(missing)} of {len(errata.entries)} entries match no sample of "
        f"{where} and were not applied: {shown}"
    )


def settings_entry(errata: Errata | None) -> dict[str, Any]:
    """The run record's `errata` setting: which file and its digest (the corrected figure depends on it);
    nothing without errata."""
    return {} if errata is None else {"errata": {"file": errata.path, "digest": errata.digest}}


def block(records: Sequence[Mapping[str, Any]], errata: Errata) -> dict[str, Any]:
    """The report's `errata` block: which file, its digest, how many of its entries applied to a record of
    this run (drops, fixes; the ids that matched none), and each detector's two figures."""
    scored = _scored(records)
    hit = {id(e) for e in map(errata.entry_for, scored) if e is not None}
    applied = [e for e in errata.entries if id(e) in hit]
    return {
        "file": errata.path,
        "digest": errata.digest,
        "entries": len(errata.entries),
        "drops": sum(1 for e in applied if e.action == "drop"),
        "fixes": sum(1 for e in applied if e.action == "fix"),
        "unmatched": [e.id for e in errata.entries if id(e) not in hit],
        "detectors": corrected(records, errata),
        "corrections": [e.as_dict() for e in errata.entries],  # what merge needs to correct the shards as one
    }


def from_block(errata_block: Mapping[str, Any]) -> Errata | None:
    """The errata a report's block was made with (its `corrections`), None where the block does not
    list them (a report written before they were kept): merge applies them to the merged records."""
    rows = errata_block.get("corrections")
    if not isinstance(rows, list):
        return None
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    parsed = parse(data, "the report's errata block")
    return Errata(parsed.entries, str(errata_block.get("digest") or parsed.digest), str(errata_block.get("file") or ""))


def applied_text(errata_block: Mapping[str, Any]) -> str:
    """`sha256 0123456789ab, 4 entries: 1 drop and 1 fix applied, 2 not in this run`."""
    said = (
        f"sha256 {str(errata_block['digest'])[:12]}, {errata_block['entries']} entries: "
        f"{errata_block['drops']} drop{'' if errata_block['drops'] == 1 else 's'} and "
        f"{errata_block['fixes']} fix{'' if errata_block['fixes'] == 1 else 'es'} applied"
    )
    missing = errata_block.get("unmatched")  # absent from a report written before it was kept
    if isinstance(missing, list) and missing:
        said += f", {len(missing)} not in this run"
    return said


def summary_lines(errata_block: Mapping[str, Any]) -> list[str]:
    """The terminal's lines: official and corrected accuracy side by side, per detector."""
    lines = [f"errata {errata_block['file']} ({applied_text(errata_block)}): official vs corrected accuracy"]
    for name, t in errata_block["detectors"].items():
        official = "-" if t["official"] is None else f"{t['official'] * 100:.1f}%"
        fixed = "-" if t["corrected"] is None else f"{t['corrected'] * 100:.1f}%"
        lines.append(
            f"  {name}: official {official} ({t['hits']}/{t['n']}), corrected {fixed} "
            f"({t['corrected_hits']}/{t['corrected_n']}; {t['dropped']} dropped, {t['refixed']} boxes fixed, "
            f"{t['flipped']} verdicts changed, {t['instruction_only']} instruction-only fixes kept as scored)"
        )
    return lines
