"""Pure code: boxes, scoring, aggregation, gates, the registry."""

import math

import numpy as np
import pytest

from pytest_grounding.analysis import gates, metrics
from pytest_grounding.core import record
from pytest_grounding.core.registry import Registry, UnknownName
from pytest_grounding.core.types import Box, Prediction, Sample
from pytest_grounding.detectors import builtin_registry, parse_spec
from pytest_grounding.evaluate import scoring


def sample(**kw):
    fields = dict(dataset="d", id="s1", uid="d-s1", image="/x.png", instruction="i", bbox=Box(10, 10, 20, 20))
    fields.update(kw)
    return Sample(**fields)


def test_containment_includes_edges_and_distance_is_zero_inside():
    box = Box(10, 10, 20, 20)
    assert box.contains((10, 10)) and box.contains((20, 20)) and box.contains((15, 20))
    assert not box.contains((20.01, 15)) and not box.contains((9.99, 15))
    assert box.distance_to((15, 15)) == 0 and box.distance_to((23, 24)) == 5


def test_iou_and_conversions():
    assert Box(0, 0, 10, 10).iou(Box(0, 0, 10, 10)) == 1
    assert Box(0, 0, 10, 10).iou(Box(5, 0, 15, 10)) == pytest.approx(1 / 3)
    assert Box(0, 0, 1, 1).iou(Box(2, 2, 3, 3)) == 0
    assert Box.from_xywh(5, 6, 10, 20) == Box(5, 6, 15, 26)
    assert Box.from_normalized(0.5, 0.25, 1, 1, 200, 100) == Box(100, 25, 200, 100)
    assert not Box(5, 5, 5, 9).is_valid and not Box(0, 0, math.nan, 1).is_valid


@pytest.mark.parametrize("side, bucket", [(31.9, "<32"), (32, "32-100"), (100, "32-100"), (100.5, ">100")])
def test_size_buckets(side, bucket):
    assert record.size_bucket(side) == bucket


def test_score_hit_miss_wrong_format_and_box_centre():
    s = sample()
    hit = scoring.score(s, Prediction(point=(10, 20)), detector="d", latency_ms=1.5, image_size=(100, 50))
    assert hit["outcome"] == "hit" and hit["distance"] == 0 and hit["area_share"] == pytest.approx(0.02)
    miss = scoring.score(s, Prediction(point=(30, 10)), detector="d", latency_ms=1, image_size=(100, 50))
    assert miss["outcome"] == "miss" and miss["distance"] == 10
    boxed = scoring.score(s, Prediction(box=Box(12, 12, 18, 18)), detector="d", latency_ms=1, image_size=(100, 50))
    assert boxed["outcome"] == "hit" and boxed["point"] == [15, 15] and boxed["iou"] == pytest.approx(0.36)
    wrong = scoring.score(
        s, Prediction.no_answer(raw="click(start_box='=')"), detector="d", latency_ms=1, image_size=(100, 50)
    )
    assert wrong["outcome"] == "wrong_format" and wrong["raw"] == "click(start_box='=')"
    nan = scoring.score(s, Prediction(point=(math.nan, 1)), detector="d", latency_ms=1, image_size=(100, 50))
    assert nan["outcome"] == "wrong_format"


def test_plain_turns_numpy_into_builtins():
    value = record.plain({"a": np.float32(1.5), "b": [np.int64(2)], "c": np.array([1, 2]), "d": Box(0, 0, 1, 1)})
    assert value == {"a": 1.5, "b": [2], "c": [1, 2], "d": [0.0, 0.0, 1.0, 1.0]}
    assert type(value["a"]) is float and type(value["b"][0]) is int


def records():
    out = []
    for i, (outcome, app, etype) in enumerate(
        [
            ("hit", "A", "icon"),
            ("miss", "A", "icon"),
            ("hit", "B", "text"),
            ("wrong_format", "B", "text"),
            ("error", "B", "icon"),
        ]
    ):
        out.append(
            {
                "detector": "d",
                "dataset": "x",
                "uid": f"u{i}",
                "outcome": outcome,
                "app": app,
                "element_type": etype,
                "app_category": "c",
                "platform": "p",
                "size": "<32",
                "iou": 0.5 if outcome == "hit" else None,
                "latency_ms": float(i + 1),
            }
        )
    return out


def test_summary_micro_macro_errors_apart_and_order_independent():
    summary = metrics.summarize(records())["d"]
    assert (summary["hits"], summary["scored"], summary["errors"], summary["wrong_format"]) == (2, 4, 1, 1)
    assert summary["accuracy"] == 0.5
    assert summary["macro_app_accuracy"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert summary["latency_ms"]["p50"] == 2.5 and summary["latency_ms"]["n"] == 4  # errors excluded
    assert summary["mean_iou"] == 0.5
    icon = next(r for r in summary["by"]["element_type"] if r["value"] == "icon")
    assert (icon["scored"], icon["hits"], icon["errors"]) == (2, 1, 1)
    assert metrics.summarize(reversed(records())) == metrics.summarize(records())


def test_percentile_matches_numpy():
    values = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]
    for q in (0, 50, 95, 100):
        assert metrics.percentile(values, q) == pytest.approx(np.percentile(values, q))
    assert metrics.percentile([], 50) is None


