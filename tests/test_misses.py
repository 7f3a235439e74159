"""core/misses.py and analysis/misses.py: each miss kind from a hand-made record, wrong_element
from the other elements of the screen, the tolerance curve against a recount, and the sections'
parts in every output."""

import math

import pytest

from pytest_grounding.analysis import metrics, tracked
from pytest_grounding.analysis import misses as analysis
from pytest_grounding.core.misses import classified, miss_fields
from pytest_grounding.render.html import render
from pytest_grounding.render.markdown import report_markdown
from pytest_grounding.sections import sections

TARGET = [100.0, 100.0, 140.0, 120.0]
OTHER = [300.0, 300.0, 360.0, 330.0]


def record(point, outcome="miss", **more):
    return {"task": "grounding", "dataset": "d", "image": "s.png", "uid": str(point), "target": TARGET,
            "image_size": [800, 600], "outcome": outcome, "point": point, "negative": False, **more}  # fmt: skip


@pytest.mark.parametrize(
    "point,outcome,kind",
    [
        ([145.0, 110.0], "miss", "near"),  # 5 px right of the box (the tolerance: max(10, 6) px)
        ([330.0, 310.0], "miss", "wrong_element"),
        ([900.0, 10.0], "miss", "off_image"),
        ([500.0, 500.0], "miss", "empty"),
        ([155.0, 110.0], "miss", "empty"),  # 15 px: beyond the near tolerance
        (None, "wrong_format", "no_answer"),
        (None, "miss", "no_answer"),  # a refusal of a present target
        ([120.0, 110.0], "hit", None),
    ],
)
def test_each_kind_of_miss(point, outcome, kind):
    found = miss_fields(record(point, outcome), [TARGET, OTHER])
    assert found.get("miss_kind") == kind
    if point is not None:
        (x1, y1, x2, y2), (x, y) = TARGET, point
        expected = math.hypot(max(x1 - x, 0, x - x2), max(y1 - y, 0, y - y2))
        assert found["distance_px"] == pytest.approx(expected, abs=1e-3)


def test_wrong_element_comes_from_the_other_records_of_the_screen():
    mine = record([330.0, 310.0])
    other = {**record([330.0, 310.0], "hit"), "uid": "other", "target": OTHER}
    elsewhere = {**record([10.0, 10.0], "hit"), "uid": "far", "image": "t.png", "target": [0, 0, 20, 20]}
    alone = classified([mine, elsewhere])
    assert alone[0]["miss_kind"] == "empty"
    together = classified([mine, other, elsewhere])
    assert together[0]["miss_kind"] == "wrong_element" and "miss_kind" not in together[1]


def test_the_tolerance_curve_equals_a_recount():
    records = [record([120.0, 110.0], "hit")] + [record([140.0 + d, 110.0]) for d in (3, 7, 15, 30, 80, 150)]
    records.append(record(None, "wrong_format"))
    records = classified(records)
    curve = {row["px"]: row["accuracy"] for row in analysis.tolerance_curve(records)["px"]}
    for t, value in curve.items():
        recount = sum(r["point"] is not None and max(r["point"][0] - 140.0, 0) <= t for r in records) / len(records)
        assert value == pytest.approx(recount)
    assert curve[0] == 1 / 8 and curve[100] == 6 / 8
    found = analysis.miss_figures(records)
    assert found["kinds"] == {
        "near": 2,
        "wrong_element": 0,
        "off_image": 0,
        "empty": 4,
        "no_answer": 1,
        "answer_in_reasoning": 0,
    }
    assert sum(sum(row) for row in found["heatmap"]["cells"]) == 6


def test_the_sections_render_in_markdown_html_and_the_trackers():
    records = classified([record([120.0, 110.0], "hit"), record([145.0, 110.0])])
    block = {
        **{k: 0 for k in ("samples", "scored", "hits", "misses", "wrong_format", "errors", "with_box", "truncated")},
        "task": "grounding", "detector": "d", "accuracy": 0.5, "mean_iou": None, "ci95": None,
        "macro_app_accuracy": None, "macro_dataset_accuracy": None,
        "latency_ms": {"n": 0, "p50": None, "p95": None, "mean": None, "total_s": 0.0},
        "by": {k: [] for k in metrics.SLICES},
        "tolerance": analysis.tolerance_curve(records)["px"],
        "tolerance_share": analysis.tolerance_curve(records)["share_of_diagonal"],
        "miss_analysis": analysis.miss_figures(records),
        "diagnosis": analysis.diagnosis(records),
    }  # fmt: skip
    frame_check = {"d": {"mode": "fail", "requests": 12, "cached": 0, "failed": 0, "name": "as-preset",
                         "evidence": "answers on target: as-preset 12/12", "suggestion": []}}  # fmt: skip
    document = {"summary": {"d": block}, "run": {"detectors": {}}, "samples": [], "frame_check": frame_check}
    text = report_markdown(document)
    assert "### Accuracy against tolerance" in text and "### Why it misses" in text and "### Frame check" in text
    page, _, _ = render(document)
    assert 'id="tolerance"' in page and '<svg class="heatmap"' in page and 'id="frame-check"' in page
    # the heat map says what it covers, with its axes and scale (issue 61)
    assert "1 of 1 failed items drawn: those whose click lands on the screen" in page
    assert "x: left to right" in page and "y: top to bottom" in page and 'fill="url(#heat-scale)"' in page
    assert "| detector | failed items |" in text  # one word for misses and wrong formats together
    (run,) = tracked.tracked_runs(document, sections())
    assert run.metrics["tolerance.px10"] == 1.0 and run.metrics["miss_analysis.near"] == 1


def test_a_stored_kind_stands_while_its_click_and_outcome_do():
    """rescore and merge hold fewer elements of a screen than the run did (-k, one shard): the run's
    wrong_element stays; a new click is classified again from the records."""
    alone = {**record([330.0, 310.0]), "miss_kind": "wrong_element"}
    assert classified([alone])[0]["miss_kind"] == "wrong_element"
    moved = {**alone, "point": [500.0, 500.0]}
    assert classified([moved], [alone])[0]["miss_kind"] == "empty"
    now_near = record([145.0, 110.0])
    assert classified([now_near], [alone])[0]["miss_kind"] == "near"
    hit = record([120.0, 110.0], "hit")
    assert "miss_kind" not in classified([hit], [alone])[0]
    claimed = {**record([500.0, 500.0]), "miss_kind": "near"}  # a kind the record itself contradicts
    assert classified([claimed])[0]["miss_kind"] == "empty"
    off = {**record([900.0, 10.0]), "miss_kind": "wrong_element"}
    assert classified([off])[0]["miss_kind"] == "off_image"


def test_rescore_keeps_the_stored_kind_of_an_unchanged_miss():
    from pytest_grounding.core.profiles import get_profile
    from pytest_grounding.evaluate.rescore import rescore

    stored = {**record([330.0, 310.0]), "miss_kind": "wrong_element", "id": "s1", "detector": "d",
              "instruction": "Press it", "latency_ms": 1.0}  # fmt: skip
    (again,) = rescore([stored], get_profile(None)).records
    assert again["outcome"] == "miss" and again["miss_kind"] == "wrong_element"
