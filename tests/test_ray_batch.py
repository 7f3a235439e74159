"""Issue 57: Ray Data runs a `--grounding-batch-out` file. `ci/engines/ray_batch.py`, with the Python of
`bash ci/engines/install.sh ray` (ray[data] 2.60), starts a local Ray (`ray.init()`), sends every
line's body through Ray Data's HTTP processor (`ray.data.llm.HttpRequestProcessorConfig`) to a model
that SEES the screenshot (tests/seeing_model.py), and writes an OpenAI Batch output file;
`replay:path=RESULTS,requests=FILE` scores it with the outcomes of a live run of that model, and the
bodies the model received are the file's own. Skipped where the Ray environment is not installed;
under CI=true, whose engine install makes it, a missing one fails instead, as the other engines do.

The driver's file handling (the Batch lines it writes, `--resume`) is tested without Ray below."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest
from seeing_model import SeeingModel
from test_batch_files import LIVE, WRITE, outcomes
from test_frame_check import N, dataset  # noqa: F401  (the squares dataset fixture)

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "ci" / "engines" / "ray_batch.py"
ENGINES = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")
RAY_PYTHON = ENGINES / "ray" / "bin" / "python"


def driver():
    spec = importlib.util.spec_from_file_location("ray_batch", DRIVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.engines
def test_ray_data_runs_the_request_file_and_the_replay_gives_the_live_runs_outcomes(
    pytester,
    project,
    tmp_path,
    dataset,  # noqa: F811
):
    pytest.importorskip("ui_tars")  # the openai extra: the default preset's parser
    if not (RAY_PYTHON.parent.parent / ".stamp").is_file():
        message = f"Ray Data is not installed in {RAY_PYTHON.parent.parent}: bash ci/engines/install.sh ray"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    model = SeeingModel("right")
    try:
        live = tmp_path / "live.json"
        pytester.runpytest(
            f"--dataset={dataset}", "--detector", LIVE.format(url=model.url), "--grounding-json", str(live),
            "--grounding-misses", "xfail", "--grounding-frame-check=off",
        )  # fmt: skip
        requests = tmp_path / "requests.jsonl"
        pytester.runpytest(f"--dataset={dataset}", "--detector", WRITE, "--grounding-batch-out", str(requests))
        sent = len(model.bodies)
        results = tmp_path / "results.jsonl"
        ran = subprocess.run(
            [str(RAY_PYTHON), str(DRIVER), str(requests), str(results), "--base-url", model.url, "--concurrency", "1"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
        print(ran.stdout[-1000:])  # Ray's start and run times, for the log
        assert f"ray_batch: {N} sent, 0 kept, 0 not 200, 0 missing" in ran.stdout, ran.stdout[-2000:]
        by_ray = sorted(model.bodies[sent:], key=json.dumps)
    finally:
        model.close()
    lines = [json.loads(text) for text in requests.read_text().splitlines()]
    assert by_ray == sorted((line["body"] for line in lines), key=json.dumps)  # as written: no Arrow nulls
    rows = [json.loads(text) for text in results.read_text().splitlines()]
    assert [row["custom_id"] for row in rows] == [line["custom_id"] for line in lines]  # the file's order

    replayed = tmp_path / "replayed.json"
    pytester.runpytest(
        f"--dataset={dataset}", "--detector", f"replay:path={results},requests={requests}",
        "--grounding-json", str(replayed), "--grounding-misses", "xfail",
    )  # fmt: skip
    assert outcomes(replayed) == outcomes(live)
    assert {o for o, _ in outcomes(live).values()} == {"hit"}  # the model sees: every sample is a hit


# -- the driver's files, without Ray ------------------------------------------------------------------


def test_a_status_other_than_200_is_that_lines_response_and_text_that_is_no_json_its_error():
    ray_batch = driver()
    ok = ray_batch._batch_line("a", 200, json.dumps({"model": "m", "choices": []}))
    assert ok["response"] == {"status_code": 200, "request_id": None, "body": {"model": "m", "choices": []}}
    assert ok["error"] is None and ok["custom_id"] == "a"
    refused = ray_batch._batch_line("b", 400, json.dumps({"error": {"message": "too long"}}))
    assert refused["response"]["status_code"] == 400 and refused["response"]["body"]["error"]["message"] == "too long"
    broken = ray_batch._batch_line("c", 502, "<html>bad gateway</html>")
    assert broken["response"] is None and broken["error"]["message"] == "status 502: <html>bad gateway</html>"


def test_resume_keeps_only_the_200_lines_of_this_files_requests(tmp_path):
    ray_batch = driver()
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        "".join(json.dumps({"custom_id": c, "url": "/v1/chat/completions", "body": {}}) + "\n" for c in "abc")
    )
    order, url = ray_batch._read_index(requests)
    assert order == ["a", "b", "c"] and url == "/v1/chat/completions"
    results = tmp_path / "results.jsonl"
    rows = [
        ray_batch._batch_line("a", 200, "{}"),
        ray_batch._batch_line("b", 503, "{}"),
        ray_batch._batch_line("zz", 200, "{}"),
    ]
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert list(ray_batch._kept(results, order)) == ["a"]
    assert ray_batch._kept(tmp_path / "absent.jsonl", order) == {}


def test_lines_for_two_urls_are_refused(tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        json.dumps({"custom_id": "a", "url": "/v1/chat/completions"})
        + "\n"
        + json.dumps({"custom_id": "b", "url": "/v1/embeddings"})
        + "\n"
    )
    with pytest.raises(SystemExit, match="several URLs"):
        driver()._read_index(requests)
