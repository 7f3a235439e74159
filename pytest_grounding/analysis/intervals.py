"""95% intervals on every accuracy, clustered by screen, and the paired difference of two runs.

Samples that share one screenshot (one `image` of one `dataset`) are one cluster: a model that
misreads a screen tends to miss every instruction on it, so they are not independent samples.

The method (docs/measured.md says why): the cluster-robust ("sandwich", linearised) variance of
the figure, with the small-sample factor C/(C-1) over its C screens; from it the effective sample
size n_eff = p(1-p) / variance, capped at the number of samples (Korn and Graubard, 1998); and the
Wilson score interval at n_eff. Where screens hold one sample each it is the plain Wilson
interval; where the samples of a screen go together it is wider. It needs no random draws (no
seed, the same interval in every process) and costs a few array passes per slice. Differences (two
runs on the same samples) use the same clustered variance with Student's t over the screens,
beside McNemar's test.

Pure: records in, frozen records out; no pytest, no I/O. The arrays are numpy's."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.numbers import points
from ..core.record import Outcome

if TYPE_CHECKING:  # numpy is imported where a figure is computed: every process imports the plugin
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Ints = npt.NDArray[np.int64]

LEVEL = 0.95
Z = 1.959963984540054  # two-sided 95%
Z_POWER = 0.8416212335729143  # 80% power: the smallest detectable difference
METHOD = "cluster-robust Wilson"
CLUSTER = "screen (dataset + image)"
DIGITS = 6  # an interval's bounds as the JSON keeps them


def about() -> dict[str, Any]:
    """The report's `intervals` entry: how every `ci95` of it was computed."""
    return {
        "level": LEVEL,
        "method": METHOD,
        "cluster": CLUSTER,
        "description": "Wilson score interval at the effective sample size p(1-p)/variance (at most the "
        "samples), the variance cluster-robust over screens with the factor C/(C-1); differences: "
        "the same variance, Student's t over the screens",
    }


@dataclass(frozen=True)
class Interval:
    """A figure (a share in 0..1) and its 95% interval. `se`: the cluster-robust standard error;
    `effective`: the effective sample size the interval was drawn at."""

    estimate: float
    low: float
    high: float
    se: float
    samples: int
    clusters: int
    effective: float

    def as_list(self) -> list[float]:
        return [round(self.low, DIGITS), round(self.high, DIGITS)]

    @property
    def detectable(self) -> float:
        """The smallest true difference from a fixed figure that a run like this one finds 80% of the
        time at 5% two-sided: (z(0.975) + z(0.8)) x se, the standard error read from the interval's
        half-width (Wilson's: never 0, where every sample hit or every one missed)."""
        return (Z + Z_POWER) / Z * (self.high - self.low) / 2


@dataclass(frozen=True)
class Difference:
    """`after` - `before` on the samples both scored, in shares, with its 95% interval."""

    delta: float
    low: float
    high: float
    se: float
    samples: int
    clusters: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "delta": round(self.delta, DIGITS),
            "ci95": [round(self.low, DIGITS), round(self.high, DIGITS)],
            "samples": self.samples,
            "clusters": self.clusters,
        }

    def bounds(self) -> str:
        """`95% CI -1.2 to +7.8 points (64 screens)`."""
        screens = "1 screen" if self.clusters == 1 else f"{self.clusters} screens"
        return f"95% CI {points(self.low)} to {points(self.high)} points ({screens})"


# Student's t at 0.975 for 1..10 degrees of freedom; beyond, the Cornish-Fisher expansion (error < 0.001).
T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139)


def t975(df: int) -> float:
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom (a normal's at df <= 0)."""
    if df <= 0:
        return Z
    if df <= len(T975):
        return T975[df - 1]
    z = Z
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * df**4)
    )


def screen_of(record: Mapping[str, Any], index: int = 0) -> tuple[Any, Any]:
    """The cluster a record belongs to: its dataset and its image (its own uid when it has none;
    its place in the run, `index`, when it has neither)."""
    image, uid = record.get("image"), record.get("uid")
    if image:
        return (record.get("dataset"), image)
    return (record.get("dataset"), f"uid:{uid}" if uid is not None else f"record:{index}")


