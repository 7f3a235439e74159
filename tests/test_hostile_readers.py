"""Issue 60, readers and parsers (a held-out replay with other inputs): errata bound to their dataset, one
entry per sample whatever its scope, boxes named by their line; every reader of a user file bounded; the board
naming a damaged sidecar; review's terminal output escaped and its errata file kept whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import FIXTURES, REPO
from hostile import no_crash, run_suite
from pytest_grounding.analysis import errata as errata_mod
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"
PRO = FIXTURES / "screenspot-pro"


# -- errata: one entry per sample, whatever scope each line names ---------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # unbound, then bound to a dataset: both correct mini's sample s1
        '{"id": "s1", "action": "drop"}\n{"id": "s1", "action": "drop", "dataset": "mini"}\n',
        # bound by name, then by fingerprint (naming no dataset): both may correct mini's sample at version f1
        '{"id": "s1", "action": "drop", "dataset": "mini"}\n'
        '{"id": "s1", "action": "fix", "bbox": [1, 1, 4, 4], "fingerprint": "f1"}\n',
        # the same version under two names: one sample
        '{"id": "s1", "action": "drop", "dataset": "a", "fingerprint": "f1"}\n'
        '{"id": "s1", "action": "drop", "dataset": "b", "fingerprint": "f1"}\n',
        # bound by fingerprint, then by name and that fingerprint
        '{"id": "s1", "action": "drop", "fingerprint": "f1"}\n{"id": "s2", "action": "drop"}\n'
        '{"id": "s1", "action": "drop", "fingerprint": "f1", "dataset": "other"}\n',
    ],
)
def test_two_lines_that_may_correct_one_sample_are_refused(text):
    with pytest.raises(errata_mod.ErrataError, match=r"line [23]: a second entry .* \(first: line 1\)"):
        errata_mod.parse(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "s1", "action": "drop", "dataset": "one"}\n{"id": "s1", "action": "drop", "dataset": "two"}\n',
        '{"id": "s1", "action": "drop", "fingerprint": "f1"}\n{"id": "s1", "action": "drop", "fingerprint": "f2"}\n',
        '{"id": "s1", "action": "drop", "dataset": "one", "fingerprint": "f1"}\n'
        '{"id": "s1", "action": "drop", "dataset": "one", "fingerprint": "f2"}\n',
    ],
)
def test_one_id_in_two_datasets_or_versions_is_two_entries(text):
    errata = errata_mod.parse(text.encode())
    assert len(errata.entries) == 2


@pytest.mark.parametrize(("box", "line"), [([0, 0, 101, 10], 1), ([50, 50, 60, 400], 2), ([0, 0, 1e300, 1e300], 3)])
def test_a_box_off_the_image_is_named_by_its_line(box, line):
    text = "".join(
        json.dumps({"id": f"s{n}", "action": "fix", "bbox": box if n == line else [1, 1, 5, 5]}) + "\n"
        for n in range(1, 4)
    )
    errata = errata_mod.parse(text.encode(), "errata.jsonl")
    records = [{"id": f"s{n}", "dataset": "d", "image_size": [100, 100]} for n in range(1, 4)]
    off = errata_mod.off_image(errata, records)
    assert len(off) == 1 and f"line {line}" in off[0] and f"s{line}" in off[0], off


def test_a_fingerprint_bound_entry_corrects_no_record_of_an_unknown_version():
    errata = errata_mod.parse(b'{"id": "s1", "action": "drop", "fingerprint": "f1"}\n')
    assert errata.entry_for({"id": "s1", "dataset": "one", "fingerprint": "f1"}) is not None
    assert errata.entry_for({"id": "s1", "dataset": "two", "fingerprint": "f2"}) is None
    assert errata.entry_for({"id": "s1", "dataset": "two"}) is None  # a record that names no version


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "\n",
        '{"id": "m01", "action": "fix", "bbox": [1, 2, ' + "7" * 1_000 + ", 4]}\n",
        '{"id": "m01", "action": "fix", "bbox": [1, 2, 1e400, 4]}\n',
        '{"id": "m01", "action": "drop"}\n{"id": "m01", "action": "drop"}\n',
        '{"id": "m01", "action": "fix", "bbox": [0, 0, 161, 5]}\n',
    ],
)
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_the_run_refuses_a_hostile_errata_file_in_one_line(tmp_path, content, workers):
    errata = tmp_path / "errata.jsonl"
    errata.write_text(content)
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center", f"--grounding-errata={errata}", *workers
    )
    text = no_crash(result)
    assert result.returncode != 0 and "line " in text and " passed" not in text, text[-2000:]


def make_unreadable(target, kind):
    """A path no bounded reader may read as a file: a FIFO (a read would hang), /dev/zero (endless), a folder."""
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "devzero":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()


@pytest.mark.parametrize("kind", ["fifo", "devzero", "folder"])
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_the_run_refuses_an_errata_file_that_is_no_regular_file(tmp_path, kind, workers):
    target = tmp_path / "errata.jsonl"
    make_unreadable(target, kind)
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center", f"--grounding-errata={target}", *workers,
        timeout=60,
    )  # fmt: skip
    text = no_crash(result)
    assert result.returncode != 0 and "not a regular file" in text, text[-2000:]


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("box", [[0, 0, 5000, 10], [10, 10, 20, 3000]])
def test_the_run_refuses_a_box_off_an_image_the_set_gives_no_size_of(tmp_path, box):
    errata = tmp_path / "errata.jsonl"  # the screenspot set names no sizes: the image's header does
    errata.write_text('{"id": "desktop_0001", "action": "drop"}\n' + json.dumps(
        {"id": "desktop_0000", "action": "fix", "bbox": box}) + "\n")  # fmt: skip
    result = run_suite(
        tmp_path / "run", f"--dataset={FIXTURES / 'screenspot'}", "--detector", "center", f"--grounding-errata={errata}"
    )
    text = no_crash(result)
    assert result.returncode != 0 and "line 2: id 'desktop_0000'" in text and "off the" in text, text[-2000:]


# -- review --audit: the errata file of several datasets kept whole; every line it prints escaped ---------------


def _mini_audit(tmp_path, name="audit.json", **fields):
    from pytest_grounding.datasets import load_dataset

    loaded = load_dataset(str(MINI))
    finding = {"id": "m01", "kind": "geometry", "score": 0.5, "message": "small", "instruction": "Open",
               "bbox": [1, 1, 20, 20], "image": str(loaded.samples[0].image), **fields}  # fmt: skip
    document = {"kind": "audit", "findings": [finding],
                "dataset": {"name": loaded.name, "format": "pointerbench", "path": str(MINI),
                            "fingerprint": loaded.fingerprint}}  # fmt: skip
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path, loaded


def _review_keys(monkeypatch, audit, errata, keys, reason="wrong label"):
    import io

    pytest.importorskip("prompt_toolkit")  # the curation extra: review's terminal UI
    from pytest_grounding.cli.curation import errata_review

    keys = iter(keys)
    monkeypatch.setattr("sys.stdin", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.ask_key", lambda message, allowed: next(keys, "q"))
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.ask_text", lambda message, default="": reason)
    text = io.StringIO()
    code = errata_review.run(audit, errata, mode="file", out=text)
    return code, text.getvalue()


@pytest.mark.parametrize(
    "other",
    [
        {"id": "m01", "action": "drop", "dataset": "another-set", "reason": "theirs"},
        {"id": "m01", "action": "fix", "bbox": [1, 1, 9, 9], "fingerprint": "0123456789abcdef", "reason": "old"},
        {"id": "zz9", "action": "drop", "reason": "unbound, of no sample audited"},
    ],
)
def test_review_keeps_the_entries_of_other_datasets_and_asks_its_own(tmp_path, monkeypatch, other):
    audit, loaded = _mini_audit(tmp_path)
    errata = tmp_path / "errata.jsonl"
    errata.write_text(json.dumps(other) + "\n")
    code, out = _review_keys(monkeypatch, audit, errata, ["d"])
    assert code == 0, out
    written = errata_mod.parse(errata.read_bytes())
    assert other in [e.as_dict() for e in written.entries]  # the other dataset's entry kept as it was
    mine = written.entry_for({"id": "m01", "dataset": loaded.name, "fingerprint": loaded.fingerprint})
    assert mine is not None and mine.action == "drop" and mine.reason == "wrong label"  # m01 of mini asked


@pytest.mark.parametrize("name", ["\x1b]0;pwned\x07audit.json", "a\x1b[2Jb.json", "r\u202egnp.json"])
def test_review_escapes_the_paths_it_prints(tmp_path, monkeypatch, name):
    audit, _ = _mini_audit(tmp_path, name=name)
    errata = tmp_path / f"e{name}.jsonl"
    code, out = _review_keys(monkeypatch, audit, errata, ["d"])
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out, out
    code, out = _review_keys(monkeypatch, audit, errata, [])  # nothing left: the paths said again
    assert code == 0 and "nothing left" in out and "\x1b" not in out and "\u202e" not in out, out


@pytest.mark.parametrize("field", ["id", "type", "image"])
def test_review_of_annotations_escapes_the_screen_line(tmp_path, field):
    import io

    from PIL import Image

    from pytest_grounding.cli.curation import document, preview, tui
    from pytest_grounding.cli.curation.review import Review

    hostile = "\x1b]0;pwned\x07\x1b[2J\u202ex"
    Image.new("RGB", (200, 100), "white").save(tmp_path / "s.png")
    item = {"id": "e0", "bbox": [0.1, 0.1, 0.3, 0.3], "text": "One", "type": "text", "status": "draft"}
    sample = {"id": "s", "image": "s.png", "width": 200, "height": 100, "elements": [item]}
    (sample if field == "image" else item)[field] = hostile
    doc = {"version": "1.0", "dataset": "demo", "samples": [sample]}
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(doc))
    out = io.StringIO()
    tui.show(Review.start(document.load(path)), path, preview.FILE, {}, out)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, text


# -- board: a damaged *.running.json is named under the table and the board goes on ------------------------------

DAMAGED = {
    "truncated": b'{"state": "running", "done": 3, "total"',
    "deep object": b'{"state": "running", "x": ' + b'{"a": ' * 3_000 + b"1" + b"}" * 3_000 + b"}",
    "deep array": b"[" * 200_000,
    "not utf-8": b'{"state": "running", "done": "\xff\xfe"}',
    "a list": b'[{"state": "running"}]',
    "no state": b'{"done": 1, "total": 2}',
    "huge": b'{"state": "running", "pad": "' + b"x" * 300_000 + b'"}',
    "empty": b"",
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_the_board_names_a_damaged_sidecar_and_goes_on(tmp_path, capsys, damage):
    from pytest_grounding.render.live import SUFFIX

    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / f"bad{SUFFIX}").write_bytes(DAMAGED[damage])
    (tmp_path / f"good{SUFFIX}").write_text('{"state": "running", "done": 2, "total": 8, "started": "noon"}')
    assert main(["board", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "good: running since noon: 2 of 8" in out, out
    assert f"runs/bad{SUFFIX}" in out and "not a running page's sidecar" in out, out
    assert main(["board", str(tmp_path), "--json", str(tmp_path / "b.json")]) == 0
    board = json.loads((tmp_path / "b.json").read_text())
    assert [r["page"] for r in board["running"]] == ["good"]
    assert any(s["path"] == f"runs/bad{SUFFIX}" for s in board["skipped"]), board["skipped"]


# -- every parser of a user file bounded: batch manifests and results, replayed EEE values, submit's reports -----

DEEP_LINES = ["[" * 100_000 + "]" * 100_000, '{"a": ' * 5_000 + "1" + "}" * 5_000]


def _batch_requests(tmp_path):
    from pytest_grounding.detectors import batch_files

    requests = tmp_path / "requests.jsonl"
    writer = batch_files.Writer(requests, "main")
    writer.start()
    for custom_id in ("b", "a"):
        body = {"model": "m", "messages": []}
        writer.write(custom_id, body, {"size": [10, 10], "sent": [28, 28]}, {"model": "m", "preset_name": "p"})
    batch_files.join_parts(requests, ["a", "b"], {"datasets": []})
    return requests


@pytest.mark.parametrize("content", [*DEEP_LINES, '{"format": 1' + "0" * 500 + "}"])
def test_a_hostile_batch_manifest_is_a_clear_error(tmp_path, content):
    from pytest_grounding.detectors import batch_files

    requests = _batch_requests(tmp_path)
    batch_files.manifest_path(requests).write_text(content)
    with pytest.raises(batch_files.BatchError, match="manifest"):
        batch_files.read_manifest(requests)


@pytest.mark.parametrize(
    "line",
    [*DEEP_LINES, '{"custom_id": "a", "response": {"status_code": 2' + "0" * 400 + ', "body": {"model": "m"}}}'],
)
def test_a_hostile_batch_results_line_is_named(tmp_path, line):
    from pytest_grounding.detectors import batch_files

    requests = _batch_requests(tmp_path)
    results = tmp_path / "results.jsonl"
    ok = {"custom_id": "b", "response": {"status_code": 200, "body": {"model": "m", "choices": []}}}
    results.write_text(json.dumps(ok) + "\n" + line + "\n")
    with pytest.raises(batch_files.BatchError, match="line 2"):
        batch_files.read_results(results, requests)


@pytest.mark.parametrize("value", [*DEEP_LINES, "[1" + "0" * 500 + ", 5]"])
def test_a_replayed_eee_value_nested_or_huge_is_no_click(value):
    from pytest_grounding.detectors.replay import eee

    row = {"sample_id": "s1", "answer_attribution": [{"is_terminal": True, "extracted_value": value}],
           "metadata": {"box": value, "points": value}}  # fmt: skip
    found = eee.fields(row)  # never a RecursionError: the value is kept as the text it was, or no number
    assert found is not None
    assert all(
        not isinstance(v, int) or abs(v) < 1e300 for v in (found["box"] if isinstance(found["box"], list) else [])
    )


@pytest.mark.parametrize("content", [*DEEP_LINES, '{"shard": {"index": 1' + "0" * 500 + "}}", "\xff"])
def test_submit_reads_a_damaged_shard_report_as_not_done(tmp_path, content):
    from pytest_grounding.cli import submit

    path = submit.shard_report(tmp_path, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, errors="surrogateescape") if content != "\xff" else path.write_bytes(b"\xff{")
    assert submit.done(tmp_path, 0, 2) is False


@pytest.mark.parametrize(
    "body",
    [
        "extra = " + "[" * 50_000 + "]" * 50_000,
        "extra = " + "{a = " * 20_000 + "1" + "}" * 20_000,
        "preprocess = { factor = 1" + "0" * 400 + " }",
        "preprocess = { max_pixels = inf }",
        "preprocess = { max_pixels = 1e400 }",
        "decoding = { max_new_tokens = 9" + "9" * 300 + " }",
        "decoding = { temperature = -inf }",
    ],
)
def test_a_hostile_presets_file_is_one_clear_error(tmp_path, body):
    from pytest_grounding.detectors.vlm import presets_from_toml

    toml = tmp_path / "p.toml"
    toml.write_text(f"[presets.bad]\nbase = 'qwen2.5-vl'\n{body}\n")
    with pytest.raises(ValueError, match="presets file"):
        presets_from_toml(toml)


# -- one streaming bounded reader: digests of large files in bounded memory, special files refused ---------------


def run_in_limited_memory(code, kib=1_000_000):
    """`python -c code` on this checkout with its address space capped at `kib` KiB."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, preexec_fn=cap, timeout=120
    )


