"""A detector's identity (core/identity.py), one notion for merge, the board and the cache: the
transport options of a spec (endpoints, concurrency, timeouts) are not part of it; the model, the
preset, the engine and its version, the weights, the strategies and the scoring profile are.
End to end: shards run against two servers with different concurrency merge into one detector
and stand on the board as one row; a shard whose engine version differs is refused, naming it."""

import json

import pytest

from helpers import FIXTURES, XDIST, LoopbackServer, make_project, needs_openai, read_json
from pytest_grounding.analysis import board as board_mod
from pytest_grounding.cli.board import collect
from pytest_grounding.cli.main import main
from pytest_grounding.core.identity import identity_of, without_transport
from pytest_grounding.detectors import parse_spec

SERVED = {
    "model": "ui-tars",
    "preset": {"name": "uitars-1.5-point"},
    "engine": {"name": "vllm", "version": "0.11.0", "settings": {"root": "/models/ui-tars-1.5-7b"}},
    "base_urls": ["http://a:8000/v1"],
    "concurrency": "4",
}


def test_transport_options_are_not_part_of_the_identity():
    a = "openai:base_url=http://a:8000/v1,model=ui-tars,concurrency=4,timeout=30"
    b = "openai:model=ui-tars,base_url='http://b:9000/v1,http://c:9000/v1',concurrency=16,retries=0"
    assert without_transport(a) == without_transport(b) == "openai:model=ui-tars"
    assert identity_of(a, SERVED) == identity_of(b, {**SERVED, "base_urls": ["http://b:9000/v1"], "concurrency": "16"})
    assert without_transport("center") == "center"
    assert without_transport("openai:base_url=x,model=m+zoom:ratio=0.5") == "openai:model=m+zoom:ratio=0.5"


@pytest.mark.parametrize(
    ("spec", "info", "differs"),
    [
        ("openai:base_url=x,model=other", {**SERVED, "model": "other"}, ["detector", "model"]),
        (
            "openai:base_url=x,model=ui-tars",
            {**SERVED, "engine": {**SERVED["engine"], "version": "0.12.0"}},
            ["engine"],
        ),
        (
            "openai:base_url=x,model=ui-tars",
            {**SERVED, "engine": {**SERVED["engine"], "settings": {"root": "/models/v2"}}},
            ["weights"],
        ),
        ("openai:base_url=x,model=ui-tars,preset=qwen", {**SERVED, "preset": {"name": "qwen"}}, ["detector", "preset"]),
    ],
)
def test_another_model_engine_version_weights_or_preset_is_another_identity(spec, info, differs):
    mine = identity_of("openai:base_url=y,model=ui-tars", SERVED)
    other = identity_of(spec, info)
    assert other != mine
    assert [d.split()[0] for d in other.differences(mine)] == differs
    assert identity_of("openai:model=ui-tars", SERVED, "half-open") != identity_of("openai:model=ui-tars", SERVED)


def test_the_board_row_is_the_identity_less_its_weights():
    a = board_mod.config_of("openai:base_url=http://a/v1,model=ui-tars,concurrency=2", SERVED, "pixel")
    b = board_mod.config_of("openai:base_url=http://b/v1,model=ui-tars,concurrency=8", SERVED, "pixel")
    assert a == b and a.detector == "openai:model=ui-tars" and a.engine == "vllm 0.11.0"


def test_the_spec_parser_shares_the_option_splitter():
    assert parse_spec("openai:base_url='http://a, http://b',model=m") == (
        "openai",
        {"base_url": "http://a, http://b", "model": "m"},
    )


def answer(handler):
    return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "(80,60)"}}]}


@pytest.fixture
def servers():
    found = [LoopbackServer(answer), LoopbackServer(answer)]
    yield found
    for server in found:
        server.close()


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@XDIST
def test_shards_against_two_endpoints_merge_into_one_row(pytester, servers, workers, tmp_path, capsys):
    make_project(pytester)
    reports = tmp_path / "reports"
    (reports / "shards").mkdir(parents=True)
    paths = []
    for k, (server, concurrency) in enumerate(zip(servers, (1, 4), strict=True), 1):
        path = reports / "shards" / f"shard-{k}.json"
        spec = f"openai:base_url={server.url},model=m,preset=uitars-1.5-point,concurrency={concurrency}"
        pytester.runpytest(
            f"--dataset={FIXTURES / 'mini'}", "--detector", spec, "--grounding-shard", f"{k}/2",
            "--grounding-json", str(path), *workers,
        )  # fmt: skip
        paths.append(path)
    merged = reports / "merged.json"
    assert main(["merge", *map(str, paths), "--json", str(merged)]) in (0, 1)
    capsys.readouterr()
    document = read_json(merged)
    assert len(document["summary"]) == 1
    (spec,) = document["summary"]
    assert spec.startswith(f"openai:base_url={servers[0].url}")
    shard_records = [r for p in paths for r in read_json(p)["samples"]]
    assert len(document["samples"]) == len(shard_records) and {r["detector"] for r in document["samples"]} == {spec}
    endpoints = [entry["endpoints"][spec] for entry in document["merge"]["reports"]]
    assert [e["base_urls"] for e in endpoints] == [[servers[0].url], [servers[1].url]]
    assert [e["concurrency"] for e in endpoints] == ["1", "4"]
    assert endpoints[1]["spec"].startswith(f"openai:base_url={servers[1].url}")
    found, skipped, count = collect(reports)
    board = board_mod.build(found, skipped, reports=count)
    assert [row.detector for row in board.rows] == ["openai:model=m,preset=uitars-1.5-point"]
    # another engine version: refused, and the message says what differs
    second = read_json(paths[1])
    (info,) = second["run"]["detectors"].values()
    first_engine = read_json(paths[0])["run"]["detectors"][spec]["engine"]
    info["engine"] = {**(first_engine or {}), "name": "vllm", "version": "9.9.9"}
    other = tmp_path / "other-engine.json"
    other.write_text(json.dumps(second))
    assert main(["merge", str(paths[0]), str(other), "--json", str(tmp_path / "no.json")]) == 2
    err = capsys.readouterr().err
    assert "ran different detectors" in err and "engine" in err and "9.9.9" in err
