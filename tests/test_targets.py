"""Targets beyond one box, refusal scoring and the benchmarks' headline figures (pure code)."""

from pathlib import Path

import pytest

from pytest_grounding.analysis.headlines import benchmark_figures
from pytest_grounding.core.targets import INCLUSIVE, RAY, Absent, AnyOf, Polygon, Steps, normalised, ray_cast
from pytest_grounding.core.types import Box, Prediction, Sample
from pytest_grounding.evaluate import scoring
from pytest_grounding.evaluate.runner import InvalidAnswer, as_prediction
from pytest_grounding.sections import summarize  # the core figures and the sections'

SQUARE = ((20.0, 80.0), (60.0, 80.0), (60.0, 120.0), (20.0, 120.0))


PRESENT = Box(20, 80, 60, 120)


def sample(target=None, bbox=PRESENT, **extra):
    return Sample(
        dataset="d", id="s1", uid="d-s1", image=Path("x.png"), instruction="go", bbox=bbox, target=target, extra=extra
    )


def score(target, prediction, bbox=PRESENT):
    return scoring.score(sample(target, bbox), prediction, detector="t", latency_ms=1.0, image_size=(200, 150))


# -- polygons: both rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "ray", "inclusive"),
    [
        ((40, 100), True, True),  # inside
        ((60, 100), False, True),  # right edge: the ray test's x < cross fails there
        ((20, 100), True, True),  # left edge: the ray crosses the right edge only
        ((40, 80), True, True),  # top edge: the half-open y test counts it
        ((40, 120), False, True),  # bottom edge: it does not
        ((60, 120), False, True),  # a corner
        ((61, 100), False, False),  # outside
    ],
)
def test_polygon_edges_under_both_rules(point, ray, inclusive):
    assert Polygon(SQUARE, RAY).contains(point) is ray
    assert Polygon(SQUARE, INCLUSIVE).contains(point) is inclusive


def test_ray_cast_on_a_concave_polygon():
    # An L shape: the notch at the top right is outside.
    shape = ((0, 0), (10, 0), (10, 5), (5, 5), (5, 10), (0, 10))
    assert ray_cast(shape, (2, 8)) and ray_cast(shape, (8, 2))
    assert not ray_cast(shape, (8, 8))


def test_polygon_rule_is_checked_and_validity():
    with pytest.raises(ValueError, match="unknown polygon rule"):
        Polygon(SQUARE, "fuzzy")
    assert not Polygon(((0, 0), (1, 1)), RAY).is_valid  # two vertices
    assert not Polygon(((0, 0), (1, 1), (2, 2)), RAY).is_valid  # collinear: no area
    assert Polygon(SQUARE).bounds == Box(20, 80, 60, 120)


def test_reversed_corners_are_normalised_and_reported():
    assert normalised(Box(60, 40, 20, 10)) == (Box(20, 10, 60, 40), True)
    assert normalised(Box(1, 2, 3, 4)) == (Box(1, 2, 3, 4), False)


# -- several boxes, absent, steps -----------------------------------------------------------------


def test_any_of_several_boxes_one_hit_counts():
    target = AnyOf((Box(0, 0, 10, 10), Box(50, 50, 60, 60)))
    assert target.judge([(55, 55)], False) and target.judge([(10, 10)], False)
    assert not target.judge([(30, 30)], False)
    assert not target.judge([(5, 5)], True)  # a refusal on a present target
    assert target.single_box is None and AnyOf((Box(0, 0, 1, 1),)).single_box == Box(0, 0, 1, 1)


