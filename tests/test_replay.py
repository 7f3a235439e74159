"""The `replay` detector: predictions files made elsewhere, scored by this plugin. Each file is
written here, in each format, and every figure asserted is a hand count of its rows."""

import json
import re

import pytest

from helpers import FIXTURES, SERIAL, assert_counts, read_json, read_jsonl

MINI = str(FIXTURES / "mini")
PRO = str(FIXTURES / "screenspot-pro")


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def by_id(document):
    return {s["id"]: s for s in document["samples"]}


# -- Pointerbench-Pro eval.py predictions over fixtures/mini -------------------------------------

# mini: m01 red [10,10,30,30], m02 blue [120,80,150,110], m03 green [100,15,140,35], m04 red
# [20,90,28,98], m05 blue [5,60,45,70], m06 purple [5,60,45,70], m07 broken.png, m08 missing.png.
POINTERBENCH_ROWS = [
    {"id": "m01", "point": [20, 20]},  # inside: hit
    {"id": "m02", "point": [30, 30]},  # far from [120,80,150,110]: miss
    {"id": "m03", "point": [140, 35]},  # the box's bottom-right corner: hit (edges count)
    {"id": "m04", "point": None},  # wrong format
    # m05: no row (an error naming the file)
    {"id": "m06", "point": [1, 1]},  # two rows for m06: ambiguous, an error
    {"id": "m06", "point": [25, 65]},
    {"id": "m07", "point": [20, 20]},  # the image cannot be read: an error
    {"id": "m08", "point": [20, 20]},  # the image is missing: an error
    {"id": "zz_other", "point": [5, 5]},  # no such sample: counted, not scored
]


@SERIAL
def test_pointerbench_predictions_scored_as_counted_by_hand(project, workers, tmp_path):
    predictions = write_jsonl(tmp_path / "preds.jsonl", POINTERBENCH_ROWS)
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={MINI}", "--detector", f"replay:path={predictions}", "--grounding-json", str(report), *workers
    )
    assert_counts(result, passed=2, missed=2, errors=4)
    samples = by_id(read_json(report))
    assert {k: v["outcome"] for k, v in samples.items()} == {
        "m01": "hit",
        "m02": "miss",
        "m03": "hit",
        "m04": "wrong_format",
        "m05": "error",
        "m06": "error",
        "m07": "error",
        "m08": "error",
    }
    assert samples["m03"]["point"] == [140, 35]
    assert f"no answer for id 'm05' in replay file {predictions}" in samples["m05"]["error"]
    assert "ambiguous: 2 answers for id 'm06'" in samples["m06"]["error"] and "rows 5, 6" in samples["m06"]["error"]
    assert "cannot read image" in samples["m07"]["error"]
    assert "image not found" in samples["m08"]["error"]
    # eval.py's rows carry no verdict of their own: nothing to compare, the field still says which row
    assert samples["m01"]["replay"] == {
        "file": str(predictions),
        "format": "pointerbench",
        "row": 1,
        "their_verdict": None,
        "their_correct": None,
        "agree": None,
        "reason": None,
    }
    out = result.stdout.str()
    assert "1 of its 9 answers match no sample of this run's datasets (not scored); first: 'zz_other'" in out
    assert re.search(r"accuracy 50\.0% \[95% CI [0-9.]+-[0-9.]+\] \(2/4 scored, micro\)", out)


def test_a_file_for_another_benchmark_is_a_usage_error_at_once(project, tmp_path):
    predictions = write_jsonl(tmp_path / "other.jsonl", [{"id": "pbp_0000", "point": [1, 2]}])
    result = project.runpytest(f"--dataset={MINI}", "--detector", f"replay:path={predictions}")
    assert result.ret == 4  # a usage error, before any sample runs
    result.stderr.fnmatch_lines(
        ["*none of the 1 answers in*other.jsonl (pointerbench, matched by id)*another benchmark*"]
    )


