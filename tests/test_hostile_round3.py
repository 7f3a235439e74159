"""Issue 42, hostile inputs round 3: each failure a test of its class (docs/security.md lists them).

- merge takes nothing a report states on trust: every record checked against its own report's
  claims (dataset, fingerprint, detector, uid inside the claimed share, no sample twice), its
  outcome re-scored from its answer, the split bounded; its page embeds only the datasets' own
  images; its terminal escapes what the reports say;
- a predictions file is held by one run at a time, and a shard resumes only its own share;
- one bounded JSON reader (depth, number size, length): a hostile replay row is that row's outcome;
- the hub cache is untrusted input (malformed configs and indexes, links out of it, absurd shapes);
- shard counts bounded by the samples; an output that cannot be written fails the run in one
  line; Ctrl-C while the outputs are written is held until they are whole.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import FIXTURES, REPO, SERIAL, XDIST, read_json
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"
SUITE = (REPO / "suites" / "test_grounding.py").read_text()


def run_suite(folder, *args, env=None, timeout=120):
    """A pytest run of the shipped suite in `folder`, in a fresh process (this checkout's package)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_grounding.py").write_text(SUITE)
    environ = {key: value for key, value in os.environ.items() if key != "GROUNDING_SHARD"}
    environ.update({"PYTHONPATH": str(REPO), **(env or {})})
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_grounding.py", *args]
    return subprocess.run(command, cwd=folder, env=environ, capture_output=True, text=True, timeout=timeout)


def no_crash(result):
    text = result.stdout + result.stderr
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    return text


# -- merge: records validated, re-scored, bounded ---------------------------------------------------------


@pytest.fixture(scope="module")
def workers():
    """Serial shards: `merge` reads the same document whichever way a shard ran (tests/test_shards.py
    runs shards under xdist; the refusals below are usage errors raised before any worker starts)."""
    return []


@pytest.fixture(scope="module")
def shards(tmp_path_factory, workers):
    """Two real shard reports of the mini set (made once per module and mode)."""
    folder = tmp_path_factory.mktemp("shards")
    paths = []
    for k in (1, 2):
        path = folder / f"shard-{k}.json"
        result = run_suite(
            folder / f"run{k}",
            f"--dataset={MINI}",
            "--detector",
            "center",
            "--grounding-shard",
            f"{k}/2",
            "--grounding-json",
            str(path),
            *workers,
        )
        assert path.is_file(), result.stdout[-2000:]
        paths.append(path)
    return paths


def forged(tmp_path, path, change, name="forged.json"):
    document = read_json(path)
    change(document)
    out = tmp_path / name
    out.write_text(json.dumps(document))
    return out


def steal_records(document, other):
    document["samples"] += read_json(other)["samples"]


FORGERIES = {
    "another shard's records": (lambda d, other: steal_records(d, other), "outside the share"),
    "a share claiming no uids": (
        lambda d, other: d["shard"]["datasets"][0].update(uids=[], planned=0),
        "outside the share",
    ),
    "another dataset": (lambda d, other: d["samples"][0].update(dataset="elsewhere"), "dataset elsewhere is none"),
    "another detector": (lambda d, other: d["samples"][0].update(detector="oracle"), "detector oracle is none"),
    "a record's fingerprint": (lambda d, other: d["samples"][0].update(fingerprint="f00"), "fingerprint f00"),
    "run.datasets' fingerprint": (
        lambda d, other: d["run"]["datasets"][0].update(fingerprint="f00"),
        "in run.datasets",
    ),
    "a sample twice": (lambda d, other: d["samples"].append(dict(d["samples"][0])), "a second time"),
    "another task": (lambda d, other: d["samples"][0].update(task="locate"), "task locate is not"),
    "shard 3/2": (lambda d, other: d["shard"].update(index=3), "is not K/N"),
    "ten million shards": (lambda d, other: d["shard"].update(count=10**7), "is not K/N"),
    "more shards than samples": (lambda d, other: d["shard"].update(count=9), "shards of 8 samples"),
}


@pytest.mark.slow
@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_merge_refuses_records_their_report_does_not_hold(shards, tmp_path, capsys, forgery):
    change, message = FORGERIES[forgery]
    bad = forged(tmp_path, shards[0], lambda d: change(d, shards[1]))
    other = shards[1]
    if forgery in ("shard 3/2", "ten million shards", "more shards than samples"):
        other = forged(tmp_path, shards[1], lambda d: d["shard"].update(count=d["shard"]["count"]), "other.json")
    started = time.monotonic()
    code = main(["merge", str(bad), str(other), "--json", str(tmp_path / "merged.json")])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert not (tmp_path / "merged.json").exists()
    assert time.monotonic() - started < 10  # bounded work whatever the report claims


def test_a_merge_missing_thousands_of_shards_says_so_in_a_few_lines(shards, tmp_path, capsys):
    def many(document, index):
        document["shard"].update(index=index, count=9_999)
        document["shard"]["datasets"][0]["samples"] = 10**30  # claims are not counted on: the output stays short

    first, last = (
        forged(tmp_path, shards[0], lambda d: many(d, 1), "first.json"),
        forged(tmp_path, shards[1], lambda d: many(d, 9_999), "last.json"),
    )
    assert main(["merge", str(first), str(last), "--json", str(tmp_path / "merged.json")]) == 1
    out = capsys.readouterr().out
    assert "missing shards: 2-9998" in out and len(out) < 20_000
    assert "no report of shard 2-9998 of 9999" in " ".join(read_json(tmp_path / "merged.json")["notes"])


def test_merge_rescores_forged_outcomes_and_says_so(shards, tmp_path, capsys):
    def all_hits(document):
        for record in document["samples"]:
            if record["outcome"] == "miss":
                record["outcome"] = "hit"

    honest = tmp_path / "honest.json"
    assert main(["merge", *map(str, shards), "--json", str(honest)]) in (0, 1)
    bad = forged(tmp_path, shards[0], all_hits)
    main(["merge", str(bad), str(shards[1]), "--json", str(tmp_path / "merged.json")])
    merged, truth = read_json(tmp_path / "merged.json"), read_json(honest)
    assert merged["summary"]["center"]["hits"] == truth["summary"]["center"]["hits"]
    assert merged["summary"]["center"]["accuracy"] == truth["summary"]["center"]["accuracy"]
    assert any("re-scored" in note and "stored outcome 'hit'" in note for note in merged["notes"])
    capsys.readouterr()


def test_merge_rescores_against_the_dataset_read_again_not_a_forged_target(shards, tmp_path, capsys):
    def moved_targets(document):
        for record in document["samples"]:
            if record["outcome"] == "miss":  # the target moved under the click, and called a hit
                x, y = record["point"]
                record.update(outcome="hit", target=[x - 1, y - 1, x + 1, y + 1], distance=0.0)

    honest = tmp_path / "honest.json"
    main(["merge", *map(str, shards), "--json", str(honest)])
    bad = forged(tmp_path, shards[0], moved_targets)
    main(["merge", str(bad), str(shards[1]), "--json", str(tmp_path / "merged.json")])
    merged, truth = read_json(tmp_path / "merged.json"), read_json(honest)
    assert merged["summary"]["center"]["hits"] == truth["summary"]["center"]["hits"]
    assert [r["target"] for r in merged["samples"]] == [r["target"] for r in truth["samples"]]

    def moved_dataset(document):
        document["run"]["datasets"][0]["path"] = str(tmp_path / "gone")

    away = [forged(tmp_path, path, moved_dataset, f"away{k}.json") for k, path in enumerate(shards)]
    main(["merge", *map(str, away), "--json", str(tmp_path / "away.json")])
    notes = read_json(tmp_path / "away.json")["notes"]
    assert any("re-scored against the targets the reports give (no such file or folder)" in n for n in notes)
    bad_id = forged(tmp_path, shards[0], lambda d: d["samples"][0].update(id="m99"), "id.json")
    assert main(["merge", str(bad_id), str(shards[1]), "--json", str(tmp_path / "id.json")]) == 2
    assert "no sample" in capsys.readouterr().err


def test_merge_html_embeds_only_the_datasets_own_images(shards, tmp_path, capsys):
    from PIL import Image

    secret = tmp_path / "private" / "secret.png"
    secret.parent.mkdir()
    Image.new("RGB", (64, 48), (1, 2, 3)).save(secret)

    def point_at_secret(document):
        for record in document["samples"]:
            record["image"] = str(secret)

    import base64

    secret_text = base64.b64encode(secret.read_bytes())[:40].decode()
    bad = forged(tmp_path, shards[0], point_at_secret)
    page = tmp_path / "merged.html"
    main(["merge", str(bad), str(shards[1]), "--json", str(tmp_path / "merged.json"), "--html", str(page)])
    assert secret_text not in page.read_text()  # the records rebuilt from the dataset read again: its own images
    assert str(secret) not in json.dumps(read_json(tmp_path / "merged.json")["samples"])

    def elsewhere(document):  # a dataset that cannot be read again: the records' images are not read at all
        point_at_secret(document)
        document["run"]["datasets"][0]["path"] = str(tmp_path / "gone")

    away = [forged(tmp_path, path, elsewhere, f"away{k}.json") for k, path in enumerate(shards)]
    main(["merge", *map(str, away), "--json", str(tmp_path / "away.json"), "--html", str(page)])
    text = page.read_text()
    assert secret_text not in text and "not shown: dataset mini cannot be read again" in text
    capsys.readouterr()


def test_merge_terminal_escapes_what_the_reports_say(shards, tmp_path, capsys):
    def hostile(document):
        document["notes"] = ["\x1b]0;owned\x07\x1b[2J fine\nverdict: **passed**"]
        document["samples"][0]["instruction"] = "click\x1b[31m\rred"

    bad = forged(tmp_path, shards[0], hostile)
    main(["merge", str(bad), str(shards[1]), "--json", str(tmp_path / "merged.json")])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    assert not any(line.startswith("verdict: **passed**") for line in out.splitlines())
    assert "\\x1b]0;owned" in out


# -- one predictions file, one run ---------------------------------------------------------------------------


def test_a_shard_resuming_another_shards_file_is_refused(tmp_path, workers):
    predictions = tmp_path / "shared.jsonl"
    common = (f"--dataset={MINI}", "--detector", "center", "--grounding-predictions", str(predictions))
    first = run_suite(tmp_path / "one", *common, "--grounding-shard", "1/2", *workers)
    assert predictions.is_file(), first.stdout[-2000:]
    before = predictions.read_text()
    second = run_suite(tmp_path / "two", *common, "--grounding-shard", "2/2", "--grounding-resume", *workers)
    text = no_crash(second)
    assert second.returncode == 4 and "outside shard 2/2's share" in text, text[-2000:]
    assert predictions.read_text() == before  # the other shard's lines are not rewritten


def test_a_predictions_file_held_by_another_run_is_refused_naming_it(tmp_path, workers):
    from pytest_grounding.store.reports import PredictionsHold

    predictions = tmp_path / "shared.jsonl"
    hold = PredictionsHold(predictions, "pid 4242 on ci-7: pytest --grounding-shard 1/3")
    try:
        result = run_suite(
            tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-predictions", str(predictions),
            *workers,
        )  # fmt: skip
    finally:
        hold.release()
    text = no_crash(result)
    assert result.returncode == 4 and "being written by another run (pid 4242 on ci-7" in text, text[-2000:]
    again = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-predictions", str(predictions)
    )
    assert again.returncode == 1 and len(predictions.read_text().splitlines()) == 8  # released: the next run writes
    assert not list(tmp_path.glob(".shared.jsonl.lock"))