@pytest.mark.slow
@pytest.mark.parametrize("call", ["safefile.sha256(path)", "datasets.fingerprint([Path(path)])"])
def test_a_file_larger_than_the_address_space_is_digested_in_chunks(tmp_path, call):

    path = tmp_path / "big.parquet"
    with path.open("wb") as handle:
        handle.truncate(3 << 29)  # 1.5 GiB, sparse: more than the 1 GB the process may map
    code = (
        "from pathlib import Path; from pytest_grounding.core import safefile; import pytest_grounding.datasets as "
        f"datasets; path = {str(path)!r}; print(len({call}))"
    )
    result = run_in_limited_memory(code)
    assert result.returncode == 0 and result.stdout.strip() in ("64", "16"), result.stderr[-2000:]


@pytest.mark.parametrize("kind", ["fifo", "devzero", "folder"])
def test_a_digest_refuses_what_is_no_regular_file_at_once(tmp_path, kind):
    from pytest_grounding.core import safefile
    from pytest_grounding.datasets import fingerprint

    target = tmp_path / "data.parquet"
    make_unreadable(target, kind)
    for digest in (safefile.sha256, lambda p: fingerprint([p])):
        with pytest.raises(safefile.NotRegularFile):
            digest(target)


@pytest.mark.parametrize(
    "box", [[0, 0, 1e308, 1e308], [-1e300, -5, 10, 10], [20, 20, 1, 1], [5, 5, 5, 5], [1e-300, 0, 2e-300, 1]]
)
@pytest.mark.parametrize("keys", [["d"], ["e"]])
def test_review_shows_and_edits_any_finite_box(tmp_path, monkeypatch, capsys, box, keys):
    audit, _ = _mini_audit(tmp_path, bbox=box)
    monkeypatch.setattr("pytest_grounding.cli.curation.tui.run_box_editor", lambda edit: None)
    code, out = _review_keys(monkeypatch, audit, tmp_path / "errata.jsonl", keys)
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in out + err, out + err


