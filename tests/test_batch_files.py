"""Issue 57: request files for batch engines. `--grounding-batch-out` writes one OpenAI Batch line
per sample (the served detector's own request) and a manifest; a small executor of our own runs
the file against a model that SEES the screenshot (tests/seeing_model.py); `replay:path=RESULTS,
requests=FILE` scores the results with the same outcomes as a live run of that model. A missing
result, an error line and the results of another requests file are named."""

import hashlib
import json
import urllib.request

import pytest
from seeing_model import SeeingModel
from test_frame_check import N, dataset  # noqa: F401  (the squares dataset fixture)

from helpers import XDIST, read_json

pytest.importorskip("ui_tars")  # the openai extra: the default preset's parser

PRESET = "uitars-1.5-point"
LIVE = "openai:base_url={url},model=seeing,preset=" + PRESET
WRITE = "openai:model=seeing,preset=" + PRESET


@pytest.fixture
def model():
    served = SeeingModel("right")
    yield served
    served.close()


def execute(requests, results, url, skip=(), fail=()):
    """A batch executor of our own: each line's body POSTed as it is, the answer written as the
    OpenAI Batch API writes it (`skip`: ids with no result line; `fail`: ids with an error line)."""
    out = []
    for text in requests.read_text().splitlines():
        line = json.loads(text)
        assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
        custom_id = line["custom_id"]
        if custom_id in skip:
            continue
        if custom_id in fail:
            out.append({"id": "x", "custom_id": custom_id, "response": None, "error": {"message": "server overloaded"}})
            continue
        data = json.dumps(line["body"]).encode()
        request = urllib.request.Request(url + "/chat/completions", data, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as handle:
            body = json.loads(handle.read())
        out.append({"id": "x", "custom_id": custom_id, "response": {"status_code": 200, "body": body}, "error": None})
    results.write_text("".join(json.dumps(row) + "\n" for row in out))


def outcomes(report):
    return {r["id"]: (r["outcome"], r.get("point")) for r in read_json(report)["samples"]}


def write_requests(pytester, dataset, path, *args):  # noqa: F811
    return pytester.runpytest(f"--dataset={dataset}", "--detector", WRITE, "--grounding-batch-out", str(path), *args)


@pytest.mark.slow
@XDIST
def test_batch_results_replayed_give_the_live_runs_outcomes(pytester, project, tmp_path, model, dataset, workers):  # noqa: F811
    live = tmp_path / "live.json"
    pytester.runpytest(
        f"--dataset={dataset}", "--detector", LIVE.format(url=model.url), "--grounding-json", str(live),
        "--grounding-misses", "xfail", "--grounding-frame-check=off",
    )  # fmt: skip
    asked_live = model.dataset_requests()
    requests = tmp_path / "out" / "requests.jsonl"
    result = write_requests(pytester, dataset, requests, *workers)
    text = result.stdout.str()
    assert model.dataset_requests() == asked_live  # nothing sent while writing
    assert f"not run here: written to {requests}" in text and "replay:path=results.jsonl" in text
    lines = [json.loads(t) for t in requests.read_text().splitlines()]
    assert len(lines) == N and len({line["custom_id"] for line in lines}) == N
    assert not list(requests.parent.glob("*.part-*"))  # the workers' parts are joined and gone
    manifest = json.loads((tmp_path / "out" / "requests.jsonl.manifest.json").read_text())
    assert manifest["sha256"] == hashlib.sha256(requests.read_bytes()).hexdigest()
    assert manifest["detector"]["model"] == "seeing" and manifest["detector"]["preset_name"] == PRESET
    assert manifest["datasets"][0]["fingerprint"]
    assert [s["custom_id"] for s in manifest["samples"]] == [line["custom_id"] for line in lines]
    assert all(s["size"] and s["sent"] for s in manifest["samples"])
    body = lines[0]["body"]
    assert body["model"] == "seeing" and body["messages"][-1]["content"][0]["image_url"]["url"].startswith("data:image")

    results = tmp_path / "results.jsonl"
    execute(requests, results, model.url)
    replayed = tmp_path / "replayed.json"
    result = pytester.runpytest(
        f"--dataset={dataset}", "--detector", f"replay:path={results},requests={requests}",
        "--grounding-json", str(replayed), "--grounding-misses", "xfail", *workers,
    )  # fmt: skip
    assert outcomes(replayed) == outcomes(live)
    assert {o for o, _ in outcomes(live).values()} == {"hit"}  # the model sees: every sample is a hit


@pytest.mark.slow
def test_the_same_file_serially_and_with_two_workers(pytester, project, tmp_path, dataset):  # noqa: F811
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    write_requests(pytester, dataset, one)
    write_requests(pytester, dataset, two, "-n", "2")
    assert one.read_bytes() == two.read_bytes()


@pytest.mark.slow
def test_a_shard_writes_its_own_file(pytester, project, tmp_path, dataset):  # noqa: F811
    requests = tmp_path / "requests.jsonl"
    counts = 0
    for k in (1, 2):
        write_requests(pytester, dataset, requests, "--grounding-shard", f"{k}/2")
        counts += len((tmp_path / f"requests.shard{k}of2.jsonl").read_text().splitlines())
    assert counts == N and not requests.exists()


@pytest.mark.slow
def test_missing_and_error_lines_are_those_samples_errors_and_a_foreign_file_is_refused(
    pytester,
    project,
    tmp_path,
    model,
    dataset,  # noqa: F811
):
    requests = tmp_path / "requests.jsonl"
    write_requests(pytester, dataset, requests)
    ids = [json.loads(t)["custom_id"] for t in requests.read_text().splitlines()]
    results = tmp_path / "results.jsonl"
    execute(requests, results, model.url, skip={ids[0]}, fail={ids[1]})
    report = tmp_path / "r.json"
    pytester.runpytest(
        f"--dataset={dataset}", "--detector", f"replay:path={results},requests={requests}",
        "--grounding-json", str(report), "--grounding-misses", "xfail",
    )  # fmt: skip
    records = {r["uid"] if "uid" in r else r["id"]: r for r in read_json(report)["samples"]}
    errors = [r for r in records.values() if r["outcome"] == "error"]
    assert len(errors) == 2 and len(records) == N
    said = " ".join(str(r.get("error")) for r in errors)
    assert "holds no result for" in said and "server overloaded" in said

    other = tmp_path / "other.jsonl"
    other.write_text(
        json.dumps({"custom_id": "someone-else", "response": {"status_code": 200, "body": {}}, "error": None}) + "\n"
    )
    result = pytester.runpytest(f"--dataset={dataset}", "--detector", f"replay:path={other},requests={requests}")
    assert result.ret != 0
    assert "the results of another requests file" in result.stdout.str() + result.stderr.str()

    requests.write_text(requests.read_text().replace("seeing", "changed", 1))
    result = pytester.runpytest(f"--dataset={dataset}", "--detector", f"replay:path={results},requests={requests}")
    assert "the requests file changed after it was written" in result.stdout.str() + result.stderr.str()


def test_a_detector_that_starts_its_own_server_is_refused(pytester, project, tmp_path, dataset):  # noqa: F811
    result = pytester.runpytest(
        f"--dataset={dataset}", "--detector", "center", "--grounding-batch-out", str(tmp_path / "r.jsonl")
    )
    assert result.ret == 4  # a usage error
    assert "only an openai: detector" in result.stderr.str()


# -- the files alone (no run) ---------------------------------------------------------------------


def written(tmp_path, ids=("a", "b")):
    from pytest_grounding.detectors import batch_files

    requests = tmp_path / "requests.jsonl"
    writer = batch_files.Writer(requests, "main")
    writer.start()
    for custom_id in reversed(ids):  # written out of order: joined in the run's order
        body = {"model": "m", "messages": []}
        writer.write(custom_id, body, {"size": [10, 10], "sent": [28, 28]}, {"model": "m", "preset_name": PRESET})
    manifest = batch_files.join_parts(requests, list(ids), {"datasets": []})
    return requests, manifest


def test_parts_are_joined_in_the_runs_order_with_the_files_sha256(tmp_path):
    requests, manifest = written(tmp_path)
    lines = [json.loads(t) for t in requests.read_text().splitlines()]
    assert [line["custom_id"] for line in lines] == ["a", "b"]
    assert manifest["sha256"] == hashlib.sha256(requests.read_bytes()).hexdigest()
    assert manifest["detector"] == {"model": "m", "preset_name": PRESET} and manifest["lines"] == 2
    assert not list(tmp_path.glob("*.part-*"))


def test_results_are_read_line_by_line_and_foreign_ones_refused(tmp_path):
    from pytest_grounding.detectors.batch_files import BatchError, read_results

    requests, _ = written(tmp_path)
    ok = {"status_code": 200, "body": {"model": "m", "choices": []}}
    results = tmp_path / "results.jsonl"
    rows = [
        {"custom_id": "a", "response": ok, "error": None},
        {"custom_id": "b", "response": {"status_code": 500, "body": {"error": "boom"}}, "error": None},
        {"custom_id": "zz", "response": ok, "error": None},
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = read_results(results, requests)
    assert found.by_id["a"].problem is None and "status 500" in found.by_id["b"].problem
    assert found.foreign == ("zz",)

    results.write_text(json.dumps({"custom_id": "a", "response": {"status_code": 200, "body": {"model": "other"}}}))
    with pytest.raises(BatchError, match="answered by model 'other'"):
        read_results(results, requests)
    results.write_text(json.dumps({"custom_id": "zz", "response": ok}))
    with pytest.raises(BatchError, match="answers none of the 2 requests"):
        read_results(results, requests)
    results.write_text("not json\n")
    with pytest.raises(BatchError, match="line 1: not JSON"):
        read_results(results, requests)