@pytest.mark.slow
def test_concurrent_runs_never_share_a_predictions_file(tmp_path):
    predictions = tmp_path / "one.jsonl"
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "test_grounding.py").write_text(SUITE)
    environ = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_grounding.py", f"--dataset={MINI}"]
    command += ["--detector", "center", "--grounding-predictions", str(predictions)]
    runs = [
        subprocess.Popen(command, cwd=folder, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(3)
    ]
    outputs = [(run.communicate(timeout=120)[0], run.returncode) for run in runs]
    refused = [code for text, code in outputs if "being written by another run" in text]
    wrote = [code for text, code in outputs if "being written by another run" not in text]
    assert all(code == 4 for code in refused) and all(code == 1 for code in wrote)  # 1: the misses fail
    lines = predictions.read_text().splitlines()
    assert wrote and len(lines) == 8  # one run's file, whole (each writer starts it afresh)
    assert all(json.loads(line)["dataset"] == "mini" for line in lines)


# -- one bounded JSON reader ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, problem",
    [
        ("[" * 5000 + "]" * 5000, "nested"),
        ('{"a": ' * 150 + "1" + "}" * 150, "nested"),
        ('{"point": [' + "9" * 400 + ", 5]}", "digits"),
        ('{"point": [1e999, 5]}', "beyond a double"),
        ('{"x": 0.' + "1" * 60 + "}", "characters"),
    ],
)
def test_the_json_reader_refuses_what_no_file_needs(text, problem):
    from pytest_grounding.core import safejson

    with pytest.raises(ValueError, match=problem):
        safejson.loads(text)
    with pytest.raises(ValueError, match="characters"):
        safejson.loads('{"a": 1}', max_chars=4)


