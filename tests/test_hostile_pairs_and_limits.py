"""Issue 60 (hostile inputs, round 5): each class fixed at its root, several inputs each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import FIXTURES, REPO, read_json
from hostile import no_crash, run_suite
from pytest_grounding.analysis.compare import Method, on_shared_ids, paired, shared_ids
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"
PRO = FIXTURES / "screenspot-pro"
SUITE = (REPO / "suites" / "test_grounding.py").read_text()


# -- ids from a diff are pairs (old id, new id), never positions -------------------------------------------


def _record(sid, outcome, fingerprint):
    return {"dataset": "ss", "uid": f"ss-{sid}", "id": sid, "outcome": outcome, "fingerprint": fingerprint}


@pytest.mark.parametrize("removed", [0, 1, 3, 7])
@pytest.mark.parametrize("swap", [False, True])
def test_a_renumbering_version_pairs_each_row_with_its_own_new_row(removed, swap):
    """ids are positions: one removed row shifts every later id by one. A deterministic model on the same
    rows gives the same outcome on each: nothing fixed, nothing broken, whatever the order of the reports."""
    rows = 10
    outcome = ["hit" if k % 3 else "miss" for k in range(rows)]  # row k's answer, whatever its id
    kept = [k for k in range(rows) if k != removed]
    old = Method("old", {}, tuple(_record(f"r{k}", outcome[k], "v1") for k in range(rows)), source="a")
    new = Method("new", {}, tuple(_record(f"r{i}", outcome[k], "v2") for i, k in enumerate(kept)), source="b")
    lines = ["# pytest-grounding unchanged ids: OLD<TAB>NEW", "# old ss v1", "# new ss v2"]
    lines += [f"r{k}\tr{i}" for i, k in enumerate(kept)]
    ids = shared_ids("\n".join(lines) + "\n")
    methods = [new, old] if swap else [old, new]
    first, second = on_shared_ids(methods, ids, methods[0].source)
    pair = paired(first, second)
    assert (pair.n, pair.fixed, pair.broken) == (rows - 1, 0, 0)


def test_without_a_header_the_first_report_is_the_old_version():
    old = Method("old", {}, tuple(_record(f"r{k}", "hit" if k == 2 else "miss", None) for k in range(4)), source="a")
    new = Method("new", {}, tuple(_record(f"r{k}", "hit" if k == 1 else "miss", None) for k in range(3)), source="b")
    ids = shared_ids("r0\tr0\nr2\tr1\nr3\tr2\n")  # r1 removed
    pair = paired(*on_shared_ids([old, new], ids, "a"))
    assert (pair.n, pair.fixed, pair.broken) == (3, 0, 0)


@pytest.mark.parametrize("text", ["a\tb\nc\tb\n", "a\tb\na\tc\n", "a\tb\tc\n"])
def test_an_ids_file_naming_a_row_twice_is_refused(text):
    with pytest.raises(ValueError, match=r"line 2|line 1"):
        shared_ids(text)


# -- every reader of a report refuses duplicate records -----------------------------------------------------


@pytest.fixture(scope="module")
def mini_report(tmp_path_factory):
    """One real report of the mini set by a deterministic detector (made once)."""
    folder = tmp_path_factory.mktemp("mini")
    path = folder / "run.json"
    result = run_suite(folder / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(path))
    assert path.is_file(), result.stdout[-2000:]
    return path


def _copied(tmp_path, report, position, copies):
    document = read_json(report)
    document["samples"] += [dict(document["samples"][position]) for _ in range(copies)]
    path = tmp_path / f"copied-{position}-{copies}.json"
    path.write_text(json.dumps(document))
    return path


READERS = {
    "export": lambda path, out: ["export", str(path), "--hf-eval-results", str(out)],
    "rescore": lambda path, out: ["rescore", str(path), "--json", str(out / "r.json")],
    "summary": lambda path, out: ["summary", str(path)],
    "compare": lambda path, out: ["compare", str(path), str(path)],
    "board": lambda path, out: ["board", str(path.parent), "--json", str(out / "b.json")],
    "merge": lambda path, out: ["merge", str(path), "--json", str(out / "m.json")],
    "eee": lambda path, out: ["export", str(path), "--eee", str(out / "eee")],
    "screenspot-pro": lambda path, out: ["export", str(path), "--screenspot-pro", str(out / "sp")],
    "report": lambda path, out: ["report", str(path), "--html", str(out / "r.html")],
}


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(("position", "copies"), [(0, 1), (1, 3), (-1, 2)])
def test_every_reader_of_a_report_refuses_a_record_copied(mini_report, tmp_path, capsys, reader, position, copies):
    folder = tmp_path / "in"
    folder.mkdir()
    path = _copied(folder, mini_report, position, copies)
    out = tmp_path / "out"
    out.mkdir()
    code = main(READERS[reader](path, out))
    captured = capsys.readouterr()
    text = captured.out + captured.err
    if reader == "board":  # the board skips a report it cannot read, and says which
        assert "a second time" in text and code in (0, 2), text
        board = read_json(out / "b.json")
        assert board["reports"] == 0 and board["benchmarks"] == [] and "a second time" in str(board["skipped"])
    else:
        assert code == 2 and "a second time" in text, text
    assert not [p for p in out.rglob("*") if p.is_file() and p.name != "b.json"], list(out.rglob("*"))


def _jsonl_copied(tmp_path, report, position, copies, *, epoch=None):
    """The report's records as a predictions file (--grounding-predictions), one line copied."""
    records = read_json(report)["samples"]
    fingerprint = read_json(report)["run"]["datasets"][0]["fingerprint"]
    lines = [{**r, "fingerprint": fingerprint} for r in records]
    copy = dict(lines[position])
    if epoch is not None:  # the copy edited to another epoch's outcome: still one sample's epoch twice
        copy["outcome"] = "hit" if copy["outcome"] != "hit" else "miss"
    lines += [copy] * copies
    path = tmp_path / "copied.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("reader", ["rescore"])
@pytest.mark.parametrize(("position", "copies", "edited"), [(0, 1, None), (2, 3, None), (-1, 1, "outcome")])
def test_every_reader_of_a_predictions_file_refuses_a_line_copied(
    mini_report, tmp_path, capsys, reader, position, copies, edited
):
    path = _jsonl_copied(tmp_path, mini_report, position, copies, epoch=edited)
    out = tmp_path / "out"
    out.mkdir()
    code = main(READERS[reader](path, out))
    text = "".join(capsys.readouterr())
    assert code == 2 and "a second time" in text and str(path) in text, text
    assert not [p for p in out.rglob("*") if p.is_file()]