def test_steps_ordered_unordered_and_banned():
    a, b, banned = Box(0, 0, 10, 10), Box(50, 50, 60, 60), Box(90, 90, 100, 100)
    drag = Steps(((a,), (b,)), (banned,), ordered=True)
    assert drag.judge([(5, 5), (55, 55)], False)
    assert not drag.judge([(55, 55), (5, 5)], False)  # the drag in the wrong order
    assert not drag.judge([(5, 5)], False)  # too few points
    assert drag.judge([(5, 5), (55, 55), (30, 30)], False)  # extra points are ignored
    assert not drag.judge([(5, 5), (55, 55), (95, 95)], False)  # ...unless in a banned region
    both = Steps(((a,), (b,)), ordered=False)
    assert both.judge([(55, 55), (5, 5)], False) and not both.judge([(5, 5)], False)
    assert Steps((), (banned,)).judge([(5, 5)], False) and not Steps((), (banned,)).judge([(95, 95)], False)
    assert not Steps(((),), ordered=True).judge([(5, 5)], False)  # mixed ranks: every answer fails


# -- refusal scoring ------------------------------------------------------------------------------


def test_refusal_on_absent_is_a_hit_click_on_absent_and_refusal_on_present_are_misses():
    hit = score(Absent(), Prediction.refusal("not on screen", raw="none"), bbox=Box(0, 0, 0, 0))
    assert (hit["outcome"], hit["refusal"], hit["negative"], hit["point"]) == ("hit", True, True, None)
    clicked = score(Absent(), Prediction(point=(5, 5)), bbox=Box(0, 0, 0, 0))
    assert (clicked["outcome"], clicked["refusal"], clicked["distance"]) == ("miss", False, None)
    refused = score(None, Prediction.refusal())
    assert (refused["outcome"], refused["refusal"], refused["negative"]) == ("miss", True, False)
    nothing = score(Absent(), Prediction.no_answer(raw="???"), bbox=Box(0, 0, 0, 0))
    assert nothing["outcome"] == "wrong_format"  # no answer is not a refusal


def test_refusal_forms_backward_compatible_and_sentinel():
    assert Prediction.no_answer(raw="x", refusal=True).refused  # what the VLM parser emits
    assert Prediction.refusal("gone").meta == {"refusal": True, "reason": "gone"}
    assert not Prediction.no_answer().refused and not Prediction(point=(1, 1)).refused
    assert score(Absent(), Prediction(point=(-1, -1)), bbox=Box(0, 0, 0, 0))["outcome"] == "hit"  # [-1, -1]
    assert score(Absent(), Prediction(point=(-1, 5)), bbox=Box(0, 0, 0, 0))["outcome"] == "miss"  # one negative


def test_multi_point_answers_and_iou_only_for_one_box():
    drag = Steps(((Box(0, 0, 10, 10),), (Box(50, 50, 60, 60),)), ordered=True)
    record = score(drag, Prediction(points=((5, 5), (55, 55))), bbox=Box(0, 0, 60, 60))
    assert record["outcome"] == "hit" and record["points"] == [[5, 5], [55, 55]] and record["point"] == [5, 5]
    assert record["target_shape"]["kind"] == "steps"
    single = score(drag, Prediction(point=(5, 5)), bbox=Box(0, 0, 60, 60))
    assert single["outcome"] == "miss"  # a single click cannot complete a drag
    poly = score(AnyOf((Polygon(SQUARE),)), Prediction(box=Box(20, 80, 60, 120)))
    assert poly["iou"] is None and poly["box"] == [20, 80, 60, 120]  # no IoU against a polygon
    assert score(None, Prediction(box=Box(20, 80, 60, 120)))["iou"] == 1.0


def test_points_are_checked_not_repaired():
    assert as_prediction(Prediction(points=[(1, 2), [3, 4]])).points == ((1.0, 2.0), (3.0, 4.0))
    for bad in ([(1, 2, 3)], [], "1,2"):
        with pytest.raises(InvalidAnswer):
            as_prediction(Prediction(points=bad))


def test_a_negative_flag_in_extra_makes_the_target_absent():
    from pytest_grounding.datasets._common import build_sample

    made = build_sample(
        sample_id="n1",
        image=Path("x.png"),
        instruction="find it",
        box=None,
        raw_box=None,
        problems=[],
        extra={"negative": True},
    )
    assert isinstance(made.target, Absent) and made.defect is None


# -- summary: refusal line and denominator policy -------------------------------------------------


