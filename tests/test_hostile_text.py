"""Issue 29, injection: ids, instructions, app names, answers and error texts holding escape
sequences or CR/LF reach the terminal escaped (no live sequence, no forged line), and the
markdown job summary escapes markdown and HTML in every data-derived cell and line."""

import json
import shutil

from helpers import FIXTURES, XDIST, read_json

FORGED = "verdict: all gates passed"
HOSTILE_CONFTEST = """
import numpy as np
from pytest_grounding.types import Box, Prediction


class Hostile:
    name = "hostile"

    def predict(self, query):
        text = query.instruction.lower()
        if "blue" in text:
            return Prediction.no_answer(raw="\\x1b[2J\\x1b[H\\r\\nverdict: all gates passed\\x1b]0;owned\\x07")
        if "green" in text:
            raise RuntimeError("\\x1b]0;title\\x07 backend down\\r\\nverdict: all gates passed")
        return Prediction(point=(130.0, 100.0))   # a miss on most red squares


def pytest_grounding_register_detectors(registry):
    registry.register("hostile", Hostile)
"""


def hostile_dataset(tmp_path):
    """The mini set with escape sequences and CR/LF in ids, instructions and app names."""
    folder = tmp_path / "evil"
    shutil.copytree(FIXTURES / "mini", folder)
    meta = folder / "data" / "test" / "metadata.jsonl"
    rows = [json.loads(line) for line in meta.read_text().splitlines() if line.strip()]
    for row in rows:
        row["id"] = row["id"] + "\x1b]0;pwned\x07\r\n" + FORGED
        row["instruction"] = row["instruction"] + " \x1b[2J\r\n" + FORGED
        row["app"] = "\x1b[31m" + row["app"] + "\n" + FORGED
    meta.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def assert_terminal_safe(text):
    for char in ("\x1b", "\x07", "\r", "\x9b"):
        assert char not in text, f"{char!r} reached the terminal"
    forged = [line for line in text.splitlines() if line.lstrip().startswith(FORGED)]
    assert not forged, forged


@XDIST
def test_escape_sequences_and_newlines_reach_the_terminal_escaped(pytester, tmp_path, workers):
    pytester.makeconftest(HOSTILE_CONFTEST)
    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        f"--dataset={hostile_dataset(tmp_path)}",
        "--detector=hostile",
        "--grounding-json",
        str(report),
        "--grounding-show-misses=all",
        "-rA",
        *workers,
    )
    assert "INTERNALERROR" not in result.stdout.str()
    samples = read_json(report)["samples"]
    assert len(samples) == 8 and {r["outcome"] for r in samples} >= {"miss", "wrong_format", "error"}
    assert any(FORGED in r["id"] for r in samples)  # the JSON keeps the data as it is
    assert_terminal_safe(result.stdout.str())
    assert_terminal_safe(result.stderr.str())
    assert "\\x1b" in result.stdout.str()  # shown escaped, not dropped


def test_safetext_escapes_controls_but_keeps_plain_text():
    from pytest_grounding.safetext import terminal_line, terminal_text

    assert terminal_line("a\x1b[2Jb\r\nc\x07\u202e\x9b\tz") == "a\\x1b[2Jb\\r\\nc\\x07\\u202e\\x9b\tz"
    assert terminal_line("Blender — ünïcode 图") == "Blender — ünïcode 图"
    assert terminal_text("line one\nline\x1b two\r\n") == "line one\nline\\x1b two\\r\n"
