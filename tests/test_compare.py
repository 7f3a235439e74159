"""The method matrix: McNemar's exact test and the table's marks against hand-computed cases, the
table at the end of a multi-detector run (serial and xdist alike), and `python -m pytest_grounding
compare` on reports written by real runs, a partial one included."""

import json
from importlib.resources import files

import pytest

from helpers import FIXTURES, SERIAL, read_json
from pytest_grounding.analysis.compare import (
    Method,
    cells,
    change_lines,
    changes,
    mcnemar_exact,
    methods_from_reports,
    paired,
    significance_lines,
)
from pytest_grounding.cli.main import main

MINI = str(FIXTURES / "mini")


# -- pure -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixed", "broken", "p"),
    [
        (0, 0, 1.0),
        (5, 0, 2 / 32),  # all five discordant pairs one way: 2 * 0.5^5
        (1, 9, 2 * 11 / 1024),  # 2 * (C(10,0) + C(10,1)) / 2^10
        (3, 3, 1.0),  # capped at 1
        (10, 2, 2 * (1 + 12 + 66) / 4096),
    ],
)
def test_mcnemar_exact_against_hand_computed_tails(fixed, broken, p):
    assert mcnemar_exact(fixed, broken) == pytest.approx(p)
    assert mcnemar_exact(broken, fixed) == pytest.approx(p)


def _record(uid, outcome, **extra):
    return {
        "dataset": "d",
        "uid": uid,
        "id": uid,
        "outcome": outcome,
        "element_type": extra.pop("element_type", "icon"),
        "size": extra.pop("size", "<32"),
        "app": "App",
        "instruction": f"click {uid}",
        **extra,
    }


def _block(accuracy, p50, attempts, errors=0, icon=None):
    return {
        "scored": 10,
        "accuracy": accuracy,
        "errors": errors,
        "mean_attempts": attempts,
        "latency_ms": {"p50": p50, "p95": p50 * 2},
        "by": {"size": [{"value": "<32", "accuracy": accuracy}], "element_type": [{"value": "icon", "accuracy": icon}]},
    }


def test_the_best_value_of_each_column_is_marked_and_equal_columns_are_not():
    methods = [
        Method("plain", _block(0.5, 100.0, 1.0, icon=0.2)),
        Method("plain+zoom", _block(0.6, 400.0, 4.0, icon=0.2)),
    ]
    header, rows = cells(methods)
    sizes = ["size <32", "size 32-100", "size >100"]
    assert header == ["method", "n", "accuracy", *sizes, "icon", "p50 ms", "p95 ms", "attempts", "errors"]
    assert rows[0] == ["plain", "10", "50.0%", "50.0%", "-", "-", "20.0%", "100*", "200*", "1.00*", "0"]
    assert rows[1] == ["plain+zoom", "10", "60.0%*", "60.0%*", "-", "-", "20.0%", "400", "800", "4.00", "0"]


def test_paired_counts_only_samples_both_scored_on_the_same_version():
    base = Method(
        "a",
        {},
        (
            _record("1", "hit"),
            _record("2", "miss"),
            _record("3", "miss"),
            _record("4", "error"),
            _record("5", "hit", fingerprint="x"),
        ),
    )
    other = Method(
        "b",
        {},
        (
            _record("1", "miss"),
            _record("2", "hit"),
            _record("3", "hit"),
            _record("4", "hit"),
            _record("5", "miss", fingerprint="y"),
            _record("6", "hit"),
        ),
    )
    pair = paired(base, other)
    assert (pair.n, pair.fixed, pair.broken, pair.baseline_hits, pair.other_hits) == (3, 2, 1, 1, 2)
    assert pair.p_value == pytest.approx(1.0)
    (line,) = significance_lines([base, other])
    assert line == (
        "  b vs a: +33.3 points on 3 paired samples (2 fixed, 1 broken), McNemar exact p = 1, "
        f"95% CI {pair.difference.low * 100:+.1f} to {pair.difference.high * 100:+.1f} points (3 screens): "
        "not significant at 0.05: could be noise"
    )


def test_a_paired_difference_for_each_slice():
    from pytest_grounding.analysis.compare import slice_lines, slice_pairs

    full = Method(
        "full",
        {},
        tuple(_record(str(i), "hit", element_type="icon" if i < 4 else "text", image=f"s{i}") for i in range(8)),
    )
    # the quantized model loses icons only
    outcomes = ["miss", "miss", "hit", "miss", "hit", "hit", "hit", "hit"]
    quant = Method(
        "q8",
        {},
        tuple(
            _record(str(i), o, element_type="icon" if i < 4 else "text", image=f"s{i}") for i, o in enumerate(outcomes)
        ),
    )
    found = {(name, value): d for name, value, d in slice_pairs(full, quant)}
    assert found[("element_type", "icon")].delta == -0.75 and found[("element_type", "icon")].samples == 4
    assert found[("element_type", "text")].delta == 0.0
    assert found[("element_type", "icon")].low < -0.75 < found[("element_type", "icon")].high  # 4 screens: wide
    assert found[("size", "<32")].samples == 8 and ("app_category", "None") not in found
    lines = slice_lines([full, quant])
    assert lines[0] == "  q8 vs full, by slice (paired, 95% interval clustered by screen):"
    assert lines[1].startswith("    element_type icon: -75.0 points on 4, 95% CI")