def test_an_unknown_file_shape_says_what_it_expected(project, tmp_path):
    odd = write_jsonl(tmp_path / "odd.jsonl", [{"sample": "m01", "xy": [1, 2]}])
    result = project.runpytest(f"--dataset={MINI}", "--detector", f"replay:path={odd}")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*rows with keys ?sample, xy? match no known format*id_field=*point_field=*"])


# -- this plugin's own predictions file and JSON report ------------------------------------------


@pytest.mark.slow
@SERIAL
def test_own_predictions_and_report_replay_to_the_same_outcomes(project, workers, tmp_path):
    first_json, predictions = tmp_path / "first.json", tmp_path / "p.jsonl"
    project.runpytest(
        f"--dataset={MINI}", "--detector", "colour", "--grounding-predictions", str(predictions),
        "--grounding-json", str(first_json),
    )  # fmt: skip
    first = by_id(read_json(first_json))
    for source in (predictions, first_json):
        report = tmp_path / f"replayed-{source.stem}.json"
        result = project.runpytest(
            f"--dataset={MINI}", "--detector", f"replay:path={source},name=mine", "--grounding-json", str(report),
            *workers,
        )  # fmt: skip
        # colour: m01-m05 hit, m06 wrong format, m07 m08 errors (their images): the file agrees on all 6
        assert_counts(result, passed=5, missed=1, errors=2)
        replayed = by_id(read_json(report))
        for key, record in replayed.items():
            assert record["outcome"] == first[key]["outcome"], key
            if record["outcome"] != "error":
                assert record["point"] == first[key]["point"]
                assert record["replay"]["agree"] is True
        result.stdout.fnmatch_lines(
            ["*replay replay:name=mine,path=*: 6 samples answered from*verdicts compared on 6: 6 agree, 0 differ"]
        )


@pytest.mark.slow
def test_a_file_of_several_detectors_needs_one_picked(project, tmp_path):
    predictions = tmp_path / "p.jsonl"
    project.runpytest(
        f"--dataset={MINI}", "--detector", "colour", "--detector", "center", "--grounding-predictions", str(predictions)
    )
    result = project.runpytest(f"--dataset={MINI}", "--detector", f"replay:path={predictions}")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*holds the answers of 2 detectors (center, colour): pick one with detector=NAME*"])
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={MINI}", "--detector", f"replay:path={predictions},detector=center", "--grounding-json", str(report)
    )
    # the centre (80, 60) of the 160x120 screens lies in none of the six readable targets
    assert_counts(result, missed=6, errors=2)


# -- ScreenSpot-Pro official results: JSON with metrics, and OmniParser's JSONL rows --------------


def pro_row(image, prompt, bbox, pred, correctness, *, platform, app, ui_type):
    return {
        "img_path": f"./ScreenSpot-Pro/images/{image}",
        "group": "Creative",
        "platform": platform,
        "application": app,
        "lang": "en",
        "instruction_style": "instruction",
        "prompt_to_evaluate": prompt,
        "gt_type": "positive",
        "ui_type": ui_type,
        "task_filename": "blender_linux",
        "pred": pred,
        "raw_response": "model text",
        "bbox": bbox,
        "correctness": correctness,
    }


# fixtures/screenspot-pro: pro_m01 and pro_odd share a screen and an instruction (their boxes differ)
PRO_DETAILS = [
    pro_row("blender_linux/s1.png", "Click the red square", [10, 10, 30, 30], [20, 20], "correct",
            platform="linux", app="blender", ui_type="icon"),  # pro_m01
    pro_row("blender_linux/s1.png", "Click the blue square", [120, 80, 150, 110], None, "wrong_format",
            platform="linux", app="blender", ui_type="text"),  # pro_m02
    pro_row("blender_linux/s2.png", "Click the green square", [100, 15, 140, 35], [140, 20], "correct",
            platform="windows", app="excel", ui_type="text"),  # pro_m03: on the right edge, inside
    pro_row("blender_linux/s2.png", "Click the red square", [20, 90, 28, 98], [50, 50], "wrong",
            platform="windows", app="excel", ui_type="icon"),  # pro_m04
    pro_row("blender_linux/s3.png", "Click the blue square", [5, 60, 45, 70], [5, 60, 45, 70], "correct",
            platform="macos", app="qgis", ui_type="other"),  # pro_m05: a box, scored by its centre (25, 65)
    pro_row("blender_linux/s1.png", "Click the red square", [10, -1, 30, 30], [20, 20], "correct",
            platform="linux", app="blender", ui_type="icon"),  # pro_odd
]  # fmt: skip


