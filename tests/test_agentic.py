"""Model-driven grounding's figures (analysis/agentic.py) recounted from made-up traces, their lines in
the terminal (sections/agentic.py), an episode in the HTML gallery (render/html/turns.py), and the
reproduction check keeping agentic and single-shot figures apart."""

import math
import random

import pytest

from pytest_grounding.analysis import agentic
from pytest_grounding.analysis.reproduce import DOES_NOT_APPLY, REPRODUCED, check, parse_table
from pytest_grounding.render.html.turns import crop_marks, turns_list
from pytest_grounding.sections import summarize  # the core figures and the sections'
from pytest_grounding.sections.agentic import agentic_lines

ENDS = ["click", "click", "click", "refusal", "invalid_action", "loop", "budget_crops", "budget_turns", "wrong_format"]


def turn(number, shown, kind, **more):
    action = {"kind": kind, **more}
    return {"turn": number, "shown": shown, "answer": "a", "action": action, "latency_ms": 1.0, "tokens": {}}


def episode(crops_per_turn, end, outcome, screen="s.png", index=0):
    """A record whose episode asks `crops_per_turn[i]` crops on turn i, then answers."""
    turns, shown = [], [[0, 0, 100, 100]]
    for i, count in enumerate(crops_per_turn):
        regions = [[i, k, i + 10, k + 10] for k in range(count)]
        turns.append(turn(i + 1, shown, "crop", crops=regions))
        shown = regions
    turns.append(turn(len(turns) + 1, shown, "click" if end == "click" else "none"))
    return {
        "task": "grounding",
        "detector": "d",
        "dataset": "set",
        "uid": f"u{index}",
        "image": screen,
        "outcome": outcome,
        "turns": turns,
        "agent_end": end,
        **{"element_type": "icon", "app": "a", "app_category": "c", "platform": "web", "size": "<32"},
        "latency_ms": 1.0,
    }


@pytest.fixture
def records():
    rng = random.Random(39)
    made = []
    for index in range(60):
        crops = [rng.randint(1, 2) for _ in range(rng.randint(0, 2))]
        end = rng.choice(ENDS)
        outcome = rng.choice(["hit", "miss"]) if end == "click" else ("miss" if end == "refusal" else "wrong_format")
        made.append(episode(crops, end, outcome, screen=f"s{index % 7}.png", index=index))
    return made


def test_turns_crops_and_ends_are_recounted(records):
    found = agentic.figures_of(records)
    turns = sorted(len(r["turns"]) for r in records)
    crops = sorted(sum(len(t["action"].get("crops", [])) for t in r["turns"]) for r in records)
    assert found["samples"] == 60
    assert found["turns"]["mean"] == pytest.approx(sum(turns) / 60, abs=1e-4)
    assert found["turns"]["p95"] == turns[math.ceil(0.95 * 60) - 1] and found["turns"]["max"] == turns[-1]
    assert found["crops"]["mean"] == pytest.approx(sum(crops) / 60, abs=1e-4)
    assert found["crops"]["p95"] == crops[math.ceil(0.95 * 60) - 1]
    count = {end: sum(r["agent_end"] == end for r in records) for end in set(ENDS)}
    assert found["ends"] == {k: v for k, v in sorted(count.items()) if v}
    assert found["clicks"] == count["click"] and found["loops"] == count["loop"]
    assert found["budget_exhausted"] == count["budget_crops"] + count["budget_turns"]
    assert found["invalid_actions"] == count["invalid_action"] and found["wrong_formats"] == count["wrong_format"]


def test_accuracy_by_turns_counts_the_scored_samples_of_each_length(records):
    rows = agentic.figures_of(records)["by_turns"]
    for row in rows:
        group = [r for r in records if len(r["turns"]) == row["turns"]]
        assert row["scored"] == len(group)
        assert row["hits"] == sum(r["outcome"] == "hit" for r in group)
        assert row["accuracy"] == pytest.approx(row["hits"] / row["scored"])
        low, high = row["ci95"]
        assert low <= row["accuracy"] <= high
    assert sum(row["scored"] for row in rows) == len(records)