@dataclass(frozen=True, eq=False)
class Outcomes:
    """Scored records (errors left out, as in every accuracy) as arrays: `hit` 1.0 or 0.0 and the
    index of their screen. `records`: the scored records, in the arrays' order."""

    records: tuple[Mapping[str, Any], ...]
    hit: Floats
    screen: Ints

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]]) -> Outcomes:
        import numpy as np

        scored = tuple(r for r in records if r["outcome"] != Outcome.ERROR)
        codes: dict[tuple[Any, Any], int] = {}
        keys = [(r.get("dataset"), r.get("image")) for r in scored]  # screen_of, fast where there is an image
        keys = [key if key[1] else screen_of(r, i) for i, (key, r) in enumerate(zip(keys, scored, strict=True))]
        screen = np.fromiter((codes.setdefault(key, len(codes)) for key in keys), np.int64, len(scored))
        hit = np.fromiter((r["outcome"] == Outcome.HIT for r in scored), np.float64, len(scored))
        return cls(scored, hit, screen)

    def __len__(self) -> int:
        return len(self.records)

    def judged(self, hits: Iterable[bool]) -> Outcomes:
        """The same records and screens judged by another rule (a click within a tolerance)."""
        import numpy as np

        return Outcomes(self.records, np.fromiter(hits, np.float64, len(self.records)), self.screen)


def wilson(p: float, n: float) -> tuple[float, float]:
    """The Wilson score interval of a share `p` measured on `n` (effective) samples."""
    if n <= 0:
        return 0.0, 1.0
    z2 = Z * Z
    scale = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / scale
    half = Z / scale * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n))
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # p itself inside, rounding aside


def _interval(estimate: float, variance: float, samples: int, clusters: int) -> Interval:
    """Wilson at the effective sample size; one screen is one sample's worth."""
    spread = estimate * (1 - estimate)
    if clusters < 2:
        effective = 1.0
    elif variance > 0 and spread > 0:
        effective = min(float(samples), spread / variance)
    else:  # all hits, all misses, or the same share on every screen: the variance says nothing
        effective = float(samples)
    low, high = wilson(estimate, effective)
    return Interval(estimate, low, high, math.sqrt(max(variance, 0.0)), samples, clusters, effective)


def _variance(influence: Floats, screen: Ints) -> tuple[float, int]:
    """Sum over screens of the squared screen totals of the influence values, times C/(C-1)."""
    import numpy as np

    totals = np.bincount(screen, weights=influence)
    present = np.bincount(screen) > 0
    clusters = int(np.count_nonzero(present))
    if clusters < 2:
        return 0.0, clusters
    return float(clusters / (clusters - 1) * np.dot(totals, totals)), clusters


def proportion(outcomes: Outcomes) -> Interval | None:
    """The accuracy of the scored records, None when there are none."""

    n = len(outcomes)
    if n == 0:
        return None
    p = float(outcomes.hit.mean())
    variance, clusters = _variance((outcomes.hit - p) / n, outcomes.screen)
    return _interval(p, variance, n, clusters)


@dataclass(frozen=True, eq=False)
class Grouping:
    """Which group each scored record is in, as (row, group) pairs (a record may be in several
    groups, or none), and the groups' names by index."""

    rows: Ints
    groups: Ints
    names: tuple[str, ...]


def grouping(outcomes: Outcomes, values: Iterable[Iterable[str]]) -> Grouping:
    """From each scored record's group values (in the records' order)."""
    import numpy as np

    names: dict[str, int] = {}
    rows: list[int] = []
    groups: list[int] = []
    for row, found in enumerate(values):
        for value in found:
            rows.append(row)
            groups.append(names.setdefault(value, len(names)))
    return Grouping(np.asarray(rows, np.int64), np.asarray(groups, np.int64), tuple(names))


def one_each(outcomes: Outcomes, values: Iterable[str]) -> Grouping:
    """The same where each record is in exactly one group (the summary's slices): one pass."""
    import numpy as np

    names: dict[str, int] = {}
    n = len(outcomes)
    groups = np.fromiter((names.setdefault(v, len(names)) for v in values), np.int64, n)
    return Grouping(np.arange(n, dtype=np.int64), groups, tuple(names))