def counted(correct, total, wrong_format, text, icon):
    """The official metrics of one list, from counts: text and icon are (correct, total)."""
    return {
        "num_correct_action": correct,
        "num_total": total,
        "wrong_format_num": wrong_format,
        "action_acc": correct / total,
        "text_acc": text[0] / text[1] if text[1] else 0,
        "icon_acc": icon[0] / icon[1] if icon[1] else 0,
    }


# By hand: linux/blender = m01 (icon, correct), m02 (text, wrong format), odd (icon, correct);
# windows/excel = m03 (text, correct), m04 (icon, wrong); macos/qgis = m05 (other, correct).
BLENDER, EXCEL, QGIS = (
    counted(2, 3, 1, (0, 1), (2, 2)),
    counted(1, 2, 0, (1, 1), (0, 1)),
    counted(1, 1, 0, (0, 0), (0, 0)),
)
ALL = counted(4, 6, 1, (1, 2), (2, 3))
PRO_METRICS = {
    "fine_grained": {
        "plat:linux app:blender inst_style:instruction gt_type:positive": BLENDER,
        "plat:windows app:excel inst_style:instruction gt_type:positive": EXCEL,
        "plat:macos app:qgis inst_style:instruction gt_type:positive": QGIS,
    },
    "seeclick_style": {
        "plat:linux inst_style:instruction gt_type:positive": BLENDER,
        "plat:windows inst_style:instruction gt_type:positive": EXCEL,
        "plat:macos inst_style:instruction gt_type:positive": QGIS,
    },
    "leaderboard_simple_style": {"group:Creative": ALL},
    "leaderboard_detailed_style": {"app:blender": BLENDER, "app:excel": EXCEL, "app:qgis": QGIS},
    "overall": ALL,
}


@SERIAL
def test_screenspot_pro_results_file_and_its_metrics_reproduced_exactly(project, workers, tmp_path):
    from pytest_grounding.analysis.official_metrics import compare_metrics, official_metrics

    results = tmp_path / "results.json"
    results.write_text(json.dumps({"details": PRO_DETAILS, "metrics": PRO_METRICS}, indent=4))
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={PRO}", "--detector", f"replay:path={results}", "--grounding-json", str(report), *workers
    )
    assert_counts(result, passed=4, missed=2)
    document = read_json(report)
    samples = by_id(document)
    assert {k: v["outcome"] for k, v in samples.items()} == {
        "pro_m01": "hit",
        "pro_m02": "wrong_format",
        "pro_m03": "hit",
        "pro_m04": "miss",
        "pro_m05": "hit",
        "pro_odd": "hit",
    }
    assert samples["pro_m05"]["point"] == [25, 65] and samples["pro_m05"]["box"] == [5, 60, 45, 70]
    assert samples["pro_odd"]["replay"]["row"] == 6 and samples["pro_m01"]["replay"]["row"] == 1  # by their boxes
    assert all(s["replay"]["agree"] is True for s in samples.values())
    assert official_metrics(document["samples"]) == PRO_METRICS
    assert compare_metrics(official_metrics(document["samples"]), PRO_METRICS) == []
    result.stdout.fnmatch_lines(
        [
            "*verdicts compared on 6: 6 agree, 0 differ",
            "*the file's ScreenSpot-Pro metrics are reproduced exactly from this run's verdicts",
        ]
    )


