"""Hostile inputs (issue 42 and 52; docs/security.md says what each class guarantees). Records and reports: every
record field the plugin writes is in the report schema, reports of every kind of run read back, and odd rows
of baselines, screens and rescored lines are refused or scored, never a crash.
"""

import json

import pytest

from helpers import FIXTURES, SERIAL, read_json
from hostile import no_crash, run_suite
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"


PRO = str(FIXTURES / "screenspot-pro")


# --- every record field the plugin writes is in the report schema ----------------------------------------------


def test_every_record_field_the_plugin_writes_is_in_the_schema():
    from pytest_grounding.core.record import Record
    from pytest_grounding.core.variants import RECORD_FIELDS
    from pytest_grounding.store.reportcheck import _validator

    properties = set(_validator().schema["$defs"]["record"]["properties"])
    assert set(Record.__annotations__) - properties == set()
    assert set(RECORD_FIELDS) | {"epoch"} <= properties


class ChatModel:
    """A chat model on 127.0.0.1 that cuts every other answer (finish_reason length)."""

    def __init__(self):
        import itertools

        from helpers import LoopbackServer, json_body

        counter = itertools.count()

        def reply(handler):
            if handler.path.endswith("/models"):
                return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
            if not handler.path.endswith("/chat/completions"):
                return 404, {"detail": "Not Found"}
            json_body(handler)
            cut = next(counter) % 2 == 1
            answer = "click(start_box='(12" if cut else "(60,40)"
            choice = {"index": 0, "message": {"content": answer}, "finish_reason": "length" if cut else "stop"}
            return 200, {"choices": [choice], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}

        self.server = LoopbackServer(reply)
        self.url = self.server.url


@pytest.fixture
def chat():
    model = ChatModel()
    yield model
    model.server.close()


def _schema_problems(path):
    from pytest_grounding.store.reportcheck import problems

    return problems(read_json(path))


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("kind", ["served", "sweep-epochs-cache", "locate", "replay"])
def test_reports_of_every_kind_of_run_fit_the_schema_and_read_back(project, tmp_path, capsys, chat, workers, kind):
    pytest.importorskip("httpx")
    spec = (
        f"openai:base_url={chat.url},model=m,"
        "preset=uitars-1.5-point,retries=0,probe=false,preprocess=none,transform=abs,extractors=paren"
    )
    args = {
        "served": ["--dataset", str(MINI), "--detector", spec, "-k", "not m07 and not m08"],
        "sweep-epochs-cache": ["--dataset", str(MINI), "--detector", spec, "--grounding-cache", str(tmp_path / "c"),
                               "--grounding-epochs", "2", "--grounding-perturb", "invert", "-k", "m01 or m02"],
        "locate": ["--dataset", str(MINI), "--detector", "center", "--grounding-task", "locate",
                   "--grounding-perturb", "zoom:scale=0.5", "-k", "m01 or m02"],
        "replay": ["--dataset", PRO, "--detector", "colour"],
    }[kind]  # fmt: skip
    report = tmp_path / "r.json"
    project.runpytest(*args, "--grounding-json", str(report), "--grounding-misses", "xfail", *workers)
    if kind == "replay":  # the run's predictions played back: a replay's records
        assert main(["export", str(report), "--screenspot-pro", str(tmp_path / "x")]) == 0
        (official,) = (tmp_path / "x").glob("*.json")
        project.runpytest("--dataset", PRO, "--detector", f"replay:path={official}", "--grounding-json",
                          str(report), *workers)  # fmt: skip
    records = read_json(report)["samples"]
    assert records
    if kind == "served":
        assert any(r.get("truncated") for r in records)
    if kind == "sweep-epochs-cache":
        assert any(r.get("variant") for r in records) and any(r.get("epoch") == 2 for r in records)
        project.runpytest(*args, "--grounding-json", str(report), *workers)  # from the cache now
        assert any(r.get("cached") for r in read_json(report)["samples"])
    assert _schema_problems(report) == []
    capsys.readouterr()
    assert main(["summary", str(report)]) in (0, 1)
    assert "error:" not in capsys.readouterr().err


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_an_agentic_report_fits_the_schema(pytester, tmp_path, workers):
    pytest.importorskip("httpx")
    from scripted_agent import ScriptedAgent
    from test_served_agent import SPEC, write_dataset

    model = ScriptedAgent()
    try:
        write_dataset(tmp_path / "ssp")
        pytester.makepyfile(
            test_suite="def test_grounding(grounding_sample, grounding_detector, grounding_check):\n"
            "    grounding_check(grounding_sample, grounding_detector)\n"
        )
        pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
        report = tmp_path / "report.json"
        pytester.runpytest(f"--dataset={tmp_path / 'ssp'}", "--detector", SPEC.format(url=model.url),
                           "--grounding-json", str(report), "-k", "s0", *workers)  # fmt: skip
    finally:
        model.close()
    assert any(r.get("turns") for r in read_json(report)["samples"])
    assert _schema_problems(report) == []