def test_the_json_reader_reads_rows_with_absurd_numbers_as_null():
    from pytest_grounding.core import safejson

    row = safejson.loads('{"point": [' + "7" * 5000 + ', 1e400], "x": NaN}', numbers_beyond="null")
    assert row == {"point": [None, None], "x": None}


def hostile_replay(tmp_path, kind):
    path = tmp_path / f"{kind}.jsonl"
    rows = [{"id": f"m0{k}", "point": [20, 20]} for k in (1, 2, 3)]
    if kind == "deep":
        path.write_text(json.dumps(rows)[:-1] + ", " + "[" * 3000 + "]" * 3000 + "]")
    else:
        lines = [json.dumps(row) for row in rows]
        lines.append('{"id": "m05", "point": [' + "1" * 400 + ", 5]}")
        lines.append('{"id": "m06", "point": ' + "[" * 3000 + "]" * 3000 + "}")  # this row alone nested too deep
        path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
@SERIAL
def test_a_hostile_replay_row_is_that_rows_outcome_never_the_runs_end(tmp_path, workers):
    report = tmp_path / "r.json"
    path = hostile_replay(tmp_path, "digits")
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", f"replay:path={path}", "--grounding-json", str(report),
        *workers,
    )  # fmt: skip
    no_crash(result)
    samples = {s["id"]: s for s in read_json(report)["samples"]}
    assert samples["m05"]["outcome"] == "error" and "is not [x, y]" in samples["m05"]["error"]
    assert samples["m06"]["outcome"] == "error" and "no answer for id 'm06'" in samples["m06"]["error"]
    assert samples["m01"]["outcome"] == "hit"
    assert "rows skipped (row 5 is not JSON (JSON nested too deeply" in " ".join(read_json(report)["notes"])
    deep = hostile_replay(tmp_path, "deep")
    result = run_suite(tmp_path / "deep", f"--dataset={MINI}", "--detector", f"replay:path={deep}", *workers)
    text = no_crash(result)
    assert result.returncode == 4 and "nested" in text