def test_a_metrics_block_that_does_not_add_up_is_reported(project, tmp_path):
    wrong = json.loads(json.dumps(PRO_METRICS))
    wrong["overall"]["num_correct_action"] = 5
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"details": PRO_DETAILS, "metrics": wrong}))
    result = project.runpytest(f"--dataset={PRO}", "--detector", f"replay:path={results}")
    result.stdout.fnmatch_lines(
        [
            "*the file's metrics differ from this run's in 1 places:",
            "  overall / num_correct_action: the file says 5, recomputed 4",
        ]
    )


@SERIAL
def test_omniparser_log_rows_disagreements_listed_with_reasons(project, workers, tmp_path):
    rows = [dict(row, idx=i) for i, row in enumerate(PRO_DETAILS)]
    # pro_m01: an integer click on the right edge the other harness called wrong
    rows[0] = dict(rows[0], pred=[30, 20], correctness="wrong")
    # pro_m04: the other harness read the box as x, y, w, h
    rows[3] = dict(rows[3], bbox=[20, 90, 8, 8], pred=[24, 94], correctness="wrong")
    # pro_m05: a wrong-format row (the other harness found no point) and pro_odd: no row at all
    rows[4] = dict(rows[4], pred=None, correctness="wrong_format")
    del rows[5]
    log = write_jsonl(tmp_path / "logs_sspro.json", rows)
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={PRO}", "--detector", f"replay:path={log},name=omni", "--grounding-json", str(report), *workers
    )
    # pro_odd shares pro_m01's screen and instruction: the one row answers both (no box to tell them apart
    # after the first narrowing leaves one row), so no sample lacks an answer.
    samples = by_id(read_json(report))
    assert {k: v["outcome"] for k, v in samples.items()} == {
        "pro_m01": "hit",
        "pro_m02": "wrong_format",
        "pro_m03": "hit",
        "pro_m04": "hit",
        "pro_m05": "wrong_format",
        "pro_odd": "hit",
    }
    assert_counts(result, passed=4, missed=2)
    assert samples["pro_m01"]["replay"]["reason"] == (
        "an integer click on the box's right edge ([30, 20] on [10, 10, 30, 30]): edges count as inside here"
    )
    assert samples["pro_m04"]["replay"]["reason"] == (
        "box format: the file's target [20, 90, 8, 8] is [x, y, w, h], ours [20, 90, 28, 98] is [x1, y1, x2, y2]"
    )
    assert samples["pro_odd"]["replay"]["reason"].startswith("another target: the file scored against [10, 10, 30, 30]")
    assert samples["pro_m05"]["replay"]["agree"] is True
    result.stdout.fnmatch_lines(
        [
            "*replay replay:name=omni,path=*: 6 samples answered from*(screenspot-pro); verdicts compared on 6: "
            "3 agree, 3 differ",
            "  screenspot-pro/pro_m01 (row 1): ours hit, theirs wrong: an integer click on the box's right edge*",
            "  screenspot-pro/pro_m04 (row 4): ours hit, theirs wrong: box format*",
            "  screenspot-pro/pro_odd (row 1): ours hit, theirs wrong: another target*",
        ]
    )


def test_screenspot_pro_rows_that_differ_for_one_sample_are_its_error(project, tmp_path):
    rows = [*PRO_DETAILS[:5], dict(PRO_DETAILS[1], pred=[1, 1], correctness="wrong")]  # a second pro_m02 row
    log = write_jsonl(tmp_path / "log.jsonl", rows)
    report = tmp_path / "r.json"
    project.runpytest(f"--dataset={PRO}", "--detector", f"replay:path={log}", "--grounding-json", str(report))
    samples = by_id(read_json(report))
    assert samples["pro_m02"]["outcome"] == "error"
    assert "ambiguous: 2 different answers for image 'blender_linux/s1.png'" in samples["pro_m02"]["error"]
    assert "(rows 2, 6)" in samples["pro_m02"]["error"]


# -- a user mapping --------------------------------------------------------------------------------


