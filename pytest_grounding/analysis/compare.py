"""The method matrix: one table comparing detectors (plain and wrapped) on accuracy overall, by
target size and by element type, latency, attempts and errors, the best value of each column
marked; a paired significance note (McNemar's exact test) for each method against the first; and
the samples whose outcome changed between two methods. Pure: summaries and records in (from one
run, or from saved JSON reports), lines of text out. No pytest, no I/O."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.identity import display_name
from ..core.numbers import ms as _ms
from ..core.numbers import pct as _pct
from ..core.numbers import points
from ..core.profiles import profile_of
from ..core.record import SIZE_BUCKETS, Outcome, Task
from ..core.safetext import markdown_text
from ..core.types import ELEMENT_TYPES
from ..core.variants import row_key
from . import intervals

ALPHA = 0.05
BEST = "*"


@dataclass(frozen=True)
class Method:
    """One column-set of the table: a detector's summary block and its records."""

    label: str
    block: Mapping[str, Any]
    records: tuple[Mapping[str, Any], ...] = ()
    partial: bool = False
    source: str | None = None  # the report it came from (compare), None within a run


@dataclass(frozen=True)
class Column:
    title: str
    value: Callable[[Method], float | None]
    render: Callable[[float | None], str]
    better: str  # "high" or "low"


@dataclass(frozen=True)
class Paired:
    """Two methods on the samples both scored: `fixed` = the other hits where the baseline did not,
    `broken` the reverse; McNemar's exact two-sided p on those discordant pairs."""

    baseline: str
    other: str
    n: int
    baseline_hits: int
    other_hits: int
    fixed: int
    broken: int
    p_value: float
    difference: intervals.Difference | None = None  # other - baseline with its 95% interval, by screen

    @property
    def delta(self) -> float | None:
        return (self.other_hits - self.baseline_hits) / self.n if self.n else None


@dataclass(frozen=True)
class Change:
    key: tuple[str, str]
    before: Mapping[str, Any]
    after: Mapping[str, Any]


@dataclass(frozen=True)
class Changes:
    """Between two methods: fixed (miss -> hit), broken (hit -> miss), and samples that became or
    stopped being errors (not scored on one side, so in neither list)."""

    before: str
    after: str
    fixed: tuple[Change, ...]
    broken: tuple[Change, ...]
    errors: tuple[Change, ...] = field(default_factory=tuple)
    paired: int = 0