# -- merging the complete shards of an epochs run counts epochs ----------------------------------------------


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.parametrize(
    ("workers", "epochs"),
    [pytest.param([], 3, id="serial-3"), pytest.param(["-n", "2"], 2, id="xdist-2", marks=pytest.mark.slow)],
)
def test_the_complete_shards_of_an_epochs_run_merge_whole(tmp_path, capsys, workers, epochs):
    paths = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        result = run_suite(
            tmp_path / f"run{k}", f"--dataset={MINI}", "--detector", "center", "--detector", "random",
            "--grounding-epochs", str(epochs), "--grounding-shard", f"{k}/2", "--grounding-json", str(path), *workers,
        )  # fmt: skip
        assert path.is_file(), no_crash(result)
        paths.append(path)
    merged = tmp_path / "merged.json"
    main(["merge", *map(str, paths), "--json", str(merged)])
    out = capsys.readouterr().out
    assert "partial" not in out and read_json(merged)["partial"] is False, out
    # a record deleted is still a gap
    document = read_json(paths[0])
    document["samples"] = document["samples"][1:]
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(document))
    main(["merge", str(cut), str(paths[1]), "--json", str(tmp_path / "m2.json")])
    assert "partial:" in capsys.readouterr().out


# -- a rescored or re-framed report is marked as such in every export and board cell ---------------------------


@pytest.fixture(scope="module")
def pro_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pro")
    path = folder / "reports" / "run.json"
    path.parent.mkdir()
    result = run_suite(folder / "run", f"--dataset={PRO}", "--detector", "center", "--grounding-json", str(path))
    assert path.is_file(), result.stdout[-2000:]
    return path


@pytest.mark.parametrize("frame", ["rel1000", "offset:10,20", "rel1"])
def test_a_reframed_report_is_its_own_configuration_named_by_its_frame(pro_report, tmp_path, capsys, frame):
    pytest.importorskip("yaml")
    folder = tmp_path / "reports"
    folder.mkdir()
    original = folder / "run.json"
    original.write_bytes(pro_report.read_bytes())
    framed = folder / "framed.json"
    assert main(["rescore", str(original), "--frame", frame, "--json", str(framed)]) == 0
    document = read_json(framed)
    specs = {r["detector"] for r in document["samples"]}
    assert len(specs) == 1 and f"frame={frame}" in next(iter(specs)).replace("'", "")
    assert list(document["summary"]) == list(specs)
    assert main(["export", str(framed), "--hf-eval-results", str(tmp_path / "hub")]) == 0
    notes = (tmp_path / "hub" / ".eval_results" / "screenspot_pro.yaml").read_text()
    assert "rescored offline" in notes and f"--frame {frame}" in notes
    capsys.readouterr()
    assert main(["board", str(folder), "--json", str(tmp_path / "board.json")]) == 0
    board = json.dumps(read_json(tmp_path / "board.json"))
    assert board.count("frame=") >= 1 and "center:frame=" in board.replace("\\u00b7", "")
    assert main(["rescore", str(framed), "--frame", "rel1000", "--json", str(tmp_path / "again.json")]) == 0
    again = {r["detector"] for r in read_json(tmp_path / "again.json")["samples"]}
    assert again == {"center:frame=rel1000"}  # the frame replaced, never two


# -- errata: bounded parsing, bound to their dataset, one entry per sample, boxes on the image ----------------

from pytest_grounding.analysis import errata as errata_mod  # noqa: E402


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"id": "a", "action": "fix", "bbox": [' + "[" * 5_000 + "]" * 5_000 + "]}",
        '{"id": "a", "action": "fix", "bbox": [1, 2, ' + "9" * 400 + ", 4]}",
        '{"id": "a", "action": "fix", "bbox": [1, 2, 1e999, 40]}',
        '{"id": "a", "action": "fix", "bbox": [1, 2, Infinity, 40]}',
        '{"id": "a", "action": "fix", "bbox": [-5, 2, 10, 40]}',
    ],
)
def test_a_hostile_errata_line_is_a_clear_error(line):
    with pytest.raises(errata_mod.ErrataError, match="line 1"):
        errata_mod.parse(line.encode())


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "a", "action": "drop"}\n{"id": "a", "action": "fix", "bbox": [1, 1, 5, 5]}\n',
        '{"id": "a", "action": "drop", "dataset": "d"}\n{"id": "b", "action": "drop"}\n'
        '{"id": "a", "action": "drop", "dataset": "d"}\n',
    ],
)
def test_a_second_errata_line_for_one_sample_is_refused(text):
    with pytest.raises(errata_mod.ErrataError, match="a second entry"):
        errata_mod.parse(text.encode())


def _rec(dataset, sid, outcome="miss", point=(3, 3), fingerprint=None, size=(100, 100)):
    return {"dataset": dataset, "id": sid, "uid": f"{dataset}-{sid}", "detector": "d", "outcome": outcome,
            "point": list(point), "fingerprint": fingerprint, "image_size": list(size)}  # fmt: skip


@pytest.mark.parametrize("bind", ['"dataset": "one"', '"fingerprint": "f1"', '"dataset": "one", "fingerprint": "f1"'])
def test_errata_correct_only_the_dataset_they_name(bind):
    errata = errata_mod.parse(('{"id": "s1", "action": "fix", "bbox": [0, 0, 10, 10], ' + bind + "}\n").encode())
    records = [_rec("one", "s1", fingerprint="f1"), _rec("two", "s1", fingerprint="f2")]
    errata.check_datasets(["one", "two"])  # bound: fine in a run of several datasets
    block = errata_mod.block(records, errata)
    assert block["detectors"]["d"]["refixed"] == 1 and block["detectors"]["d"]["corrected_hits"] == 1
    assert errata_mod.unmatched(errata, [_rec("two", "s1", fingerprint="f2")]) == ["s1"]


@pytest.mark.parametrize("names", [["one", "two"], ["a", "b", "c"]])
def test_errata_naming_no_dataset_are_refused_in_a_run_of_several(names):
    errata = errata_mod.parse(b'{"id": "s1", "action": "drop"}\n')
    errata.check_datasets(names[:1])  # one dataset: applies
    with pytest.raises(errata_mod.ErrataError, match="name no dataset"):
        errata.check_datasets(names)


