"""Issue 29, crafted inputs: `report` and `summary` check a report against the shipped schema before
rendering it (a crafted number never becomes live HTML, `{}` is no **passed**); JSON nested deeper
than anything the tool writes is a clear error everywhere it is read, never a RecursionError."""

import json

import pytest

from helpers import FIXTURES, SERIAL, read_json
from pytest_grounding.cli.main import main

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 5_000 + "1" + "}" * 5_000


@pytest.fixture(scope="module")
def real_report(tmp_path_factory):
    """A real report of a small run (the `center` detector on the mini set)."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("real")
    report = folder / "r.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(FIXTURES.parent / "suites"),
            "-q",
            "-p",
            "no:cacheprovider",
            f"--dataset={FIXTURES / 'mini'}",
            "--detector=center",
            "--grounding-json",
            str(report),
        ],
        capture_output=True,
        check=False,
        cwd=folder,
    )
    return read_json(report)


@pytest.mark.parametrize("content", ["{}", "[]", '"text"', "[1, 2]", '{"tool": "pytest-grounding", "summary": {}}'])
def test_summary_of_something_that_is_no_report_is_exit_2(tmp_path, capsys, content):
    path = tmp_path / "r.json"
    path.write_text(content)
    assert main(["summary", str(path)]) == 2
    captured = capsys.readouterr()
    assert "**passed**" not in captured.out
    assert "not a pytest-grounding JSON report" in captured.err or "schema" in captured.err


@pytest.mark.parametrize("command", [["summary"], ["report", "--html", "OUT"], ["compare"]])
@pytest.mark.parametrize("content", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_deeply_nested_report_is_a_clear_error(tmp_path, capsys, command, content):
    path = tmp_path / "r.json"
    path.write_text(content)
    argv = [command[0], str(path), *[str(tmp_path / "o.html") if a == "OUT" else a for a in command[1:]]]
    assert main(argv) == 2
    assert "nested" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(
    "field, value",
    [
        ("latency_ms", "<script>alert(1)</script>"),
        ("iou", "<img src=x onerror=alert(1)>"),
        ("distance", "</style><script>alert(2)</script>"),
    ],
)
def test_report_html_of_a_crafted_report_is_refused_or_inert(real_report, tmp_path, capsys, field, value):
    document = json.loads(json.dumps(real_report))
    document["samples"][0][field] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document))
    html = tmp_path / "r.html"
    status = main(["report", str(path), "--html", str(html)])
    err = capsys.readouterr().err
    assert status == 2 and "schema" in err, err
    assert "Traceback" not in err
    assert not html.exists() or "<script>alert" not in html.read_text()


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_summary_of_a_report_that_breaks_the_schema_is_exit_2(real_report, tmp_path, capsys):
    document = json.loads(json.dumps(real_report))
    document["summary"] = {"center": {"accuracy": "all good"}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document))
    assert main(["summary", str(path)]) == 2
    assert "schema" in capsys.readouterr().err
    path.write_text(json.dumps(real_report))
    assert main(["summary", str(path)]) == 0


@SERIAL
def test_deeply_nested_dataset_and_baseline_are_clear_errors(pytester, tmp_path, workers):
    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    dataset = tmp_path / "deep"
    dataset.mkdir()
    (dataset / "annotations.json").write_text(DEEP_OBJECT)
    result = pytester.runpytest(f"--dataset={dataset}", "--detector=center", *workers)
    text = result.stdout.str() + result.stderr.str()
    assert "RecursionError" not in text and "INTERNALERROR" not in text, text[-3000:]
    assert "nested" in text
    baseline = tmp_path / "b.json"
    baseline.write_text(DEEP)
    result = pytester.runpytest(
        f"--dataset={FIXTURES / 'mini'}", "--detector=center", f"--grounding-baseline={baseline}", *workers
    )
    text = result.stdout.str() + result.stderr.str()
    assert "RecursionError" not in text and "INTERNALERROR" not in text, text[-3000:]
    assert "nested" in text


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_the_schema_check_names_where_a_crafted_report_breaks_it(real_report):
    from pytest_grounding.store import reportcheck

    assert reportcheck.problems(real_report) == []  # every install checks the whole schema (core dependency)
    crafted = json.loads(json.dumps(real_report))
    crafted["samples"][0]["latency_ms"] = "<script>"
    crafted["samples"][1]["point"] = ["<b>", 1]
    places = {p.split(":")[0] for p in reportcheck.problems(crafted)}
    assert {"samples/0/latency_ms", "samples/1/point/0"} <= places, places
    assert reportcheck.problems([]) and reportcheck.problems({})
