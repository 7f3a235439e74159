"""Shard reports (--grounding-shard K/N, --grounding-json) put back together: one report whose
figures are computed by `document` from all the shards' records, as one run of the whole set
would compute them. Pure apart from reading nothing: documents in, a document and notes out.

Refused (MergeError naming the difference): reports of other datasets (fingerprint), other
detectors, settings that change scores, another scoring version, shares that overlap. A missing
shard makes the result partial and names it; the same report twice counts once; a shard run again
(or resumed) replaces its earlier report: the latest wins.

A report is untrusted input: nothing it states is counted before its records are checked against
its own claims (`validated`): each record of a dataset, fingerprint and detector the report ran, its
uid inside the share the shard claims, no sample twice; its outcome re-scored from its answer and
its target (the caller's `rescore`, evaluate.resume's, as --grounding-resume does). A shard count
is at most MAX_SHARDS and the samples, so the work is bounded whatever a report claims."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..core.identity import Identity, identity_of
from ..core.misses import classified
from ..core.profiles import profile_of
from ..core.record import MAX_EPOCHS, MAX_SHARDS
from ..core.types import EPOCH_SUFFIX
from ..core.variants import SEPARATOR, base_uid
from ..store.reportcheck import record_key
from . import cost as cost_mod
from . import document as document_mod
from . import errata as errata_mod
from . import gates as gates_mod
from . import reproduce, robustness

# Settings that change outcomes: two reports that differ here are not shares of one run.
SCORING_SETTINGS = ("task", "iou_threshold", "refusal_rows", "language", "limit", "timeout_s", "scoring", "epochs")


class MergeError(ValueError):
    """Reports that cannot be merged; the message names the reports and the difference."""


# A record read back re-scored: (the record as this version scores it, or None: not one the plugin
# writes; a note when its stored outcome differs). evaluate.resume.rescore_record, given by the CLI.
Rescore = Callable[[Mapping[str, Any], str], tuple[Mapping[str, Any] | None, str | None]]
SHOWN_NOTES = 3  # re-scored records named in the notes; the rest are counted


@dataclass(frozen=True)
class Part:
    """One report given to merge: where it came from and the shard it holds."""

    name: str  # the path as given
    position: int  # on the command line
    document: Mapping[str, Any]

    @property
    def shard(self) -> Mapping[str, Any] | None:
        return self.document.get("shard")

    @property
    def index(self) -> int:
        return int(self.shard["index"]) if self.shard else 1

    @property
    def count(self) -> int:
        return int(self.shard["count"]) if self.shard else 1

    @property
    def settings(self) -> Mapping[str, Any]:
        settings: Mapping[str, Any] = self.document.get("run", {}).get("settings", {})
        return settings

    @property
    def started(self) -> float:
        """The instant the run started (the report's local time and its UTC offset)."""
        text = str(self.document.get("started", ""))
        try:
            return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z").timestamp()
        except ValueError:
            return 0.0

    @property
    def detectors(self) -> list[str]:
        if self.shard and "detectors" in self.shard:
            return sorted(self.shard["detectors"])
        return sorted({r["detector"] for r in self.document.get("samples", [])})

    def datasets(self) -> dict[str, dict[str, Any]]:
        """name -> fingerprint, samples in the whole set, uids this report was to score."""
        if self.shard:
            return {
                d["name"]: {"fingerprint": d.get("fingerprint"), "samples": d["samples"], "uids": list(d["uids"])}
                for d in self.shard.get("datasets", [])
            }
        found: dict[str, dict[str, Any]] = {}
        for entry in self.document.get("run", {}).get("datasets", []):
            total = min(entry["samples"], entry.get("limit") or entry["samples"])
            found[entry["name"]] = {"fingerprint": entry.get("fingerprint"), "samples": total, "uids": []}
        for record in self.document.get("samples", []):
            if record["dataset"] in found:
                found[record["dataset"]]["uids"].append(base_uid(record))
        for entry in found.values():
            entry["uids"] = list(dict.fromkeys(entry["uids"]))
        return found


@dataclass(frozen=True)
class Selection:
    kept: tuple[Part, ...]
    count: int
    missing: tuple[int, ...]  # shard indices with no report
    missing_samples: tuple[dict[str, Any], ...]  # per dataset: {dataset, samples, missing}
    notes: tuple[str, ...]


def check_split(part: Part) -> None:
    """The shard's K/N: integers, 1 <= K <= N <= MAX_SHARDS, N no more than the samples it splits."""
    shard = part.shard
    if shard is None:
        return
    index, count = shard.get("index"), shard.get("count")
    if not (type(index) is int and type(count) is int and 1 <= index <= count <= MAX_SHARDS):
        raise MergeError(
            f"{part.name}: shard {str(index)[:20]}/{str(count)[:20]} is not K/N with 1 <= K <= N <= {MAX_SHARDS:,}"
        )
    samples = sum(int(entry["samples"]) for entry in part.datasets().values())
    if count > max(1, samples):
        raise MergeError(f"{part.name}: {count:,} shards of {samples:,} samples: a run never splits into more")


def validated(part: Part, rescore: Rescore) -> tuple[Part, tuple[str, ...]]:
    """The part with records this version would have written, and notes on what re-scoring changed;
    a MergeError for a record the report's own claims do not hold (see the module's doc)."""
    check_split(part)
    claimed = part.datasets()
    listed = {str(entry.get("name")): entry.get("fingerprint") for entry in part.document["run"].get("datasets", [])}
    for name, entry in claimed.items():
        if name in listed and listed[name] != entry["fingerprint"]:
            raise MergeError(
                f"{part.name}: dataset {name} has fingerprint {entry['fingerprint']} in its shard block, "
                f"{listed[name]} in run.datasets: the report does not hold together"
            )
        if len(set(entry["uids"])) != len(entry["uids"]) or len(entry["uids"]) > int(entry["samples"]):
            raise MergeError(f"{part.name}: the share of dataset {name} lists a uid twice or more uids than samples")
    shares = {name: set(entry["uids"]) for name, entry in claimed.items()}
    detectors = set(part.detectors)
    seen: set[tuple[str, str, str, str]] = set()
    kept: list[Mapping[str, Any]] = []
    changed: list[str] = []
    for position, record in enumerate(part.document.get("samples", [])):
        dataset, uid, detector = (str(record.get(key)) for key in ("dataset", "uid", "detector"))
        where = f"{part.name}: record {position + 1} ({dataset} {uid}, {detector})"
        why = None
        if dataset not in claimed:
            why = f"dataset {dataset} is none the report ran ({', '.join(sorted(claimed)) or 'none'})"
        elif "fingerprint" in record and record["fingerprint"] != claimed[dataset]["fingerprint"]:
            why = f"fingerprint {record['fingerprint']} is not the report's {claimed[dataset]['fingerprint']}"
        elif detector not in detectors:
            why = f"detector {detector} is none the report ran ({', '.join(sorted(detectors)) or 'none'})"
        elif str(record.get("task", "grounding")) != str(part.settings.get("task") or "grounding"):
            why = f"task {str(record.get('task'))[:40]} is not the report's ({part.settings.get('task')})"
        elif part.shard is not None and base_uid(record) not in shares[dataset]:
            why = f"sample {uid} is outside the share shard {part.index}/{part.count} claims"
        key = record_key(record)  # the key every reader of a report checks (store/reportcheck.py)
        if why is None and key in seen:
            why = "the same sample and detector a second time"
        if why is not None:
            raise MergeError(f"{where}: {why}: the report does not hold together (a record copied or edited)")
        seen.add(key)
        record_rescored, note = rescore(record, where)
        if record_rescored is None:
            raise MergeError(f"{note}: not a record this plugin writes")
        if note:
            changed.append(note)
        kept.append(record_rescored)
    notes: tuple[str, ...] = ()
    if changed:
        more = f"; and {len(changed) - SHOWN_NOTES} more" if len(changed) > SHOWN_NOTES else ""
        notes = (f"{len(changed)} records re-scored: {'; '.join(changed[:SHOWN_NOTES])}{more}",)
    return replace(part, document={**part.document, "samples": kept}), notes


def ranges(numbers: Sequence[int]) -> str:
    """1, 3-7, 9: a sorted list of shard numbers, short however many there are."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def identities(part: Part) -> dict[str, Identity]:
    """Each detector spec of a report with its identity (core/identity.py), from run.detectors."""
    infos = part.document.get("run", {}).get("detectors", {})
    scoring = profile_of(part.document)
    return {
        spec: identity_of(spec, infos.get(spec) if isinstance(infos.get(spec), Mapping) else {}, scoring)
        for spec in part.detectors
    }


def unified(parts: Sequence[Part]) -> list[Part]:
    """Shards that reached one model through other endpoints or with another concurrency: each
    later report's detector renamed to the first report's spec of the same identity (records,
    run.detectors, the shard block), its own spec kept as `spec_as_run` in its description, so
    that the merge has one detector and each shard's endpoints stay on record."""
    if not parts:
        return []
    first = {found: spec for spec, found in identities(parts[0]).items()}
    out = [parts[0]]
    for part in parts[1:]:
        renames = {spec: first[found] for spec, found in identities(part).items() if first.get(found, spec) != spec}
        out.append(_renamed(part, renames) if renames else part)
    return out


def _renamed(part: Part, renames: Mapping[str, str]) -> Part:
    document = dict(part.document)
    document["samples"] = [
        {**r, "detector": renames.get(str(r.get("detector")), r.get("detector"))} if isinstance(r, Mapping) else r
        for r in document.get("samples", [])
    ]
    run = dict(document.get("run", {}))
    run["detectors"] = {
        renames.get(spec, spec): (
            {**info, "spec_as_run": spec} if spec in renames and isinstance(info, Mapping) else info
        )
        for spec, info in run.get("detectors", {}).items()
    }
    document["run"] = run
    if isinstance(document.get("shard"), Mapping) and "detectors" in document["shard"]:
        shard = document["shard"]
        document["shard"] = {**shard, "detectors": [renames.get(d, d) for d in shard["detectors"]]}
    if isinstance(document.get("summary"), Mapping):
        document["summary"] = {renames.get(k, k): v for k, v in document["summary"].items()}
    return replace(part, document=document)


def _identity_note(part: Part, first: Part) -> str:
    """What sets the detectors apart, where a detector of `part` is one of `first` in another form."""
    mine, theirs = identities(part), identities(first)
    said = []
    for spec, found in mine.items():
        if spec in theirs:
            continue
        near = next((o for o in theirs.values() if o.detector == found.detector), None)
        if near is not None:
            said.append(f"{spec}: {'; '.join(found.differences(near))}")
    return f" ({', '.join(said)})" if said else ""


def check(parts: Sequence[Part]) -> None:
    """Every report against the first: a MergeError for the first difference that changes scores."""
    first = parts[0]
    for part in parts[1:]:
        pair = f"{part.name} and {first.name}"
        if _scoring_version(part) != _scoring_version(first):
            raise MergeError(
                f"{pair} were scored by different plugin versions (scoring version {_scoring_version(part)}, "
                f"pytest-grounding {_version(part)}; against {_scoring_version(first)}, {_version(first)}): "
                "run every shard with one version"
            )
        if part.count != first.count:
            raise MergeError(f"{pair} are shares of different splits: {part.count} shards against {first.count}")
        for key in SCORING_SETTINGS:
            if part.settings.get(key) != first.settings.get(key):
                raise MergeError(
                    f"{pair} differ in a setting that changes scores: {key} is {part.settings.get(key)!r} in "
                    f"{part.name}, {first.settings.get(key)!r} in {first.name}"
                )
        if part.detectors != first.detectors:
            raise MergeError(
                f"{pair} ran different detectors: {', '.join(part.detectors) or 'none'} against "
                f"{', '.join(first.detectors) or 'none'}{_identity_note(part, first)}"
            )
        mine, theirs = part.datasets(), first.datasets()
        if set(mine) != set(theirs):
            raise MergeError(
                f"{pair} are of different datasets: {', '.join(sorted(mine))} against {', '.join(sorted(theirs))}"
            )
        for name in sorted(mine):
            if mine[name]["fingerprint"] != theirs[name]["fingerprint"]:
                raise MergeError(
                    f"{pair} are of different versions of dataset {name}: fingerprint {mine[name]['fingerprint']} "
                    f"in {part.name}, {theirs[name]['fingerprint']} in {first.name}"
                )
            if mine[name]["samples"] != theirs[name]["samples"]:
                raise MergeError(
                    f"{pair} split different sets of dataset {name}: {mine[name]['samples']} samples in "
                    f"{part.name}, {theirs[name]['samples']} in {first.name}"
                )


def _scoring_version(part: Part) -> int:
    return int(part.document.get("scoring_version") or 1)


def _version(part: Part) -> str:
    return str(part.document.get("versions", {}).get("pytest-grounding"))


def _same_run(a: Part, b: Part) -> bool:
    keys = ("started", "duration_s", "samples")
    return all(a.document.get(k) == b.document.get(k) for k in keys)


def select(parts: Sequence[Part]) -> Selection:
    """One report per shard: a report given twice counts once; of two runs of a shard the one that
    started last wins (a tie: the later on the command line)."""
    notes: list[str] = []
    chosen: dict[int, Part] = {}
    for part in parts:
        earlier = chosen.get(part.index)
        if earlier is None:
            chosen[part.index] = part
            continue
        label = f"shard {part.index}/{part.count}"
        if _same_run(earlier, part):
            notes.append(f"{label}: {part.name} is the same report as {earlier.name}: counted once")
            continue
        newer, older = (part, earlier) if part.started >= earlier.started else (earlier, part)
        notes.append(
            f"{label}: {newer.name} (started {newer.document.get('started')}) replaces {older.name} "
            f"(started {older.document.get('started')}): the latest run of a shard wins"
        )
        chosen[part.index] = newer
    count = parts[0].count
    kept = tuple(chosen[k] for k in sorted(chosen))
    _check_disjoint(kept)
    missing = tuple(k for k in range(1, count + 1) if k not in chosen)
    missing_samples = []
    once = one_epoch_detectors(kept)
    gaps = {part.index: lacking(part, once) for part in kept}
    for name, entry in sorted(kept[0].datasets().items()):
        covered = sum(len(part.datasets()[name]["uids"]) for part in kept)
        lost = max(0, entry["samples"] - covered)
        lost += sum(len({key.split("\0")[0] for key in found.get(name, {})}) for found in gaps.values())
        if lost:
            missing_samples.append({"dataset": name, "samples": entry["samples"], "missing": lost})
    for part in kept:
        named = [f"{name} {gap}" for name, found in gaps[part.index].items() for gap in found.values()]
        if named:
            more = f"; and {len(named) - SHOWN_NOTES} more" if len(named) > SHOWN_NOTES else ""
            notes.append(
                f"partial: {part.name} (shard {part.index}/{part.count}) has no record, error or not_run entry of "
                f"{len(named)} of its samples: {'; '.join(named[:SHOWN_NOTES])}{more}"
            )
    if missing:
        lost = ", ".join(f"{d['missing']} of {d['samples']} samples of {d['dataset']}" for d in missing_samples)
        shards = f"{ranges(missing)} of {count}" if len(missing) > 1 else f"{missing[0]}/{count}"
        notes.append(f"partial: no report of shard {shards}; missing {lost or 'no samples (empty shares)'}")
    return Selection(kept, count, missing, tuple(missing_samples), tuple(notes))


def _covers(uid: str, base: str) -> bool:
    """Whether a not_run entry's uid (an epoch's or a variant's item) is of the sample `base`."""
    return uid == base or uid.startswith((f"{base}{EPOCH_SUFFIX}", f"{base}{SEPARATOR}"))


def one_epoch_detectors(parts: Sequence[Part]) -> frozenset[str]:
    """The detectors that ran one epoch of a --grounding-epochs N run: a deterministic detector runs its
    first epoch only (plugin/items.py). What each report's `run.detectors[SPEC].deterministic` says (the
    run's own answer: a sampled detector whose later epochs were all cut out still owes them); a report
    that does not say (an older one): a detector of which no shard holds a record of a later epoch."""
    detectors = {d for part in parts for d in part.detectors}
    said: dict[str, set[bool]] = {}
    for part in parts:
        for spec, info in ((part.document.get("run") or {}).get("detectors") or {}).items():
            if isinstance(info, Mapping) and isinstance(info.get("deterministic"), bool):
                said.setdefault(str(spec), set()).add(info["deterministic"])
    later = {
        str(record.get("detector"))
        for part in parts
        for record in part.document.get("samples", [])
        if isinstance(record.get("epoch"), int) and not isinstance(record.get("epoch"), bool) and record["epoch"] > 1
    }
    once = set()
    for detector in detectors:
        if detector in said:  # shards that disagree, or a later epoch's record beside: every epoch is owed
            if said[detector] == {True} and detector not in later:
                once.add(detector)
        elif detector not in later:
            once.add(detector)
    return frozenset(once)


def lacking(part: Part, once: frozenset[str] = frozenset()) -> dict[str, dict[str, str]]:
    """dataset -> the samples of the part's share that lack a record (or an error record, or a
    not_run entry) of some detector and epoch: a record deleted, a shard cut with `-k` or `--lf`,
    an epoch missing. Each is named `uid` (`uid epoch 2` for an epoch). A detector in `once` ran one
    epoch (a deterministic one): its first epoch is all it owes."""
    epochs = part.settings.get("epochs")
    every: tuple[int | None, ...] = (
        tuple(range(1, epochs + 1)) if type(epochs) is int and 1 < epochs <= MAX_EPOCHS else (None,)
    )
    have: set[tuple[str, str, str, Any]] = set()
    for record in part.document.get("samples", []):
        detector = str(record.get("detector"))
        epoch = record.get("epoch") if every != (None,) and detector not in once else None
        have.add((detector, str(record.get("dataset")), base_uid(record), epoch))
    not_run: dict[tuple[str, str], list[str]] = {}
    for entry in part.document.get("not_run", []) or []:
        if isinstance(entry, Mapping):
            key = (str(entry.get("detector")), str(entry.get("dataset")))
            not_run.setdefault(key, []).append(str(entry.get("uid")))
    found: dict[str, dict[str, str]] = {}
    for name, entry in sorted(part.datasets().items()):
        for uid in entry["uids"]:
            for detector in part.detectors:
                wanted = (None,) if detector in once else every
                skipped = any(_covers(u, uid) for u in not_run.get((detector, name), ()))
                gaps = [e for e in wanted if (detector, name, uid, e) not in have]
                if gaps and not skipped:
                    label = uid if gaps == [None] else f"{uid} epoch {','.join(str(e) for e in gaps)}"
                    found.setdefault(name, {})[f"{uid}\0{detector}"] = f"{label} ({detector})"
    return found


def _check_disjoint(kept: Sequence[Part]) -> None:
    """Shares that overlap were planned from different sample lists (datasets given in another
    order, another --grounding-limit): their sum would count samples twice."""
    owner: dict[tuple[str, str], str] = {}
    for part in kept:
        for name, entry in part.datasets().items():
            for uid in entry["uids"]:
                if (name, uid) in owner:
                    raise MergeError(
                        f"{part.name} and {owner[name, uid]} both hold sample {uid} of {name}: the shards were "
                        "split from different sample lists (give every shard the same --dataset options in "
                        "the same order)"
                    )
                owner[name, uid] = part.name


def scoring_of(
    part: Part,
    *,
    gates: Sequence[gates_mod.Gate] | None,
    max_errors: float | None,
    published: reproduce.Table | None,
) -> document_mod.Scoring:
    """The reports' scoring settings; the merge's own gates (and --max-errors) when given."""
    settings = part.settings
    if gates is None:
        gates = tuple(
            gates_mod.parse_gate(str(g["threshold"]) if g["slice"] == "overall" else f"{g['slice']}:{g['threshold']}")
            for g in settings.get("gates", [])
        )
    cost = part.document.get("cost") or {}
    return document_mod.Scoring(
        refusal_rows=settings.get("refusal_rows", "include"),
        price=cost_mod.Price.from_dict(cost.get("price")),
        gates=tuple(gates),
        max_errors=max_errors if max_errors is not None else settings.get("max_errors"),
        limit=settings.get("limit"),
        published=published,
        gate_on_interval=bool(settings.get("gate_on_interval", False)),
        max_drops=robustness.max_drops_of(settings),  # --grounding-max-drop
        profile=part.document.get("scoring_profile") or document_mod.Scoring().profile,
    )


def shards_errata(kept: Sequence[Part]) -> tuple[errata_mod.Errata | None, list[str]]:
    """The errata every shard applied (--grounding-errata), to correct the merged records with: the
    same file (digest) for all, or none. Shards that applied different errata, or some none, were
    scored against different boxes and are refused."""
    blocks = {part.name: part.document.get("errata") for part in kept}
    digests = {name: (b or {}).get("digest") for name, b in blocks.items()}
    if not any(digests.values()):
        return None, []
    if len(set(digests.values())) > 1:
        said = ", ".join(f"{name}: {str(d)[:12] if d else 'none'}" for name, d in digests.items())
        raise MergeError(
            f"the shards applied different errata ({said}): run every shard with the same --grounding-errata file"
        )
    first = next(iter(blocks.values())) or {}
    applied = errata_mod.from_block(first)
    if applied is None:
        return None, [
            f"the shards applied errata {str(first.get('digest'))[:12]}, but their reports do not list its "
            "corrections (written by an older version): the merged report gives the official figure only"
        ]
    return applied, []


def merged_document(
    parts: Sequence[Part],
    *,
    gates: Sequence[gates_mod.Gate] | None = None,
    max_errors: float | None = None,
    published: reproduce.Table | None = None,
    args: Sequence[str] = (),
    registered: Any = None,
    rescore: Rescore,
    notes: Sequence[str] = (),
    sections: Sequence[document_mod.ReportSection] = (),
) -> tuple[dict[str, Any], document_mod.Figures | None]:
    """The merged report and its figures (None: no records), from records `validated` first;
    `sections`: the report sections whose figures it holds (sections/registry.py)."""
    if not parts:
        raise MergeError("no reports to merge")
    for part in parts:
        check_split(part)  # first: the rest of the work is bounded by the split
    parts = unified(parts)  # one detector reached through other endpoints: one name
    check(parts)  # the reports' claims against each other, then each report's records against its claims
    checked = [validated(part, rescore) for part in parts]
    parts = [part for part, _ in checked]
    chosen = select(parts)
    kept = chosen.kept
    partial = bool(chosen.missing or chosen.missing_samples) or any(p.document.get("partial") for p in kept)
    # misses classified again against every shard's elements of a screen (issue 46: wrong_element)
    records = classified([record for part in kept for record in part.document.get("samples", [])])
    scoring = scoring_of(kept[0], gates=gates, max_errors=max_errors, published=published)
    applied, errata_notes = shards_errata(kept)
    if applied is not None:
        scoring = replace(scoring, errata=applied)
    found_datasets: dict[str, dict[str, Any]] = {}
    detector_info: dict[str, Any] = {}
    for part in kept:
        for entry in part.document.get("run", {}).get("datasets", []):
            found_datasets.setdefault(entry["name"], entry)
        for name, info in part.document.get("run", {}).get("detectors", {}).items():
            detector_info.setdefault(name, info)
            if part is not kept[0]:
                detector_info[name] = _with_throughput(detector_info[name], info.get("throughput"))
    datasets = document_mod.dataset_entries(found_datasets, records, scoring.limit)
    figures = None
    if records:
        figures = document_mod.figures(
            records,
            scoring,
            datasets=datasets,
            detector_info=detector_info,
            interrupted=partial,
            registered=registered,
            sections=sections,
        )
    said = list(notes)  # the caller's (how records were re-scored)
    notes = [*chosen.notes, *said, *errata_notes]
    kept_ids = {id(part) for part in kept}
    notes += [note for part, rescored in checked if id(part) in kept_ids for note in rescored]
    noted = set(notes)
    versions = {_version(p) for p in kept}
    if len(versions) > 1:
        notes.append(f"shards ran different plugin versions with the same scoring: {', '.join(sorted(versions))}")
    for part in kept:
        if part.document.get("partial"):
            notes.append(f"shard {part.index}/{part.count} ({part.name}) was interrupted: its figures are partial")
        for note in part.document.get("notes", []):
            if note not in noted:
                noted.add(note)
                notes.append(note)
    first = kept[0].document
    header = document_mod.Header(
        started=min(p.started for p in kept),
        duration_s=max(float(p.document.get("duration_s") or 0) for p in kept),
        args=tuple(args),
        settings={**kept[0].settings, "gates": [_gate_entry(g) for g in scoring.gates]},
        workers=first.get("run", {}).get("workers"),
        versions=first.get("versions", {}),
        partial=partial,
        resumed=sum(int(p.document.get("resumed") or 0) for p in kept),
        notes=tuple(notes),
        extra={
            "not_run": [entry for part in kept for entry in part.document.get("not_run", [])],  # partial already
            "merge": _merge_entry(chosen, parts),
        },
    )
    document = document_mod.build(records, figures, scoring, header, datasets=datasets, detector_info=detector_info)
    return document, figures


def _gate_entry(gate: gates_mod.Gate) -> dict[str, Any]:
    return {"slice": gate.label, "threshold": gate.threshold, "source": gate.source}


def _merge_entry(chosen: Selection, parts: Sequence[Part]) -> dict[str, Any]:
    kept = {id(p) for p in chosen.kept}
    return {
        "count": chosen.count,
        "reports": [
            {
                "path": part.name,
                "shard": part.index,
                "started": part.document.get("started"),
                "duration_s": part.document.get("duration_s"),
                "records": len(part.document.get("samples", [])),
                "used": id(part) in kept,
                **_endpoints(part),
            }
            for part in parts
        ],
        "missing": list(chosen.missing),
        "missing_samples": list(chosen.missing_samples),
    }


def _endpoints(part: Part) -> dict[str, Any]:
    """Where each served detector of the shard sent its requests, and with what concurrency."""
    found = {}
    for spec, info in part.document.get("run", {}).get("detectors", {}).items():
        if isinstance(info, Mapping) and info.get("base_urls"):
            found[spec] = {
                "base_urls": [str(u) for u in info["base_urls"]],
                "concurrency": str(info.get("concurrency", "")),
                "spec": str(info.get("spec_as_run", spec)),
            }
    return {"endpoints": found} if found else {}


def prediction_order(record: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """The merged predictions file: dataset by dataset, sample by sample, each detector's line."""
    return (record["dataset"], record["uid"], record.get("task", "grounding"), record["detector"])


def _with_throughput(info: Mapping[str, Any], more: Any) -> dict[str, Any]:
    """Shards that ran side by side: their samples and rates add up, the wall time is the longest."""
    mine = info.get("throughput")
    if not isinstance(mine, Mapping) or not isinstance(more, Mapping):
        return dict(info)
    return {
        **info,
        "throughput": {
            "samples": int(mine.get("samples", 0)) + int(more.get("samples", 0)),
            "wall_s": max(float(mine.get("wall_s", 0.0)), float(more.get("wall_s", 0.0))),
            "samples_per_s": round(float(mine.get("samples_per_s", 0.0)) + float(more.get("samples_per_s", 0.0)), 3),
        },
    }
