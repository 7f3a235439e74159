"""The 95% intervals (analysis/intervals.py) against an independent cluster bootstrap, the naive
binomial interval, and themselves (deterministic, the same in any record order)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from helpers import SERIAL, read_json
from pytest_grounding.analysis import intervals, metrics
from pytest_grounding.analysis.compare import Method, paired


def screens_records(sizes, rate_of_screen, seed=0, detector="d"):
    """Records on screens of the given sizes; each screen's samples hit with its own rate."""
    rng = random.Random(seed)
    records = []
    for screen, size in enumerate(sizes):
        rate = rate_of_screen(screen, rng)
        for k in range(size):
            records.append(
                {
                    "detector": detector,
                    "dataset": "set",
                    "uid": f"{screen}-{k}",
                    "id": f"{screen}-{k}",
                    "image": f"screens/{screen}.png",
                    "outcome": "hit" if rng.random() < rate else "miss",
                    "element_type": "icon" if k % 2 else "text",
                    "app": f"app{screen % 4}",
                    "app_category": "c",
                    "platform": "web",
                    "size": "<32",
                    "latency_ms": 1.0,
                }
            )
    return records


def cluster_bootstrap(records, resamples=4000, seed=1):
    """An independent percentile cluster bootstrap: screens drawn with replacement."""
    by_screen = {}
    for r in records:
        if r["outcome"] != "error":
            slot = by_screen.setdefault(r["image"], [0, 0])
            slot[0] += r["outcome"] == "hit"
            slot[1] += 1
    hits = np.array([v[0] for v in by_screen.values()], float)
    sizes = np.array([v[1] for v in by_screen.values()], float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(hits), size=(resamples, len(hits)))
    shares = hits[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    return np.quantile(shares, 0.025), np.quantile(shares, 0.975)


def correlated(screen, rng):
    return 0.9 if rng.random() < 0.45 else 0.1  # a screen the model reads or does not


@pytest.mark.parametrize("seed", range(6))
def test_width_matches_an_independent_cluster_bootstrap(seed):
    rng = random.Random(seed)
    records = screens_records([rng.randint(2, 9) for _ in range(20)], correlated, seed=seed)
    found = intervals.proportion(intervals.Outcomes.of(records))
    low, high = cluster_bootstrap(records, seed=seed)
    assert found.clusters == 20 and found.samples == len(records)
    assert abs((found.high - found.low) - (high - low)) < 0.03
    assert found.low < found.estimate < found.high


def test_wider_than_the_naive_binomial_when_screens_hold_several_samples():
    records = screens_records([6] * 30, correlated, seed=3)
    found = intervals.proportion(intervals.Outcomes.of(records))
    naive_low, naive_high = intervals.wilson(found.estimate, len(records))
    assert found.high - found.low > 1.5 * (naive_high - naive_low)
    assert found.effective < len(records) / 2


def test_one_sample_per_screen_is_about_the_naive_interval():
    records = screens_records([1] * 200, lambda screen, rng: 0.3, seed=4)
    found = intervals.proportion(intervals.Outcomes.of(records))
    naive_low, naive_high = intervals.wilson(found.estimate, 200)
    assert found.low == pytest.approx(naive_low, abs=0.002) and found.high == pytest.approx(naive_high, abs=0.002)


def test_never_narrower_than_the_naive_interval_and_never_outside_0_1():
    for rate in (0.0, 1.0, 0.5):
        records = screens_records([3] * 10, lambda screen, rng, rate=rate: rate, seed=5)
        found = intervals.proportion(intervals.Outcomes.of(records))
        naive = intervals.wilson(found.estimate, 30)
        assert 0.0 <= found.low <= found.estimate <= found.high <= 1.0
        assert found.high - found.low >= naive[1] - naive[0] - 1e-12
    single = intervals.proportion(intervals.Outcomes.of(screens_records([8], correlated)))
    assert single.effective == 1.0 and single.high - single.low > 0.5  # one screen is one sample's worth


def test_errors_are_left_out_as_in_the_accuracy():
    records = screens_records([4] * 10, correlated, seed=6)
    with_errors = [*records, {**records[0], "uid": "e", "outcome": "error"}]
    assert intervals.proportion(intervals.Outcomes.of(with_errors)) == intervals.proportion(
        intervals.Outcomes.of(records)
    )
    assert intervals.proportion(intervals.Outcomes.of([{**records[0], "outcome": "error"}])) is None


def test_summary_is_deterministic_and_independent_of_record_order():
    records = screens_records([5] * 24, correlated, seed=7)
    shuffled = list(records)
    random.Random(8).shuffle(shuffled)
    first, second = metrics.summarize(records), metrics.summarize(shuffled)
    assert first == second == metrics.summarize(records)
    block = first["d"]
    for key in ("ci95", "macro_app_ci95", "macro_dataset_ci95"):
        low, high = block[key]
        assert 0 <= low <= high <= 1
    assert block["ci95"][0] < block["accuracy"] < block["ci95"][1]
    for rows in block["by"].values():
        for row in rows:
            assert row["ci95"][0] <= row["accuracy"] <= row["ci95"][1]


def test_each_slice_interval_is_that_slice_alone():
    records = screens_records([5] * 24, correlated, seed=9)
    block = metrics.summarize(records)["d"]
    for row in block["by"]["element_type"] + block["by"]["app"]:
        key = "element_type" if row["value"] in ("icon", "text") else "app"
        alone = intervals.proportion(intervals.Outcomes.of([r for r in records if r[key] == row["value"]]))
        assert row["ci95"] == alone.as_list()


def test_macro_interval_is_around_the_macro_figure_and_matches_a_bootstrap_of_it():
    records = screens_records([4] * 40, correlated, seed=10)
    block = metrics.summarize(records)["d"]
    low, high = block["macro_app_ci95"]
    assert low < block["macro_app_accuracy"] < high
    # the bootstrap of the macro figure: screens resampled, the mean over apps recomputed
    screens = sorted({r["image"] for r in records})
    rng = np.random.default_rng(2)
    values = []
    for _ in range(2000):
        drawn = [screens[i] for i in rng.integers(0, len(screens), len(screens))]
        per_app = {}
        for s in drawn:
            for r in records:
                if r["image"] == s:
                    slot = per_app.setdefault(r["app"], [0, 0])
                    slot[0] += r["outcome"] == "hit"
                    slot[1] += 1
        values.append(np.mean([h / n for h, n in per_app.values()]))
    b_low, b_high = np.quantile(values, [0.025, 0.975])
    assert abs((high - low) - (b_high - b_low)) < 0.03


def test_paired_difference_matches_a_cluster_bootstrap_and_sits_beside_mcnemar():
    before = screens_records([5] * 30, correlated, seed=11, detector="a")
    rng = random.Random(12)
    after = []
    for r in before:  # a better model: some misses turn to hits, screen by screen
        better = int(r["image"].split("/")[1].split(".")[0]) % 3 == 0 and rng.random() < 0.8
        after.append({**r, "detector": "b", "outcome": "hit" if better else r["outcome"]})
    pair = paired(Method("a", {}, tuple(before)), Method("b", {}, tuple(after)))
    found = pair.difference
    assert found is not None and found.delta == pytest.approx(pair.delta)
    assert found.clusters == 30 and found.samples == 150
    diffs = {}
    for a, b in zip(before, after, strict=True):
        diffs.setdefault(a["image"], []).append((b["outcome"] == "hit") - (a["outcome"] == "hit"))
    groups = list(diffs.values())
    rng2 = np.random.default_rng(3)
    boot = []
    for _ in range(4000):
        drawn = [groups[i] for i in rng2.integers(0, len(groups), len(groups))]
        boot.append(np.mean([d for g in drawn for d in g]))
    b_low, b_high = np.quantile(boot, [0.025, 0.975])
    assert abs((found.high - found.low) - (b_high - b_low)) < 0.03
    same = intervals.difference([True, False] * 5, [True, False] * 5, range(10))
    assert (same.delta, same.low, same.high) == (0.0, 0.0, 0.0)
    # changes on one screen: no spread between screens to read, so no bound narrower than the whole range
    one = intervals.difference([False] * 4, [True, True, True, False], [7] * 4)
    assert (one.delta, one.low, one.high, one.clusters) == (0.75, -1.0, 1.0, 1)
    assert one.bounds() == "95% CI -100.0 to +100.0 points (1 screen)"


def test_detectable_difference_is_the_power_multiple_of_the_standard_error():
    records = screens_records([5] * 60, correlated, seed=13)
    found = intervals.proportion(intervals.Outcomes.of(records))
    assert found.detectable == pytest.approx(2.8016 * found.se, rel=0.05)
    every = intervals.proportion(intervals.Outcomes.of(screens_records([1] * 5, lambda screen, rng: 1.0)))
    assert every.se == 0 and every.detectable > 0.2  # 5 of 5 hits: no spread seen, but far from certain
    bigger = intervals.proportion(intervals.Outcomes.of(screens_records([5] * 240, correlated, seed=13)))
    assert bigger.detectable < found.detectable


def test_a_baseline_comparison_gives_the_paired_difference_beside_mcnemar():
    from pytest_grounding.analysis import baseline as bl
    from pytest_grounding.analysis.compare import mcnemar_exact

    then = screens_records([4] * 20, correlated, seed=14)
    now = [{**r, "outcome": "hit"} if r["image"].endswith(("1.png", "2.png")) else r for r in then]
    base = bl.Baseline("grounding", {}, ("d",), {bl.sample_key(r): r["outcome"] for r in then})
    found = bl.compare(base, now, bl.Tolerances.parse(["1"]))
    (pair,) = found.paired
    fixed = sum(a["outcome"] != "hit" and b["outcome"] == "hit" for a, b in zip(then, now, strict=True))
    assert (pair.fixed, pair.broken) == (fixed, 0) and pair.p_value == mcnemar_exact(fixed, 0)
    hits = [sum(r["outcome"] == "hit" for r in rs) for rs in (then, now)]
    assert pair.difference.delta == pytest.approx((hits[1] - hits[0]) / 80)
    assert pair.difference.clusters == 20 and pair.difference.low < pair.difference.delta < pair.difference.high
    entry = bl.document_of(found)["paired"][0]
    assert entry["detector"] == "d" and entry["samples"] == 80 and entry["ci95"] == pair.difference.as_dict()["ci95"]
    assert "McNemar exact p" in bl.comparison_lines(found, "b.json")[-1]


# -- end to end: the report of a run --------------------------------------------------------------


def screens_dataset(root, screens=24):
    """A harness-format set: each screen shows one red square and holds 2-5 instructions to click
    it; on every third screen the labelled target is elsewhere, so all its samples miss together."""
    from PIL import Image, ImageDraw

    (root / "images").mkdir(parents=True)
    rows = []
    for screen in range(screens):
        image = Image.new("RGB", (160, 120), "white")
        x = 10 + 6 * (screen % 15)
        ImageDraw.Draw(image).rectangle([x, 20, x + 19, 39], fill=(220, 30, 30))
        image.save(root / "images" / f"s{screen}.png")
        box = [x, 20, x + 20, 40] if screen % 3 else [120, 80, 150, 110]
        elements = [
            {
                "id": f"e{k}",
                "bbox": [box[0] / 160, box[1] / 120, box[2] / 160, box[3] / 120],
                "text": f"Click the red square ({k})",
                "type": "button",
            }
            for k in range(2 + screen % 4)
        ]
        rows.append(
            {
                "id": f"s{screen}",
                "image": f"images/s{screen}.png",
                "width": 160,
                "height": 120,
                "app": f"app{screen % 4}",
                "elements": elements,
            }
        )
    (root / "annotations.json").write_text(json.dumps({"version": "1.0", "dataset": "screens", "samples": rows}))
    return root


def accuracies(node, path="$"):
    """Every (path, object) of the report that holds an `accuracy`."""
    if isinstance(node, dict):
        if "accuracy" in node:
            yield path, node
        for key, value in node.items():
            yield from accuracies(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from accuracies(value, f"{path}[{index}]")


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_every_accuracy_of_the_report_carries_its_clustered_interval(project, tmp_path, workers):
    root = screens_dataset(tmp_path / "screens")
    report = tmp_path / "report.json"
    gate = ("--grounding-min-accuracy", "0.5", "--grounding-gate-on-interval")
    result = project.runpytest(
        f"--dataset={root}", "--detector", "colour", "--grounding-json", str(report), *gate, *workers
    )
    document = read_json(report)
    assert document["intervals"]["level"] == 0.95 and document["intervals"]["cluster"].startswith("screen")
    found = list(accuracies(document["summary"]))
    assert len(found) >= 10  # the block, each app (4), element type, category, platform, size, dataset
    for path, node in found:
        assert node["accuracy"] is None or node["ci95"][0] <= node["accuracy"] <= node["ci95"][1], path
    block = document["summary"]["colour"]
    for key in ("macro_app_ci95", "macro_dataset_ci95"):
        assert block[key][0] < block[key][1]
    # the interval is the screens' own: an independent cluster bootstrap of the report's samples
    samples = document["samples"]
    assert len({r["image"] for r in samples}) == 24 and block["scored"] == len(samples) > 60
    low, high = block["ci95"]
    b_low, b_high = cluster_bootstrap(samples)
    assert abs((high - low) - (b_high - b_low)) < 0.03
    naive_low, naive_high = intervals.wilson(block["accuracy"], block["scored"])
    assert high - low > 1.3 * (naive_high - naive_low)  # screens of 2-5 samples that hit or miss together
    # the gate on the lower bound: the accuracy passes 50%, its lower bound does not
    (verdict,) = document["gates"]
    assert verdict["judged_on"] == "lower bound" and verdict["ci95"] == block["ci95"]
    assert block["accuracy"] >= 0.5 > low and verdict["passed"] is False
    assert document["run"]["settings"]["gate_on_interval"] is True
    result.stdout.fnmatch_lines(
        [
            "*accuracy *% ?95% CI *-*? (*/* scored, micro)*macro over apps*",
            "*gate FAILED: detector colour overall: accuracy *(95% CI *): its lower bound *% < threshold 50.0%",
        ]
    )
    assert result.ret != 0


def test_t_quantiles_for_the_paired_difference():
    reference = {1: 12.7062, 2: 4.3027, 5: 2.5706, 11: 2.2010, 19: 2.0930, 30: 2.0423, 120: 1.9799}
    for df, value in reference.items():
        assert intervals.t975(df) == pytest.approx(value, abs=1e-3)
    assert intervals.t975(10**6) == pytest.approx(intervals.Z, abs=1e-5)
    few = intervals.difference([True, True, False] * 2, [False, False, False] * 2, [0, 0, 1, 1, 2, 2])
    assert few.clusters == 3 and few.low < 0 < few.high  # 3 screens: too few to say, as McNemar's p = 0.5


def test_the_html_charts_draw_each_interval_as_an_error_bar():
    from pytest_grounding.analysis.figures import category_figure, size_figure, slice_figure
    from pytest_grounding.render.html import svg

    block = metrics.summarize(screens_records([4] * 12, correlated, seed=15))["d"]
    named = [("d", block)]
    bars = svg.render(slice_figure(named, "element_type"))
    assert bars.count('class="ci"') == len(block["by"]["element_type"])
    low, high = block["by"]["element_type"][0]["ci95"]
    assert f"95% CI {low * 100:.0f}%-{high * 100:.0f}%" in bars
    assert 'class="ci"' in svg.render(size_figure(named)) and 'class="ci"' in svg.render(category_figure(named))
    bare = {**block, "by": {k: [{**r, "ci95": None} for r in rows] for k, rows in block["by"].items()}}
    assert 'class="ci"' not in svg.render(slice_figure([("d", bare)], "element_type"))  # older reports: no bars