def test_changed_samples_with_slice_totals():
    before = Method("a", {}, (*(_record(str(i), "miss", size="<32") for i in range(6)), _record("t", "hit")))
    after = Method(
        "b",
        {},
        (
            *(_record(str(i), "hit", size="<32" if i < 4 else "32-100", element_type="text") for i in range(6)),
            _record("t", "error"),
        ),
    )
    found = changes(before, after)
    assert [c.key[1] for c in found.fixed] == ["0", "1", "2", "3", "4", "5"] and found.broken == ()
    lines = change_lines(found, limit=2)
    assert lines[0] == "changed samples: b against a (6 samples scored by both): 6 fixed, 0 broken, net +6"
    assert "    ... 4 more" in lines
    assert "  errors: 1 became errors, 0 stopped being errors (in neither list)" in lines
    assert any(line.startswith("    <32") and "fixed    4" in line and "net +4" in line for line in lines)
    assert any(line.startswith("    32-100") and "fixed    2" in line for line in lines)


def test_methods_from_reports_label_a_detector_in_two_reports_by_report():
    def doc(partial=False, fingerprint="f1"):
        return {
            "partial": partial,
            "run": {"datasets": [{"name": "d", "fingerprint": fingerprint}]},
            "summary": {"ocr": {"task": "grounding"}},
            "samples": [],
        }

    methods, notes = methods_from_reports([("mon", doc()), ("tue", doc(partial=True, fingerprint="f2"))])
    assert [m.label for m in methods] == ["ocr [mon]", "ocr [tue]"] and methods[1].partial
    assert any("tue is a partial report" in n for n in notes)
    assert any("dataset d differs between the reports" in n for n in notes)


# -- real runs ----------------------------------------------------------------------------------------


def _run(project, tmp_path, name, *args, subprocess=False):
    report = tmp_path / f"{name}.json"
    run = project.runpytest_subprocess if subprocess else project.runpytest
    result = run(f"--dataset={MINI}", "--grounding-json", str(report), *args)
    assert report.exists(), result.stdout.str()[-2000:]
    return result, report


def _comparison(result):
    text = result.stdout.str()
    assert "comparison of methods:" in text, text[-3000:]
    return text.split("comparison of methods:")[1].split("grounding JSON report")[0]


@SERIAL
def test_a_multi_detector_run_ends_with_the_comparison_table(project, tmp_path, workers):
    specs = ["--detector", "center", "--detector", "colour", "--detector", "colour+zoom:min_size=32"]
    result, report = _run(project, tmp_path, "run", *specs, *workers)
    block = _comparison(result)
    rows = [line.split() for line in block.splitlines() if line.startswith("  ") and "%" in line and " vs " not in line]
    assert [row[0] for row in rows] == ["center", "colour", "colour+zoom:min_size=32"]  # the --detector order
    assert rows[0][1:3] == ["6", "0.0%"] and rows[1][1:3] == ["6", "83.3%*"]
    assert "colour vs center: +83.3 points on 6 paired samples (5 fixed, 0 broken), McNemar exact p = 0.0625" in block
    assert "not significant at 0.05: could be noise" in block
    document = read_json(report)
    assert document["summary"]["colour+zoom:min_size=32"]["mean_attempts"] > 1
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(document)) == []


@pytest.mark.slow
def test_the_table_is_the_same_with_and_without_xdist_but_for_latency(project, tmp_path):
    args = ("--detector", "colour", "--detector", "colour+regrounding:size=64")
    serial, _ = _run(project, tmp_path, "serial", *args)
    distributed, _ = _run(project, tmp_path, "xdist", *args, "-n", "2")

    def stable(result):
        rows = [
            line.split()
            for line in _comparison(result).splitlines()
            if line.startswith("  ") and "%" in line and " vs " not in line
        ]
        return [row[:5] + row[-2:] for row in rows]

    assert stable(serial) == stable(distributed) and len(stable(serial)) == 2


def test_a_single_detector_run_has_no_comparison_table(project, tmp_path):
    result, _ = _run(project, tmp_path, "one", "--detector", "colour")
    assert "comparison of methods" not in result.stdout.str()


