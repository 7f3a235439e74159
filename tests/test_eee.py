"""`export --eee DIR` (issue 58): Every Eval Ever files validated against EEE's own JSON schemas
(tests/data/eee: the 0.3.0 files of the every-eval-ever wheel, MIT, with its licence), their score
and interval checked to be the run's, one sidecar line per sample with `is_correct` true exactly
for the hits; and the sidecar replayed (`--detector replay:path=SAMPLES.jsonl`) to the run's
outcomes on every sample."""

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from helpers import FIXTURES, read_json
from pytest_grounding.cli.main import main

MINI, PRO = str(FIXTURES / "mini"), str(FIXTURES / "screenspot-pro")
SCHEMAS = Path(__file__).parent / "data" / "eee"
# sha256 of the files as published in every_eval_ever-0.3.0-py3-none-any.whl (PyPI; the wheel's own
# sha256 564b8bc624c1f822f749a769dc69dc058a736e83d920cbeb147c3a30d3152317), every_eval_ever/schemas/
PUBLISHED = {
    "eval.schema.json": "c9c6195aec8a9dfa0b2aba4924ac1aa8a184c9d8ca97cee778cb531088e39b48",
    "instance_level_eval.schema.json": "b16b7fa7f0aa32763444179d94ffb2336ddb12c3fd2903835fe491666c1ff3e6",
}


def schema(name):
    return json.loads((SCHEMAS / name).read_text())


def validate(aggregate, lines):
    jsonschema.Draft7Validator(schema("eval.schema.json")).validate(aggregate)
    instance = jsonschema.Draft7Validator(schema("instance_level_eval.schema.json"))
    for line in lines:
        instance.validate(line)


def test_the_schemas_here_are_the_published_ones():
    for name, digest in PUBLISHED.items():
        assert hashlib.sha256((SCHEMAS / name).read_bytes()).hexdigest() == digest, name
    assert "MIT License" in (SCHEMAS / "LICENSE").read_text()
    try:  # where the package installs (Python >= 3.12), its own files are the reference
        from importlib.resources import files

        packaged = files("every_eval_ever") / "schemas"
    except ModuleNotFoundError:
        return
    for name in PUBLISHED:
        assert (packaged / name).read_bytes() == (SCHEMAS / name).read_bytes(), name


def test_a_wrong_file_fails_the_schema():
    # the check can fail: a sidecar line without is_correct, an aggregate with an unknown key
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"evaluation": {"score": 1}}, schema("instance_level_eval.schema.json"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema_version": "0.3.0", "extra": 1}, schema("eval.schema.json"))


def exported(out):
    """{aggregate path: (aggregate, sidecar lines, sidecar path)} of an export folder."""
    found = {}
    for path in sorted(out.rglob("*.json")):
        samples = path.with_name(path.stem + "_samples.jsonl")
        lines = [json.loads(line) for line in samples.read_text().splitlines()]
        found[path] = (json.loads(path.read_text()), lines, samples)
    return found


def run(project, tmp_path, *args, tag="run"):
    report = tmp_path / f"{tag}.json"
    project.runpytest(*args, "--grounding-json", str(report))
    assert report.is_file()
    return report


# answers by id for fixtures/screenspot-pro: hits, misses and a wrong format
ANSWERS = [
    {"id": "pro_m01", "point": [20, 20]},
    {"id": "pro_m02", "point": [30, 30]},
    {"id": "pro_m03", "point": None},
    {"id": "pro_m04", "point": [24, 94]},
    {"id": "pro_m05", "point": [0, 0]},
    {"id": "pro_odd", "point": [20, 5]},
]


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_an_export_is_valid_eee_with_the_runs_figures_and_replays_to_the_same_outcomes(project, tmp_path, capsys):
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(row) + "\n" for row in ANSWERS))
    report = run(project, tmp_path, "--dataset", PRO, "--detector", f"replay:path={answers},name=model-x")
    out = tmp_path / "eee"
    assert main(["export", str(report), "--eee", str(out), "--eee-organization", "Lab",
                 "--eee-relationship", "third_party"]) == 0  # fmt: skip
    capsys.readouterr()
    document = read_json(report)
    ((path, (aggregate, lines, samples)),) = exported(out).items()
    validate(aggregate, lines)
    # the datastore's layout: data/<benchmark>/<developer>/<model>/<uuid>.json beside <uuid>_samples.jsonl
    assert aggregate["detailed_evaluation_results"]["file_path"] == str(samples.relative_to(out))
    assert aggregate["detailed_evaluation_results"]["checksum"] == hashlib.sha256(samples.read_bytes()).hexdigest()
    assert aggregate["source_metadata"]["source_organization_name"] == "Lab"
    assert aggregate["source_metadata"]["evaluator_relationship"] == "third_party"
    assert aggregate["source_metadata"]["source_type"] == "evaluation_run"
    (result,) = aggregate["evaluation_results"]
    (block,) = document["summary"].values()
    (row,) = block["by"]["dataset"]
    assert result["score_details"]["score"] == row["accuracy"] == 3 / 6
    interval = result["score_details"]["uncertainty"]["confidence_interval"]
    assert [interval["lower"], interval["upper"]] == row["ci95"] and interval["confidence_level"] == 0.95
    assert result["source_data"]["hf_repo"] == "likaixin/ScreenSpot-Pro"
    assert sorted(result["source_data"]["sample_ids"]) == sorted(a["id"] for a in ANSWERS)
    assert aggregate["eval_library"]["version"] == document["versions"]["pytest-grounding"]
    assert aggregate["eval_library"]["additional_details"]["card.dataset"].startswith("screenspot-pro (6 samples")
    # one line per sample, is_correct exactly for the hits, the click and the outcome carried
    records = {r["id"]: r for r in document["samples"]}
    assert sorted(line["sample_id"] for line in lines) == sorted(records)
    for line in lines:
        record = records[line["sample_id"]]
        assert line["evaluation"]["is_correct"] is (record["outcome"] == "hit")
        assert line["metadata"]["outcome"] == record["outcome"]
        assert line["input"]["raw"] == record["instruction"]
        (attribution,) = line["answer_attribution"]
        assert attribution["extraction_method"] == "pytest-grounding scoring profile pixel"
        assert attribution["extracted_value"] == (json.dumps(record["point"]) if record["point"] else "")
        assert line["metadata"]["screen"].startswith("images/")
    # the run card on the HTML page's first screen and in the markdown: the same fields the export carries
    from html import escape

    from pytest_grounding.analysis.card import card_dict
    from pytest_grounding.render.html import render
    from pytest_grounding.render.markdown import report_markdown

    card = card_dict(document, next(iter(document["summary"])))
    assert {f"card.{k}": v for k, v in card.items()} == aggregate["eval_library"]["additional_details"] | {
        "card.dataset": card["dataset"],
        "card.samples": card["samples"],
        "card.accuracy": card["accuracy"],
    }
    page = render(document)[0]
    headline = page[page.index('id="headline"') : page.index("</section>", page.index('id="headline"'))]
    markdown = report_markdown(document)
    assert "### Run card" in markdown
    for text in card.values():
        assert escape(text) in headline
    for key in ("preset", "prompt_digest", "errata", "frame_check", "harness"):
        assert card[key].replace("|", "\\|") in markdown, key
    assert "--detector" in card["command"] and "pytest-grounding" in card["harness"]
    # exported again: the same file names (a stable uuid)
    again = tmp_path / "again"
    assert main(["export", str(report), "--eee", str(again)]) == 0
    assert [p.relative_to(again) for p in exported(again)] == [path.relative_to(out)]
    # the sidecar replayed: the run's outcomes on every sample
    replayed = run(project, tmp_path, "--dataset", PRO, "--detector", f"replay:path={samples}", tag="back")
    back = read_json(replayed)
    assert back["run"]["detectors"][f"replay:path={samples}"]["format"] == "eee"
    assert {s["uid"]: s["outcome"] for s in back["samples"]} == {s["uid"]: s["outcome"] for s in document["samples"]}
    assert {s["uid"]: s["point"] for s in back["samples"]} == {s["uid"]: s["point"] for s in document["samples"]}