def own_predictions(tmp_path, change):
    lines = []
    for k in (1, 2, 3):
        line = {"id": f"m0{k}", "uid": f"u{k}", "dataset": "mini", "detector": "center", "outcome": "miss"}
        lines.append({**line, "point": [80, 60], "fingerprint": "c4068f4b9761c13b", **change})
    path = tmp_path / "own.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        ({"fingerprint": "0123456789abcdef"}, "predictions of another version of the dataset"),
        ({"dataset": "screenspot"}, "none of the 3 answers"),
    ],
)
def test_own_predictions_of_another_dataset_or_version_are_refused(tmp_path, change, message):
    path = own_predictions(tmp_path, change)
    result = run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", f"replay:path={path}")
    text = no_crash(result)
    assert result.returncode == 4 and message in text, text[-2000:]


def test_identical_rows_are_one_answer_and_the_text_false_no_refusal(tmp_path):
    from pytest_grounding.detectors.replay.files import read_replay_file
    from pytest_grounding.detectors.replay.match import Index

    path = tmp_path / "p.jsonl"
    row = {"id": "m01", "uid": "u", "dataset": "mini", "detector": "x", "outcome": "miss", "point": [5, 5]}
    rows = [row, row, {**row, "id": "m02", "refusal": "false"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    replay = read_replay_file(path)
    from pytest_grounding.datasets import load_dataset

    samples = {s.id: s for s in load_dataset(str(MINI)).samples}
    index = Index(replay)
    assert index.match(samples["m01"]).answer is not None  # two identical rows: one answer, not ambiguous
    assert index.match(samples["m02"]).answer.refusal is False


# -- the hub cache is untrusted ------------------------------------------------------------------------------


def hostile_cache(tmp_path, kind):
    hub = pytest.importorskip("pytest_grounding.detectors.hub")
    pytest.importorskip("huggingface_hub")
    source = tmp_path / f"src-{kind}"
    source.mkdir()
    config = {"model_type": "qwen2_5_vl", "num_hidden_layers": 2}
    weights = {"model.safetensors": b"weights"}
    if kind == "config a list":
        config = [1, 2, 3]
    elif kind == "config too deep":
        config = None
        (source / "config.json").write_text('{"a": ' * 3000 + "1" + "}" * 3000)
    elif kind == "layers 10^9":
        config = {"model_type": "qwen2_5_vl", "text_config": {"num_hidden_layers": 10**9}}
    elif kind == "mixed index":
        weights = {"model.safetensors.index.json": json.dumps({"weight_map": {"a": "x.safetensors", "b": 3, "c": []}})}
    if config is not None:
        (source / "config.json").write_text(json.dumps(config))
    for name, content in weights.items():
        (source / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    cache = tmp_path / f"cache-{kind}"
    snapshot = hub.place_in_cache(source, "org/model", cache, "0" * 40)
    if kind == "a ref that names no commit":
        (cache / "models--org--model" / "refs" / "main").write_text("../../../etc\n" * 3)
    if kind == "link out of the cache":
        outside = tmp_path / "outside.safetensors"
        outside.write_bytes(b"not the model's")
        (snapshot / "model.safetensors").unlink()
        (snapshot / "model.safetensors").symlink_to(outside)
    return hub, cache, snapshot


KINDS = ["config a list", "config too deep", "layers 10^9", "mixed index", "link out of the cache"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_hub_cache_is_named_never_a_crash(tmp_path, kind):
    hub, cache, snapshot = hostile_cache(tmp_path, kind)
    (model,) = hub.cached_models(cache)
    assert model.complete is False
    with pytest.raises(hub.ModelUnavailable):
        hub.check_folder(hub.ResolvedModel(snapshot, repo_id="org/model", commit=snapshot.name), "qwenvl")


@pytest.mark.parametrize("kind", [*KINDS, "a ref that names no commit"])
def test_doctor_reads_a_hostile_cache_without_a_traceback(tmp_path, monkeypatch, capsys, kind):
    _, cache, _ = hostile_cache(tmp_path, kind)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GROUNDING_BASE_URL", raising=False)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "org/model" in line)
    assert "complete" not in line.replace("incomplete", ""), line


# -- shard counts bounded by the samples ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, env, message",
    [
        (["--grounding-shard", "1/100000000"], None, "at most 10,000 shards"),
        (["--grounding-shard", "env"], {"GROUNDING_SHARD": "1/" + "1" + "0" * 20}, "at most 10,000 shards"),
        (["--grounding-shard", "3/2"], None, "1 <= K <= N"),
        (["--grounding-shard", "9/9"], None, "9 shards of 8 samples"),
    ],
)
@SERIAL
def test_shard_counts_are_bounded_by_the_samples(tmp_path, args, env, message, workers):
    started = time.monotonic()
    result = run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", "center", *args, *workers, env=env)
    text = no_crash(result)
    assert result.returncode == 4 and message in text, text[-2000:]  # one usage error, before any worker
    assert time.monotonic() - started < 60


def test_the_plan_allocates_for_the_samples_not_the_shards():
    from pytest_grounding.datasets import load_dataset, sharding

    samples = load_dataset(str(MINI)).samples
    started = time.monotonic()
    assert sharding.plan(samples, 10**12) == sharding.plan(samples, len(samples))
    assert time.monotonic() - started < 1


# -- outputs -------------------------------------------------------------------------------------------------

FULL = "/dev/full"


@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")
@pytest.mark.parametrize("option", ["--grounding-json", "--grounding-html", "--grounding-predictions"])
@SERIAL
def test_an_output_that_cannot_be_written_fails_the_run_in_one_line(tmp_path, option, workers):
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-misses", "xfail",
        option, FULL, *workers,
    )  # fmt: skip
    text = no_crash(result)
    failed = [line for line in text.splitlines() if "output FAILED" in line]
    assert len(failed) == 1 and result.returncode != 0, text[-2000:]


@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")
def test_summary_append_on_a_full_device_is_one_line(tmp_path, capsys):
    report = tmp_path / "r.json"
    run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report))
    assert main(["summary", str(report), "--append", FULL]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "not appended" in err


def test_ctrl_c_while_the_outputs_are_written_is_held_until_they_are_whole(tmp_path):
    from pytest_grounding.store.reports import interrupts_held, write_json

    taken = []
    with interrupts_held(taken):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        write_json(tmp_path / "r.json", {"whole": True})
    assert taken and read_json(tmp_path / "r.json") == {"whole": True}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


INTERRUPTING_WRITER = """
import os, signal
from pytest_grounding.render import outputs

_write_all = outputs.write_all


def write_all(document, settings, **how):  # Ctrl-C arrives as the final outputs start to be written
    os.kill(os.getpid(), signal.SIGINT)
    return _write_all(document, settings, **how)


outputs.write_all = write_all
"""


@XDIST
def test_ctrl_c_during_the_final_write_loses_no_output(tmp_path, workers):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "conftest.py").write_text(INTERRUPTING_WRITER)
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    result = run_suite(
        folder, f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report),
        "--grounding-html", str(page), *workers,
    )  # fmt: skip
    text = no_crash(result)
    assert result.returncode == 2 and "were completed first" in text, text[-2000:]
    assert len(read_json(report)["samples"]) == 8 and page.read_text().rstrip().endswith("</html>")