def test_single_shot_records_and_errors_have_no_agentic_figures(records):
    plain = [{k: v for k, v in r.items() if k not in ("turns", "agent_end")} for r in records]
    assert agentic.figures_of(plain) is None
    broken = [{**records[0], "outcome": "error"}]
    assert agentic.figures_of(broken) is None
    summary = summarize(records)
    assert summary["d"]["agentic"] == agentic.figures_of(records)
    assert "agentic" not in summarize(plain)["d"]


def test_the_terminal_lines_say_the_figures(records):
    found = agentic.figures_of(records)
    lines = agentic_lines(found)
    assert f"{found['samples']} episodes" in lines[0] and f"p95 {found['turns']['p95']}" in lines[0]
    assert f"invalid action {found['invalid_actions']}" in lines[1] and f"loop {found['loops']}" in lines[1]
    assert lines[2].startswith("  accuracy by turns")
    assert agentic_lines(None) == []


def test_the_gallery_draws_each_crop_in_order_and_lists_the_turns():
    record = episode([2, 1], "budget_crops", "wrong_format")
    marks = crop_marks(record, 1.0)
    assert marks.count("<rect") == 3 and ">1</text>" in marks and ">3</text>" in marks
    listed = turns_list(record)
    assert listed.count("<li>") == 3 and "budget_crops" in listed
    hostile = {**record, "turns": [turn(1, [[0, 0, 1, 1]], "<script>", problem="<b>")]}
    assert "<script>" not in turns_list(hostile) and "<b>&lt;script&gt;</b>: &lt;b&gt;" in turns_list(hostile)
    assert turns_list({"outcome": "miss"}) == "" and crop_marks({"turns": "x"}, 1.0) == ""


def table(agentic_figure):
    result = {"preset": "p1", "model": "M", "benchmark": "bench", "figure": 50.0, "source": "a card"}
    results = [{**result, "figure": 20.0}, {**result, "figure": 90.0, "agentic": True}]
    if not agentic_figure:
        results = results[:1]
    document = {
        "benchmarks": [
            {"id": "bench", "title": "Bench", "formats": ["f"], "names": ["bench"], "samples": 4, "average": "micro"}
        ],
        "results": results,
    }
    return parse_table(document, "t.json").check("t.json")


def plain_records(hits):
    return [
        {"task": "grounding", "detector": "d", "dataset": "bench", "outcome": "hit" if i < hits else "miss"}
        for i in range(4)
    ]


@pytest.mark.parametrize("agent", [None, "crop"])
def test_the_reproduction_check_sets_agentic_figures_only_against_agentic_runs(agent):
    info = {"d": {"model": "M", "preset": {"name": "p1"}, "agent": {"mode": agent} if agent else None}}
    dataset = {"name": "bench", "format": "f", "samples": 4}
    found = check(plain_records(3), [dataset], info, table(True))[0]
    assert found.published.agentic is (agent is not None)
    assert found.published.figure == (90.0 if agent else 20.0)
    assert found.as_dict()["published"]["agentic"] is (agent is not None)
    lone = check(plain_records(4), [dataset], info, table(False))[0]
    if agent:
        assert lone.status == DOES_NOT_APPLY and "this run is agentic (agent=crop)" in lone.reason
    else:
        assert lone.status == REPRODUCED


def test_a_published_agentic_flag_must_be_a_boolean():
    from pytest_grounding.analysis.reproduce import PublishedError

    document = {
        "benchmarks": [{"id": "b", "title": "B", "formats": ["f"], "names": ["b"], "samples": 4}],
        "results": [{"preset": "p", "model": "M", "benchmark": "b", "figure": 1.0, "source": "s", "agentic": "yes"}],
    }
    with pytest.raises(PublishedError, match="agentic must be true or false"):
        parse_table(document, "t.json")
