"""The reproduction check (pure): the shipped figures and their sources, how a dataset is recognised
as a known benchmark, how a preset's published model is chosen, the averages, and the verdicts
reproduced / not reproduced / does not apply with the reason."""

import json
import re
from pathlib import Path

import pytest

from helpers import SHARED_DATA, needs_shared
from pytest_grounding.analysis import reproduce
from pytest_grounding.analysis.reproduce import (
    DOES_NOT_APPLY,
    NOT_REPRODUCED,
    REPRODUCED,
    PublishedError,
    Table,
    check,
    choose,
    measure,
    parse_table,
    shipped_table,
)

PRESETS = [
    *("uitars-1.5-point", "uitars-1.5-computer-use", "uitars-1.0", "qwen2.5-vl", "qwen3-vl", "os-atlas-7b"),
    *("uground-v1", "gta1", "ui-venus-ground", "ui-venus-1.5", "gui-owl-1.5", "opencua", "holo1.5", "showui"),
    *("seeclick", "aria-ui", "gpt-box", "claude", "gemini-box2d", "gemini-point"),
    *("mai-ui", "groundnext", "holo2"),  # issue 28 (evocua and holo3: no published figure found)
    *("kv-ground", "qwen3.5"),  # issue 28, read from their own sources (docs/presets-2026.md)
]
REFERENCE = SHARED_DATA.parent / "reference" / "model-presets.md"
FIELD_2026 = SHARED_DATA.parent / "reference" / "field-2026.md"  # the 2026 families' figures
# Figures read later from the families' own sources (not in ../shared): each is written on this
# page beside its source, and only these presets' figures are looked for there.
PRESETS_2026_PAGE = Path(__file__).parent.parent / "docs" / "presets-2026.md"
READ_LATER = {"kv-ground", "qwen3.5"}
# Benchmarks whose figures were read from their sources for issue 28 and are written on this page.
BENCHMARKS_PAGE = Path(__file__).parent.parent / "docs" / "benchmarks.md"
READ_ON_BENCHMARKS_PAGE = {"venusbench-gd"}


def table(*results, samples=10, within=2.0, average="micro"):
    document = {
        "criterion": {"within_points": within},
        "benchmarks": [
            {
                "id": "bench",
                "title": "Bench",
                "formats": ["pointerbench"],
                "names": ["bench"],
                "samples": samples,
                "average": average,
            }
        ],
        "results": list(results),
    }
    return parse_table(document, "test.json").check("test.json")


def result(figure, preset="p1", model="Model-7B", match=("7b",), **extra):
    return {
        "preset": preset,
        "model": model,
        "match": list(match),
        "benchmark": "bench",
        "figure": figure,
        "source": "a paper",
        **extra,
    }


def records(hits, misses=0, wrong=0, errors=0, detector="det", dataset="bench"):
    outcomes = ["hit"] * hits + ["miss"] * misses + ["wrong_format"] * wrong + ["error"] * errors
    return [
        {
            "task": "grounding",
            "detector": detector,
            "dataset": dataset,
            "outcome": o,
            "platform": "web",
            "element_type": "text",
        }
        for o in outcomes
    ]


DATASET = {"name": "bench", "format": "pointerbench", "samples": 10, "fingerprint": "f00"}
INFO = {"det": {"model": "org/Model-7B-Instruct", "preset": {"name": "p1", "family": "x"}}}


def verdict(found_records, published, *, info=INFO, dataset=DATASET, **options):
    found = check(found_records, [dataset], info, published, **options)
    assert len(found) == 1
    return found[0]


# ---- the shipped data -------------------------------------------------------------------------------


def test_the_shipped_figures_cover_every_preset_and_name_a_source():
    shipped = shipped_table()
    assert {r.preset for r in shipped.results} == set(PRESETS)
    assert {b.id for b in shipped.benchmarks} == {"screenspot-pro", "screenspot-v2", "screenspot", "venusbench-gd"}
    assert all(r.source.strip() and 0 <= r.figure <= 100 for r in shipped.results)
    keys = [(r.preset, r.benchmark, r.model) for r in shipped.results]
    assert len(keys) == len(set(keys))  # one figure per model, preset and benchmark
    assert shipped.within_points == 2.0