# -- low ------------------------------------------------------------------------------------------------------


def test_a_baseline_row_without_an_id_is_refused():
    from pytest_grounding.analysis.baseline_file import FORMAT_VERSION, MARKER, BaselineError, loads

    document = {
        MARKER: FORMAT_VERSION,
        "task": "grounding",
        "datasets": {"mini": "f"},
        "detectors": ["center"],
        "samples": [{"detector": "center", "dataset": "mini", "fingerprint": "f", "id": None, "outcome": "hit"}],
    }
    with pytest.raises(BaselineError, match="not three texts"):
        loads(json.dumps(document), "b.json")


def test_the_markdown_summary_names_the_samples_that_never_ran():
    from pytest_grounding.render.markdown import report_markdown

    document = {
        "partial": True,
        "summary": {},
        "not_run": [{"nodeid": "t", "detector": "center", "dataset": "mini", "id": "m07", "uid": "u7"}],
    }
    text = report_markdown(document)
    assert "1 samples never ran" in text and "center mini/m07" in text


def test_a_screen_row_without_bbox_never_answers_two_targets(tmp_path):
    from test_replay import PRO, PRO_DETAILS

    rows = [dict(row) for row in PRO_DETAILS[:5]]  # row 6 (pro_odd: same screen and instruction as row 1) left out
    rows[0].pop("bbox")
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"details": rows}))
    result = run_suite(tmp_path / "run", f"--dataset={PRO}", "--detector", f"replay:path={results}")
    text = no_crash(result)
    assert result.returncode == 4 and "row 1 of" in text and "has no bbox and matches several" in text, text[-2000:]