@pytest.mark.parametrize("box", [[0, 0, 101, 10], [50, 50, 60, 400]])
def test_an_errata_box_off_the_image_is_named(box):
    errata = errata_mod.parse(('{"id": "s1", "action": "fix", "bbox": ' + json.dumps(box) + "}\n").encode())
    assert errata_mod.off_image(errata, [_rec("one", "s1")]) and not errata_mod.off_image(errata, [_rec("one", "s2")])


@pytest.fixture(scope="module")
def two_dataset_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("two")
    path = folder / "run.json"
    result = run_suite(
        folder / "run", f"--dataset={MINI}", f"--dataset={PRO}", "--detector", "center", "--grounding-json", str(path)
    )
    assert path.is_file(), result.stdout[-2000:]
    return path


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "mini-m01-blender-icon", "action": "drop"}\n', "name no dataset"),
        (
            '{"id": "x", "action": "drop", "dataset": "mini"}\n{"id": "x", "action": "drop", "dataset": "mini"}\n',
            "a second entry",
        ),
        ('{"id": "a", "action": "drop"}' + "]" * 3 + "\n", "not JSON"),
        ("[" * 100_000 + "\n", "not JSON"),
    ],
)
def test_rescore_errata_refuses_with_a_message(two_dataset_report, tmp_path, capsys, content, message):
    errata = tmp_path / "errata.jsonl"
    errata.write_text(content)
    code = main(["rescore", str(two_dataset_report), "--errata", str(errata), "--json", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err


@pytest.mark.parametrize("kind", ["fifo", "devzero", "folder"])
def test_rescore_errata_reads_a_regular_file_only(two_dataset_report, tmp_path, capsys, kind):
    target = tmp_path / "errata.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "devzero":
        target = Path("/dev/zero")
    else:
        target.mkdir()
    code = main(["rescore", str(two_dataset_report), "--errata", str(target), "--json", str(tmp_path / "o.json")])
    assert code == 2 and "--errata" in capsys.readouterr().err


def test_a_run_of_two_datasets_refuses_unbound_errata_before_any_sample(tmp_path):
    errata = tmp_path / "errata.jsonl"
    errata.write_text('{"id": "mini-m01-blender-icon", "action": "drop"}\n')
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", f"--dataset={PRO}", "--detector", "center",
        f"--grounding-errata={errata}",
    )  # fmt: skip
    text = no_crash(result)
    assert result.returncode != 0 and "name no dataset" in text and " passed" not in text, text[-2000:]


# -- one streaming bounded reader: memory follows the file, never the limit -----------------------------------


def _limited(kib):
    import resource

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))

    return apply


@pytest.mark.parametrize("size", [0, 8, 3 << 20])
def test_the_bounded_reader_reads_under_a_4_gb_address_space(tmp_path, size):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * size)
    code = (
        "import sys; from pytest_grounding.core import safefile; "
        f"data = safefile.read_bytes({str(path)!r}); assert len(data) == {size}; print('ok')"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, preexec_fn=_limited(4_000_000)
    )
    assert result.stdout.strip() == "ok", result.stderr[-2000:]


@pytest.mark.parametrize("claimed", [5 << 30, (4 << 30) + 1])
def test_a_file_past_the_limit_is_refused_before_it_is_read(tmp_path, claimed):
    from pytest_grounding.core import safefile

    path = tmp_path / "sparse.bin"
    with path.open("wb") as handle:
        handle.truncate(claimed)  # sparse: no disk, and nothing of it may be read
    with pytest.raises(safefile.FileTooLarge):
        safefile.read_bytes(path)
    with pytest.raises(safefile.FileTooLarge):
        safefile.read_bytes(path, limit=100)


@pytest.mark.slow
def test_a_run_and_its_report_read_back_under_a_4_gb_address_space(tmp_path):
    path = tmp_path / "run.json"
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "test_grounding.py").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_grounding.py", f"--dataset={MINI}",
               "--detector", "center", "--grounding-json", str(path)]  # fmt: skip
    result = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                            preexec_fn=_limited(4_000_000), timeout=300)  # fmt: skip
    assert path.is_file(), no_crash(result)
    no_crash(result)
    summary = subprocess.run([sys.executable, "-m", "pytest_grounding", "summary", str(path)], env=env,
                             capture_output=True, text=True, preexec_fn=_limited(4_000_000), timeout=120)  # fmt: skip
    assert summary.returncode == 0, summary.stderr[-2000:]


# -- the board survives any damaged *.running.json -------------------------------------------------------------

DAMAGED_SIDECARS = {
    "done abc": '{"state": "running", "done": "abc", "total": 5}',
    "NaN": '{"state": "running", "done": NaN, "total": 5, "accuracy": NaN}',
    "Infinity": '{"state": "running", "done": 1, "total": Infinity, "eta_s": -Infinity}',
    "nested": '{"state": "running", "done": {"a": [1]}, "total": [2], "accuracy": {"x": 1}, "started": {"s": 1}}',
    "deep": '{"state": "running", "done": ' + "[" * 50_000 + "]" * 50_000 + "}",
    "huge": '{"state": "running", "done": 1' + "0" * 400 + ', "total": 1e999}',
    "bool": '{"state": "running", "done": true, "total": false, "accuracy": true}',
    "escape": '{"state": "running", "done": 1, "total": 2, "started": "\\u001b]0;pwned\\u0007\\u001b[2J"}',
}