def test_a_user_mapping_with_dotted_fields(project, tmp_path):
    rows = [
        {"doc": {"id": "m01"}, "resps": [["(20, 20)"]], "acc": 1},  # hit, the file agrees
        {"doc": {"id": "m02"}, "resps": [["[130, 90]"]], "acc": 0},  # hit, the file says wrong
        {"doc": {"id": "m03"}, "resps": [["no idea"]], "acc": 0},  # not a point: that sample's error
        {"doc": {"id": "m04"}, "resps": [[None]], "acc": 0},  # no answer: wrong format, the file agrees
        {"doc": {"id": "m05"}, "resps": [["0, 0"]], "acc": 0},  # miss, the file agrees
    ]
    log = write_jsonl(tmp_path / "samples.jsonl", rows)
    report = tmp_path / "r.json"
    spec = f"replay:path={log},id_field=doc.id,point_field=resps.0.0,correct_field=acc"
    project.runpytest(f"--dataset={MINI}", "--detector", spec, "--grounding-json", str(report))
    samples = by_id(read_json(report))
    assert {k: v["outcome"] for k, v in samples.items()} == {
        "m01": "hit",
        "m02": "hit",
        "m03": "error",
        "m04": "wrong_format",
        "m05": "miss",
        "m06": "error",
        "m07": "error",
        "m08": "error",
    }
    assert "row 3 of" in samples["m03"]["error"] and "resps.0.0 " in samples["m03"]["error"]
    assert [samples[k]["replay"]["agree"] for k in ("m01", "m02", "m04", "m05")] == [True, False, True, True]
    assert samples["m02"]["replay"]["reason"] == "unexplained: ours hit, the file's 0"


def test_normalized_coordinates_are_scaled_by_the_image_size(project, tmp_path):
    log = write_jsonl(tmp_path / "n.jsonl", [{"k": "m01", "p": [0.125, 0.1667]}])  # (20, 20.004) on 160x120
    report = tmp_path / "r.json"
    spec = f"replay:path={log},id_field=k,point_field=p,coords=normalized"
    project.runpytest(f"--dataset={MINI}", "--detector", spec, "--grounding-json", str(report))
    assert by_id(read_json(report))["m01"]["point"] == [20.0, 20.004]


# -- the parts, without pytest -----------------------------------------------------------------------


def test_the_image_key_is_the_path_below_images():
    from pytest_grounding.detectors.replay.files import below_images

    assert below_images("./ScreenSpot-Pro/images/davinci_mac/shot.png") == "davinci_mac/shot.png"
    assert below_images("C:\\data\\images\\a\\b.png") == "a/b.png"
    assert below_images("shot.png") == "shot.png"
    assert below_images("") is None


def test_a_replay_detector_decodes_no_image(tmp_path, monkeypatch):
    from pytest_grounding.datasets import load_dataset
    from pytest_grounding.detectors.replay import ReplayDetector
    from pytest_grounding.evaluate import runner

    predictions = write_jsonl(tmp_path / "p.jsonl", [{"id": "m01", "point": [20, 20]}])
    detector = ReplayDetector(path=str(predictions))
    sample = next(s for s in load_dataset(MINI).samples if s.id == "m01")

    def refuse(_sample):
        raise AssertionError("the replay detector's sample was decoded")

    monkeypatch.setattr(runner, "read_image", refuse)
    record = runner.evaluate(sample, detector, detector_name="replay").record
    assert record["outcome"] == "hit" and record["image_size"] == [160, 120]


def test_the_report_with_replay_fields_validates(project, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    log = write_jsonl(tmp_path / "log.jsonl", PRO_DETAILS)
    report = tmp_path / "r.json"
    project.runpytest(f"--dataset={PRO}", "--detector", f"replay:path={log}", "--grounding-json", str(report))
    document = read_json(report)
    assert all("replay" in s for s in document["samples"])
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]
    assert errors == []
    bad = json.loads(json.dumps(document))
    bad["samples"][0]["replay"]["agree"] = "yes"
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(bad))


def test_predictions_lines_keep_the_replay_field(project, tmp_path):
    log = write_jsonl(tmp_path / "log.jsonl", PRO_DETAILS)
    predictions = tmp_path / "p.jsonl"
    project.runpytest(
        f"--dataset={PRO}", "--detector", f"replay:path={log}", "--grounding-predictions", str(predictions)
    )
    lines = read_jsonl(predictions)
    assert len(lines) == 6 and all(line["replay"]["format"] == "screenspot-pro" for line in lines)