# -- low ------------------------------------------------------------------------------------------------------


def test_a_baseline_row_without_an_id_is_refused():
    from pytest_grounding.analysis.baseline_file import FORMAT_VERSION, MARKER, BaselineError, loads

    document = {
        MARKER: FORMAT_VERSION,
        "task": "grounding",
        "datasets": {"mini": "f"},
        "detectors": ["center"],
        "samples": [{"detector": "center", "dataset": "mini", "fingerprint": "f", "id": None, "outcome": "hit"}],
    }
    with pytest.raises(BaselineError, match="not three texts"):
        loads(json.dumps(document), "b.json")


def test_the_markdown_summary_names_the_samples_that_never_ran():
    from pytest_grounding.render.markdown import report_markdown

    document = {
        "partial": True,
        "summary": {},
        "not_run": [{"nodeid": "t", "detector": "center", "dataset": "mini", "id": "m07", "uid": "u7"}],
    }
    text = report_markdown(document)
    assert "1 samples never ran" in text and "center mini/m07" in text


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_a_screen_row_without_bbox_never_answers_two_targets(tmp_path):
    from test_replay import PRO, PRO_DETAILS

    rows = [dict(row) for row in PRO_DETAILS[:5]]  # row 6 (pro_odd: same screen and instruction as row 1) left out
    rows[0].pop("bbox")
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"details": rows}))
    result = run_suite(tmp_path / "run", f"--dataset={PRO}", "--detector", f"replay:path={results}")
    text = no_crash(result)
    assert result.returncode == 4 and "row 1 of" in text and "has no bbox and matches several" in text, text[-2000:]


@pytest.mark.parametrize("refusal", ["false", "true", 1, {"x": 1}])
def test_only_the_boolean_true_is_a_refusal_when_a_line_is_rescored(refusal):
    from pytest_grounding.core.types import Box, Sample
    from pytest_grounding.evaluate.resume import rescore

    sample = Sample("d", "1", "u", MINI / "s1.png", "click", Box(10, 10, 30, 30), image_size=(160, 120))
    line = {"dataset": "d", "uid": "u", "id": "1", "detector": "x", "outcome": "hit", "point": [20, 20]}
    for stored in ({**line, "refusal": refusal}, {**line, "meta": {"refusal": refusal}}):
        record = rescore(stored, {("d", "u"): sample}, "here").record
        assert record is not None and record["outcome"] == "hit" and record["refusal"] is False


def test_a_dataset_row_with_an_absurd_number_is_that_samples_defect(tmp_path):
    from pytest_grounding.datasets import load_dataset

    folder = tmp_path / "data" / "test"
    folder.mkdir(parents=True)
    (folder / "s1.png").write_bytes((MINI / "data" / "test" / "s1.png").read_bytes())
    rows = [
        json.dumps({"file_name": "s1.png", "id": "a", "instruction": "Click", "bbox": [10, 10, 30, 30]}),
        '{"file_name": "s1.png", "id": "b", "instruction": "Click", "bbox": [10, 10, ' + "9" * 400 + ", 1e999]}",
    ]
    (folder / "metadata.jsonl").write_text("\n".join(rows) + "\n")
    samples = {s.id: s for s in load_dataset(str(tmp_path)).samples}
    assert samples["a"].defect is None and "unusable bbox" in str(samples["b"].defect)
