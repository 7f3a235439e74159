"""Errata: the file read and checked, the corrected figure beside the official one, and `review --audit`
writing the file decision by decision."""

from __future__ import annotations

import io
import json

import pytest

from helpers import FIXTURES, SERIAL
from pytest_grounding.analysis.errata import ErrataError, block, corrected, parse, summary_lines
from pytest_grounding.cli.curation import errata_review
from pytest_grounding.cli.curation.errata_review import FindingsReview


def errata(*rows):
    return parse("".join(json.dumps(r) + "\n" for r in rows).encode(), path="errata.jsonl")


def record(sid, outcome, point, detector="m", **fields):
    return {"id": sid, "detector": detector, "outcome": outcome, "point": point, "task": "grounding", **fields}


RECORDS = [
    record("a", "hit", [5, 5]),
    record("b", "miss", [50, 50]),  # its box was wrong: the fix makes it a hit
    record("c", "hit", [5, 5]),  # dropped
    record("d", "miss", [90, 90]),  # the instruction is fixed: kept as scored
    record("e", "error", None),  # left out of both, as the official accuracy does
    record("f", "hit", [5, 5], variant="invert"),  # a sweep's variant: not an original sample
]


def test_corrected_beside_official():
    found = errata(
        {"id": "b", "action": "fix", "bbox": [40, 40, 60, 60], "reason": "box on another button"},
        {"id": "c", "action": "drop", "reason": "ambiguous"},
        {"id": "d", "action": "fix", "instruction": "Click Export", "reason": "typo"},
        {"id": "zz", "action": "drop", "reason": "not in this run"},
    )
    figures = corrected(RECORDS, found)["m"]
    assert (figures["hits"], figures["n"]) == (2, 4) and figures["official"] == 0.5
    assert (figures["corrected_hits"], figures["corrected_n"]) == (2, 3)
    assert figures["corrected"] == pytest.approx(2 / 3)
    assert (figures["dropped"], figures["refixed"], figures["flipped"], figures["instruction_only"]) == (1, 1, 1, 1)
    report = block(RECORDS, found)
    assert report["digest"] == found.digest and len(report["digest"]) == 64 and report["entries"] == 4
    line = summary_lines(report)[1]
    assert "official 50.0% (2/4), corrected 66.7% (2/3; 1 dropped, 1 boxes fixed, 1 verdicts changed" in line


def test_a_fixed_box_can_turn_a_hit_into_a_miss():
    found = errata({"id": "a", "action": "fix", "bbox": [20, 20, 30, 30], "reason": "moved"})
    assert corrected(RECORDS[:1], found)["m"]["corrected"] == 0.0


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "line 1: not JSON"),
        ('{"action": "drop"}', "'id' must be a non-empty string"),
        ('{"id": "a", "action": "delete"}', "action must be one of fix, drop"),
        ('{"id": "a", "action": "fix", "bbox": [10, 10, 5, 20]}', "bbox must be [x1, y1, x2, y2]"),
        ('{"id": "a", "action": "fix"}', "a fix needs a bbox or an instruction"),
        ('{"id": "a", "action": "fix", "instruction": " "}', "instruction must be a non-empty string"),
    ],
)
def test_a_bad_line_is_named(line, message):
    with pytest.raises(ErrataError, match="line 1") as caught:
        parse(line.encode(), "errata.jsonl")
    assert message in str(caught.value)


FINDINGS = [
    {
        "id": "a",
        "kind": "consensus",
        "score": 0.9,
        "message": "3 of 3 runs click elsewhere",
        "instruction": "Save",
        "bbox": [0, 0, 10, 10],
        "image": "/nowhere/a.png",
    },
    {
        "id": "b",
        "kind": "typo",
        "score": 0.8,
        "message": "'Exprot'",
        "instruction": "Exprot",
        "bbox": [0, 0, 10, 10],
        "image": "/nowhere/b.png",
    },
    {
        "id": "a",
        "kind": "text_mismatch",
        "score": 0.7,
        "message": "'save' read elsewhere",
        "instruction": "Save",
        "bbox": [0, 0, 10, 10],
        "image": "/nowhere/a.png",
    },
    {
        "id": "c",
        "kind": "geometry",
        "score": 0.6,
        "message": "no area",
        "instruction": "Open",
        "bbox": [0, 0, 0, 10],
        "image": "/nowhere/c.png",
    },
]


def test_findings_review_one_decision_per_sample():
    review = FindingsReview.start(FINDINGS)
    assert [s[0]["id"] for s in review.samples] == ["a", "b", "c"] and len(review.current) == 2
    review.fix(bbox=(20, 20, 40, 30), reason="the box was on the label beside it")
    review.fix(instruction="Click Save")  # both on one erratum, its reason kept
    review.next()
    review.keep()
    review.drop("no element on the screen fits")
    assert review.done
    written = parse(review.text().encode()).by_id
    assert written["a"].bbox == (20, 20, 40, 30) and written["a"].instruction == "Click Save"
    assert written["a"].reason == "the box was on the label beside it"  # the reviewer's, not the finding
    assert written["c"].action == "drop" and written["c"].reason == "no element on the screen fits"
    assert "b" not in written and review.kept == {"b"}
    resumed = FindingsReview.start(FINDINGS, written, ["b"])
    assert resumed.done


