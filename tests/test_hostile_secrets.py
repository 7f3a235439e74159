"""Issue 29, secrets: a server (or a proxy) that echoes the request's Authorization header back
(a 401, a 500, a non-JSON 200, or a chat completion quoting it) must not get the API key into the
terminal, the JSON report, the predictions file, the JUnit XML or the HTML page."""

import json
from pathlib import Path

import pytest

from helpers import FIXTURES, XDIST, LoopbackServer, read_json

pytest.importorskip("ui_tars")

from pytest_grounding.core import redact

KEY = "sk-echo/Zq81+NEVER-PRINT-42"
MINI = str(FIXTURES / "mini")


def echoing(handler):
    """Each colour gets its own hostile answer, every one quoting the Authorization header."""
    length = int(handler.headers.get("Content-Length") or 0)
    body = json.loads(handler.rfile.read(length)) if length else {}
    header = handler.headers.get("Authorization", "")
    key = header.split(" ", 1)[-1]
    text = json.dumps(body)[-2000:]
    if "red" in text:
        return 401, {"error": {"message": f"invalid credentials: Authorization: {header}"}}
    if "blue" in text:
        return 500, f"<html>upstream failed; headers were {{'authorization': '{header}'}} {'x' * 300}</html>"
    if "green" in text:
        return 200, f"<html>proxy login page for key {key}</html>"
    return 200, {"choices": [{"message": {"role": "assistant", "content": f"you sent {header} and {json.dumps(key)}"}}]}


@pytest.fixture
def echo_server():
    server = LoopbackServer(echoing)
    yield server
    server.close()


@pytest.mark.slow
@XDIST
def test_an_echoed_key_is_in_no_artifact(pytester, monkeypatch, echo_server, workers, tmp_path):
    monkeypatch.setenv("GROUNDING_ECHO_KEY", KEY)
    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    outputs = {name: tmp_path / name for name in ("r.json", "p.jsonl", "junit.xml", "r.html")}
    spec = f"openai:preset=uitars-1.5-point,base_url={echo_server.url},model=m,api_key_env=GROUNDING_ECHO_KEY,retries=0"
    result = pytester.runpytest(
        f"--dataset={MINI}",
        "--detector",
        spec,
        "--grounding-json",
        str(outputs["r.json"]),
        "--grounding-predictions",
        str(outputs["p.jsonl"]),
        "--grounding-html",
        str(outputs["r.html"]),
        "--junitxml",
        str(outputs["junit.xml"]),
        "-rA",
        *workers,
    )
    records = {r["id"]: r for r in read_json(outputs["r.json"])["samples"]}
    assert "m01" in records, "\n".join(result.outlines[-60:])  # the run's own words when it broke
    assert records["m01"]["outcome"] == "error" and "invalid credentials" in records["m01"]["error"]
    # after a 401 the client sends nothing more (http.py): the later samples of that process end
    # with the refusal, unsent; those of another xdist worker with the server's own answer
    assert records["m02"]["outcome"] == "error" and (
        "HTTP 500" in records["m02"]["error"] or "was refused" in records["m02"]["error"]
    )
    assert records["m03"]["outcome"] == "error" and (
        "not JSON" in records["m03"]["error"] or "was refused" in records["m03"]["error"]
    )
    texts = {"stdout": result.stdout.str(), "stderr": result.stderr.str()}
    texts.update({name: Path(path).read_text() for name, path in outputs.items()})
    secret_parts = [KEY, KEY.split("/")[1][:10], "Zq81", "sk-echo"]
    for name, text in texts.items():
        for part in secret_parts:
            assert part not in text, f"{part!r} in {name}"
    assert redact.MASK in texts["r.json"] and redact.MASK in texts["p.jsonl"]


def test_redact_masks_registered_values_in_their_echoed_forms():
    redact.register("s3cr3t/value+x")
    text = 'a s3cr3t/value+x b "s3cr3t\\/value+x" c s3cr3t%2Fvalue%2Bx d Bearer other.token-1 '
    text += "e bearer%20zzzzzzzzzz f the bearer of news"
    out = redact.redact(text)
    assert "s3cr3t" not in out and "other.token" not in out and "zz" not in out and "bearer of news" in out
    assert out.count(redact.MASK) == 5
    assert redact.redact("nothing here") == "nothing here"
    assert redact.redact(None) is None
    redact.register("ab")  # too short to be masked without masking ordinary text
    assert redact.redact("abc") == "abc"


@pytest.mark.parametrize(
    "echoed",
    [
        "sk%2Dtest%2DZq81",  # "-" escaped, which quote() leaves alone
        "sk%2dtest%2dzq81".replace("zq81", "Zq81"),  # lower-case hex
        "%73%6B%2D%74%65%73%74%2D%5A%71%38%31",  # every character escaped
        "sk-test%2DZq81",  # escaped in part
    ],
)
def test_a_key_echoed_percent_encoded_any_way_is_masked(echoed):
    redact.register("sk-test-Zq81")
    out = redact.redact(f"HTTP 401: invalid key={echoed}&x=%41")
    assert "Zq81" not in out and "%5A" not in out and out == f"HTTP 401: invalid key={redact.MASK}&x=%41"