@pytest.mark.skipif(not REFERENCE.is_file(), reason=f"{REFERENCE} is not here")
def test_every_shipped_figure_is_written_in_the_reference():
    text = REFERENCE.read_text(encoding="utf-8")
    if FIELD_2026.is_file():
        text += FIELD_2026.read_text(encoding="utf-8")
    page = PRESETS_2026_PAGE.read_text(encoding="utf-8")
    absent = []
    for found in shipped_table().results:
        forms = {f"{found.figure:g}", f"{found.figure:.1f}", f"{found.figure:.2f}"}
        where = text + page if found.preset in READ_LATER else text
        if found.benchmark in READ_ON_BENCHMARKS_PAGE:
            where = BENCHMARKS_PAGE.read_text(encoding="utf-8")
        if not any(re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", where) for form in forms):
            absent.append((found.preset, found.model, found.figure))
    assert absent == []


def test_each_presets_models_are_told_apart_by_their_names():
    shipped = shipped_table()
    for preset, benchmark in {(r.preset, r.benchmark) for r in shipped.results}:
        candidates = shipped.candidates(preset, benchmark)
        for entry in candidates:
            chosen, why = choose(candidates, f"org/{entry.model}")
            assert chosen == entry, (preset, benchmark, entry.model, why)


# ---- which benchmark, which figure --------------------------------------------------------------------


@pytest.mark.parametrize(
    "dataset, expected",
    [
        ({"name": "screenspot-pro", "format": "screenspot-pro", "samples": 1581}, "screenspot-pro"),
        ({"name": "ScreenSpot-Pro_main", "format": "screenspot-pro", "samples": 1581}, "screenspot-pro"),
        ({"name": "screenspot_v2", "format": "screenspot", "samples": 1272}, "screenspot-v2"),
        ({"name": "screenspot-v1", "format": "screenspot", "samples": 1272}, "screenspot"),
        ({"name": "screenspot", "format": "screenspot", "samples": 1272}, "screenspot"),
        ({"name": "screenspot-pro", "format": "screenspot-pro", "samples": 1573}, None),  # another count
        ({"name": "screenspot-pro", "format": "harness", "samples": 1581}, None),  # another format
        ({"name": "my-data", "format": "screenspot-pro", "samples": 1581}, None),  # no name of it
    ],
)
def test_a_dataset_is_a_known_benchmark_by_format_count_and_name(dataset, expected):
    found = shipped_table().identify({"fingerprint": "0" * 16, **dataset})
    assert (found.id if found else None) == expected


def test_a_listed_fingerprint_identifies_a_dataset_whatever_its_name():
    document = {"benchmarks": [{"id": "b", "title": "B", "formats": ["x"], "samples": 3, "fingerprints": ["abc"]}]}
    known = parse_table(document, "t.json")
    assert known.identify({"name": "anything", "format": "other", "samples": 99, "fingerprint": "abc"}).id == "b"
    assert known.identify({"name": "b", "format": "x", "samples": 3, "fingerprint": "zzz"}) is None  # no names


@needs_shared
def test_the_screenspot_v1_copy_on_this_machine_is_recognised():
    from pytest_grounding.datasets import load_dataset

    dataset = load_dataset(str(SHARED_DATA / "screenspot-v1"))
    assert shipped_table().identify(dataset.summary()).id == "screenspot"


def test_the_longest_model_match_wins_and_unknown_models_are_said():
    candidates = shipped_table().candidates("opencua", "screenspot-pro")  # OpenCUA and GTA1 on OpenCUA
    assert choose(candidates, "Salesforce/GTA1-7B")[0].figure == 55.5
    assert choose(candidates, "xlangai/OpenCUA-7B")[0].figure == 50.0
    chosen, why = choose(candidates, "my-finetune")
    assert chosen is None and "'my-finetune' is none of the models" in why and "GTA1-32B 63.6" in why
    general, specific = (
        reproduce.Published("p", m, "b", f, "s", match=(t,))
        for m, f, t in (("M-7B", 10.0, "7b"), ("M-7B-2507", 20.0, "m-7b-2507"))
    )
    assert choose([general, specific], "org/M-7B-2507")[0] is specific
    assert choose([general, specific], "org/M-7B")[0] is general
    sizes = shipped_table().candidates("qwen2.5-vl", "screenspot-pro")
    assert choose(sizes, "Qwen/Qwen2.5-VL-72B-Instruct")[0].figure == 53.3  # 72b is not 7b
    assert choose(sizes, "Qwen/Qwen2.5-VL-7B-Instruct")[0].figure == 27.6
    assert choose([], "x") == (None, None)


def test_an_entry_without_match_takes_any_model_and_a_tie_is_ambiguous():
    anyone = reproduce.Published("p", "M", "b", 10.0, "s")
    assert choose([anyone], None) == (anyone, None)
    one, two = (reproduce.Published("p", m, "b", 10.0, "s", match=("7b",)) for m in ("A-7B", "B-7B"))
    chosen, why = choose([one, two], "x-7b")
    assert chosen is None and "fits several" in why


# ---- the figure and the verdict -------------------------------------------------------------------------


def test_micro_counts_wrong_formats_as_misses_and_cells_average_the_cells():
    group = records(6, misses=1, wrong=1)  # 6 / 8
    assert measure(group, "micro") == pytest.approx(75.0)
    cells = [
        {"outcome": "hit", "platform": "web", "element_type": "text"},
        {"outcome": "miss", "platform": "web", "element_type": "text"},  # web/text 50%
        {"outcome": "hit", "platform": "web", "element_type": "icon"},  # web/icon 100%
        {"outcome": "hit", "platform": "mobile", "element_type": "icon"},
        {"outcome": "hit", "platform": "mobile", "element_type": "icon"},
        {"outcome": "wrong_format", "platform": "mobile", "element_type": "icon"},  # mobile/icon 2/3
        {"outcome": "error", "platform": "desktop", "element_type": "icon"},  # no scored sample: no cell
    ]
    assert measure(cells, "cells") == pytest.approx(100 * (0.5 + 1.0 + 2 / 3) / 3)
    assert measure(cells, "micro") == pytest.approx(100 * 4 / 6)
    assert measure(records(0, errors=2), "micro") is None


@pytest.mark.parametrize(
    "hits, figure, status, delta",
    [
        (10, 98.5, REPRODUCED, "+1.5"),  # above
        (8, 80.0, REPRODUCED, "+0.0"),  # equal
        (8, 81.5, REPRODUCED, "-1.5"),  # within 2 points
        (8, 82.0, REPRODUCED, "-2.0"),  # the boundary is in
        (8, 82.1, NOT_REPRODUCED, "-2.1"),
        (4, 49.6, NOT_REPRODUCED, "-9.6"),
    ],
)
def test_reproduced_means_at_or_above_or_within_two_points(hits, figure, status, delta):
    found = verdict(records(hits, misses=10 - hits), table(result(figure)))
    assert found.status == status
    assert found.as_dict()["delta"] == pytest.approx(float(delta))
    line = found.line()
    assert f", delta {delta}: {status} (reproduced means at or above the published figure, or within 2 points)" in line
    head = f"reproduction det on bench (Bench, preset p1): published {figure:.1f} for Model-7B (a paper)"
    assert line.startswith(head)
    assert f"this run {hits * 10:.1f}," in line


def test_the_criterion_comes_from_the_data():
    found = verdict(records(8, misses=2), table(result(85.0), within=5.0))
    assert found.status == REPRODUCED and "within 5 points" in found.line()


def test_two_decimals_published_two_decimals_shown():
    found = verdict(records(5, misses=5), table(result(57.94)))
    assert "published 57.94 for" in found.line() and "this run 50.00, delta -7.94: not reproduced" in found.line()


@pytest.mark.parametrize(
    "group, options, reason",
    [
        (records(3), {"limit": 3}, "--grounding-limit 3: 3 of 10 samples ran"),
        (records(9), {}, "9 of 10 samples ran (-k or another deselection)"),
        (records(8, errors=2), {}, "2 samples ended in an error, not scored"),
        (records(10), {"interrupted": True}, "the run was interrupted"),
    ],
    ids=["limit", "deselected", "errors", "interrupted"],
)
def test_a_partial_run_says_the_comparison_does_not_apply_and_why(group, options, reason):
    found = verdict(group, table(result(50.0)), **options)
    assert found.status == DOES_NOT_APPLY and found.reason == reason and found.delta is None
    assert found.line().endswith(f"samples: the comparison does not apply ({reason})")
    assert found.as_dict()["delta"] is None and found.as_dict()["measured"] is not None


def test_a_cropping_strategy_or_an_unknown_model_does_not_apply():
    wrapped = {"det": {"strategy": "zoom", "inner": INFO["det"]}}
    found = verdict(records(10), table(result(50.0)), info=wrapped)
    assert found.status == DOES_NOT_APPLY and "cropping strategy zoom" in found.reason
    other = {"det": {"model": "org/Model-3B", "preset": "p1"}}  # the preset as a plain name
    found = verdict(records(10), table(result(50.0)), info=other)
    assert found.status == DOES_NOT_APPLY and "'org/Model-3B' is none of the models" in found.reason
    assert found.published is None and "the comparison does not apply" in found.line()


def test_overridden_preset_parts_do_not_apply():
    resolved = {"name": "p1", "prompt": "Click {instruction}", "preprocess": {"max_pixels": 100}}
    info = {"det": {"model": "Model-7B", "preset": resolved}}
    same = dict(resolved)
    found = verdict(records(10), table(result(50.0)), info=info, registered=lambda name: same)
    assert found.status == REPRODUCED
    other = {**resolved, "preprocess": {"max_pixels": 200}}
    found = verdict(records(10), table(result(50.0)), info=info, registered=lambda name: other)
    assert found.status == DOES_NOT_APPLY
    assert found.reason == "preset parts overridden (preprocess): the figure is for the preset as published"
    unknown = verdict(records(10), table(result(50.0)), info=info, registered=lambda name: None)
    assert unknown.status == REPRODUCED  # a preset not registered: nothing to compare with


def test_no_figure_for_the_preset_on_this_benchmark_is_said_and_no_preset_is_silent():
    found = verdict(records(10), table(result(50.0, preset="other")))
    assert found.status == DOES_NOT_APPLY and found.reason == "no published figure for preset p1 on Bench"
    assert check(records(10), [DATASET], {"det": {"name": "ocr"}}, table(result(50.0))) == []
    unknown = {**DATASET, "name": "elsewhere"}  # not a known benchmark: nothing said
    assert check(records(10, dataset="elsewhere"), [unknown], INFO, table(result(50.0))) == []


def test_locate_records_are_not_compared():
    located = [{**r, "task": "locate"} for r in records(10)]
    assert check(located, [DATASET], INFO, table(result(50.0))) == []


def test_cells_average_named_in_the_line():
    published = table(result(50.0, average="cells"))
    found = verdict(records(10), published)
    assert found.average == "cells" and "(mean over the platform x element-type cells)" in found.line()


def test_a_project_table_adds_benchmarks_and_results():
    mine = table(result(50.0))
    merged = shipped_table().merged(mine).check("mine.json")
    assert merged.identify(DATASET).id == "bench" and merged.candidates("p1", "bench")
    assert len(merged.results) == len(shipped_table().results) + 1


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["results"][0].pop("source"), "results[0]: missing source"),
        (lambda d: d["results"][0].update(figure=149.6), "figure 149.6 is not a percentage"),
        (lambda d: d["results"][0].update(figure="49.6"), "figure must be a number"),
        (lambda d: d["results"][0].update(benchmark="nowhere"), "names benchmark 'nowhere'"),
        (lambda d: d["results"][0].update(average="macro"), "average 'macro' is not one of micro, cells"),
        (lambda d: d["results"][0].update(modle="x"), "unknown key(s) modle"),
        (lambda d: d["benchmarks"][0].update(samples=0), "samples must be a whole number > 0"),
        (lambda d: d.update(criterion={"within_points": -1}), "within_points must be a number >= 0"),
        (lambda d: d.update(results={}), "results must be a list"),
    ],
)
def test_a_bad_published_file_names_the_entry(mutate, message, tmp_path):
    document = {
        "benchmarks": [{"id": "bench", "title": "Bench", "formats": ["pointerbench"], "samples": 10}],
        "results": [result(49.6)],
    }
    mutate(document)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(document))
    with pytest.raises(PublishedError, match=re.escape(message)) as caught:
        reproduce.read_table(path).check(str(path))
    assert str(path) in str(caught.value)


