"""Scoring profiles (core/profiles.py) on their edge cases, the score of a sample under each, the
raw answer kept whole, and records turned back into samples for `rescore` (evaluate/rescore.py)."""

import pytest

from pytest_grounding.core.profiles import DEFAULT_PROFILE, PROFILES, get_profile, owl_box, owl_point, profile_of
from pytest_grounding.core.record import RAW_LIMIT
from pytest_grounding.core.targets import INCLUSIVE, RAY, Absent, AnyOf, Polygon, Steps
from pytest_grounding.core.types import Box, Prediction, Sample
from pytest_grounding.evaluate import scoring
from pytest_grounding.evaluate.rescore import rescore, respec
from pytest_grounding.evaluate.sample_of_record import sample_of, target_of_record
from pytest_grounding.plugin.common.options import SCORING_PROFILES

SIZE = (160, 120)
BOX = Box(10, 10, 30, 30)
PIXEL, OWL, HALF = (get_profile(n) for n in ("pixel", "gui-owl-1.5", "half-open"))


def sample(target=None, bbox=BOX, **extra):
    return Sample("d", "s1", "s1", "img.png", "Click it", bbox, image_size=SIZE, target=target, extra=extra)


def outcome(prediction, profile, target=None, bbox=BOX):
    record = scoring.score(
        sample(target, bbox), prediction, detector="x", latency_ms=1.0, image_size=SIZE, profile=profile
    )
    return record["outcome"]


def test_the_option_lists_every_profile_and_the_default_is_pixel():
    assert SCORING_PROFILES == tuple(PROFILES) == ("pixel", "gui-owl-1.5", "half-open")
    assert DEFAULT_PROFILE == "pixel" and get_profile(None) is PIXEL
    assert all(p.source and p.rule for p in PROFILES.values())
    with pytest.raises(ValueError, match=r"known: pixel, gui-owl-1\.5, half-open"):
        get_profile("owl")


@pytest.mark.parametrize(
    "point, pixel, half",
    [
        ((30, 30), "hit", "miss"),  # bottom-right corner: inside edges included, outside half-open
        ((10, 10), "hit", "hit"),  # top-left corner: inside under both
        ((29.99, 29.99), "hit", "hit"),  # truncated to 29: inside the half-open box
        ((30.5, 20), "miss", "miss"),  # truncated to 30: still on the open edge
        ((9.99, 20), "miss", "miss"),  # truncated to 9: left of the box
        ((20, 30.0), "hit", "miss"),  # bottom edge
    ],
)
def test_pixel_counts_edges_half_open_leaves_the_right_and_bottom_out(point, pixel, half):
    assert outcome(Prediction(point=point), PIXEL) == pixel
    assert outcome(Prediction(point=point), HALF) == half


def test_half_open_keeps_a_polygons_own_rule():
    triangle = Polygon(((10, 10), (30, 10), (10, 30)), INCLUSIVE)
    target = AnyOf((triangle,))
    assert outcome(Prediction(point=(20, 10)), HALF, target) == "hit"  # on an edge: inclusive
    ray = AnyOf((Polygon(((10, 10), (30, 10), (10, 30)), RAY),))
    assert outcome(Prediction(point=(15.7, 15.2)), HALF, ray) == "hit"  # truncated to (15, 15): inside


def test_gui_owl_rounds_the_box_outward_in_0_1000_and_the_point_to_integers():
    assert owl_box(BOX, SIZE) == Box(62, 83, 188, 250)  # 10*6.25=62.5 floor, 30*6.25=187.5 ceil
    assert owl_point((30.08, 30.0), SIZE) == (188.0, 250.0)
    answer = Prediction(point=(30.08, 30.0))  # outside in pixels, inside once rounded outward
    assert outcome(answer, PIXEL) == "miss" and outcome(answer, HALF) == "miss"
    assert outcome(answer, OWL) == "hit"
    assert outcome(Prediction(point=(30.4, 20)), OWL) == "miss"  # 190 > 188


def test_gui_owl_counts_no_point_as_0_0_and_a_refusal_right_at_0_0():
    corner = Box(0, 0, 8, 8)
    nothing = Prediction.no_answer(raw="I cannot tell")
    assert outcome(nothing, PIXEL, bbox=corner) == "wrong_format"
    assert outcome(nothing, OWL, bbox=corner) == "hit"  # (0, 0) lands in a top-left target
    assert outcome(nothing, OWL) == "wrong_format"  # (0, 0) is not in the box: still no answer
    refusal = Prediction.refusal(raw='{"action": "terminate"}')
    absent = sample(Absent())
    for profile, expected in ((PIXEL, "hit"), (OWL, "hit"), (HALF, "hit")):
        record = scoring.score(absent, refusal, detector="x", latency_ms=1, image_size=SIZE, profile=profile)
        assert record["outcome"] == expected and record["refusal"] is True
    # a parse failure on an absent target: a wrong format by pixels, a right refusal by GUI-Owl's (0, 0)
    assert scoring.score(absent, nothing, detector="x", latency_ms=1, image_size=SIZE, profile=OWL)["outcome"] == "hit"
    assert scoring.score(absent, nothing, detector="x", latency_ms=1, image_size=SIZE)["outcome"] == "wrong_format"
    # a click on an absent target is a miss, unless it is (0, 0) to GUI-Owl
    click = Prediction(point=(40, 40))
    assert scoring.score(absent, click, detector="x", latency_ms=1, image_size=SIZE, profile=OWL)["outcome"] == "miss"
    zero = Prediction(point=(0.05, 0.05))
    assert scoring.score(absent, zero, detector="x", latency_ms=1, image_size=SIZE, profile=OWL)["outcome"] == "hit"
    # a refusal on a present target: judged at (0, 0)
    assert outcome(refusal, OWL, bbox=corner) == "hit" and outcome(refusal, PIXEL, bbox=corner) == "miss"