@pytest.fixture
def reports(project, tmp_path):
    """Three real runs: center alone; colour and its zoom; an interrupted run (a partial report)."""
    _, plain = _run(project, tmp_path, "plain", "--detector", "center")
    _, matrix = _run(project, tmp_path, "matrix", "--detector", "colour", "--detector", "colour+zoom:min_size=32")
    # In a subprocess: pytester re-raises an in-process KeyboardInterrupt into this session.
    _, partial = _run(project, tmp_path, "partial", "--detector", "interrupting", subprocess=True)
    assert read_json(partial)["partial"] is True
    return plain, matrix, partial


@pytest.mark.slow
def test_compare_reports_of_separate_runs(reports, capsys):
    plain, matrix, partial = reports
    assert main(["compare", str(plain), str(matrix), str(partial)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("note: partial is a partial report")
    labels = [
        line.split()[0] for line in out.splitlines() if line.startswith("  ") and "%" in line and " vs " not in line
    ]
    assert labels == ["center", "colour", "colour+zoom:min_size=32", "interrupting"]
    assert "interrupting (partial)" in out
    assert "colour vs center: +83.3 points on 6 paired samples (5 fixed, 0 broken)" in out
    assert "interrupting vs center: +100.0 points on 2 paired samples (2 fixed, 0 broken), McNemar exact p = 0.5" in out


@pytest.mark.slow
def test_compare_markdown(reports, capsys):
    plain, matrix, _ = reports
    assert main(["compare", str(plain), str(matrix), "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| method | n | accuracy | size &lt;32 |")
    assert lines[1].startswith("|---|---:|")
    assert lines[3].startswith("| colour | 6 | 83.3%\\* |")  # the best mark, escaped for markdown
    assert any(line.startswith("- colour vs center: +83.3 points") for line in lines)


@pytest.mark.slow
def test_compare_samples_lists_what_changed(reports, capsys):
    plain, matrix, _ = reports
    assert main(["compare", str(matrix), "--samples"]) == 0
    out = capsys.readouterr().out
    assert "changed samples: colour+zoom:min_size=32 against colour (6 samples scored by both)" in out
    assert main(["compare", str(plain), str(matrix), "--samples"]) == 2
    assert "--samples compares exactly two methods; these reports hold 3" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_samples_fixed_between_two_reports(project, tmp_path, capsys):
    _, before = _run(project, tmp_path, "before", "--detector", "center")
    _, after = _run(project, tmp_path, "after", "--detector", "colour")
    assert main(["compare", str(before), str(after), "--samples"]) == 0
    out = capsys.readouterr().out
    assert "changed samples: colour against center (6 samples scored by both): 5 fixed, 0 broken, net +5" in out
    assert "  fixed (miss -> hit): 5" in out and "    mini/m01  [icon, <32, Blender]  'Click the red square'" in out
    assert "  by element type:" in out


def test_compare_refuses_a_file_that_is_no_report(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    assert main(["compare", str(bad)]) == 2
    assert "is not a pytest-grounding JSON report" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "none.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_only_ids_pairs_two_versions_on_the_rows_they_share():
    from pytest_grounding.analysis.compare import Method, on_shared_ids, paired, shared_ids

    def record(sid, outcome, fingerprint):
        return {"dataset": "ss", "uid": f"ss-{sid}", "id": sid, "outcome": outcome, "fingerprint": fingerprint}

    old = Method("old", {}, (record("a", "hit", "v1"), record("b", "miss", "v1"), record("c", "hit", "v1")), source="o")
    new = Method(
        "new", {}, (record("a", "hit", "v2"), record("row-9", "hit", "v2"), record("c", "miss", "v2")), source="n"
    )
    assert paired(old, new).n == 0  # other versions: never paired on their own
    alias = shared_ids("a\nb\trow-9\n")
    mine, theirs = on_shared_ids([old, new], alias, "o")
    pair = paired(mine, theirs)
    assert (pair.n, pair.fixed, pair.broken) == (2, 1, 0)  # c is not listed: left out


@pytest.mark.slow
def test_compare_only_ids_from_the_command(project, tmp_path, capsys):
    _, before = _run(project, tmp_path, "before", "--detector", "center")
    _, after = _run(project, tmp_path, "after", "--detector", "colour")
    ids = tmp_path / "unchanged.txt"
    ids.write_text("m01\nm02\n")
    assert main(["compare", str(before), str(after), "--only-ids", str(ids)]) == 0
    out = capsys.readouterr().out
    assert "paired only on the 2 ids" in out and "on 2 paired samples" in out
    assert main(["compare", str(before), str(after), "--only-ids", str(tmp_path / "none.txt")]) == 2
