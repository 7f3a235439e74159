"""`python -m pytest_grounding merge`: the shards' reports give the same figures as one run of the
whole set (compared field by field, latency aside), the predictions in dataset order, the gates'
verdict as the exit status; a missing shard is named (partial), a report given twice counts once,
a shard run again replaces its earlier self; reports that are not shares of one run are refused."""

import json
import re

import pytest

from helpers import FIXTURES, read_json, read_jsonl
from pytest_grounding.cli.main import main

SETS = [str(FIXTURES / name) for name in ("mini", "screenspot", "harness", "showdown-clicks")]
DETECTORS = ["--detector", "center", "--detector", "random"]
SAME_RUN_ASIDE = {"started", "duration_s", "args", "notes", "merge", "shard", "workers"}
TIMINGS = {"latency_ms", "load_s", "predict_s", "throughput"}


def run_args(*more):
    return [*(f"--dataset={path}" for path in SETS), *DETECTORS, "--grounding-refusal-rows", "include", *more]


def run_shards(project, tmp_path, count, *more, workers=()):
    paths = []
    for k in range(1, count + 1):
        path = tmp_path / f"shard-{k}.json"
        predictions = str(tmp_path / f"shard-{k}.jsonl")
        args = run_args("--grounding-shard", f"{k}/{count}", "--grounding-json", str(path), *more)
        project.runpytest(*args, "--grounding-predictions", predictions, *workers)
        assert path.is_file()
        paths.append(path)
    return paths


def whole_run(project, tmp_path, *more):
    path = tmp_path / "whole.json"
    project.runpytest(
        *run_args("--grounding-json", str(path), "--grounding-predictions", str(tmp_path / "whole.jsonl"), *more)
    )
    return read_json(path)


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def assert_same_figures(merged, whole):
    assert set(merged) - {"merge"} == set(whole), "a field one report has and the other has not"
    for key in whole:
        if key in SAME_RUN_ASIDE:
            continue
        if key == "run":
            for part in whole["run"]:
                if part not in SAME_RUN_ASIDE:
                    assert without_timings(merged["run"][part]) == without_timings(whole["run"][part]), part
            continue
        assert without_timings(merged[key]) == without_timings(whole[key]), key


def merge(tmp_path, paths, *more):
    out = tmp_path / "merged.json"
    code = main(["merge", *map(str, paths), "--json", str(out), *more])
    return code, (read_json(out) if out.exists() else None)


@pytest.fixture
def three(project, tmp_path):
    return run_shards(project, tmp_path, 3)


@pytest.mark.slow
def test_merged_shards_equal_one_run_field_by_field(project, tmp_path, three, capsys):
    whole = whole_run(project, tmp_path)
    code, merged = merge(
        tmp_path, three, "--predictions", str(tmp_path / "merged.jsonl"), "--html", str(tmp_path / "merged.html")
    )
    assert code == 1  # mini's broken rows: more errors than --grounding-max-errors, as in the whole run
    assert [c["passed"] for c in merged["errors_check"]] == [c["passed"] for c in whole["errors_check"]]
    assert merged["partial"] is False and merged["merge"]["missing"] == []
    assert len(merged["samples"]) == 2 * (8 + 5 + 5 + 6)
    assert_same_figures(merged, whole)
    assert {"center", "random"} <= set(merged["summary"])
    assert any("benchmarks" in block for block in merged["summary"].values())  # showdown's bootstrap interval
    lines = read_jsonl(tmp_path / "merged.jsonl")
    shard_lines = [line for k in (1, 2, 3) for line in read_jsonl(tmp_path / f"shard-{k}.jsonl")]
    key = lambda line: (line["dataset"], line["uid"], line["detector"])  # noqa: E731
    assert sorted(map(json.dumps, without_timings(lines))) == sorted(map(json.dumps, without_timings(shard_lines)))
    assert [key(line) for line in lines] == sorted(key(line) for line in lines)  # dataset by dataset
    assert list(lines[0])[:2] == ["id", "point"]
    assert (tmp_path / "merged.html").stat().st_size > 1000
    out = capsys.readouterr().out
    assert "merged 3 of 3 shards: 48 records" in out and "detector random" in out


@pytest.mark.slow
def test_merged_gates_decide_the_exit_status(tmp_path, three):
    code, merged = merge(tmp_path, three, "--min-accuracy", "0.0", "--max-errors", "1")
    assert code == 0 and merged["gates"] and all(g["passed"] for g in merged["gates"])
    code, merged = merge(tmp_path, three, "--min-accuracy", "0.99", "--max-errors", "1")
    assert code == 1 and not any(g["passed"] for g in merged["gates"])
    assert merged["run"]["settings"]["gates"] == [{"slice": "overall", "threshold": 0.99, "source": "--min-accuracy"}]


@pytest.mark.slow
def test_the_shards_gates_apply_when_merge_gives_none(project, tmp_path):
    paths = run_shards(project, tmp_path, 2, "--grounding-min-accuracy", "0.9", "--grounding-max-errors", "1")
    code, merged = merge(tmp_path, paths)
    assert code == 1 and [g["threshold"] for g in merged["gates"]] == [0.9, 0.9]


