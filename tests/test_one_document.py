"""One document, the only source of every output (issue 55): the terminal summary a run prints from its
figures is the one `merge`, `rescore`, `report` and a report read back print from the JSON document; after two
shards run with errata, `merge` prints the corrected figure as its JSON and markdown give it."""

from __future__ import annotations

import json
import time

import pytest

from helpers import FIXTURES
from pytest_grounding.analysis import document as document_mod
from pytest_grounding.analysis import errata as errata_mod
from pytest_grounding.analysis import gates as gates_mod
from pytest_grounding.analysis import robustness
from pytest_grounding.analysis.cost import Price
from pytest_grounding.analysis.result import RunResult, View
from pytest_grounding.render.markdown import report_markdown
from pytest_grounding.render.terminal import document_lines, summary_lines
from pytest_grounding.sections import registry


def record(uid, outcome, detector="m", app="App", **more):
    return {
        "detector": detector,
        "dataset": "ds",
        "id": uid,
        "uid": uid,
        "image": f"{uid}.png",
        "instruction": "Click Save",
        "element_type": "icon",
        "app": app,
        "app_category": "office",
        "platform": "linux",
        "size": "<32",
        "outcome": outcome,
        "point": [5.0, 5.0],
        "target": [0, 0, 10, 10],
        "image_size": [100, 100],
        "iou": None,
        "latency_ms": 10.0,
        "meta": {"usage": {"prompt_tokens": 100, "completion_tokens": 5}},
        **more,
    }


def records():
    found = [record(f"s{n}", "hit" if n % 3 else "miss", app=f"App{n % 2}", truncated=n == 4) for n in range(9)]
    found += [record(f"s{n}", "hit" if n % 2 else "miss", detector="other") for n in range(9)]
    return [*found, record("s9", "error", detector="other", error="boom")]


def scoring():
    errata = errata_mod.parse(
        b'{"id": "s0", "action": "drop", "reason": "ambiguous"}\n'
        b'{"id": "s1", "action": "fix", "bbox": [50, 50, 60, 60]}\n',
        "errata",
        "e.jsonl",
    )
    return document_mod.Scoring(
        price=Price(0.3, 1.2),
        gates=(gates_mod.parse_gate("0.6"), gates_mod.parse_gate("app=App1:0.5")),
        max_errors=0.05,
        max_drops=(robustness.MaxDrop(0.05, "zoom"),),
        errata=errata,
    )


def test_the_run_s_summary_is_the_document_s():
    """The summary lines a live run draws from its figures equal those of its JSON document read back
    (what `merge` and `rescore` print), gates, the error check, max-drop gates, cost and errata included."""
    found_records = records()
    sections = registry.default().sections()
    datasets = [{"name": "ds", "format": "jsonl", "samples": 10, "fingerprint": "f" * 12, "defects": 0}]
    info = {"m": {"name": "m"}, "other": {"name": "other"}}
    how = scoring()
    found = document_mod.figures(
        found_records, how, datasets=datasets, detector_info=info, interrupted=False, sections=sections
    )
    header = document_mod.Header(
        started=time.time(),
        duration_s=1.0,
        args=(),
        settings={"top_apps": None},
        workers=None,
        versions={},
        partial=False,
        resumed=0,
        notes=("a note",),
    )
    document = document_mod.build(found_records, found, how, header, datasets=datasets, detector_info=info)
    live = RunResult(
        records=tuple(found_records),
        summary=found.summary,
        verdicts=found.verdicts,
        datasets=tuple(datasets),
        detector_info=info,
        partial=False,
        resumed=0,
        notes=("a note",),
        view=View(price=how.price),
        run=found.run,
        sections=tuple(sections),
    )
    lines = summary_lines(live)
    assert any(line.startswith("errata e.jsonl") for line in lines), lines
    assert any(line.startswith("gate FAILED") for line in lines) and any("errors FAILED" in line for line in lines)
    assert any("--grounding-max-drop zoom" in line for line in lines)
    assert any("tokens" in line for line in lines), "the cost section's lines"
    read_back = json.loads(json.dumps(document))
    assert document_lines(read_back) == lines
    assert document_lines(read_back, sections=sections) == lines
    text = report_markdown(read_back)
    corrected = read_back["errata"]["detectors"]["m"]["corrected"]
    assert f"{corrected * 100:.1f}%" in text