@pytest.mark.parametrize("refusal", ["false", "true", 1, {"x": 1}])
def test_only_the_boolean_true_is_a_refusal_when_a_line_is_rescored(refusal):
    from pytest_grounding.core.types import Box, Sample
    from pytest_grounding.evaluate.resume import rescore

    sample = Sample("d", "1", "u", MINI / "s1.png", "click", Box(10, 10, 30, 30), image_size=(160, 120))
    line = {"dataset": "d", "uid": "u", "id": "1", "detector": "x", "outcome": "hit", "point": [20, 20]}
    for stored in ({**line, "refusal": refusal}, {**line, "meta": {"refusal": refusal}}):
        record = rescore(stored, {("d", "u"): sample}, "here").record
        assert record is not None and record["outcome"] == "hit" and record["refusal"] is False


@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")
@pytest.mark.parametrize("option, code", [("--json", 2), ("--html", 1), ("--predictions", 1)])
def test_a_merge_output_that_cannot_be_written_fails_the_merge_in_one_line(shards, tmp_path, capsys, option, code):
    paths = {"--json": str(tmp_path / "m.json")}
    paths[option] = FULL
    args = [item for pair in paths.items() for item in pair]
    assert main(["merge", *map(str, shards), *args]) == code
    captured = capsys.readouterr()
    failed = [line for line in (captured.out + captured.err).splitlines() if "not written" in line or "stopped" in line]
    assert len(failed) == 1, captured


def test_a_dataset_row_with_an_absurd_number_is_that_samples_defect(tmp_path):
    from pytest_grounding.datasets import load_dataset

    folder = tmp_path / "data" / "test"
    folder.mkdir(parents=True)
    (folder / "s1.png").write_bytes((MINI / "data" / "test" / "s1.png").read_bytes())
    rows = [
        json.dumps({"file_name": "s1.png", "id": "a", "instruction": "Click", "bbox": [10, 10, 30, 30]}),
        '{"file_name": "s1.png", "id": "b", "instruction": "Click", "bbox": [10, 10, ' + "9" * 400 + ", 1e999]}",
    ]
    (folder / "metadata.jsonl").write_text("\n".join(rows) + "\n")
    samples = {s.id: s for s in load_dataset(str(tmp_path)).samples}
    assert samples["a"].defect is None and "unusable bbox" in str(samples["b"].defect)