@pytest.mark.slow
def test_a_missing_shard_makes_the_merge_partial_and_names_it(tmp_path, three, capsys):
    code, merged = merge(tmp_path, [three[0], three[2]], "--min-accuracy", "0.0", "--max-errors", "1")
    assert code == 1 and merged["partial"] is True and merged["gates"] == []
    assert merged["merge"]["missing"] == [2]
    planned = read_json(three[1])["shard"]["datasets"]
    lost = {d["name"]: d["planned"] for d in planned if d["planned"]}
    assert {d["dataset"]: d["missing"] for d in merged["merge"]["missing_samples"]} == lost
    assert any(n.startswith("partial: no report of shard 2/3; missing") for n in merged["notes"])
    assert "partial merge, no verdict (missing shards: 2;" in capsys.readouterr().out


@pytest.mark.slow
def test_the_same_report_twice_counts_once(project, tmp_path, three):
    whole = whole_run(project, tmp_path)
    _, merged = merge(tmp_path, [three[0], three[1], three[1], three[2]])
    assert_same_figures(merged, whole)
    assert [r["used"] for r in merged["merge"]["reports"]] == [True, True, False, True]
    assert any("is the same report as" in n and "counted once" in n for n in merged["notes"])


@pytest.mark.slow
def test_a_shard_run_again_replaces_its_earlier_self(project, tmp_path, three):
    whole = whole_run(project, tmp_path)
    earlier = read_json(three[0])
    earlier["started"] = "2020-01-01T00:00:00+0000"  # the same shard, run earlier: counted twice, figures differ
    stale = tmp_path / "shard-1-earlier.json"
    stale.write_text(json.dumps(earlier))
    for order in ([three[0], stale, three[1], three[2]], [stale, *three]):
        _, merged = merge(tmp_path, order)
        assert_same_figures(merged, whole)
        note = next(n for n in merged["notes"] if "replaces" in n)
        assert note.startswith(f"shard 1/3: {three[0]} (started") and "the latest run of a shard wins" in note


def refused(tmp_path, paths, capsys):
    code, merged = merge(tmp_path, paths)
    assert code == 2 and merged is None
    return capsys.readouterr().err


def edited(tmp_path, path, name, change):
    document = read_json(path)
    change(document)
    out = tmp_path / name
    out.write_text(json.dumps(document))
    return out


@pytest.mark.slow
def test_reports_that_are_not_shares_of_one_run_are_refused(project, tmp_path, three, capsys):
    other = tmp_path / "other.json"
    project.runpytest(
        f"--dataset={FIXTURES / 'screenspot-pro'}",
        *DETECTORS,
        "--grounding-shard",
        "2/3",
        "--grounding-json",
        str(other),
    )
    assert "are of different datasets: screenspot-pro against" in refused(tmp_path, [three[0], other], capsys)

    def refingerprint(document):
        for d in document["shard"]["datasets"]:
            if d["name"] == "mini":
                d["fingerprint"] = "0000000000000000"

    foreign = edited(tmp_path, three[1], "foreign.json", refingerprint)
    err = refused(tmp_path, [three[0], foreign], capsys)
    assert "different versions of dataset mini: fingerprint 0000000000000000 in" in err

    newer = edited(tmp_path, three[1], "newer.json", lambda d: d.update(scoring_version=2))
    assert "scored by different plugin versions (scoring version 2" in refused(tmp_path, [three[0], newer], capsys)

    exclude = tmp_path / "exclude.json"
    project.runpytest(
        *run_args("--grounding-shard", "2/3", "--grounding-json", str(exclude), "--grounding-refusal-rows", "exclude")
    )
    err = refused(tmp_path, [three[0], exclude], capsys)
    assert "differ in a setting that changes scores: refusal_rows is 'exclude'" in err

    four = tmp_path / "four.json"
    project.runpytest(*run_args("--grounding-shard", "2/4", "--grounding-json", str(four)))
    assert "shares of different splits: 4 shards against 3" in refused(tmp_path, [three[0], four], capsys)

    def swap(document):
        document["shard"]["detectors"] = ["center"]

    assert "ran different detectors" in refused(
        tmp_path, [three[0], edited(tmp_path, three[1], "d.json", swap)], capsys
    )
    (tmp_path / "junk.json").write_text("{}")
    assert "not a pytest-grounding JSON report" in refused(tmp_path, [three[0], tmp_path / "junk.json"], capsys)


@pytest.mark.slow
def test_overlapping_shares_are_refused(tmp_path, three, capsys):
    theirs = next(d for d in read_json(three[0])["shard"]["datasets"] if d["uids"])

    def steal(document):
        mine = next(d for d in document["shard"]["datasets"] if d["name"] == theirs["name"])
        mine["uids"].append(theirs["uids"][0])

    err = refused(tmp_path, [three[0], edited(tmp_path, three[1], "o.json", steal), three[2]], capsys)
    assert "both hold sample" in err and "split from different sample lists" in err