# -- like any detector: two files side by side, a baseline, the HTML page, `compare` ----------------


@pytest.mark.slow
def test_two_replays_side_by_side_with_baseline_html_and_compare(project, tmp_path, capsys):
    from pytest_grounding.cli.main import main

    first = write_jsonl(tmp_path / "a.jsonl", POINTERBENCH_ROWS[:4])  # m01 hit, m02 miss, m03 hit, m04 wrong format
    second = write_jsonl(tmp_path / "b.jsonl", [dict(POINTERBENCH_ROWS[1], point=[130, 90]), *POINTERBENCH_ROWS[:1]])
    specs = [f"replay:path={first},name=a", f"replay:path={second},name=b"]
    labelled = [f"replay:name=a,path={first}", f"replay:name=b,path={second}"]  # the label first: tables cut at the end
    baseline, html, report = tmp_path / "base.json", tmp_path / "r.html", tmp_path / "r.json"
    args = [f"--dataset={MINI}", "--grounding-baseline", str(baseline), "--grounding-max-errors", "1"]
    args += [item for spec in specs for item in ("--detector", spec)]
    written = project.runpytest(*args, "--grounding-html", str(html), "--grounding-json", str(report))
    written.stdout.fnmatch_lines(["*baseline*did not exist: written now with 16 samples*"])
    document = read_json(report)
    by_detector = {}
    for sample in document["samples"]:
        by_detector.setdefault(sample["detector"], {})[sample["id"]] = sample["outcome"]
    assert by_detector[labelled[0]] == dict.fromkeys(["m05", "m06", "m07", "m08"], "error") | {
        "m01": "hit", "m02": "miss", "m03": "hit", "m04": "wrong_format"
    }  # fmt: skip
    assert by_detector[labelled[1]] == dict.fromkeys(["m03", "m04", "m05", "m06", "m07", "m08"], "error") | {
        "m01": "hit", "m02": "hit"
    }  # fmt: skip
    assert "replay" in html.read_text() and "name=b" in html.read_text()
    compared = project.runpytest(*args, "-n", "2")
    compared.stdout.fnmatch_lines(["*baseline*: 6 samples compared: 0 regressions, 0 improvements, 2 known misses*"])
    capsys.readouterr()
    assert main(["compare", str(report)]) == 0
    table = capsys.readouterr().out
    assert "replay:name=a,path=" in table and "replay:name=b,path=" in table


def test_markdown_lists_every_disagreement():
    from pytest_grounding.detectors.replay.agreement import compare
    from pytest_grounding.detectors.replay.files import Answer
    from pytest_grounding.render.markdown import report_markdown

    def record(id_, outcome, point, target):
        return {"detector": "replay:name=x,path=f", "dataset": "d", "id": id_, "outcome": outcome, "point": point,
                "target": target, "distance": 0.0}  # fmt: skip

    on_edge = record("a|1", "hit", [30.0, 20.0], [10, 10, 30, 30])
    on_edge["replay"] = compare(on_edge, Answer(line=3, their_verdict="wrong", their_correct=False), file="f", fmt="x")
    agreed = record("b", "miss", [0.0, 0.0], [10, 10, 30, 30])
    agreed["replay"] = compare(agreed, Answer(line=4, their_verdict="wrong", their_correct=False), file="f", fmt="x")
    text = report_markdown({"summary": {}, "samples": [on_edge, agreed]})
    assert "| replay:name=x,path=f | f | x | 2 | 2 | 1 | 1 |" in text
    assert "- d/a\\|1 (row 3): ours hit, theirs wrong: an integer click on the box's right edge" in text


