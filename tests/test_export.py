"""`python -m pytest_grounding export REPORT`: the Hub's eval-results files (parsed with PyYAML,
their fields and value checked against the samples counted here) and ScreenSpot-Pro's official
results file, replayed by `replay` to the same outcome on every sample."""

import json

import pytest

from helpers import FIXTURES, SERIAL, read_json
from pytest_grounding.cli.main import main

yaml = pytest.importorskip("yaml")

MINI, PRO = str(FIXTURES / "mini"), str(FIXTURES / "screenspot-pro")


def run(project, tmp_path, *args, workers=()):
    report = tmp_path / "run.json"
    project.runpytest(*args, "--grounding-json", str(report), *workers)
    assert report.is_file()
    return report


def test_eval_results_carry_the_hubs_fields_and_the_official_figure(project, tmp_path, capsys):
    # boom: colour's answers, but an error on the green target (the official script counts it wrong)
    report = run(project, tmp_path, "--dataset", PRO, "--dataset", MINI, "--detector", "boom")
    out = tmp_path / "model-repo"
    code = main(
        ["export", str(report), "--hf-eval-results", str(out), "--source-url", "https://example.org/logs",
         "--source-name", "CI logs"]
    )  # fmt: skip
    assert code == 0
    said = capsys.readouterr().out
    assert "not written: mini: no Hub benchmark id is known for it" in said
    files = sorted((out / ".eval_results").iterdir())
    assert [f.name for f in files] == ["screenspot_pro.yaml"]
    entries = yaml.safe_load(files[0].read_text())
    assert isinstance(entries, list) and len(entries) == 1
    entry = entries[0]
    assert entry["dataset"] == {"id": "likaixin/ScreenSpot-Pro", "task_id": "overall"}
    # the official figure: correct over every row of the benchmark (an error counts wrong), in percent
    records = [r for r in read_json(report)["samples"] if r["dataset"] == "screenspot-pro"]
    hits = sum(1 for r in records if r["outcome"] == "hit")
    errors = sum(1 for r in records if r["outcome"] == "error")
    assert hits > 0 and errors > 0
    assert entry["value"] == round(100 * hits / len(records), 2)
    document = read_json(report)
    assert entry["date"].startswith(document["started"][:19])
    assert entry["source"] == {"url": "https://example.org/logs", "name": "CI logs"}
    notes = entry["notes"]
    assert "detector boom" in notes and "scoring profile pixel" in notes and "6 samples" in notes
    assert f"{errors} samples with no answer (errors) counted wrong" in notes


def test_a_limited_run_is_not_published_unless_asked(project, tmp_path, capsys):
    report = run(project, tmp_path, "--dataset", PRO, "--detector", "colour", "--grounding-limit", "3")
    out = tmp_path / "repo"
    assert main(["export", str(report), "--hf-eval-results", str(out)]) == 1
    assert "--grounding-limit" in capsys.readouterr().out
    assert not (out / ".eval_results").exists()
    assert main(["export", str(report), "--hf-eval-results", str(out), "--allow-partial"]) == 0
    (entry,) = yaml.safe_load((out / ".eval_results" / "screenspot_pro.yaml").read_text())
    assert "PARTIAL" in entry["notes"] and "3 samples" not in entry["dataset"]["id"]


def test_a_report_of_several_detectors_needs_one_picked(project, tmp_path, capsys):
    report = run(project, tmp_path, "--dataset", PRO, "--detector", "colour", "--detector", "center")
    assert main(["export", str(report), "--screenspot-pro", str(tmp_path / "x")]) == 2
    assert "pick the model's with --detector" in capsys.readouterr().err
    assert main(["export", str(report), "--screenspot-pro", str(tmp_path / "x"), "--detector", "nosuch"]) == 2
    assert main(["export", str(report)]) == 2  # nothing asked
    assert main(["export", str(tmp_path / "missing.json"), "--screenspot-pro", str(tmp_path / "x")]) == 2


def test_the_yaml_survives_hostile_text(tmp_path):
    from pytest_grounding.analysis.publish import EvalResult
    from pytest_grounding.render.publish import eval_results_yaml

    nasty = 'a: "b"\n- c: [d]\t# e \\ ü \u2028 {f}'
    text = eval_results_yaml([EvalResult("x.yaml", "o/d", "t: 1", 12.5, None, nasty, nasty, nasty, None)])
    (entry,) = yaml.safe_load(text)
    assert entry == {
        "dataset": {"id": "o/d", "task_id": "t: 1"},
        "value": 12.5,
        "source": {"url": nasty, "name": nasty},
        "notes": nasty,
    }


# answers by id for fixtures/screenspot-pro: hits, misses and a wrong format (pro_m01 and pro_odd
# share a screen and an instruction: the official rows tell them apart by their boxes only)
ANSWERS = [
    {"id": "pro_m01", "point": [20, 20]},  # inside [10,10,30,30]: hit
    {"id": "pro_m02", "point": [30, 30]},  # outside [120,80,150,110]: miss
    {"id": "pro_m03", "point": None},  # wrong format
    {"id": "pro_m04", "point": [24, 94]},  # inside [20,90,28,98]: hit
    {"id": "pro_m05", "point": [0, 0]},  # outside [5,60,45,70]: miss
    {"id": "pro_odd", "point": [20, 5]},  # inside [10,-1,30,30]: hit
]


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_screenspot_pro_results_replay_to_the_same_outcomes(project, workers, tmp_path, capsys):
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(row) + "\n" for row in ANSWERS))
    report = run(project, tmp_path, "--dataset", PRO, "--detector", f"replay:path={answers}", workers=workers)
    out = tmp_path / "official"
    assert main(["export", str(report), "--screenspot-pro", str(out)]) == 0
    capsys.readouterr()
    (path,) = out.iterdir()
    results = json.loads(path.read_text())
    assert set(results) == {"details", "metrics"}
    first = results["details"][0]
    assert list(first) == [
        "img_path", "group", "platform", "application", "lang", "instruction_style", "prompt_to_evaluate",
        "gt_type", "ui_type", "task_filename", "pred", "raw_response", "bbox", "correctness",
    ]  # fmt: skip
    assert first["img_path"].startswith("images/") and first["task_filename"] == "blender_linux"
    original = {s["uid"]: s["outcome"] for s in read_json(report)["samples"]}
    assert sorted(original.values()) == ["hit", "hit", "hit", "miss", "miss", "wrong_format"]
    replayed = tmp_path / "replayed.json"
    project.runpytest(
        "--dataset", PRO, "--detector", f"replay:path={path},name=back", "--grounding-json", str(replayed), *workers
    )
    again = {s["uid"]: s["outcome"] for s in read_json(replayed)["samples"]}
    assert again == original
    overall = results["metrics"]["overall"]
    assert overall["num_total"] == len(original)
    assert overall["num_correct_action"] == sum(1 for o in original.values() if o == "hit")


def test_a_report_with_every_item_deselected_says_it_holds_no_records(project, tmp_path, capsys):
    report = run(project, tmp_path, "--dataset", PRO, "--detector", "colour", "-k", "no_such_item")
    capsys.readouterr()
    assert main(["export", str(report), "--screenspot-pro", str(tmp_path / "x")]) == 2
    said = capsys.readouterr().err
    assert "holds no grounding records" in said and "0 detectors" not in said, said