@pytest.mark.slow
def test_shard_and_merged_reports_validate_against_the_schema(tmp_path, three):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    _, merged = merge(tmp_path, three[:2])
    for document in (read_json(three[0]), merged):
        assert [e.message for e in validator.iter_errors(document)] == []
    broken = dict(merged, merge={**merged["merge"], "missing": ["two"]})
    assert list(validator.iter_errors(broken))


@pytest.mark.slow
def test_merged_xdist_shards_equal_one_serial_run(project, tmp_path):
    paths = run_shards(project, tmp_path, 2, workers=("-n", "2"))
    whole = whole_run(project, tmp_path)
    _, merged = merge(tmp_path, paths)
    assert_same_figures(merged, whole)


# -- the rules, on hand-made reports (fast) ---------------------------------------------------------------


def shard_document(index, count, uids, started="2026-01-01T10:00:00+0000", fingerprint="f1", **settings):
    from pytest_grounding.analysis.merge import Part

    document = {
        "started": started,
        "duration_s": 1.0,
        "run": {"settings": {"task": "grounding", "refusal_rows": "include", **settings}, "datasets": []},
        "shard": {
            "index": index,
            "count": count,
            "detectors": ["center"],
            "datasets": [{"name": "d", "fingerprint": fingerprint, "samples": 6, "uids": list(uids)}],
        },
        "samples": [{"detector": "center", "dataset": "d", "uid": uid, "outcome": "miss"} for uid in uids],
    }
    return lambda name=f"s{index}.json": Part(name, 0, document)


def test_select_counts_a_report_once_and_lets_the_latest_run_win():
    from pytest_grounding.analysis.merge import select

    first, second = shard_document(1, 2, "abc"), shard_document(2, 2, "def")
    again = shard_document(2, 2, "def", started="2026-01-01T11:00:00+0200")  # 09:00 UTC: earlier
    chosen = select([first(), second(), second("copy.json"), again("again.json")])
    assert [p.name for p in chosen.kept] == ["s1.json", "s2.json"] and chosen.missing == ()
    assert chosen.notes[0] == "shard 2/2: copy.json is the same report as s2.json: counted once"
    assert chosen.notes[1].startswith("shard 2/2: s2.json (started 2026-01-01T10:00:00+0000) replaces again.json")


def test_select_names_a_missing_shard_and_its_samples():
    from pytest_grounding.analysis.merge import select

    chosen = select([shard_document(1, 3, "ab")(), shard_document(3, 3, "ef")()])
    assert chosen.missing == (2,)
    assert chosen.missing_samples == ({"dataset": "d", "samples": 6, "missing": 2},)
    assert chosen.notes == ("partial: no report of shard 2/3; missing 2 of 6 samples of d",)


@pytest.mark.parametrize(
    "other, message",
    [
        (shard_document(2, 2, "def", fingerprint="f2"), "fingerprint f2 in s2.json, f1 in s1.json"),
        (shard_document(2, 2, "def", refusal_rows="exclude"), "refusal_rows is 'exclude' in s2.json"),
        (shard_document(2, 2, "def", iou_threshold=0.3), "iou_threshold is 0.3 in s2.json, None in s1.json"),
        (shard_document(2, 3, "def"), "3 shards against 2"),
    ],
)
def test_check_refuses_what_is_not_a_share_of_the_same_run(other, message):
    from pytest_grounding.analysis.merge import MergeError, check

    with pytest.raises(MergeError, match=re.escape(message)):
        check([shard_document(1, 2, "abc")(), other()])


@pytest.mark.slow
def test_merged_shards_with_errata_give_the_whole_runs_corrected_figure(project, tmp_path, capsys):
    from test_errata import MINI_ERRATA

    path = tmp_path / "errata.jsonl"
    # a run of several datasets: each erratum names the one it corrects (issue 60)
    path.write_text("".join(json.dumps({**r, "dataset": "mini"}) + "\n" for r in MINI_ERRATA))
    applied = f"--grounding-errata={path}"
    whole = whole_run(project, tmp_path, applied)
    code, merged = merge(tmp_path, run_shards(project, tmp_path, 2, applied))
    assert merged is not None and merged["errata"] == whole["errata"]  # the same corrected figures, the same file
    assert merged["errata"]["detectors"]["center"]["dropped"] + merged["errata"]["detectors"]["center"]["refixed"]
    # a shard corrected with other errata (or none) was scored against other boxes: refused, saying which
    other = tmp_path / "other"
    other.mkdir()
    (other / "errata.jsonl").write_text(
        json.dumps({"id": MINI_ERRATA[0]["id"], "action": "drop", "dataset": "mini"}) + "\n"
    )
    mixed = run_shards(project, other, 2, f"--grounding-errata={other / 'errata.jsonl'}")
    code, refused = merge(other, [tmp_path / "shard-1.json", mixed[1]])
    assert code == 2 and refused is None
    assert "the shards applied different errata" in capsys.readouterr().err
