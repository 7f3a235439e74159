"""Issue 29, lost samples: a detector whose describe() raises is a note, never an INTERNALERROR
that ends the session (serial and under xdist)."""

import pytest

from helpers import FIXTURES, SERIAL, XDIST, read_json

BROKEN_DESCRIBE = """
from pytest_grounding.core.types import Prediction


class BadDescribe:
    name = "baddescribe"

    def predict(self, query):
        return Prediction(point=(20.0, 20.0))

    def describe(self):
        raise RuntimeError("describe exploded")


def pytest_grounding_register_detectors(registry):
    registry.register("baddescribe", BadDescribe)
"""


@pytest.mark.slow
@SERIAL
def test_a_detector_whose_describe_raises_is_a_note(pytester, tmp_path, workers):
    pytester.makeconftest(BROKEN_DESCRIBE)
    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        f"--dataset={FIXTURES / 'mini'}",
        "--detector=baddescribe",
        "--detector=center",
        "--grounding-json",
        str(report),
        *workers,
    )
    text = result.stdout.str()
    assert "INTERNALERROR" not in text, text[-3000:]
    document = read_json(report)
    assert {r["detector"] for r in document["samples"]} == {"baddescribe", "center"}
    assert len(document["samples"]) == 16
    assert any("describe() raised RuntimeError: describe exploded" in note for note in document["notes"])
    assert "describe() raised RuntimeError" in text
    from pytest_grounding.store.reportcheck import problems

    assert problems(document) == []  # the report still fits its schema


@pytest.mark.slow
@XDIST
def test_resume_rescores_tampered_lines_and_runs_again_what_does_not_fit(pytester, tmp_path, workers):
    import json

    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    predictions, report = tmp_path / "p.jsonl", tmp_path / "r.json"
    common = [f"--dataset={FIXTURES / 'mini'}", "--detector=center", f"--grounding-predictions={predictions}"]
    pytester.runpytest(*common)
    lines = {line["id"]: line for line in map(json.loads, predictions.read_text().splitlines())}
    assert lines["m01"]["outcome"] == "miss"
    lines["m01"]["outcome"] = "hit"  # a forged hit: the point is still far from the target
    lines["m02"]["id"] = "not-in-the-set"
    lines["m03"]["outcome"] = "bogus"
    lines["m04"]["latency_ms"] = "abc"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines.values()))
    result = pytester.runpytest(*common, "--grounding-resume", f"--grounding-json={report}", *workers)
    text = result.stdout.str()
    assert "INTERNALERROR" not in text and report.is_file(), text[-3000:]
    samples = read_json(report)["samples"]
    assert sorted(r["id"] for r in samples) == sorted(f"m0{i}" for i in range(1, 9))
    by_id = {r["id"]: r for r in samples}
    assert by_id["m01"]["outcome"] == "miss"
    assert all(r["outcome"] in ("hit", "miss", "wrong_format", "error") for r in samples)
    notes = " ".join(read_json(report)["notes"])
    assert "stored outcome 'hit'" in notes and "bogus" in notes and "'abc'" in notes and "not-in-the-set" in notes


@pytest.mark.slow
@SERIAL
def test_baselines_with_bad_values_are_clear_errors(pytester, tmp_path, workers):
    import json

    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    baseline = tmp_path / "b.json"
    common = [f"--dataset={FIXTURES / 'mini'}", "--detector=center", f"--grounding-baseline={baseline}"]
    pytester.runpytest(*common)
    good = json.loads(baseline.read_text())
    hit = next(row for row in good["samples"] if row["outcome"] != "error")
    cases = {
        "unknown outcome": lambda d: d["samples"][0].update(outcome="excellent"),
        "non-numeric p50": lambda d: d["latency_ms"]["center"].update(p50="fast"),
        "zero p50": lambda d: d["latency_ms"]["center"].update(p50=0),
        "conflicting duplicate": lambda d: d["samples"].append(
            {**hit, "outcome": "miss" if hit["outcome"] == "hit" else "hit"}
        ),
    }
    for name, change in cases.items():
        document = json.loads(json.dumps(good))
        change(document)
        baseline.write_text(json.dumps(document))
        result = pytester.runpytest(*common, "--grounding-max-slowdown=3", *workers)
        text = result.stdout.str() + result.stderr.str()
        assert "INTERNALERROR" not in text, (name, text[-3000:])
        assert result.ret == 4, (name, result.ret, text[-2000:])
        assert str(baseline) in text, name