@pytest.mark.parametrize(
    "document",
    [
        "[" * 100_000,
        '{"kind": "audit", "findings": [{"id": "m01", "instruction": "x", "bbox": [1, 2, 3, 4], "score": 1'
        + "0" * 400
        + "}]}",
        '{"kind": "audit", "findings": {"id": "m01"}}',
        '{"kind": "audit", "findings": ["m01"]}',
        '{"kind": "audit", "findings": [], "dataset": "x"}',
        '{"kind": ["audit"], "findings": []}',
    ],
)
def test_review_refuses_a_hostile_audit_file_in_one_line(tmp_path, monkeypatch, capsys, document):
    audit = tmp_path / "audit.json"
    audit.write_text(document)
    code, out = _review_keys(monkeypatch, audit, tmp_path / "errata.jsonl", [])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in out + err and "review --audit" in err, out + err


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("[" * 100_000 + "\n", "line 1"),
        ('{"id": "m01", "action": "fix", "bbox": [1, 1, 1' + "0" * 400 + ", 5]}\n", "line 1"),
        ('{"id": "m01", "action": "drop"}\n{"id": "m01", "action": "drop", "dataset": "mini"}\n', "line 2"),
        ('{"id": "m01", "action": "fix", "bbox": [1, 1, Infinity, 5]}\n', "line 1"),
    ],
)
def test_review_refuses_a_hostile_errata_file_naming_the_line(tmp_path, monkeypatch, capsys, content, said):
    audit, _ = _mini_audit(tmp_path)
    errata = tmp_path / "errata.jsonl"
    errata.write_text(content)
    code, out = _review_keys(monkeypatch, audit, errata, ["d"])
    err = capsys.readouterr().err
    assert code == 2 and said in err and "Traceback" not in out + err, out + err
    assert errata.read_text() == content  # never rewritten