@pytest.mark.parametrize("damage", list(DAMAGED_SIDECARS))
def test_the_board_survives_a_damaged_running_sidecar(tmp_path, capsys, damage):
    from pytest_grounding.render.live import SUFFIX

    (tmp_path / f"page{SUFFIX}").write_text(DAMAGED_SIDECARS[damage])
    for extra in ([], ["--markdown"], ["--json", str(tmp_path / "b.json")], ["--html", str(tmp_path / "b.html")]):
        assert main(["board", str(tmp_path), *extra]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out


# -- review --audit: its terminal output escaped, screens only from the audited dataset, a bad finding refused --


def _finding(**fields):
    return {"id": "mini-m01-blender-icon", "kind": "geometry", "score": 0.5, "message": "small", "instruction": "Open",
            "bbox": [1, 1, 20, 20], "image": "/etc/hostname", **fields}  # fmt: skip


def _review(tmp_path, monkeypatch, document, keys=("d",)):
    import io

    pytest.importorskip("prompt_toolkit")  # the curation extra: review's terminal UI

    from pytest_grounding.cli.curation import errata_review

    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps(document))
    keys = iter(keys)
    monkeypatch.setattr("sys.stdin", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.ask_key", lambda message, allowed: next(keys, "q"))
    text = io.StringIO()
    code = errata_review.run(audit, tmp_path / "errata.jsonl", mode="file", out=text)
    return code, text.getvalue()


@pytest.mark.parametrize(
    "bad",
    [{"score": "high"}, {"score": float("nan")}, {"bbox": ["\x1b[2J", 1, 2, 3]}, {"bbox": [1, 2, 3]}, {"id": 7},
     {"message": {"x": 1}}],
)  # fmt: skip
def test_review_refuses_a_finding_audit_does_not_write(tmp_path, monkeypatch, capsys, bad):
    code, _ = _review(tmp_path, monkeypatch, {"kind": "audit", "dataset": {"path": str(tmp_path)},
                                              "findings": [_finding(**bad)]})  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "finding 1" in err and "Traceback" not in err, err


@pytest.mark.parametrize("field", ["message", "kind", "instruction", "id"])
def test_review_escapes_what_the_audit_says(tmp_path, monkeypatch, field):
    hostile = _finding(**{field: "\x1b]0;pwned\x07\x1b[2Jx"})
    code, out = _review(tmp_path, monkeypatch, {"kind": "audit", "dataset": {"path": "/"}, "findings": [hostile]})
    assert code == 0 and "\x1b" not in out and "\x07" not in out


@pytest.mark.parametrize(
    "dataset",
    [
        {"format": "pointerbench", "path": "/", "fingerprint": "0"},
        {"format": "pointerbench", "path": str(MINI), "fingerprint": "not-the-audited-one"},
        {"path": "/etc"},
    ],
)
def test_review_reads_screens_only_from_the_audited_dataset(tmp_path, monkeypatch, dataset):
    code, out = _review(tmp_path, monkeypatch, {"kind": "audit", "dataset": dataset, "findings": [_finding()]})
    assert code == 0 and "screens not read" in out
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".png"]  # nothing copied beside the errata


def test_review_of_a_real_audit_shows_the_datasets_own_screen(tmp_path, monkeypatch, capsys):
    audit = tmp_path / "audit.json"
    assert main(["audit", "--dataset", str(MINI), "--no-ocr", "--json", str(audit)]) == 0
    document = read_json(audit)
    if not document["findings"]:
        pytest.skip("the mini set has no finding to review")
    for finding in document["findings"]:
        finding["image"] = "/etc/hostname"  # a path the file names is never what is read
    code, out = _review(tmp_path, monkeypatch, document)
    assert code == 0 and "screens not read" not in out and "outside" not in out, out
    errata = errata_mod.parse((tmp_path / "errata.jsonl").read_bytes())
    assert all(e.dataset == document["dataset"]["name"] and e.fingerprint for e in errata.entries)


# -- rescore: a frame with numbers no screen has, a record with no size: clear errors -------------------------


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize(
    "frame",
    ["offset:inf,0", "offset:0,nan", "offset:1e400,2", "offset:" + "9" * 400 + ",0", "resized-by-server:max_pixels=inf",
     "resized-by-server:long_edge=1e300", "resized-by-server:scale=nan"],
)  # fmt: skip
def test_rescore_refuses_a_frame_beyond_any_screen(pro_report, tmp_path, capsys, frame):
    code = main(["rescore", str(pro_report), "--frame", frame, "--json", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert code == 2 and "frame" in err and "Traceback" not in err, err


@pytest.mark.parametrize("size", [[0, 0], [0, 100], [100, -1], [1e9, 5], [True, 5]])
def test_rescore_names_a_record_whose_image_has_no_size(pro_report, tmp_path, capsys, size):
    document = read_json(pro_report)
    document["samples"][1]["image_size"] = size
    path = tmp_path / "sized.json"
    path.write_text(json.dumps(document))
    code = main(["rescore", str(path), "--json", str(tmp_path / "o.json")])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code == 2 and "Traceback" not in text and ("image_size" in text or "schema" in text), text


# -- audit --diff: rows of one crowded screen matched through indexes, not pair by pair ----------------------


def _crowded(n, seed=0):
    import random

    from pytest_grounding.core.types import Box, Sample

    rng = random.Random(seed)
    words = [
        "open",
        "close",
        "save",
        "file",
        "edit",
        "view",
        "help",
        "tools",
        "window",
        "settings",
        "button",
        "icon",
        "menu",
        "list",
        "item",
        "tab",
    ]

    def row(i, text, box):
        return Sample("d", f"r{i}", f"r{i}", Path("/x/one.png"), text, Box(*box))

    old = []
    for i in range(n):
        x, y = rng.randrange(0, 1800), rng.randrange(0, 1000)
        old.append(row(i, " ".join(rng.choice(words) for _ in range(4)) + f" number {i}", (x, y, x + 30, y + 20)))
    new = []
    for i, o in enumerate(old[1:]):  # the first row removed: every position shifts by one
        b = o.bbox
        if i % 4 == 0:  # rewritten, same box
            new.append(row(i, "press the " + o.instruction, (b.x1, b.y1, b.x2, b.y2)))
        elif i % 4 == 1:  # moved far, same text
            new.append(row(i, o.instruction, (b.x1 + 900 if b.x1 < 900 else b.x1 - 900, b.y1, b.x2, b.y2)))
        elif i % 4 == 2:  # moved a little and reworded a little
            new.append(row(i, o.instruction + " now", (b.x1 + 4, b.y1, b.x2 + 4, b.y2)))
        else:
            new.append(row(i, o.instruction, (b.x1, b.y1, b.x2, b.y2)))
    return old, new


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.parametrize(("n", "seed"), [(120, 1), (200, 2)])
def test_the_indexed_diff_finds_what_the_pair_by_pair_one_finds(monkeypatch, n, seed):
    from pytest_grounding.analysis import dataset_diff

    old, new = _crowded(n, seed)
    indexed = dataset_diff.diff(old, new, ids=False)
    monkeypatch.setattr(dataset_diff, "FULL_SCAN", 10**12)
    assert dataset_diff.diff(old, new, ids=False).counts() == indexed.counts()
    assert indexed.counts()["dropped"] == 1 and indexed.counts()["added"] == 0


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("n", [1_200, 3_000])
def test_a_crowded_screen_is_diffed_in_seconds(n):
    import time

    from pytest_grounding.analysis.dataset_diff import diff

    old, new = _crowded(n)
    started = time.perf_counter()
    found = diff(old, new, ids=False)
    assert time.perf_counter() - started < 30  # pair by pair: 1,200 rows took minutes
    counts = found.counts()
    assert counts["dropped"] >= 1 and counts["dropped"] + counts["added"] <= 5  # boxes this crowded overlap
    assert min(counts[k] for k in ("unchanged", "rewritten", "moved", "rewritten_and_moved")) >= n // 4 - 5


# -- two rows with the same name are refused before anything starts -------------------------------------------


@pytest.mark.parametrize(
    "specs",
    [
        ("center:label=random", "random"),
        ("random", "center:label=random"),
        ("center:label=ocr", "random:label=x", "ocr"),
    ],
)
def test_two_detectors_shown_under_one_name_are_refused(specs):
    from pytest_grounding.plugin.common.settings import split_labels

    with pytest.raises(ValueError, match="would both be shown as"):
        split_labels(specs, "--detector")
    split_labels(("center:label=a", "random"), "--detector")  # distinct names: fine


def test_a_run_naming_two_rows_alike_stops_before_any_sample(tmp_path):
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center:label=random", "--detector", "random"
    )
    text = no_crash(result)
    assert result.returncode != 0 and "would both be shown as" in text and " passed" not in text, text[-2000:]


# -- engines: options checked before a server starts -----------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{"start_timeout": -1}, {"start_timeout": 0}, {"start_timeout": float("nan")}, {"start_timeout": "soon"},
     {"slots": 100_000}, {"slots": 0}, {"slots": "many"}],
)  # fmt: skip
def test_llamacpp_refuses_absurd_options_before_starting(monkeypatch, options):
    from pytest_grounding.detectors import llamacpp_server

    monkeypatch.setattr(llamacpp_server, "find_server", lambda *a: pytest.fail("a server was looked for"))
    with pytest.raises(ValueError, match="llamacpp: "):
        llamacpp_server.LlamaCppDetector(model="m.gguf", **options)