def _attempts(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _count(value: float | None) -> str:
    return "-" if value is None else str(int(value))


def _slice_accuracy(key: str, wanted: str) -> Callable[[Method], float | None]:
    def value(method: Method) -> float | None:
        for row in method.block.get("by", {}).get(key, []):
            if row["value"] == wanted:
                accuracy: float | None = row["accuracy"]
                return accuracy
        return None

    return value


def _field(name: str) -> Callable[[Method], float | None]:
    def value(method: Method) -> float | None:
        found = method.block.get(name)
        return float(found) if isinstance(found, (int, float)) else None

    return value


def _latency(q: str) -> Callable[[Method], float | None]:
    def value(method: Method) -> float | None:
        found = method.block.get("latency_ms", {}).get(q)
        return float(found) if isinstance(found, (int, float)) else None

    return value


def columns(methods: Sequence[Method]) -> list[Column]:
    """Accuracy overall, per size bucket and element type present in any method, latency p50 and
    p95, mean attempts, errors."""
    present = {row["value"] for m in methods for row in m.block.get("by", {}).get("element_type", [])}
    types = [t for t in ELEMENT_TYPES if t in present] + sorted(present - set(ELEMENT_TYPES))
    cols = [Column("n", _field("scored"), _count, "none"), Column("accuracy", _field("accuracy"), _pct, "high")]
    cols += [Column(f"size {b}", _slice_accuracy("size", b), _pct, "high") for b in SIZE_BUCKETS]
    cols += [Column(t, _slice_accuracy("element_type", t), _pct, "high") for t in types]
    cols += [
        Column("p50 ms", _latency("p50"), _ms, "low"),
        Column("p95 ms", _latency("p95"), _ms, "low"),
        Column("attempts", _field("mean_attempts"), _attempts, "low"),
        Column("errors", _field("errors"), _count, "low"),
    ]
    return cols


def _best(values: Sequence[float | None], better: str) -> set[int]:
    """Indices holding the best value; none when fewer than two values or all equal."""
    known = [(i, v) for i, v in enumerate(values) if v is not None]
    if better == "none" or len(known) < 2 or len({round(v, 9) for _, v in known}) == 1:
        return set()
    target = max(v for _, v in known) if better == "high" else min(v for _, v in known)
    return {i for i, v in known if math.isclose(v, target, rel_tol=1e-9, abs_tol=1e-12)}


def cells(methods: Sequence[Method]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of rendered cells, the best of each column followed by `*`."""
    cols = columns(methods)
    rows = [[m.label + (" (partial)" if m.partial else "")] for m in methods]
    for col in cols:
        values = [col.value(m) for m in methods]
        best = _best(values, col.better)
        for i, value in enumerate(values):
            rows[i].append(col.render(value) + (BEST if i in best else ""))
    return ["method", *[c.title for c in cols]], rows


def text_table(methods: Sequence[Method]) -> list[str]:
    header, rows = cells(methods)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:  # a name is never cut (issue 61): served ones are short (model@host)
        rest = (f"{c:>{w}}" for c, w in zip(row[1:], widths[1:], strict=True))
        return "  " + "  ".join([f"{row[0]:<{widths[0]}}", *rest])

    return [line(header), *(line(r) for r in rows)]


def markdown_table(methods: Sequence[Method]) -> list[str]:
    header, rows = cells(methods)
    out = ["| " + " | ".join(markdown_text(h) for h in header) + " |"]  # element types come from data
    out.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    out += ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    return out


# -- paired comparison ------------------------------------------------------------------------------


def mcnemar_exact(fixed: int, broken: int) -> float:
    """Two-sided exact McNemar p: under "no difference" each discordant pair goes either way with
    probability 1/2, so the smaller count is Binomial(n, 1/2); p = 2 P(X <= min), capped at 1."""
    n = fixed + broken
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(fixed, broken) + 1))
    return min(1.0, float(2 * tail / 2**n))  # integers: 2.0**n overflows a float past 1,023 discordant pairs


def sample_key(record: Mapping[str, Any]) -> tuple[str, str]:
    return (str(record["dataset"]), str(record["uid"]))


def _scored(method: Method) -> dict[tuple[str, str], Mapping[str, Any]]:
    """The scored originals (a sweep's variants are paired with their originals elsewhere: robustness.py)."""
    return {sample_key(r): r for r in method.records if r["outcome"] != Outcome.ERROR and r.get("variant") is None}


def _same_version(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Paired only on the same dataset version (when both records say which)."""
    fa, fb = a.get("fingerprint"), b.get("fingerprint")
    return fa is None or fb is None or fa == fb


def paired(baseline: Method, other: Method) -> Paired:
    mine, theirs = _scored(baseline), _scored(other)
    keys = [k for k in mine if k in theirs and _same_version(mine[k], theirs[k])]
    base_hits = sum(mine[k]["outcome"] == Outcome.HIT for k in keys)
    other_hits = sum(theirs[k]["outcome"] == Outcome.HIT for k in keys)
    fixed = sum(mine[k]["outcome"] != Outcome.HIT and theirs[k]["outcome"] == Outcome.HIT for k in keys)
    broken = sum(mine[k]["outcome"] == Outcome.HIT and theirs[k]["outcome"] != Outcome.HIT for k in keys)
    difference = intervals.difference(
        [mine[k]["outcome"] == Outcome.HIT for k in keys],
        [theirs[k]["outcome"] == Outcome.HIT for k in keys],
        [intervals.screen_of(mine[k], i) for i, k in enumerate(keys)],
    )
    return Paired(
        baseline.label,
        other.label,
        len(keys),
        base_hits,
        other_hits,
        fixed,
        broken,
        mcnemar_exact(fixed, broken),
        difference,
    )


SLICE_KEYS = ("element_type", "size", "app_category", "platform")  # the record fields a paired slice is read from


def slice_pairs(baseline: Method, other: Method) -> list[tuple[str, str, intervals.Difference]]:
    """`other` against `baseline` within each slice (element type, target size, app category,
    platform) on the samples both scored: (field, value, the paired difference with its interval
    clustered by screen). A quantized model against its full weights loses unevenly: icons and
    small targets first. Pure."""
    mine, theirs = _scored(baseline), _scored(other)
    keys = [k for k in mine if k in theirs and _same_version(mine[k], theirs[k])]
    out = []
    for name in SLICE_KEYS:
        values = sorted({str(mine[k].get(name)) for k in keys if mine[k].get(name) not in (None, "")})
        for value in values:
            inside = [k for k in keys if str(mine[k].get(name)) == value]
            found = intervals.difference(
                [mine[k]["outcome"] == Outcome.HIT for k in inside],
                [theirs[k]["outcome"] == Outcome.HIT for k in inside],
                [intervals.screen_of(mine[k], i) for i, k in enumerate(inside)],
            )
            if found is not None:
                out.append((name, value, found))
    return out


def slice_lines(methods: Sequence[Method]) -> list[str]:
    """`compare --by-slice`: each method against the first, slice by slice."""
    lines = []
    for other in methods[1:]:
        lines.append(f"  {other.label} vs {methods[0].label}, by slice (paired, 95% interval clustered by screen):")
        for name, value, found in slice_pairs(methods[0], other):
            lines.append(f"    {name} {value}: {points(found.delta)} points on {found.samples}, {found.bounds()}")
    return lines


def significance_lines(methods: Sequence[Method]) -> list[str]:
    """Each method against the first, on the samples both scored."""
    if len(methods) < 2:
        return []
    lines = []
    for other in methods[1:]:
        pair = paired(methods[0], other)
        if pair.n == 0:
            lines.append(f"  {other.label} vs {methods[0].label}: no samples scored by both, no paired test")
            continue
        assert pair.delta is not None
        if pair.fixed == pair.broken == 0:
            lines.append(f"  {other.label} vs {methods[0].label}: the same outcome on all {pair.n} paired samples")
            continue
        verdict = (
            f"a real difference at {ALPHA:g}"
            if pair.p_value < ALPHA
            else f"not significant at {ALPHA:g}: could be noise"
        )
        assert pair.difference is not None
        lines.append(
            f"  {other.label} vs {methods[0].label}: {points(pair.delta)} points on {pair.n} paired samples "
            f"({pair.fixed} fixed, {pair.broken} broken), McNemar exact p = {pair.p_value:.3g}, "
            f"{pair.difference.bounds()}: {verdict}"
        )
    return lines


def comparison_lines(methods: Sequence[Method], *, markdown: bool = False) -> list[str]:
    """The table, the legend, and the paired notes."""
    if markdown:
        lines = markdown_table(methods)
        legend = f"`{BEST}` best in its column; sizes are sqrt(w*h) of the target in px; attempts = model calls."
        notes = significance_lines(methods)
        return [*lines, "", legend, *([""] + [f"- {markdown_text(n.strip())}" for n in notes] if notes else [])]
    lines = text_table(methods)
    lines.append(f"  ({BEST} best in its column; attempts = model calls per sample; sizes: target sqrt(w*h) px)")
    notes = significance_lines(methods)
    if notes:
        lines += [
            "",
            "  paired against the first method (McNemar's exact test and the difference's interval, clustered "
            "by screen, on the samples both scored):",
            *notes,
        ]
    return lines


def methods_from_run(
    summary: Mapping[str, Mapping[str, Any]], records: Sequence[Mapping[str, Any]], order: Sequence[str] = ()
) -> list[Method]:
    """The grounding blocks of one run with their records, in `order` (the --detector order: the
    first is the baseline the others are tested against), then any others."""
    out = []
    keys = [k for k in order if k in summary] + [k for k in summary if k not in order]
    for key in keys:
        block = summary[key]
        if block.get("task", Task.GROUNDING) != Task.GROUNDING:
            continue
        mine = tuple(r for r in records if r.get("task", Task.GROUNDING) == Task.GROUNDING and r["detector"] == key)
        out.append(Method(display_name(key, block), block, mine))  # its label= where it has one
    return out


# -- changed samples ----------------------------------------------------------------------------------


def changes(before: Method, after: Method) -> Changes:
    first = {sample_key(r): r for r in before.records}
    second = {sample_key(r): r for r in after.records}
    fixed, broken, errors = [], [], []
    paired_count = 0
    for key in sorted(first.keys() & second.keys()):
        a, b = first[key], second[key]
        if not _same_version(a, b):
            continue
        if (a["outcome"] == Outcome.ERROR) != (b["outcome"] == Outcome.ERROR):
            errors.append(Change(key, a, b))
            continue
        if a["outcome"] == Outcome.ERROR:
            continue
        paired_count += 1
        if a["outcome"] != Outcome.HIT and b["outcome"] == Outcome.HIT:
            fixed.append(Change(key, a, b))
        elif a["outcome"] == Outcome.HIT and b["outcome"] != Outcome.HIT:
            broken.append(Change(key, a, b))
    return Changes(before.label, after.label, tuple(fixed), tuple(broken), tuple(errors), paired_count)


CHANGE_SLICES = (("element_type", "element type"), ("size", "target size (px)"), ("app", "app"))


def change_lines(found: Changes, limit: int | None = None) -> list[str]:
    """The changed samples, then the slice totals of the change (fixed, broken, net)."""

    def describe(change: Change) -> str:
        r = change.after
        instruction = r["instruction"] if len(r["instruction"]) <= 50 else r["instruction"][:47] + "..."
        where = f"{r['dataset']}/{r['id']}"
        return f"    {where}  [{r['element_type']}, {r['size']}, {r['app']}]  {instruction!r}"

    lines = [
        f"changed samples: {found.after} against {found.before} ({found.paired} samples scored by both): "
        f"{len(found.fixed)} fixed, {len(found.broken)} broken, net {len(found.fixed) - len(found.broken):+d}"
    ]
    for title, group in (("fixed (miss -> hit)", found.fixed), ("broken (hit -> miss)", found.broken)):
        lines.append(f"  {title}: {len(group)}")
        shown = group if limit is None else group[:limit]
        lines += [describe(c) for c in shown]
        if len(shown) < len(group):
            lines.append(f"    ... {len(group) - len(shown)} more")
    if found.errors:
        became = sum(c.after["outcome"] == Outcome.ERROR for c in found.errors)
        lines.append(
            f"  errors: {became} became errors, {len(found.errors) - became} stopped being errors (in neither list)"
        )
    for key, title in CHANGE_SLICES:
        totals: dict[str, list[int]] = {}
        for index, group in enumerate((found.fixed, found.broken)):
            for change in group:
                totals.setdefault(str(change.after[key]), [0, 0])[index] += 1
        if not totals:
            continue
        order = [b for b in SIZE_BUCKETS if b in totals] if key == "size" else sorted(totals)
        lines.append(f"  by {title}:")
        lines += [
            f"    {value:<24} fixed {totals[value][0]:>4}  broken {totals[value][1]:>4}  "
            f"net {totals[value][0] - totals[value][1]:+d}"
            for value in order
        ]
    return lines


# -- saved reports ------------------------------------------------------------------------------------


def methods_from_reports(documents: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[list[Method], list[str]]:
    """Methods from (name, parsed JSON report) pairs, in order, and notes on what differs between
    the reports (a partial run, another dataset version). A detector in several reports is labelled
    with its report's name."""
    seen: dict[str, int] = {}
    for _, document in documents:
        for key, block in (document.get("summary") or {}).items():
            if block.get("task", Task.GROUNDING) == Task.GROUNDING:
                seen[display_name(key, block)] = seen.get(display_name(key, block), 0) + 1
    methods, notes = [], []
    versions: dict[str, set[str]] = {}
    for name, document in documents:
        partial = bool(document.get("partial"))
        if partial:
            notes.append(f"{name} is a partial report (the run was interrupted): its figures cover fewer samples")
        for dataset in (document.get("run") or {}).get("datasets") or []:
            versions.setdefault(str(dataset.get("name")), set()).add(str(dataset.get("fingerprint")))
        records = document.get("samples") or []
        for method in methods_from_run(document.get("summary") or {}, records):
            label = method.label if seen.get(method.label, 0) < 2 else f"{method.label} [{name}]"
            methods.append(Method(label, method.block, method.records, partial, name))
    corrected = [name for name, document in documents if isinstance(document.get("errata"), Mapping)]
    if corrected:  # --grounding-errata changes no verdict: the pairs below are the official ones
        notes.append(
            f"{', '.join(corrected)} carr{'ies' if len(corrected) == 1 else 'y'} errata: compared on the official "
            "verdicts; each report's corrected figure is in its own summary"
        )
    for dataset, prints in sorted(versions.items()):
        if len(prints) > 1:
            notes.append(
                f"dataset {dataset} differs between the reports ({len(prints)} fingerprints): "
                "pairs are formed only on the same version"
            )
    return methods, notes


def profile_mismatch(documents: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    """None when every report was scored by one profile (core/profiles.py; a report without one:
    pixel), else the sentence that names each report's profile."""
    profiles = [(name, profile_of(document)) for name, document in documents]
    if len({profile for _, profile in profiles}) < 2:
        return None
    each = ", ".join(f"{name} by {profile}" for name, profile in profiles)
    return (
        f"the reports were scored by different profiles ({each}): their accuracies judge the same answers by "
        "different rules (python -m pytest_grounding rescore REPORT --scoring PROFILE puts them on one)"
    )


# -- pairing on the rows two dataset versions share (audit --diff --unchanged-ids) ---------------------


IDS_HEADER = "# pytest-grounding unchanged ids: OLD<TAB>NEW"

# dataset formats whose rows carry no id: the loader numbers them by position (`<split>_<row>`), so an
# id names another row as soon as a version reorders, adds or removes rows (audit --diff matches their
# rows by content; compare --only-ids refuses one such id read on both sides of two versions)
POSITIONAL_IDS = frozenset({"screenspot"})


@dataclass(frozen=True)
class SharedIds:
    """An unchanged-ids file read: the pairs (old id, new id) of the rows two versions share, and which
    version each side is (the fingerprints `audit --diff` writes in the file's header, when it does).
    A row is keyed by its pair alone, never by an id both versions use for different rows: a version
    that renumbers rows (ScreenSpot's ids are row positions) pairs each old row with its own new row."""

    pairs: tuple[tuple[str, str], ...]
    old_fingerprint: str | None = None
    new_fingerprint: str | None = None

    def side(self, which: str) -> dict[str, str]:
        """id on that side ("old" or "new") -> the pair's key."""
        return {(a if which == "old" else b): f"{a}\t{b}" for a, b in self.pairs}

    def __len__(self) -> int:
        return len(self.pairs)


def shared_ids(text: str) -> SharedIds:
    """The file read: `OLD<TAB>NEW` a line (or one id, the same on both sides); `# old NAME FINGERPRINT`
    and `# new NAME FINGERPRINT` header lines name the versions. ValueError for an id listed twice on one
    side (two rows cannot be one)."""
    pairs: list[tuple[str, str]] = []
    prints: dict[str, str] = {}
    seen: dict[str, set[str]] = {"old": set(), "new": set()}
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            words = line[1:].split()
            if len(words) >= 2 and words[0] in ("old", "new"):
                prints[words[0]] = words[-1]
            continue
        parts = [p.strip() for p in line.split("\t") if p.strip()]
        if not parts:
            continue
        if len(parts) > 2:
            raise ValueError(f"line {number}: {len(parts)} ids (one, or OLD<TAB>NEW)")
        old, new = parts[0], parts[-1]
        for which, sid in (("old", old), ("new", new)):
            if sid in seen[which]:
                raise ValueError(f"line {number}: the {which} id {sid[:80]!r} is listed twice")
            seen[which].add(sid)
        pairs.append((old, new))
    return SharedIds(tuple(pairs), prints.get("old"), prints.get("new"))


def on_shared_ids(methods: Sequence[Method], ids: SharedIds, first_source: str | None = None) -> list[Method]:
    """Each method's records cut to the listed rows and keyed by their pair: two versions' runs pair on the
    rows both versions share unchanged (the fingerprints differ by design, so they are not compared).
    Which side a record is on: its dataset fingerprint against the file's header; a record the header
    does not place (no header, or a record without a fingerprint) is on the old side when its report is
    the first one given (`first_source`), else on the new side. A record of another version (a fingerprint
    the header names on neither side) is left out."""
    old, new = ids.side("old"), ids.side("new")
    known = {ids.old_fingerprint, ids.new_fingerprint} - {None}
    out = []
    for method in methods:
        kept = []
        for record in method.records:
            fingerprint = record.get("fingerprint")
            if fingerprint is not None and known:
                if fingerprint == ids.old_fingerprint:
                    alias = old
                elif fingerprint == ids.new_fingerprint:
                    alias = new
                else:
                    continue
            else:
                alias = old if first_source is None or method.source == first_source else new
            key = alias.get(row_key(record))  # a row whose id names two rows of its version: by its key
            if key is None:
                key = alias.get(str(record.get("id")))
            if key is not None:
                epoch = record.get("epoch")  # a --grounding-epochs run: each epoch stays its own record
                uid = key if epoch is None else f"{key}\te{epoch}"
                kept.append({**record, "dataset": "shared-ids", "uid": uid, "fingerprint": None})
        out.append(Method(method.label, method.block, tuple(kept), method.partial, method.source))
    return out


def shared_ids_refusal(
    documents: Sequence[tuple[str, Mapping[str, Any]]], ids: SharedIds, methods: Sequence[Method]
) -> str | None:
    """Why these reports cannot be paired through this ids file (None: they can). Two cases pair the
    wrong rows or none, and are refused rather than shown as figures:
    - a file without the `# old` / `# new` header that reads one id on both sides, given runs on two
      versions of a dataset whose ids are row positions (ScreenSpot): one row removed shifts every later
      id, so `desktop_0114` names another row in each version;
    - a method none of whose records is of a version the header names (its run is of a dataset version
      the diff did not read): `methods` as read, before on_shared_ids."""
    if ids.old_fingerprint is None and ids.new_fingerprint is None:
        same = sum(a == b for a, b in ids.pairs)
        versions: list[dict[str, str]] = []  # per report: fingerprint -> name, of its position-id datasets
        for _, document in documents:
            found = {}
            for entry in (document.get("run") or {}).get("datasets") or []:
                if isinstance(entry, Mapping) and entry.get("format") in POSITIONAL_IDS:
                    found[str(entry.get("fingerprint"))] = f"{entry.get('name')} ({entry.get('format')})"
            versions.append(found)
        if same and len({frozenset(v) for v in versions}) > 1:
            named = sorted({f"{name} {fp[:12]}" for v in versions for fp, name in v.items()})
            return (
                f"the reports are runs on different versions of datasets whose ids are row positions "
                f"({'; '.join(named)}), and the file reads {same} id{'s' if same != 1 else ''} on both sides with "
                "no '# old' / '# new' header: a row removed or moved shifts every later id, so each would be "
                "paired with another row. Write the pairs with audit --diff OLD NEW --unchanged-ids FILE (rows "
                "matched by content, each line OLD<TAB>NEW)"
            )
        return None
    known = {ids.old_fingerprint, ids.new_fingerprint} - {None}
    for method in methods:
        prints = {r.get("fingerprint") for r in method.records} - {None}
        if prints and not prints & known:
            return (
                f"no record of {method.label} ({method.source}) is of a version the file names (old "
                f"{str(ids.old_fingerprint)[:12]}, new {str(ids.new_fingerprint)[:12]}; its records: "
                f"{', '.join(str(p)[:12] for p in sorted(map(str, prints)))}): diff that version (audit --diff)"
            )
    return None