def test_screen_rows_match_a_copy_without_an_images_folder_by_file_name(tmp_path):
    import dataclasses
    from pathlib import Path

    from pytest_grounding.datasets import load_dataset
    from pytest_grounding.detectors.replay.files import read_replay_file
    from pytest_grounding.detectors.replay.match import Index

    log = write_jsonl(tmp_path / "log.jsonl", PRO_DETAILS)
    index = Index(read_replay_file(log))
    sample = next(s for s in load_dataset(PRO).samples if s.id == "pro_m03")
    assert index.match(sample).answer.line == 3
    cached = dataclasses.replace(sample, image=Path("/hub/cache/s2.png"))  # no images/ folder in the path
    assert index.match(cached).answer.line == 3
    elsewhere = dataclasses.replace(sample, image=Path("/data/images/other/s2.png"))  # another folder below images/
    assert index.match(elsewhere).answer is None


def test_a_results_file_checked_against_its_own_boxes(tmp_path):
    from pytest_grounding.detectors.replay.agreement import against_own_targets
    from pytest_grounding.detectors.replay.files import read_replay_file

    rows = [
        dict(PRO_DETAILS[0], pred=[30, 20], correctness="wrong"),  # on the right edge: we count it a hit
        PRO_DETAILS[1],  # wrong format both ways
        dict(PRO_DETAILS[3], pred=[24, 94], correctness="correct"),  # inside: agree
        dict(PRO_DETAILS[3], pred=[28.5, 94], correctness="wrong"),  # 0.5 px outside: agree
    ]
    log = write_jsonl(tmp_path / "log.jsonl", rows)
    found = against_own_targets(read_replay_file(log).answers, file=str(log), fmt="screenspot-pro")
    assert found["compared"] == 4 and found["agree"] == 3
    assert found["disagreements"] == [
        {
            "row": 1,
            "ours": "hit",
            "theirs": "wrong",
            "reason": "an integer click on the box's right edge ([30, 20] on [10, 10, 30, 30]): "
            "edges count as inside here",
        }
    ]


def test_only_a_detector_that_answers_by_identity_is_given_the_sample():
    from pytest_grounding.core.types import Prediction
    from pytest_grounding.datasets import load_dataset
    from pytest_grounding.evaluate import runner

    seen = []

    class Looks:
        name = "looks"

        def predict(self, query):
            seen.append((query.sample, query.image.size))
            return Prediction(point=(1, 1))

    class ByIdentity(Looks):
        needs_image = False

    sample = next(s for s in load_dataset(MINI).samples if s.id == "m01")
    runner.evaluate(sample, Looks(), detector_name="looks")
    runner.evaluate(sample, ByIdentity(), detector_name="by-identity")
    assert seen == [(None, (160, 120)), (sample, (160, 120))]


def test_chinese_rows_answer_a_run_in_chinese(project, tmp_path):
    def row(prompt, lang, pred):
        fixed = {"img_path": "images/gimp_windows/cn1.png", "instruction_style": "instruction", "gt_type": "positive"}
        return {**fixed, "prompt_to_evaluate": prompt, "lang": lang, "pred": pred, "correctness": "wrong"}

    rows = [
        row("打开红色菜单", "cn", [20, 20]),  # cn-1: inside [10, 10, 50, 30]
        row("按下蓝色按钮", "cn", [0, 0]),  # cn-2: outside [100, 60, 130, 90]
        row("按下蓝色按钮", "en", [110, 70]),  # the same text labelled en: not this run's language
        row("Open the red menu", "en", [0, 0]),  # an English row: no sample of a Chinese run
    ]
    log = write_jsonl(tmp_path / "cn.jsonl", rows)
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={FIXTURES / 'screenspot-pro-cn'}", "--grounding-language", "cn",
        "--detector", f"replay:path={log}", "--grounding-json", str(report),
    )  # fmt: skip
    samples = by_id(read_json(report))
    assert {k: v["outcome"] for k, v in samples.items()} == {"cn-1": "hit", "cn-2": "miss", "cn-3": "error"}
    assert samples["cn-2"]["replay"]["row"] == 2
    assert "no instruction_cn" in samples["cn-3"]["error"]
    result.stdout.fnmatch_lines(["*1 of its 4 answers match no sample of this run's datasets*"])