@pytest.mark.parametrize(
    "args",
    [["--port", "99999"], ["--port", "-5"], ["--frame", "offset:1"], ["--frame", "offset:inf,0"], ["--frame", "bogus"],
     ["--delay", "nan"], ["--delay", "inf"], ["--errors", "nan"], ["--cut", "-1"]],
)  # fmt: skip
def test_fake_server_refuses_bad_options_in_one_line(capsys, args):
    assert main(["fake-server", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and err.count("\n") == 1, err


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("budget", ["requests=1", "requests=2"])
def test_a_budget_the_checks_spend_marks_every_sample_not_run(tmp_path, budget):
    pytest.importorskip("httpx")  # the openai extra: the served detector's client
    from pytest_grounding.detectors.fake_server import FakeServer

    server = FakeServer()
    try:
        path = tmp_path / "run.json"
        result = run_suite(
            tmp_path / "run", f"--dataset={MINI}", "--detector", f"openai:base_url={server.url}",
            "--grounding-budget", budget, "--grounding-json", str(path),
        )  # fmt: skip
    finally:
        server.close()
    no_crash(result)
    document = read_json(path)
    assert document["partial"] is True and document["budget"]["ended"] == budget
    assert len(document["samples"]) + len(document["not_run"]) == 8


@pytest.mark.parametrize(
    ("total", "slots", "per_slot"), [(8192, 4, 2048), (21504, 4, 5376), (4096, 1, 4096), (9216, 3, 3072)]
)
def test_llama_server_context_is_checked_per_slot(total, slots, per_slot):
    from pytest_grounding.detectors.served_engine import engine_from

    # llama-server divides -c among its -np slots itself (rounded up to 256) and reports one slot's n_ctx
    # in /props and in /models' meta (tools/server/server-context.cpp: n_ctx_slot()): read, never divided again
    models = {"data": [{"id": "m", "owned_by": "llamacpp", "meta": {"n_ctx": per_slot}}]}
    props = {"default_generation_settings": {"n_ctx": per_slot}, "total_slots": slots, "build_info": "b1"}
    assert engine_from(models, "m", props=props).max_model_len == per_slot
    assert engine_from(models, "m").max_model_len == per_slot  # /props not answered: /models' meta
    assert engine_from(models, "m", props=props).settings["total_slots"] == slots
    assert total // slots <= per_slot


# -- no absolute home path in shared artifacts ---------------------------------------------------------------


@pytest.mark.parametrize("relative", ["shots/a.png", "deep/er/b.png", "c.png"])
def test_shown_paths_are_relative_to_a_root_or_the_home(tmp_path, monkeypatch, relative):
    from pytest_grounding.core.paths import shown_path

    root = tmp_path / "dataset"
    image = root / relative
    assert shown_path(image, [root]) == relative
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir("/")
    assert shown_path(image) == f"~/dataset/{relative}"
    assert str(tmp_path) not in shown_path(image)


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_the_junit_messages_and_the_audit_page_hold_no_absolute_path(tmp_path):
    junit = tmp_path / "junit.xml"
    result = run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", "center", f"--junitxml={junit}")
    no_crash(result)
    xml = junit.read_text()
    assert "cannot read image" in xml and str(MINI) not in xml and str(REPO) not in xml
    audit, page = tmp_path / "audit.json", tmp_path / "audit.html"
    assert main(["audit", "--dataset", str(MINI), "--no-ocr", "--json", str(audit), "--html", str(page)]) == 0
    assert str(MINI) not in page.read_text()


# -- MLflow: artifacts beside the store, never ./mlruns of the working directory -------------------------------


@pytest.mark.slow  # MLflow migrates a new SQLite store: about 8 s a store
@pytest.mark.parametrize("name", ["runs.db", "deep/store.db"])
def test_mlflow_artifacts_land_beside_the_database(tmp_path, monkeypatch, name):
    pytest.importorskip("mlflow")
    pytest.importorskip("sqlalchemy")
    from pytest_grounding.render.trackers import TrackedRun, artifact_root, log_mlflow

    store = tmp_path / "store"
    (store / name).parent.mkdir(parents=True, exist_ok=True)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", f"round5-{name.replace('/', '-')}")
    uri = f"sqlite:///{store / name}"
    assert artifact_root(uri) == ((store / name).parent / "mlartifacts").as_uri()
    report = tmp_path / "report.json"
    report.write_text("{}")
    run = TrackedRun("center", {"detector": "center"}, {"accuracy": 0.5})
    assert log_mlflow(uri, [run], [report], {"started": "now"})
    assert not (project / "mlruns").exists()
    assert list(((store / name).parent / "mlartifacts").rglob("report.json"))


# -- the answer cache keys an external server by the weights it names, not its URL ---------------------------


@pytest.mark.parametrize("root", ["ORG/UI-TARS-1.5-7B", "/models/model-Q8_0.gguf"])
def test_a_server_naming_its_weights_is_keyed_by_them_not_its_port(root):
    from pytest_grounding.detectors import answer_cache
    from pytest_grounding.detectors.served import cache_endpoint

    def key(urls, weights):
        engine = type("Engine", (), {"name": "vllm", "version": "0.11"})()
        body = {"model": "m", "messages": []}
        endpoint = cache_endpoint(urls, weights, True)
        return answer_cache.served_key(body, "<x>", {"digest": "d"}, engine=engine, preset="p", root=weights,
                                       endpoint=endpoint)  # fmt: skip

    assert key(["http://a:8000/v1"], root) == key(["http://b:9001/v1"], root)  # restarted elsewhere: a hit
    assert key(["http://a:8000/v1"], None) != key(["http://b:9001/v1"], None)  # names nothing: keyed by URL
    assert key(["http://a:8000/v1"], root) != key(["http://a:8000/v1"], root + "-other")
    assert cache_endpoint(["http://u:secret@a/v1"], None, True) == ["http://a/v1"] or "secret" not in str(
        cache_endpoint(["http://u:secret@a/v1"], None, True)
    )


# -- the frame check's requests in flight together, under the run's limit -------------------------------------


class _SlowModel:
    def __init__(self, delay, concurrency):
        import threading

        self.delay, self.concurrency, self.in_flight, self.most = delay, concurrency, 0, 0
        self.lock = threading.Lock()

    def predict(self, query):
        import time

        from pytest_grounding.core.types import Prediction

        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        time.sleep(self.delay)
        with self.lock:
            self.in_flight -= 1
        width, height = query.image.size
        return Prediction(point=(width / 2, height / 2), raw="click")


@pytest.mark.parametrize(("delay", "concurrency"), [(0.3, 12), (0.2, 32), (0.25, 6)])
def test_the_calibration_requests_are_sent_together(delay, concurrency):
    import time

    from pytest_grounding.detectors.frame_check import calibration_screens, run_check

    model = _SlowModel(delay, concurrency)
    started = time.monotonic()
    result = run_check("slow", model)
    rounds = -(-len(calibration_screens()) // min(concurrency, len(calibration_screens())))
    assert time.monotonic() - started < delay * rounds + 1.5  # serially: 12 round trips
    assert model.most == min(concurrency, len(calibration_screens())) and result.failed == 0


@pytest.mark.parametrize("limit", [0.1, 0.3])
def test_the_calibration_requests_stop_at_the_runs_limit(limit):
    import time

    from pytest_grounding.detectors.frame_check import run_check

    started = time.monotonic()
    result = run_check("slow", _SlowModel(3.0, 12), timeout_s=limit)
    assert time.monotonic() - started < limit + 1.0
    assert result.failed == result.requests and "no answer within" in (result.answers[0] or "")
    started = time.monotonic()
    result = run_check("slow", _SlowModel(3.0, 12), timeout_s=60, budget_s=limit)  # what the budget leaves
    assert time.monotonic() - started < limit + 1.0 and "the seconds budget" in (result.answers[0] or "")


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize(("delay", "concurrency", "timeout"), [(0.1, 1, 0.4), (0.15, 4, 0.5), (0.1, 2, 0.3)])
def test_each_calibration_request_has_the_runs_timeout_not_all_twelve(delay, concurrency, timeout):
    from pytest_grounding.detectors.frame_check import run_check

    # an in-process model answering one (or a few) at a time: 12 x delay is past the timeout, each is within it
    result = run_check("serial", _SlowModel(delay, concurrency), timeout_s=timeout)
    assert result.failed == 0, result.answers


@pytest.mark.parametrize(
    ("specs", "words"),
    [(["center:label=random", "random"], "would both be shown as 'random'"),
     (["random:label=center", "center"], "would both be shown as 'center'"),
     (["center:label=Random", "random"], "would both be shown as"),
     (["center:label=x", "random:label=X"], "would both be shown as"),
     (["center:label=random", "random:label=center"], "is the name of detector"),
     (["center:label=RANDOM", "random:label=mine"], "is the name of detector 'random'")],
)  # fmt: skip
def test_names_rows_are_shown_under_are_each_a_detectors_own(specs, words):
    from pytest_grounding.plugin.common.values import split_labels

    with pytest.raises(ValueError, match="--detector: ") as caught:
        split_labels(tuple(specs), "--detector")
    assert words in str(caught.value)


@pytest.mark.parametrize("specs", [["center:label=mine", "random"], ["center:label=center", "random:label=r2"]])
def test_labels_of_their_own_pass(specs):
    from pytest_grounding.plugin.common.values import split_labels

    plain, labels = split_labels(tuple(specs), "--detector")
    assert plain == ("center", "random") and len(labels) == len([s for s in specs if "label=" in s])


# -- compare --only-ids end to end: a ScreenSpot version with rows removed, a deterministic detector ----------


def _screenspot(folder, rows):
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "s1.png").write_bytes((FIXTURES / "screenspot" / "images" / "s1.png").read_bytes())
    (folder / "screenspot_desktop.json").write_text(json.dumps(rows))
    return folder


def _rows(n):
    """Row k's box holds the screen's centre (160x120: 80,60) on every third row: the `center` detector hits it."""
    return [
        {
            "img_filename": "s1.png",
            "bbox": [70, 50, 20, 20] if k % 3 == 0 else [2 + 3 * k, 2, 2, 2],
            "instruction": f"click item {k}",
            "data_type": "icon",
            "data_source": "blender",
        }
        for k in range(n)
    ]


@pytest.fixture(scope="module")
def two_screenspot_versions(tmp_path_factory):
    """v1 of 9 rows and v2 with rows 0 and 4 removed (every later position shifts), each run by `center`."""
    folder = tmp_path_factory.mktemp("ssv")
    rows = _rows(9)
    v1 = _screenspot(folder / "v1", rows)
    v2 = _screenspot(folder / "v2", [r for k, r in enumerate(rows) if k not in (0, 4)])
    reports = []
    for name, data in (("v1", v1), ("v2", v2)):
        path = folder / f"{name}.json"
        result = run_suite(
            folder / f"run-{name}", f"--dataset={data}", "--detector", "center", "--grounding-json", str(path)
        )
        assert path.is_file(), no_crash(result)
        reports.append(path)
    return v1, v2, reports


def _paired_counts(text):
    import re

    found = re.search(r"(\d+) fixed.*?(\d+) broken", text, re.S)
    assert found, text
    return int(found.group(1)), int(found.group(2))


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.parametrize("order", ["old-first", "new-first"])
def test_compare_on_a_diffs_ids_pairs_each_row_with_itself(two_screenspot_versions, tmp_path, capsys, order):
    v1, v2, (r1, r2) = two_screenspot_versions
    ids = tmp_path / "unchanged.txt"
    assert main(["audit", "--diff", str(v1), str(v2), "--unchanged-ids", str(ids)]) == 0
    capsys.readouterr()
    pairs = [line.split("\t") for line in ids.read_text().splitlines() if not line.startswith("#")]
    kept = [k for k in range(9) if k not in (0, 4)]  # v2's row i is v1's row kept[i]
    assert pairs == [[f"desktop_{k:04d}", f"desktop_{i:04d}"] for i, k in enumerate(kept)]
    reports = [str(r1), str(r2)] if order == "old-first" else [str(r2), str(r1)]
    assert main(["compare", *reports, "--only-ids", str(ids), "--samples"]) == 0
    out = capsys.readouterr().out
    assert "paired only on the 7 ids" in out, out
    assert _paired_counts(out) == (0, 0), out


@pytest.mark.parametrize(
    "lines", [["desktop_0", "desktop_1"], ["desktop_2\tdesktop_2"], ["desktop_0\tdesktop_0", "desktop_4\tdesktop_3"]]
)
def test_a_positional_ids_file_across_two_versions_is_refused(two_screenspot_versions, tmp_path, capsys, lines):
    _, _, (r1, r2) = two_screenspot_versions
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(line + "\n" for line in lines))
    assert main(["compare", str(r1), str(r2), "--only-ids", str(ids)]) == 2
    err = capsys.readouterr().err
    assert "row positions" in err and "audit --diff" in err and str(ids) in err, err
    # the same file on two runs of one version is read as it always was
    assert main(["compare", str(r1), str(r1), "--only-ids", str(ids)]) == 0


@pytest.mark.parametrize("which", ["old", "new", "both"])
def test_an_ids_file_of_other_versions_is_refused(two_screenspot_versions, tmp_path, capsys, which):
    v1, v2, (r1, r2) = two_screenspot_versions
    ids = tmp_path / "unchanged.txt"
    assert main(["audit", "--diff", str(v1), str(v2), "--unchanged-ids", str(ids)]) == 0
    text = ids.read_text()
    for side in ("old", "new") if which == "both" else (which,):
        text = "\n".join(
            " ".join([*line.split()[:-1], "f" * 64]) if line.startswith(f"# {side} ") else line
            for line in text.splitlines()
        )
    ids.write_text(text + "\n")
    capsys.readouterr()
    assert main(["compare", str(r1), str(r2), "--only-ids", str(ids)]) == 2
    err = capsys.readouterr().err
    assert "is of a version the file names" in err, err


def test_screens_sharing_a_file_name_in_two_folders_are_not_one_screen():
    from pytest_grounding.analysis.dataset_diff import diff
    from pytest_grounding.core.types import Box, Sample

    def row(sid, folder, text="click save", box=(10, 10, 50, 30)):
        return Sample("d", sid, sid, Path(f"/d/{folder}/screenshot.png"), text, Box(*box))

    old = [row("a", "word"), row("b", "excel", "click open")]
    for new in (
        [row("x", "excel")],  # the same instruction and box on another app's screen: another row
        [row("x", "excel"), row("y", "word", "click open")],
    ):
        found = diff(old, new, ids=False)
        assert found.counts()["unchanged"] == 0, found.pairs
    moved = [Sample("d", "z", "z", Path("/e/v2/word/screenshot.png"), "click save", Box(10, 10, 50, 30))]
    assert (
        diff(
            old,
            [*moved, Sample("d", "w", "w", Path("/e/v2/excel/screenshot.png"), "click open", Box(10, 10, 50, 30))],
            ids=False,
        ).counts()["unchanged"]
        == 2
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("click row 3", "click row 4"),
        ("点击保存按钮", "打开设置页面"),
        ("Select 12 pt", "Select 14 pt"),
        ("Öffnen", "Schließen"),
    ],
)
def test_instructions_differing_in_numbers_or_another_script_are_not_one(before, after):
    """Numbers and non-Latin words are part of the instruction: rows that differ only in them are rewritten."""
    from pytest_grounding.analysis.dataset_diff import diff
    from pytest_grounding.core.types import Box, Sample

    def row(sid, text):
        return Sample("d", sid, sid, Path("/d/s.png"), text, Box(10, 10, 50, 30))

    found = diff([row("a", before)], [row("b", after)], ids=False)
    assert found.counts()["rewritten"] == 1 and found.unchanged_ids() == []
    assert diff([row("a", before)], [row("b", before.upper() + ".")], ids=False).unchanged_ids() == [("a", "b")]