def test_merge_prints_the_errata_of_shards(project, tmp_path, capsys):
    """Two shards run with --grounding-errata: each live run prints its own document's summary lines;
    `merge` prints the corrected figure as its JSON and markdown give it; `rescore` and `report` of the
    merged report print the same summary lines, the notes aside; `summary` its markdown."""
    from pytest_grounding.cli.main import main
    from pytest_grounding.store.reports import read_report

    path = tmp_path / "errata.jsonl"
    rows = [
        {"id": "m01", "action": "fix", "bbox": [70, 50, 90, 70], "reason": "the box was on another element"},
        {"id": "m02", "action": "drop", "reason": "ambiguous"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shards = []
    for k in (1, 2):
        shard = tmp_path / f"shard{k}.json"
        live = project.runpytest(
            f"--dataset={FIXTURES / 'mini'}", "--detector", "center", f"--grounding-errata={path}",
            "--grounding-shard", f"{k}/2", "--grounding-json", str(shard), "--grounding-misses", "xfail",
        )  # fmt: skip
        shards.append(str(shard))
        said = iter(line.rstrip() for line in live.outlines)
        own = [line.rstrip() for line in document_lines(read_report(shard)) if line]
        assert all(line in said for line in own), "the live run prints its document's lines, in their order"
    merged = tmp_path / "merged.json"
    capsys.readouterr()
    main(["merge", *shards, "--json", str(merged)])
    out = capsys.readouterr().out
    document = read_report(merged)
    expected = errata_mod.summary_lines(document["errata"])
    assert expected[0].startswith("errata ") and all(line in out.splitlines() for line in expected), out
    corrected = document["errata"]["detectors"]["center"]["corrected"]
    assert f"{corrected * 100:.1f}%" in report_markdown(document)
    again = tmp_path / "again.json"
    assert main(["rescore", str(merged), "--json", str(again)]) == 0
    rescored = capsys.readouterr().out.splitlines()
    figures = [line for line in document_lines(document) if line and not line.startswith("note:")]
    assert [line for line in rescored if line in figures] == figures
    assert main(["report", str(merged), "--html", str(tmp_path / "merged.html")]) == 0
    reported = capsys.readouterr().out.splitlines()
    assert [line for line in reported if line in figures] == figures  # `report` prints the same summary
    assert main(["summary", str(merged)]) == 0  # `summary`: the markdown of the same document
    assert capsys.readouterr().out == report_markdown(document)


def test_rescore_prints_the_whole_summary_with_the_diagnosis(tmp_path, capsys):
    """`rescore --frame` prints the run's summary with every section: the frame diagnosis where the clicks
    fit another frame, gone once they are read in that frame."""
    from pytest_grounding.cli.main import main
    from pytest_grounding.sections import testing

    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({**r, "bbox": r["target"]}) + "\n" for r in testing.misses_records()))
    out = tmp_path / "r.json"
    assert main(["rescore", str(predictions), "--frame", "original-pixels", "--json", str(out)]) == 0
    said = capsys.readouterr().out
    assert "frame diagnosis  answers fit frame rel1000" in said and "try `rescore --frame rel1000`" in said
    assert "  within px   0: 16.7%" in said and "detector d" in said
    assert main(["rescore", str(predictions), "--frame", "rel1000", "--json", str(out)]) == 0
    said = capsys.readouterr().out
    assert "frame diagnosis" not in said and "accuracy 100.0%" in said


