"""`python -m pytest_grounding rescore`: a run's predictions parsed again with another preset and
judged by another scoring profile give the records of a fresh run with that preset and profile
(an OpenAI-compatible stand-in that answers the same text whatever the preset sends)."""

import json

import pytest

from helpers import FIXTURES, SERIAL, LoopbackServer, make_project, read_json, read_jsonl

pytest.importorskip("httpx")

from pytest_grounding.cli.main import main

MINI = str(FIXTURES / "mini")
FEW = ["-k", "m01 or m02 or m03"]
# The same answer for any image and prompt, in 0-1000 of the 160x120 screens: red on the right and
# bottom edges of its box [10, 10, 30, 30] (30.08, 30 px: outside in pixels, inside by GUI-Owl's box
# rounded outward), blue at its centre after a long thought (beyond the 500 characters once kept),
# green at its centre.
THOUGHT = "Let me look at the screen carefully. " * 30
ANSWERS = {"red": "(188,250)", "blue": THOUGHT + "(844,792)", "green": "(750,208)"}


def reply(handler):
    length = int(handler.headers.get("Content-Length") or 0)
    body = json.loads(handler.rfile.read(length)) if length else None
    if handler.path.endswith("/models"):
        return 200, {"object": "list", "data": [{"id": "stub", "object": "model"}]}
    texts = [
        part.get("text", "") if isinstance(part, dict) else str(part)
        for message in body["messages"]
        for part in (message["content"] if isinstance(message["content"], list) else [message["content"]])
    ]
    word = next(c for c in ANSWERS for text in texts if f"{c} square" in text.lower())
    message = {"role": "assistant", "content": ANSWERS[word]}
    return 200, {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}


@pytest.fixture
def server():
    running = LoopbackServer(reply)
    yield running
    running.close()


def fresh(pytester, tmp_path, server, preset, name, *args):
    report, predictions = tmp_path / f"{name}.json", tmp_path / f"{name}.jsonl"
    result = pytester.runpytest(
        f"--dataset={MINI}",
        "--detector",
        f"openai:base_url={server.url},preset={preset},concurrency=2",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *FEW,
        *args,
    )
    assert result.ret in (0, 1), result.stdout.str()
    return result, report, predictions


def by_id(records):
    return {r["id"]: (r["outcome"], r["point"], r["refusal"]) for r in records}


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_rescore_with_another_preset_and_profile_gives_the_fresh_runs_records(pytester, tmp_path, server, workers):
    make_project(pytester)
    _, _, first = fresh(pytester, tmp_path, server, "uitars-1.5-point", "a", *workers)
    stored = read_jsonl(first)
    assert len(next(r for r in stored if r["id"] == "m02")["raw"]) > 1000  # kept whole
    result, report, _ = fresh(
        pytester, tmp_path, server, "uground-v1", "b", "--grounding-scoring", "gui-owl-1.5", *workers
    )
    assert "scoring: gui-owl-1.5" in result.stdout.str()
    wanted = read_json(report)
    assert wanted["scoring_profile"]["name"] == "gui-owl-1.5" and wanted["run"]["settings"]["scoring"] == "gui-owl-1.5"
    out, again = tmp_path / "r.json", tmp_path / "r.jsonl"
    argv = [str(first), "--preset", "uground-v1", "--scoring", "gui-owl-1.5", "--json", str(out)]
    assert main(["rescore", *argv, "--predictions", str(again)]) == 0
    rescored = read_json(out)
    assert by_id(rescored["samples"]) == by_id(wanted["samples"]) == by_id(read_jsonl(again))
    assert {i: o for i, (o, _, _) in by_id(wanted["samples"]).items()} == {"m01": "hit", "m02": "hit", "m03": "hit"}
    assert by_id(stored) != by_id(wanted["samples"])  # the preset and profile changed the outcomes
    assert list(rescored["summary"]) == list(wanted["summary"])  # the spec names the new preset
    for key, block in wanted["summary"].items():
        assert (rescored["summary"][key]["hits"], rescored["summary"][key]["scored"]) == (
            block["hits"],
            block["scored"],
        )
    assert rescored["scoring_profile"] == wanted["scoring_profile"]
    # by pixels the red answer (30.08, 30 px) is off its box
    plain = tmp_path / "p.json"
    assert main(["rescore", str(first), "--preset", "uground-v1", "--json", str(plain)]) == 0
    assert by_id(read_json(plain)["samples"])["m01"][0] == "miss"


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_compare_refuses_reports_of_different_profiles_unless_told(pytester, tmp_path, server, capsys):
    make_project(pytester)
    _, report, predictions = fresh(pytester, tmp_path, server, "uground-v1", "a")
    half = tmp_path / "half.json"
    assert main(["rescore", str(report), "--scoring", "half-open", "--json", str(half)]) == 0
    capsys.readouterr()
    assert main(["compare", str(report), str(half)]) == 2
    assert "different profiles (a by pixel, half by half-open)" in capsys.readouterr().err
    assert main(["compare", str(report), str(half), "--mixed-scoring"]) == 0
    assert "note: the reports were scored by different profiles" in capsys.readouterr().out
    same = tmp_path / "same.json"
    assert main(["rescore", str(predictions), "--json", str(same)]) == 0
    assert main(["compare", str(report), str(same)]) == 0
    assert read_json(same)["scoring_profile"]["name"] == "pixel"