@pytest.mark.parametrize(
    "options", [["--frame", "rel1000"], ["--scoring", "gui-owl-1.5"], [], ["--frame", "offset:5,5"]]
)
def test_a_rescored_report_says_so_in_every_export_and_board_cell(pro_report, tmp_path, capsys, options):
    """The Hub notes, the EEE card, the markdown summary, the HTML card and the board (text, markdown, HTML,
    JSON) all say the figure is the stored answers judged again, with the options; the run's report says nothing."""
    pytest.importorskip("yaml")
    folder = tmp_path / "reports"
    folder.mkdir()
    original = folder / "run.json"
    original.write_bytes(pro_report.read_bytes())
    rescored = folder / "rescored.json"
    assert main(["rescore", str(original), *options, "--json", str(rescored)]) == 0
    said = "rescored offline"
    how = " ".join(options)
    for path, expected in ((rescored, True), (original, False)):
        out = tmp_path / f"out-{path.stem}"
        assert main(["export", str(path), "--hf-eval-results", str(out / "hub"), "--eee", str(out / "eee")]) == 0
        hub = (out / "hub" / ".eval_results" / "screenspot_pro.yaml").read_text()
        eee = next(p for p in (out / "eee").rglob("*.json"))
        card = read_json(eee)["eval_library"]["additional_details"]
        capsys.readouterr()
        assert main(["summary", str(path)]) == 0
        markdown = capsys.readouterr().out
        assert main(["report", str(path), "--html", str(out / "page.html")]) == 0
        page = (out / "page.html").read_text()
        for text in (hub, card["card.rescored"], markdown, page):
            assert (said in text.lower() and how in text) if expected else said not in text.lower(), text[:3000]
        if expected:
            assert card["card.command"].startswith("python -m pytest_grounding rescore")
    capsys.readouterr()
    assert main(["board", str(folder), "--json", str(tmp_path / "b.json"), "--html", str(tmp_path / "b.html")]) == 0
    text = capsys.readouterr().out
    assert main(["board", str(folder), "--markdown"]) == 0
    markdown = capsys.readouterr().out
    marked = [line for line in text.splitlines() if "n=6" in line and "§" in line]
    assert len(marked) == 1, text  # the rescored cell only
    assert "§ rescored offline" in text and "§ rescored offline" in markdown
    latest = [
        row["latest"]
        for column in read_json(tmp_path / "b.json")["benchmarks"]
        for row in column["rows"]
        if row.get("latest")
    ]
    marks = [r.get("rescored") for r in latest]
    assert all(m is None or (m.startswith("rescored offline (") and how in m) for m in marks), marks
    # its own row when it changed what decides or judges the answers; a plain rescore: the same row, marked
    assert sorted(m is None for m in marks) == ([False, True] if options else [False])
    assert "rescored offline" in (tmp_path / "b.html").read_text()


