"""Hostile inputs (issue 42 and 52; docs/security.md says what each class guarantees). `merge` takes nothing a
report states on trust: every record checked against its report's claims (dataset, fingerprint, detector, uid
inside the claimed share, no sample twice), its outcome re-scored from its answer, the split bounded; its page
embeds only the datasets' own images; its terminal escapes what the reports say; shards lacking part of their
share merge into a partial report that names what is missing.
"""

import json
import os
import time

import pytest

from helpers import FIXTURES, SERIAL, read_json
from hostile import run_suite
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"


PRO = str(FIXTURES / "screenspot-pro")


def _run(project, tmp_path, *args, workers=(), name="run.json"):
    report = tmp_path / name
    project.runpytest("--dataset", PRO, "--grounding-json", str(report), *args, *workers)
    assert report.is_file()
    return report


FULL = "/dev/full"


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


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
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


# --- a merge of shards that lack part of their share is partial and names what is missing -----------------------


def _shards(project, tmp_path, *args, workers=(), cut=None):
    paths = []
    for k in (1, 2):
        more = ["-k", cut] if cut and k == 2 else []
        paths.append(
            _run(project, tmp_path, "--detector", "colour", "--grounding-shard", f"{k}/2", *args, *more,
                 workers=workers, name=f"shard{k}.json")
        )  # fmt: skip
    return paths


def _merged(tmp_path, paths, capsys):
    out = tmp_path / "merged.json"
    main(["merge", *map(str, paths), "--json", str(out)])
    capsys.readouterr()
    return read_json(out)


def _drop(path, which):
    document = read_json(path)
    records = document["samples"]
    dropped = next(r for r in records if which(r))
    document["samples"] = [r for r in records if r is not dropped]
    path.write_text(json.dumps(document))
    return dropped


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_a_merge_of_shards_lacking_an_epoch_or_a_record_is_partial_and_names_them(project, tmp_path, capsys, workers):
    paths = _shards(project, tmp_path, "--grounding-epochs", "3", workers=workers)
    whole = _merged(tmp_path, paths, capsys)
    assert whole["partial"] is False and whole["merge"]["missing_samples"] == []
    dropped = _drop(paths[1], lambda r: r.get("epoch") == 2)
    merged = _merged(tmp_path, paths, capsys)
    assert merged["partial"] is True
    uid = dropped["uid"].rsplit("-e", 1)[0]
    assert any(f"{uid} epoch 2" in note for note in merged["notes"]), merged["notes"]
    assert merged["merge"]["missing_samples"][0]["missing"] == 1
    out = tmp_path / "o"
    assert main(["export", str(tmp_path / "merged.json"), "--screenspot-pro", str(out)]) == 1


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@SERIAL
def test_a_merge_of_a_cut_shard_is_partial(project, tmp_path, capsys, workers):
    paths = _shards(project, tmp_path, workers=workers)
    cut = read_json(paths[1])["samples"][0]["id"]
    _run(project, tmp_path, "--detector", "colour", "--grounding-shard", "2/2", "-k", f"not {cut}",
         workers=workers, name="shard2.json")  # fmt: skip
    assert cut not in {r["id"] for r in read_json(paths[1])["samples"]}
    merged = _merged(tmp_path, paths, capsys)
    assert merged["partial"] is True
    assert any("has no record, error or not_run entry" in note and cut in note for note in merged["notes"])


def test_a_merge_of_one_unsharded_report_with_a_record_deleted_is_partial(project, tmp_path, capsys):
    report = _run(project, tmp_path, "--detector", "colour", "--detector", "center")
    dropped = _drop(report, lambda r: r["detector"] == "center")
    merged = _merged(tmp_path, [report], capsys)
    assert merged["partial"] is True
    assert any(dropped["uid"] in note and "(center)" in note for note in merged["notes"]), merged["notes"]


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