def records():
    absent = Box(0, 0, 0, 0)
    return [
        score(None, Prediction(point=(30, 90))),  # hit
        score(None, Prediction.refusal()),  # false refusal: miss
        score(Absent(), Prediction.refusal(), bbox=absent),  # hit
        score(Absent(), Prediction(point=(1, 1)), bbox=absent),  # click on absent: miss
    ]


def uids(found):
    for index, record in enumerate(found):
        record["uid"] = f"u{index}"
    return found


def test_refusal_rows_policy_include_and_exclude():
    included = summarize(uids(records()))["t"]
    assert (included["hits"], included["scored"]) == (2, 4)
    assert included["refusals"] == {
        "policy": "include",
        "absent_targets": 2,
        "refused": 1,
        "clicked": 1,
        "refusal_accuracy": 0.5,
        "false_refusals": 1,
        "present_targets": 2,
    }
    excluded = summarize(uids(records()), refusal_rows="exclude")["t"]
    assert (excluded["hits"], excluded["scored"]) == (1, 2)
    assert excluded["refusals"]["absent_targets"] == 2 and excluded["refusals"]["policy"] == "exclude"
    with pytest.raises(ValueError, match="refusal_rows"):
        summarize(records(), refusal_rows="sometimes")
    plain = summarize(uids([score(None, Prediction(point=(30, 90)))]))["t"]
    assert "refusals" not in plain and "benchmarks" not in plain


# -- headlines --------------------------------------------------------------------------------------


def bench_record(name, outcome, uid, **slices):
    return {"dataset": "b", "uid": uid, "outcome": outcome, "benchmark": {"name": name, **slices}}


def test_mean_of_splits_and_multi_label_slices():
    found = benchmark_figures(
        [
            bench_record("ui-vision", "hit", "1", split="basic"),
            bench_record("ui-vision", "hit", "2", split="basic"),
            bench_record("ui-vision", "miss", "3", split="functional"),
            bench_record("ui-vision", "hit", "4", split="spatial"),
            bench_record("ui-vision", "wrong_format", "5", split="spatial"),
            bench_record("ui-vision", "error", "6", split="spatial"),  # not the model's answer: left out
        ]
    )[0]
    assert found["value"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert found["pooled_accuracy"] == pytest.approx(3 / 5)
    assert found["missing"] == []
    categories = benchmark_figures(
        [
            bench_record("osworld-g", "hit", "1", category=["text_matching", "element_recognition"]),
            bench_record("osworld-g", "miss", "2", category=["element_recognition"]),
        ]
    )[0]["slices"]["category"]
    assert {r["value"]: (r["hits"], r["scored"]) for r in categories} == {
        "element_recognition": (1, 2),
        "text_matching": (1, 1),
    }


def test_missing_parts_are_named():
    found = benchmark_figures([bench_record("mmbench-gui", "hit", "1", grounding_type="basic")])[0]
    assert found["missing"] == ["advanced"] and found["value"] == 1.0


def test_showdown_interval_is_the_shared_one_and_close_to_its_authors_bootstrap():
    """Showdown-Clicks' authors bootstrap the accuracy (scipy, percentile, no clusters); the headline's
    `ci95` is the shared interval (one sample per screen here): deterministic and about as wide."""
    found = [bench_record("showdown-clicks", o, str(i)) for i, o in enumerate(["hit"] * 30 + ["miss"] * 20)]
    first, second = benchmark_figures(found)[0], benchmark_figures(found)[0]
    assert first == second and first["value"] == pytest.approx(0.6) and "interval" not in first
    low, high = first["ci95"]
    assert low < 0.6 < high
    assert benchmark_figures(found[:5])[0]["ci95"][1] == 1.0
    scipy_stats = pytest.importorskip("scipy.stats")
    import numpy as np

    data = (np.array([1] * 30 + [0] * 20),)
    reference = scipy_stats.bootstrap(
        data, np.mean, method="percentile", n_resamples=2000, random_state=0
    ).confidence_interval
    assert low == pytest.approx(reference.low, abs=0.03) and high == pytest.approx(reference.high, abs=0.03)