def _bench_audit():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_audit", REPO / "benchmarks" / "bench_audit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("shape", ["one-box", "one-text", "panels", "cluster", "mixed", "identical"])
def test_the_diff_of_one_screen_grows_with_its_rows_not_their_square(shape):
    """Comparisons (box overlaps and instruction similarities) counted on 300 and 1,200 rows of one screen
    (benchmarks/bench_audit.py --diff-scaling, the same count): 4x the rows costs about 4x (4.0x-5.9x
    measured; 4.1x-4.3x from 1,200 to 4,800), never the 16x of comparing every pair. The result stays a
    diff: every unchanged row unchanged, the removed row dropped."""
    bench = _bench_audit()
    assert shape in bench.SHAPES
    costs = {}
    for n in (300, 1_200):
        comparisons, _seconds, counts = bench.diff_cost(n, shape)
        costs[n] = comparisons
        assert counts["unchanged"] == (n - 1) - (n - 1 + 2) // 3, (n, counts)  # every identical row found
        assert 1 <= counts["dropped"] <= 2 + n // 100 and counts["added"] == counts["dropped"] - 1, (n, counts)
    assert costs[1_200] <= bench.MOST_PER_4X * costs[300], costs  # the uncapped index: 12.7x to 15.9x here


@pytest.mark.parametrize("epochs", [2, 3])
def test_a_diffs_ids_pair_each_epoch_with_its_own(epochs):
    """--grounding-epochs runs on two versions: the pair (old id, new id) keeps each epoch apart, so epoch k
    of the old row is paired with epoch k of its new row, never all epochs folded into one."""

    def record(sid, epoch, outcome, fingerprint):
        return {
            "dataset": "ss",
            "uid": f"ss-{sid}-e{epoch}",
            "id": sid,
            "epoch": epoch,
            "outcome": outcome,
            "fingerprint": fingerprint,
        }

    def outcome(k, epoch):
        return "hit" if (k + epoch) % 2 else "miss"  # differs between epochs of one row

    rows = [0, 1, 2, 3]
    old = Method("old", {}, tuple(record(f"r{k}", e, outcome(k, e), "v1") for k in rows for e in range(1, epochs + 1)))
    kept = rows[1:]  # v2 without row 0: every id shifts by one
    new = Method(
        "new",
        {},
        tuple(record(f"r{i}", e, outcome(k, e), "v2") for i, k in enumerate(kept) for e in range(1, epochs + 1)),
    )
    ids = shared_ids("# old ss v1\n# new ss v2\n" + "".join(f"r{k}\tr{i}\n" for i, k in enumerate(kept)))
    pair = paired(*on_shared_ids([old, new], ids))
    assert (pair.n, pair.fixed, pair.broken) == (len(kept) * epochs, 0, 0)


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_an_id_naming_two_rows_is_written_and_read_by_its_rows_key(order):
    """A dataset whose own ids repeat (two rows `a`): the diff's ids file names each such row by its key
    (`a-app-icon`, `a-app-icon-dup2`, the uid less the dataset's name), so the file is read, and each row
    pairs with its own, whatever the version's order and however the run named the dataset."""
    from pytest_grounding.analysis.dataset_diff import diff
    from pytest_grounding.core.types import Box, Sample

    def sample(dataset, sid, uid, text, box):
        return Sample(dataset, sid, f"{dataset}-{uid}", Path("/d/s.png"), text, Box(*box))

    rows = [
        ("a", "a-app-icon", "click save", (0, 0, 10, 10), "hit"),
        ("a", "a-app-icon-dup2", "click open", (50, 0, 60, 10), "miss"),
        ("b", "b-app-icon", "click quit", (90, 0, 99, 10), "hit"),
    ]
    old = [sample("v1", *row[:4]) for row in rows]
    new = [sample("v2", *rows[k][:4]) for k in order]
    found = diff(old, new, ids=True)
    lines = ["# old ss v1", "# new ss v2", *(f"{a}\t{b}" for a, b in found.unchanged_ids())]
    ids = shared_ids("\n".join(lines) + "\n")  # no id listed twice
    assert len(ids) == 3

    def record(run, row, fingerprint):
        sid, uid, _, _, outcome = row
        return {"dataset": run, "uid": f"{run}-{uid}", "id": sid, "outcome": outcome, "fingerprint": fingerprint}

    first = Method("old", {}, tuple(record("runA", row, "v1") for row in rows))
    second = Method("new", {}, tuple(record("other-name", rows[k], "v2") for k in order))
    pair = paired(*on_shared_ids([first, second], ids))
    assert (pair.n, pair.fixed, pair.broken) == (3, 0, 0)


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("reader", ["export", "rescore", "summary", "compare", "eee", "report"])
@pytest.mark.parametrize("suffix", ["-dup2", "-x", "-e1"])
def test_a_record_copied_under_a_uid_of_its_own_is_refused(mini_report, tmp_path, capsys, reader, suffix):
    """The copy's uid edited (a made-up `-dup2`): no key repeats, but the detector now holds more samples
    of the dataset than the run did; every reader refuses it."""
    document = read_json(mini_report)
    hit = (
        next(r for r in document["samples"] if r["outcome"] == "hit")
        if any(r["outcome"] == "hit" for r in document["samples"])
        else document["samples"][0]
    )
    document["samples"].append({**hit, "uid": hit["uid"] + suffix})
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    out = tmp_path / "out"
    out.mkdir()
    code = main(READERS[reader](path, out))
    text = "".join(capsys.readouterr())
    assert code == 2 and "does not hold together" in text and str(path) in text, text
    assert not [p for p in out.rglob("*") if p.is_file()]