@pytest.mark.parametrize(
    "spec, label, threshold",
    [
        ("0.4", "overall", 0.4),
        ("40%", "overall", 0.4),
        ("element_type=icon:0.3", "element_type=icon", 0.3),
        ("app=VS Code:25%", "app=VS Code", 0.25),
    ],
)
def test_gate_specs(spec, label, threshold):
    gate = gates.parse_gate(spec)
    assert gate.label == label and gate.threshold == pytest.approx(threshold)


@pytest.mark.parametrize("spec", ["abc", "colour=red:0.3", "element_type=:0.3", "2", "icon:0.3"])
def test_bad_gate_specs_name_the_spec_and_source(spec):
    with pytest.raises(ValueError, match=rf"bad accuracy gate '{spec}' \(from ini grounding_min_accuracy\)"):
        gates.parse_gate(spec, "ini grounding_min_accuracy")


def test_gates_judge_every_detector_and_fail_empty_slices():
    summary = metrics.summarize(records())
    verdicts = gates.judge(
        [gates.parse_gate("0.5"), gates.parse_gate("app=A:0.6"), gates.parse_gate("app=Z:0")], summary
    )
    assert [v.passed for v in verdicts] == [True, False, False]
    assert "no scored samples" in verdicts[2].describe()
    assert verdicts[1].describe() == "gate FAILED: detector d app=A: accuracy 50.0% of 2 < threshold 60.0%"
    apps = sorted({str(r["app"]) for r in records()})
    assert f"no sample has app=Z (values: {', '.join(apps)})" in verdicts[2].describe()  # nothing close: no guess
    (typo,) = gates.judge([gates.parse_gate("app=a_:0.1")], summary)  # one edit from "A"? too short to guess
    (near,) = gates.judge([gates.parse_gate(f"app={apps[0]}x:0.1")], summary)
    assert f"did you mean {apps[0]!r}?" in near.describe() and not near.passed
    assert not typo.passed


def test_registry_is_lazy_and_suggests_names():
    registry = Registry("detector")
    registry.register("lazy", "pytest_grounding.detectors.floors:CenterDetector")
    assert registry.get("lazy").load()().name == "center"
    with pytest.raises(UnknownName, match=r"unknown detector 'lazzy'. Did you mean 'lazy'\? Known: lazy."):
        registry.get("lazzy")
    with pytest.raises(ValueError, match="already registered"):
        registry.register("lazy", str)
    assert {"center", "random", "ocr"} <= set(builtin_registry().names())


def test_a_registry_holds_objects_as_well_as_factories():
    """Dataset formats are registered as the Format object itself (docs: formats), not a callable."""
    from pytest_grounding.datasets.pointerbench import FORMAT

    registry = Registry("dataset format")
    registry.register("mine", FORMAT)
    registry.register("lazy", "pytest_grounding.datasets.pointerbench:FORMAT")
    assert registry.get("mine").load() is FORMAT is registry.get("lazy").load()


def test_detector_specs_carry_options():
    assert parse_spec("random:seed=3") == ("random", {"seed": 3})
    assert parse_spec("ocr:semantic=false,min_score=0.5") == ("ocr", {"semantic": False, "min_score": 0.5})
    with pytest.raises(ValueError, match="not key=value"):
        parse_spec("random:seed")


def test_installed_packages_register_through_entry_points(monkeypatch):
    from importlib import metadata

    entry = metadata.EntryPoint(
        "shipped", "pytest_grounding.detectors.floors:RandomDetector", "pytest_grounding.detectors"
    )
    monkeypatch.setattr(metadata, "entry_points", lambda group: [entry] if group == entry.group else [])
    registry = builtin_registry()
    registry.register_entry_points("pytest_grounding.detectors")
    assert registry.get("shipped").load()(seed=1).seed == 1
    assert registry.get("shipped").origin.startswith("entry point")


def test_the_run_reads_every_entry_point_group_in_one_scan(monkeypatch, pytestconfig):
    from importlib import metadata

    from pytest_grounding.plugin.common.plan import RunPlan

    entries = metadata.EntryPoints(
        [
            metadata.EntryPoint(
                "shipped", "pytest_grounding.detectors.floors:RandomDetector", "pytest_grounding.detectors"
            ),
            metadata.EntryPoint("elsewhere", "some.module:Thing", "another.group"),
        ]
    )
    scans = []

    def entry_points(**selection):
        scans.append(selection)
        return entries.select(**selection) if selection else entries

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    run = RunPlan.build(pytestconfig)
    assert scans == [{}]  # one scan for the formats, detectors and strategies
    assert run.detectors.get("shipped").origin.startswith("entry point")
    assert "elsewhere" not in run.detectors and "shipped" not in run.formats


def test_gates_on_the_interval_lower_bound_are_opt_in():
    summary = metrics.summarize(records())
    gate = [gates.parse_gate("0.3")]
    (plain,) = gates.judge(gate, summary)
    (lower,) = gates.judge(gate, summary, on_lower=True)
    block = summary["d"]
    assert plain.ci95 == tuple(block["ci95"]) and plain.judged == block["accuracy"]
    assert lower.judged == block["ci95"][0] < 0.3 <= block["accuracy"]
    assert plain.passed and not lower.passed
    assert "its lower bound" in lower.describe() and "95% CI" in lower.describe()
    assert "lower bound" not in plain.describe()
