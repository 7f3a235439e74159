"""Issue 29, lost samples: a detector whose describe() raises is a note, never an INTERNALERROR
that ends the session (serial and under xdist)."""

from helpers import FIXTURES, XDIST, read_json

BROKEN_DESCRIBE = """
from pytest_grounding.types import Prediction


class BadDescribe:
    name = "baddescribe"

    def predict(self, query):
        return Prediction(point=(20.0, 20.0))

    def describe(self):
        raise RuntimeError("describe exploded")


def pytest_grounding_register_detectors(registry):
    registry.register("baddescribe", BadDescribe)
"""


@XDIST
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
    from pytest_grounding.reportcheck import problems

    assert problems(document) == []  # the report still fits its schema
