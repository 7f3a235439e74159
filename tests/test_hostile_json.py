"""Hostile inputs (issue 42 and 52; docs/security.md says what each class guarantees). One bounded JSON reader
(depth, number size, length): a hostile replay row is that row's outcome, and JSON from a server goes through
the same reader.
"""

import json

import pytest

from helpers import FIXTURES, SERIAL, read_json
from hostile import no_crash, run_suite
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"


# -- one bounded JSON reader ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, problem",
    [
        ("[" * 5000 + "]" * 5000, "nested"),
        ('{"a": ' * 150 + "1" + "}" * 150, "nested"),
        ('{"point": [' + "9" * 400 + ", 5]}", "digits"),
        ('{"point": [1e999, 5]}', "beyond a double"),
        ('{"x": 0.' + "1" * 60 + "}", "characters"),
    ],
)
def test_the_json_reader_refuses_what_no_file_needs(text, problem):
    from pytest_grounding.core import safejson

    with pytest.raises(ValueError, match=problem):
        safejson.loads(text)
    with pytest.raises(ValueError, match="characters"):
        safejson.loads('{"a": 1}', max_chars=4)


def test_the_json_reader_reads_rows_with_absurd_numbers_as_null():
    from pytest_grounding.core import safejson

    row = safejson.loads('{"point": [' + "7" * 5000 + ', 1e400], "x": NaN}', numbers_beyond="null")
    assert row == {"point": [None, None], "x": None}


def hostile_replay(tmp_path, kind):
    path = tmp_path / f"{kind}.jsonl"
    rows = [{"id": f"m0{k}", "point": [20, 20]} for k in (1, 2, 3)]
    if kind == "deep":
        path.write_text(json.dumps(rows)[:-1] + ", " + "[" * 3000 + "]" * 3000 + "]")
    else:
        lines = [json.dumps(row) for row in rows]
        lines.append('{"id": "m05", "point": [' + "1" * 400 + ", 5]}")
        lines.append('{"id": "m06", "point": ' + "[" * 3000 + "]" * 3000 + "}")  # this row alone nested too deep
        path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
@SERIAL
def test_a_hostile_replay_row_is_that_rows_outcome_never_the_runs_end(tmp_path, workers):
    report = tmp_path / "r.json"
    path = hostile_replay(tmp_path, "digits")
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", f"replay:path={path}", "--grounding-json", str(report),
        *workers,
    )  # fmt: skip
    no_crash(result)
    samples = {s["id"]: s for s in read_json(report)["samples"]}
    assert samples["m05"]["outcome"] == "error" and "is not [x, y]" in samples["m05"]["error"]
    assert samples["m06"]["outcome"] == "error" and "no answer for id 'm06'" in samples["m06"]["error"]
    assert samples["m01"]["outcome"] == "hit"
    assert "rows skipped (row 5 is not JSON (JSON nested too deeply" in " ".join(read_json(report)["notes"])
    deep = hostile_replay(tmp_path, "deep")
    result = run_suite(tmp_path / "deep", f"--dataset={MINI}", "--detector", f"replay:path={deep}", *workers)
    text = no_crash(result)
    assert result.returncode == 4 and "nested" in text


def own_predictions(tmp_path, change):
    lines = []
    for k in (1, 2, 3):
        line = {"id": f"m0{k}", "uid": f"u{k}", "dataset": "mini", "detector": "center", "outcome": "miss"}
        lines.append({**line, "point": [80, 60], "fingerprint": "c4068f4b9761c13b", **change})
    path = tmp_path / "own.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize(
    "change, message",
    [
        ({"fingerprint": "0123456789abcdef"}, "predictions of another version of the dataset"),
        ({"dataset": "screenspot"}, "none of the 3 answers"),
    ],
)
def test_own_predictions_of_another_dataset_or_version_are_refused(tmp_path, change, message):
    path = own_predictions(tmp_path, change)
    result = run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", f"replay:path={path}")
    text = no_crash(result)
    assert result.returncode == 4 and message in text, text[-2000:]


def test_identical_rows_are_one_answer_and_the_text_false_no_refusal(tmp_path):
    from pytest_grounding.detectors.replay.files import read_replay_file
    from pytest_grounding.detectors.replay.match import Index

    path = tmp_path / "p.jsonl"
    row = {"id": "m01", "uid": "u", "dataset": "mini", "detector": "x", "outcome": "miss", "point": [5, 5]}
    rows = [row, row, {**row, "id": "m02", "refusal": "false"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    replay = read_replay_file(path)
    from pytest_grounding.datasets import load_dataset

    samples = {s.id: s for s in load_dataset(str(MINI)).samples}
    index = Index(replay)
    assert index.match(samples["m01"]).answer is not None  # two identical rows: one answer, not ambiguous
    assert index.match(samples["m02"]).answer.refusal is False


# --- JSON from a server goes through the bounded reader --------------------------------------------------------


def _deep(depth, opening="[", closing="]"):
    return opening * depth + closing * depth


class NestedServer:
    """Answers /models, the engine's questions or a chat with JSON nested `depth` levels deep."""

    def __init__(self, where, depth):
        from helpers import LoopbackServer

        def reply(handler):
            if handler.path.endswith("/models"):
                if where == "models":
                    return 200, '{"data": ' + _deep(depth) + "}"
                return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
            if handler.path in ("/version", "/get_server_info"):
                return 200, ('{"version": ' + _deep(depth, '{"a": ', "}") + "}") if where == "engine" else "{}"
            if where == "chat":
                return 200, '{"choices": [{"message": {"content": "(1,1)"}, "x": ' + _deep(depth) + "}]}"
            return 200, {"choices": [{"index": 0, "message": {"content": "(5,5)"}, "finish_reason": "stop"}]}

        self.server = LoopbackServer(reply, answer_probes=where != "chat")
        self.url = self.server.url


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize(("where", "depth"), [("models", 100_000), ("chat", 5_000), ("engine", 30_000)])
def test_nested_json_from_a_server_is_one_clear_outcome(project, tmp_path, workers, where, depth):
    pytest.importorskip("httpx")
    server = NestedServer(where, depth)
    try:
        report = tmp_path / "r.json"
        spec = (
            f"openai:base_url={server.url},model=m,"
            "preset=uitars-1.5-point,retries=0,preprocess=none,transform=abs,extractors=paren"
        )
        result = project.runpytest("--dataset", str(MINI), "--detector", spec, "--grounding-json", str(report),
                                   "-k", "m01 or m02", *workers)  # fmt: skip
    finally:
        server.server.close()
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "RecursionError" not in text
    if where == "chat":
        records = read_json(report)["samples"]
        assert records and all(r["outcome"] == "error" and "nested too deeply" in r["error"] for r in records)
    else:
        assert result.ret in (0, 1, 4), text[-2000:]


@pytest.mark.parametrize("depth", [2_000, 200_000])
def test_doctor_names_a_server_that_answers_nested_json(tmp_path, capsys, monkeypatch, depth):
    pytest.importorskip("httpx")
    from pytest_grounding.detectors.served import BASE_URL_ENV

    server = NestedServer("models", depth)
    try:
        monkeypatch.setenv(BASE_URL_ENV, server.url)
        code = main(["doctor"])
    finally:
        server.server.close()
    captured = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in captured.out + captured.err
    assert "answers /models" in captured.out