def _group_shares(outcomes: Outcomes, rows: Ints, groups: Ints, count: int) -> tuple[Floats, Floats]:
    import numpy as np

    sizes = np.bincount(groups, minlength=count).astype(np.float64)
    hits = np.bincount(groups, weights=outcomes.hit[rows], minlength=count)
    with np.errstate(invalid="ignore", divide="ignore"):
        return hits / sizes, sizes


def by_group(outcomes: Outcomes, found: Grouping) -> dict[str, Interval]:
    """Each group's accuracy and interval, all groups in a few array passes (the slices)."""
    import numpy as np

    rows, groups, names = found.rows, found.groups, found.names
    if len(rows) == 0:
        return {}
    count = len(names)
    shares, sizes = _group_shares(outcomes, rows, groups, count)
    influence = (outcomes.hit[rows] - shares[groups]) / sizes[groups]
    screen = outcomes.screen[rows]
    width = int(screen.max()) + 1
    cells, cell_of = np.unique(groups * width + screen, return_inverse=True)
    totals = np.bincount(cell_of.reshape(-1), weights=influence)
    group_of_cell = cells // width
    squares = np.bincount(group_of_cell, weights=totals * totals, minlength=count)
    clusters = np.bincount(group_of_cell, minlength=count)
    out = {}
    for index, name in enumerate(names):
        c = int(clusters[index])
        variance = float(c / (c - 1) * squares[index]) if c > 1 else 0.0
        out[name] = _interval(float(shares[index]), variance, int(sizes[index]), c)
    return out


def mean_of_groups(outcomes: Outcomes, found: Grouping) -> Interval | None:
    """The unweighted mean of the groups' accuracies (macro figures, a benchmark's mean over its
    splits), a record counting in each group it is in; the interval from the clustered variance
    of that mean. None when no group has a scored record."""
    import numpy as np

    rows, groups, count = found.rows, found.groups, len(found.names)
    if len(rows) == 0:
        return None
    shares, sizes = _group_shares(outcomes, rows, groups, count)
    present = sizes > 0
    k = int(np.count_nonzero(present))
    estimate = float(shares[present].mean())
    influence = (outcomes.hit[rows] - shares[groups]) / (sizes[groups] * k)
    variance, clusters = _variance(influence, outcomes.screen[rows])
    return _interval(estimate, variance, int(np.count_nonzero(np.bincount(rows))), clusters)


def mean_over(outcomes: Outcomes, values: Iterable[Iterable[str]]) -> Interval | None:
    return mean_of_groups(outcomes, grouping(outcomes, values))


def slices(outcomes: Outcomes, values: Iterable[Iterable[str]]) -> dict[str, Interval]:
    return by_group(outcomes, grouping(outcomes, values))


def ci95(found: Interval | None) -> list[float] | None:
    return None if found is None else found.as_list()


def difference(before: Sequence[bool], after: Sequence[bool], screens: Sequence[Any]) -> Difference | None:
    """The paired difference after - before (hit rates on the same samples), clustered by screen:
    the same clustered variance of the mean of the per-sample differences, and Student's t with
    C - 1 degrees of freedom over C screens (a difference can be negative: no Wilson; t, not the
    normal, so that a few screens give a wide interval). No changed sample: [delta, delta]; changes
    on one screen only: the whole range (one cluster has no spread to read an interval from)."""
    import numpy as np

    n = len(before)
    if n == 0:
        return None
    codes: dict[Any, int] = {}
    screen = np.fromiter((codes.setdefault(s, len(codes)) for s in screens), np.int64, n)
    change = np.asarray(after, np.float64) - np.asarray(before, np.float64)
    delta = float(change.mean())
    variance, clusters = _variance((change - delta) / n, screen)
    se = math.sqrt(variance)
    if clusters < 2 and change.any():
        return Difference(delta, -1.0, 1.0, se, n, clusters)
    t = t975(clusters - 1)
    return Difference(delta, max(-1.0, delta - t * se), min(1.0, delta + t * se), se, n, clusters)


def text(found: Interval | None) -> str:
    """`21.9-32.1`: the interval's bounds in percent, for a table column."""
    return "-" if found is None else f"{found.low * 100:.1f}-{found.high * 100:.1f}"


def span(bounds: Sequence[float] | None) -> str:
    """The same from a report's `ci95` list."""
    return "-" if not bounds else f"{bounds[0] * 100:.1f}-{bounds[1] * 100:.1f}"
