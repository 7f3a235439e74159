"""Issue 29, injection: ids, instructions, app names, answers and error texts holding escape
sequences or CR/LF reach the terminal escaped (no live sequence, no forged line), and the
markdown job summary escapes markdown and HTML in every data-derived cell and line."""

import json
import re
import shutil

import pytest

from helpers import FIXTURES, SERIAL, read_json

FORGED = "verdict: all gates passed"
HOSTILE_CONFTEST = """
import numpy as np
from pytest_grounding.core.types import Box, Prediction


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


@pytest.mark.slow
@SERIAL
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
    from pytest_grounding.core.safetext import terminal_line, terminal_text

    assert terminal_line("a\x1b[2Jb\r\nc\x07\u202e\x9b\tz") == "a\\x1b[2Jb\\r\\nc\\x07\\u202e\\x9b\tz"
    assert terminal_line("Blender — ünïcode 图") == "Blender — ünïcode 图"
    assert terminal_text("line one\nline\x1b two\r\n") == "line one\nline\\x1b two\\r\n"


FORGE_MD = "x\n\n**passed**\n\n<!-- hidden | cell <img src=https://evil.example/p.png> `code` [l](http://e) ![i](http://e/i.png)"
HEADINGS = ("## Grounding benchmark", "### ")


def unescaped_pipes(line):
    return len(re.findall(r"(?<!\\)\|", line))


def assert_markdown_inert(text):
    assert "<!--" not in text and "<img" not in text and "![" not in text, text
    verdicts = [line for line in text.splitlines() if line.startswith(("**passed**", "**FAILED**"))]
    assert len(verdicts) <= 1, verdicts
    assert not [line for line in text.splitlines() if line.startswith("#") and not line.startswith(HEADINGS)]
    table = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            table.append(unescaped_pipes(line))
        elif table:
            assert len(set(table)) == 1, f"a row with more cells than its header: {text}"
            table = []


@pytest.mark.slow
def test_markdown_summary_and_compare_escape_data(pytester, tmp_path, capsys):
    from pytest_grounding.cli.main import main

    pytester.makeconftest(HOSTILE_CONFTEST)
    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    folder = hostile_dataset(tmp_path)
    meta = folder / "data" / "test" / "metadata.jsonl"
    rows = [json.loads(line) for line in meta.read_text().splitlines()]
    for row in rows:
        row["element_type"] = FORGE_MD
    meta.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = tmp_path / "r.json"
    pytester.runpytest(f"--dataset={folder}", "--detector=hostile", "--grounding-json", str(report))
    capsys.readouterr()
    assert main(["summary", str(report)]) == 0  # ids, apps, element types straight from the data
    assert_markdown_inert(capsys.readouterr().out)
    document = read_json(report)
    name = next(iter(document["summary"]))
    document["gates"] = [{"detector": FORGE_MD, "slice": FORGE_MD, "accuracy": 0.1, "threshold": 0.5, "passed": False}]
    regression = {"detector": FORGE_MD, "dataset": FORGE_MD, "id": FORGE_MD, "uid": "u", "outcome": "miss"}
    document["baseline"] = {
        "path": f"base`line{FORGE_MD}.json",
        "status": FORGE_MD,
        "problem": FORGE_MD,
        "compared": 8,
        "regressions": [regression],
        "improvements": [],
        "known_misses": 0,
        "slices": [],
    }
    document["summary"][FORGE_MD] = document["summary"].pop(name)
    from pytest_grounding.render.markdown import report_markdown

    summary = report_markdown(document)  # sections a run writes rarely, forged: escaped all the same
    assert "**FAILED**" in summary
    assert_markdown_inert(summary)
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["summary", str(forged)]) == 2  # ... and `summary` refuses a report that breaks the schema
    assert "schema" in capsys.readouterr().err
    other = tmp_path / "s.json"
    shutil.copy(report, other)
    assert main(["compare", str(report), str(other), "--markdown"]) == 0
    assert_markdown_inert(capsys.readouterr().out)
    assert main(["compare", str(report), str(other)]) == 0
    assert_terminal_safe(capsys.readouterr().out)


def test_markdown_escapes():
    from pytest_grounding.core.safetext import markdown_text

    assert markdown_text("a|b\n<!--c-->*d*") == "a\\|b\\\\n&lt;\\!--c--&gt;\\*d\\*"
    assert markdown_text("66.7% (2/3)") == "66.7% (2/3)"