def test_steps_are_judged_by_the_profile_rule_per_point():
    steps = Steps(((Box(10, 10, 30, 30),), (Box(50, 50, 70, 70),)))
    on_edges = Prediction(points=((30, 30), (70, 70)))
    assert outcome(on_edges, PIXEL, steps) == "hit"
    assert outcome(on_edges, HALF, steps) == "miss"


def test_the_raw_answer_is_kept_whole_up_to_the_limit():
    long = "thinking. " * 800 + "(125,167)"  # 8,009 characters: a thinking model's answer
    record = scoring.score(sample(), Prediction(point=(20, 20), raw=long), detector="x", latency_ms=1, image_size=SIZE)
    assert record["raw"] == long
    huge = "x" * (RAW_LIMIT + 10)
    record = scoring.score(sample(), Prediction(point=(20, 20), raw=huge), detector="x", latency_ms=1, image_size=SIZE)
    assert len(record["raw"]) == RAW_LIMIT + 3 and record["raw"].endswith("...")
    assert RAW_LIMIT >= 100_000


@pytest.mark.parametrize(
    "target",
    [
        None,
        Absent(),
        AnyOf((Box(1, 2, 3, 4), Polygon(((0, 0), (9, 0), (0, 9)), INCLUSIVE))),
        Steps(((Box(1, 1, 5, 5),), (Polygon(((0, 0), (9, 0), (0, 9))),)), (Box(40, 40, 50, 50),), False),
    ],
)
def test_a_record_gives_back_its_sample_and_target(target):
    original = sample(target, benchmark={"group": "cad"})
    record = scoring.score(original, Prediction(point=(3, 3)), detector="x", latency_ms=1, image_size=SIZE)
    again = sample_of(record)
    rebuilt = target_of_record(record)
    assert (rebuilt.describe() if rebuilt else None) == (target.describe() if target else None)
    assert again.bbox == original.bbox and again.image_size == SIZE and again.extra == {"benchmark": {"group": "cad"}}
    assert scoring.score(again, Prediction(point=(3, 3)), detector="x", latency_ms=1, image_size=SIZE) == record


def test_rescore_changes_only_what_the_profile_changes_and_keeps_errors():
    records = [
        scoring.score(sample(), Prediction(point=p), detector="x", latency_ms=1, image_size=SIZE)
        for p in ((30, 30), (20, 20), (31, 31))
    ]
    error = scoring.error_record(sample(), detector="x", message="boom")
    found = rescore([*records, error], HALF)
    assert [r["outcome"] for r in found.records] == ["miss", "hit", "miss", "error"]
    assert found.changed == 1 and found.kept == 1 and found.parsed == 0
    assert rescore(found.records, PIXEL).records[:3] == tuple(records)


def test_a_report_without_a_profile_is_pixel():
    assert profile_of({}) == "pixel"
    assert profile_of({"scoring_profile": {"name": "half-open"}}) == "half-open"


def test_a_reparsed_record_names_its_new_preset_and_drops_what_the_old_answer_left():
    assert respec("openai:base_url=http://h/v1,preset=qwen3-vl,concurrency=2", "uground-v1") == (
        "openai:base_url=http://h/v1,preset=uground-v1,concurrency=2"
    )
    assert respec("openai:base_url=http://h/v1", "gta1") == "openai:base_url=http://h/v1,preset=gta1"
    assert respec("uitars", "gta1") == "uitars:preset=gta1"
    two = Prediction(points=((20, 20), (25, 25)), meta={"model_image": [336, 252]}, raw="drag")
    record = scoring.score(sample(), two, detector="openai:preset=a", latency_ms=1, image_size=SIZE)
    record = {**record, "baseline": "still_hit", "fingerprint": "f1"}

    def parse(stored, size):
        return Prediction(point=(50, 50), raw=stored["raw"], meta={"model_image": [168, 112]})

    found = rescore([record], PIXEL, parse, "b")
    (again,) = found.records
    assert again["detector"] == "openai:preset=b" and again["point"] == [50.0, 50.0] and again["outcome"] == "miss"
    assert "points" not in again and "baseline" not in again and again["fingerprint"] == "f1"
    assert found.parsed == 1 and found.changed == 1