def test_an_entry_naming_a_version_follows_it_under_another_name():
    errata = errata_mod.parse(b'{"id": "s1", "action": "drop", "dataset": "mini", "fingerprint": "F"}\n')
    assert errata.entry_for({"id": "s1", "dataset": "mini-2", "fingerprint": "F"}) is not None  # renamed in a run
    assert errata.entry_for({"id": "s1", "dataset": "mini", "fingerprint": "G"}) is None  # another version


# -- errata bound to their dataset, end to end: two datasets with the same ids in one run ---------------------


@pytest.fixture(scope="module")
def twin_report(tmp_path_factory):
    """A run of mini and a second version of it (one more sample: another fingerprint, the same ids)."""
    import shutil

    from pytest_grounding.datasets import load_dataset

    folder = tmp_path_factory.mktemp("twins")
    copy = folder / "v2" / "mini"  # named as the first: the run calls it mini-2
    shutil.copytree(MINI, copy)
    meta = copy / "data" / "test" / "metadata.jsonl"
    first = meta.read_text().splitlines()[0]
    meta.write_text(meta.read_text() + json.dumps({**json.loads(first), "id": "m99"}) + "\n")
    path = folder / "run.json"
    result = run_suite(folder / "run", f"--dataset={MINI}", f"--dataset={copy}", "--detector", "center",
                       "--grounding-json", str(path))  # fmt: skip
    assert path.is_file(), result.stdout[-2000:]
    return path, load_dataset(str(MINI)).fingerprint, load_dataset(str(copy)).fingerprint


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("bind", ["name", "fingerprint", "both", "second"])
def test_errata_correct_one_of_two_datasets_with_the_same_ids(twin_report, tmp_path, capsys, bind):
    report, first, second = twin_report
    datasets = {r["dataset"] for r in json.loads(report.read_text())["samples"]}
    assert datasets == {"mini", "mini-2"}, datasets
    fields = {"name": {"dataset": "mini"}, "fingerprint": {"fingerprint": first},
              "both": {"dataset": "mini", "fingerprint": first}, "second": {"fingerprint": second}}[bind]  # fmt: skip
    errata = tmp_path / "errata.jsonl"
    errata.write_text(json.dumps({"id": "m01", "action": "drop", **fields}) + "\n")
    out = tmp_path / "o.json"
    assert main(["rescore", str(report), "--errata", str(errata), "--json", str(out)]) == 0, capsys.readouterr().err
    block = json.loads(out.read_text())["errata"]
    assert block["drops"] == 1 and sum(t["dropped"] for t in block["detectors"].values()) == 1, block
    errata.write_text('{"id": "m01", "action": "drop"}\n')  # naming no dataset: refused in a run of two
    assert main(["rescore", str(report), "--errata", str(errata), "--json", str(out)]) == 2
    assert "name no dataset" in capsys.readouterr().err