def test_errors_other_datasets_and_a_partial_run(project, tmp_path, capsys):
    # boom: colour's answers, but an error on the green target
    report = run(project, tmp_path, "--dataset", MINI, "--detector", "boom")
    out = tmp_path / "eee"
    assert main(["export", str(report), "--eee", str(out)]) == 0
    capsys.readouterr()
    ((aggregate, lines, samples),) = exported(out).values()
    validate(aggregate, lines)
    (result,) = aggregate["evaluation_results"]
    assert result["source_data"]["source_type"] == "other"  # no Hub id known: named, never invented
    errors = [line for line in lines if line["metadata"]["outcome"] == "error"]
    assert errors and all(line["error"] and line["evaluation"]["is_correct"] is False for line in errors)
    assert result["score_details"]["details"]["errors"] == str(len(errors))
    # replayed, an error line is that sample's error again
    replayed = run(project, tmp_path, "--dataset", MINI, "--detector", f"replay:path={samples}", tag="back")
    original = {s["uid"]: s["outcome"] for s in read_json(report)["samples"]}
    assert {s["uid"]: s["outcome"] for s in read_json(replayed)["samples"]} == original

    partial = run(project, tmp_path, "--dataset", PRO, "--detector", "center", "-k", "m01 or m02", tag="part")
    out = tmp_path / "part"
    assert main(["export", str(partial), "--eee", str(out)]) == 1
    assert "not the benchmark's figure" in capsys.readouterr().out
    assert not out.exists()
    assert main(["export", str(partial), "--eee", str(out), "--allow-partial"]) == 0
    ((aggregate, lines, _),) = exported(out).values()
    validate(aggregate, lines)
    (result,) = aggregate["evaluation_results"]
    assert result["evaluation_name"] == "screenspot-pro (partial)" and "partial" in result["score_details"]["details"]
    assert len(lines) == 2 == result["source_data"]["samples_number"]


def test_a_sweep_variant_is_its_own_result(project, tmp_path, capsys):
    report = run(project, tmp_path, "--dataset", MINI, "--detector", "center", "--grounding-perturb", "invert")
    out = tmp_path / "eee"
    assert main(["export", str(report), "--eee", str(out)]) == 0
    capsys.readouterr()
    found = exported(out)
    names = sorted(a["evaluation_results"][0]["evaluation_name"] for a, _, _ in found.values())
    assert names == ["mini", "mini ~ invert"]
    for aggregate, lines, _ in found.values():
        validate(aggregate, lines)
        variant = aggregate["evaluation_results"][0]["score_details"]["details"].get("variant")
        assert all(line["metadata"].get("variant") == variant for line in lines)