def test_review_command_writes_the_errata_file_as_it_goes(tmp_path, monkeypatch):
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({"dataset": {"path": str(tmp_path)}, "findings": FINDINGS}))
    out = tmp_path / "errata.jsonl"
    keys = iter(["d", "k", "i", "n"])
    monkeypatch.setattr("sys.stdin", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.ask_key", lambda message, allowed: next(keys))
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.ask_text", lambda message, default: "Open the file")
    text = io.StringIO()
    assert errata_review.run(audit, out, mode="file", out=text) == 0
    entries = parse(out.read_bytes()).by_id
    assert entries["a"].action == "drop" and entries["c"].instruction == "Open the file" and "b" not in entries
    assert "screens not read" in text.getvalue()  # no dataset to check: /nowhere/*.png is never opened
    assert entries["a"].reason == "Open the file"  # the reason asked for (ask_text answers every question so here)
    assert "the audit said: consensus: 3 of 3 runs" in text.getvalue()
    assert errata_review.run(audit, out, mode="file", out=io.StringIO()) == 0  # everything decided: nothing asked


# -- through the plugin -------------------------------------------------------------------------------

MINI_ERRATA = [
    {"id": "m01", "action": "fix", "bbox": [70, 50, 90, 70], "reason": "the box was on another element"},
    {"id": "m02", "action": "drop", "reason": "ambiguous"},
]


@SERIAL
def test_a_run_with_errata_keeps_the_official_figure_and_adds_the_corrected(project, tmp_path, workers):
    import hashlib

    from pytest_grounding.store.reports import read_report

    path = tmp_path / "errata.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in MINI_ERRATA))
    plain, corrected_run = tmp_path / "plain.json", tmp_path / "errata.json"
    common = [f"--dataset={FIXTURES / 'mini'}", "--detector", "center", "--detector", "colour", *workers]
    project.runpytest(*common, "--grounding-json", str(plain))
    result = project.runpytest(*common, "--grounding-json", str(corrected_run), f"--grounding-errata={path}")
    official, with_errata = read_report(plain), read_report(corrected_run)  # both checked against the schema
    assert "errata" not in official
    for name in ("center", "colour"):  # the official figures exactly as without errata
        for key in ("accuracy", "hits", "scored", "misses", "errors"):
            assert with_errata["summary"][name][key] == official["summary"][name][key]
    block = with_errata["errata"]
    assert block["digest"] == hashlib.sha256(path.read_bytes()).hexdigest() and block["file"] == str(path)
    center = block["detectors"]["center"]
    assert (center["official"], center["hits"], center["n"]) == (0.0, 0, 6)
    assert (center["corrected_hits"], center["corrected_n"], center["flipped"]) == (1, 5, 1)
    colour = block["detectors"]["colour"]
    assert colour["official"] == official["summary"]["colour"]["accuracy"] and colour["corrected_n"] == 5
    text = result.stdout.str()
    assert f"errata {path} (sha256 {block['digest'][:12]}, 2 entries: 1 drop and 1 fix applied)" in text
    assert "center: official 0.0% (0/6), corrected 20.0% (1/5; 1 dropped, 1 boxes fixed, 1 verdicts changed" in text
    from pytest_grounding.render.markdown import report_markdown

    markdown = report_markdown(with_errata)
    assert "### Errata " in markdown and "| center | 0.0% | 0/6 | 20.0% | 1/5 | 1 | 1 | 1 |" in markdown
    from pytest_grounding.render.html import write_html

    page = tmp_path / "page.html"
    write_html(with_errata, page)
    assert '<h3 id="errata">' in page.read_text() and "<td>20.0%</td>" in page.read_text()
    # the same report as an audit's runs: one run per detector, each sample's click
    from pytest_grounding.cli.main import main

    out = tmp_path / "audit.json"
    assert (
        main(["audit", "--dataset", str(FIXTURES / "mini"), "--runs", str(plain), "--no-ocr", "--json", str(out)]) == 0
    )
    audited = json.loads(out.read_text())
    assert audited["runs"] == ["center", "colour"]
    clicked = {f["id"]: f.get("clicks") for f in audited["findings"]}
    assert set(clicked["m05"]) == {"center", "colour"} and clicked["m05"]["center"] == [80.0, 60.0]  # the middle


def test_a_bad_errata_file_stops_the_run_before_any_sample(project, tmp_path):
    path = tmp_path / "errata.jsonl"
    path.write_text('{"id": "m01", "action": "remove"}\n')
    result = project.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector", "center", f"--grounding-errata={path}")
    assert result.ret == 4  # a usage error
    assert "--grounding-errata" in result.stderr.str() + result.stdout.str()
    assert "line 1: action must be one of fix, drop" in result.stderr.str() + result.stdout.str()


def test_ids_that_match_no_sample_are_named_and_not_counted():
    found = errata(
        {"id": "c", "action": "drop", "reason": "ambiguous"},
        {"id": "zz", "action": "drop", "reason": "another version's id"},
        {"id": "yy", "action": "fix", "bbox": [0, 0, 5, 5], "reason": "typo in the id"},
    )
    report = block(RECORDS, found)
    assert (report["entries"], report["drops"], report["fixes"], report["unmatched"]) == (3, 1, 0, ["zz", "yy"])
    assert "3 entries: 1 drop and 0 fixes applied, 2 not in this run" in summary_lines(report)[0]
    from pytest_grounding.analysis.errata import unmatched_note

    note = unmatched_note(found, {"a", "b", "c"})
    assert note is not None and "2 of 3 entries match no sample" in note and "'zz', 'yy'" in note
    assert unmatched_note(found, {"c", "zz", "yy"}) is None


@SERIAL
def test_rescore_carries_the_errata_and_takes_another_file(project, tmp_path, capsys, workers):
    """A run with errata (one id of another dataset): the note names it, the counts say what applied, the
    run record keeps the file's digest; `rescore` of that report applies the same corrections again,
    and `rescore --errata FILE` applies a file to a run made without one."""
    import hashlib

    from pytest_grounding.cli.main import main
    from pytest_grounding.store.reports import read_report

    path = tmp_path / "errata.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*MINI_ERRATA, {"id": "zz9", "action": "drop"}]))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    plain, with_errata = tmp_path / "plain.json", tmp_path / "errata.json"
    common = [f"--dataset={FIXTURES / 'mini'}", "--detector", "center", *workers]
    project.runpytest(*common, "--grounding-json", str(plain))
    result = project.runpytest(*common, "--grounding-json", str(with_errata), f"--grounding-errata={path}")
    run = read_report(with_errata)
    said = f"errata {path}: 1 of 3 entries match no sample of the run's datasets and were not applied: 'zz9'"
    assert said in run["notes"] and said in result.stdout.str()
    assert (run["errata"]["drops"], run["errata"]["fixes"], run["errata"]["unmatched"]) == (1, 1, ["zz9"])
    assert run["run"]["settings"]["errata"] == {"file": str(path), "digest": digest}
    assert "errata" not in read_report(plain)["run"]["settings"]
    capsys.readouterr()
    again = tmp_path / "again.json"
    assert main(["rescore", str(with_errata), "--json", str(again)]) == 0
    rescored = read_report(again)  # checked against the schema
    assert rescored["errata"]["detectors"] == run["errata"]["detectors"]
    assert rescored["errata"]["digest"] == digest and rescored["run"]["settings"]["errata"]["digest"] == digest
    assert "center: official 0.0% (0/6), corrected 20.0% (1/5" in capsys.readouterr().out
    applied = tmp_path / "applied.json"
    assert main(["rescore", str(plain), "--errata", str(path), "--json", str(applied)]) == 0
    from_file = read_report(applied)
    assert from_file["errata"]["detectors"] == run["errata"]["detectors"]
    assert from_file["run"]["settings"]["errata"] == {"file": str(path), "digest": digest}
    assert any("'zz9'" in note for note in from_file["notes"]) and "--errata" in from_file["run"]["args"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "m01", "action": "remove"}\n')
    assert main(["rescore", str(plain), "--errata", str(bad), "--json", str(tmp_path / "x.json")]) == 2
    assert "line 1: action must be one of fix, drop" in capsys.readouterr().err


@pytest.mark.parametrize(
    "document, said",
    [
        ({"summary": {}, "samples": [], "run": {}}, "is a run's report (--grounding-json"),
        ({"kind": "audit-diff", "counts": {}, "pairs": []}, "is an `audit --diff` of two dataset versions"),
        ([1, 2], "is not an audit (a JSON list)"),
        ({"dataset": {"path": "/x"}, "findings": [{"id": "a"}]}, "finding 1 has no instruction, bbox"),
        ({"kind": "audit", "findings": []}, "the audit names no dataset path"),
    ],
)
def test_review_names_a_file_that_is_no_audit(tmp_path, capsys, document, said):
    path = tmp_path / "r1.json"
    path.write_text(json.dumps(document))
    assert errata_review.run(path, tmp_path / "errata.jsonl", mode="file", out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert said in err and "error: review --audit:" in err


def test_a_drop_without_a_reason_is_not_saved(tmp_path, monkeypatch):
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({"dataset": {"path": str(tmp_path)}, "findings": FINDINGS}))
    out = tmp_path / "errata.jsonl"
    keys = iter(["d", "q"])
    monkeypatch.setattr("sys.stdin", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.ask_key", lambda message, allowed: next(keys))
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.ask_text", lambda message, default: "")
    text = io.StringIO()
    assert errata_review.run(audit, out, mode="file", out=text) == 0
    assert "not saved: a drop needs a reason" in text.getvalue() and parse(out.read_bytes()).by_id == {}