def test_a_file_holding_more_than_it_claims_is_refused_past_a_margin():
    import threading

    from pytest_grounding.core import safefile

    read_end, write_end = os.pipe()  # claims 0 bytes, as a /proc file does, and never ends while written to

    def endless():
        with os.fdopen(write_end, "wb") as sink:
            try:
                while True:
                    sink.write(b"x" * (1 << 20))
            except (BrokenPipeError, OSError):
                pass

    threading.Thread(target=endless, daemon=True).start()
    with (
        os.fdopen(read_end, "rb", buffering=0) as source,
        pytest.raises(safefile.FileTooLarge, match="more than the 0 bytes it claims"),
    ):
        safefile._bounded(source, "endless", safefile.MAX_FILE_BYTES)


@pytest.mark.parametrize("path", ["/proc/self/pagemap", "/proc/self/task/../pagemap"])
def test_an_endless_proc_file_is_refused_in_bounded_memory(path):

    if not Path(path).exists():
        pytest.skip("no /proc here")
    code = (
        "from pytest_grounding.core import safefile\n"
        f"try:\n    safefile.read_bytes({path!r})\nexcept (OSError, safefile.FileTooLarge):\n    print('refused')"
    )
    result = run_in_limited_memory(code)
    assert result.stdout.strip() == "refused", result.stderr[-2000:]


@pytest.mark.parametrize("where", ["org/some-dataset", "fixtures/mini", "", "/nonexistent/mini"])
def test_review_loads_screens_only_from_a_local_dataset_path(tmp_path, monkeypatch, where):
    from pytest_grounding.cli.curation import errata_review

    audit = tmp_path / "audit.json"
    document = {"kind": "audit", "findings": [], "dataset": {"format": "hf", "path": where, "fingerprint": "0"}}
    audit.write_text(json.dumps(document))
    monkeypatch.chdir(REPO)
    called = []
    monkeypatch.setattr("pytest_grounding.cli.curation.loading.load", lambda spec: called.append(spec))
    screens = errata_review.audit_screens(audit)
    assert screens.root is None and "screens not read" in screens.reason and not called


@pytest.mark.parametrize("text", ['\ufeff{"id": "s1", "action": "drop"}\n', '{"id": "s1", "action": "drop"}\r\n\r\n'])
def test_an_errata_file_saved_by_a_windows_editor_reads_the_same(text):
    assert [e.id for e in errata_mod.parse(text.encode()).entries] == ["s1"]