def test_an_unreadable_published_file_is_named(tmp_path):
    with pytest.raises(PublishedError, match="cannot read"):
        reproduce.read_table(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(PublishedError, match=r"bad\.json is not JSON"):
        reproduce.read_table(tmp_path / "bad.json")


def test_table_is_frozen():
    with pytest.raises(AttributeError):
        shipped_table().within_points = 1.0  # type: ignore[misc]
    assert isinstance(shipped_table(), Table)


def test_the_verdict_gives_the_runs_interval_and_the_smallest_detectable_difference():
    small = verdict(records(6, misses=4), table(result(80.0)))  # 10 samples: wide
    assert small.status == NOT_REPRODUCED and small.inside is True
    low, high = small.ci95
    assert low < 60.0 < high and low < 80.0 < high
    assert small.detectable > 20
    assert "the published figure inside it; the smallest difference this run can detect is" in small.line()
    large = verdict(records(600, misses=400), table(result(80.0), samples=1000), dataset={**DATASET, "samples": 1000})
    assert large.inside is False and large.detectable < small.detectable / 5
    entry = large.as_dict()
    assert entry["published_inside_ci95"] is False and entry["ci95"][0] < 60.0 < entry["ci95"][1]
    assert entry["detectable_points"] == pytest.approx(large.detectable, abs=1e-4)


def test_the_verdict_names_the_engine_a_served_detector_ran_on():
    served = {"det": {**INFO["det"], "engine": {"name": "vllm", "headline": "vLLM 0.32.0, context 21,504"}}}
    found = verdict(records(8, misses=2), table(result(80.0)), info=served)
    assert found.as_dict()["engine"] == "vLLM 0.32.0, context 21,504"
    assert found.line().startswith("reproduction det on bench (Bench, preset p1, on vLLM 0.32.0, context 21,504): ")
    assert verdict(records(8, misses=2), table(result(80.0))).as_dict()["engine"] is None