def test_every_output_shows_the_figures_the_issue_named():
    """Issue 55's drift list, on one document: `truncated`, `cache.not_stored` and the macro average over
    datasets in the terminal, markdown, HTML, JSON and tracker; one gate table in markdown and HTML; the
    board's tolerance (0-100 px) and frame read from the report's own sections, records or not."""
    from html import escape

    from pytest_grounding.analysis import board as board_mod
    from pytest_grounding.analysis.tracked import tracked_runs
    from pytest_grounding.core.numbers import pct
    from pytest_grounding.core.record import CACHE_META, CacheUse
    from pytest_grounding.render.common.board import miss_text
    from pytest_grounding.render.common.tables import gate_rows, macro_cell
    from pytest_grounding.render.html import render
    from pytest_grounding.sections import testing

    def cached(n):
        return {CACHE_META: CacheUse.NOT_STORED if n == 2 else CacheUse.STORED}

    found_records = [record(f"s{n}", "hit" if n % 3 else "miss", truncated=n == 4, meta=cached(n)) for n in range(9)]
    found_records += [{**record(f"t{n}", "hit" if n % 2 else "miss"), "dataset": "ds2"} for n in range(6)]
    found_records += [{**r, "detector": "other"} for r in testing.misses_records()]  # one dataset: its own board cell
    sections = registry.default().sections()
    datasets = [
        {"name": name, "format": "jsonl", "samples": 9, "fingerprint": "f" * 12, "defects": 0, "path": name}
        for name in ("ds", "ds2")
    ]
    info = {"m": {"name": "m"}, "other": {"name": "other"}}
    how = document_mod.Scoring(gates=(gates_mod.parse_gate("0.6"), gates_mod.parse_gate("dataset=ds2:0.9")))
    figures = document_mod.figures(
        found_records, how, datasets=datasets, detector_info=info, interrupted=False, sections=sections
    )
    header = document_mod.Header(
        started=time.time(), duration_s=1.0, args=(), settings={"top_apps": None}, workers=None, versions={},
        partial=False, resumed=0, notes=(),
    )  # fmt: skip
    built = document_mod.build(found_records, figures, how, header, datasets=datasets, detector_info=info)
    document = json.loads(json.dumps(built))
    block = document["summary"]["m"]
    assert block["truncated"] == 1 and block["cache"]["not_stored"] == 1, "JSON"
    macro = block["macro_dataset_accuracy"]
    assert macro is not None
    terminal = document_lines(document, sections=sections)
    markdown = report_markdown(document, sections=sections)
    page, _, _ = render(document, sections=sections)
    (metrics,) = [run.metrics for run in tracked_runs(document, sections) if run.name == "m"]
    assert any(line.startswith("  cut answers 1:") for line in terminal), terminal
    assert any("1 answers could not be written to the cache" in line for line in terminal), terminal
    assert any(f"macro over datasets {pct(macro)}" in line for line in terminal), terminal
    row = next(line for line in markdown.splitlines() if line.startswith("| m |"))
    header_row = markdown.splitlines()[markdown.splitlines().index(row) - 2]
    cells = {k.strip(): v.strip() for k, v in zip(header_row.split("|"), row.split("|"), strict=True)}
    assert cells["cut answers"] == "1" and cells["macro datasets"] == macro_cell(block, "dataset"), cells
    assert "| m | 0 | 8 | 15 | 1 |" in markdown and "not stored (write failed)" in markdown, "the cache table"
    assert "not stored (write failed)" in page and escape(macro_cell(block, "dataset")) in page
    assert metrics["truncated"] == 1 and metrics["cache.not_stored"] == 1
    assert metrics["macro_dataset_accuracy"] == macro
    gates = gate_rows(document)
    assert len(gates) == 4  # two gates for each detector (the ds2 slice of `other` is empty: no figure)
    for gate in gates:
        assert "| " + " | ".join(gate) + " |" in markdown
        assert all(escape(cell) in page for cell in gate)
    # the board: the report's own tolerance curve and diagnosis, the same with the samples gone
    own = document["summary"]["other"]
    curve = {str(point["px"]): point["accuracy"] for point in own["tolerance"]}
    assert "100" in curve
    for shown in (document, {k: v for k, v in document.items() if k != "samples"}):
        (run,) = [r for c, _, r in board_mod.runs_of("r.json", shown) if c.detector == "other"]
        said = board_mod.misses_of(run)
        assert said is not None and said["within_px"] == curve and said["frame"] == own["diagnosis"]["frame"]["name"]
        assert "rescore --frame rel1000" in miss_text(said)


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_the_baseline_and_replay_lines_of_a_run_are_printed_again_by_report(project, tmp_path, capsys):
    """The lines after the summary (the baseline's comparison, the replayed file's agreement) come from
    the document: `report` of the run's JSON prints them as the live run did."""
    from pytest_grounding.cli.main import main
    from pytest_grounding.store.reports import read_report

    mini = f"--dataset={FIXTURES / 'mini'}"
    base, then = tmp_path / "base.json", tmp_path / "then.jsonl"
    project.runpytest(mini, "--detector=center", f"--grounding-baseline={base}", "--grounding-predictions", str(then))
    assert base.exists()
    for name, detector, asked, kind in (
        ("baseline", "center", [f"--grounding-baseline={base}"], "baseline "),
        ("replay", f"replay:path={then}", [], "replay "),
    ):
        now = tmp_path / f"{name}.json"
        live = project.runpytest(
            mini, "--detector", detector, *asked, "--grounding-json", str(now), "--grounding-misses", "xfail"
        )
        said = [line.rstrip() for line in live.outlines]
        after = [line for line in document_lines(read_report(now)) if line.startswith(kind)]
        assert after and all(line in said for line in after), (after, said[-30:])
        capsys.readouterr()
        assert main(["report", str(now), "--html", str(tmp_path / f"{name}.html")]) == 0
        reported = capsys.readouterr().out.splitlines()
        assert [line for line in reported if line in after] == after
