"""Issue 57: `python -m pytest_grounding submit` through submitit's local executor: three shards as
subprocesses, each its own report, merged into one report with the records of one run; a shard
whose report is there is not run again; a shard that writes no report is named, the merge partial."""

import subprocess
import sys

import pytest

from helpers import FIXTURES, REPO, read_json

pytest.importorskip("submitit")

RUN = [str(REPO / "suites"), f"--dataset={FIXTURES / 'mini'}", "--detector", "center", "-p", "no:cacheprovider"]


def submit(tmp_path, out, *extra):
    command = [sys.executable, "-m", "pytest_grounding", "submit", "--local", "--out", str(out), *extra, "--", *RUN]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def records(report):
    return sorted((r["dataset"], r["id"], r["outcome"], r.get("point")) for r in read_json(report)["samples"])


@pytest.mark.slow
def test_three_local_shards_merge_to_the_records_of_one_run_and_a_resubmit_runs_only_the_missing(tmp_path):
    whole = tmp_path / "whole.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", *RUN, "--grounding-json", str(whole)], cwd=tmp_path, capture_output=True
    )
    out = tmp_path / "out"
    done = submit(tmp_path, out, "--shards", "3")
    assert "submitted 3 of 3 shards" in done.stdout, done.stdout + done.stderr
    merged = read_json(out / "merged.json")
    assert not merged["partial"] and (out / "merged.html").is_file()
    assert records(out / "merged.json") == records(whole)
    assert all((out / f"shard-{k}.json").is_file() and (out / f"shard-{k}.log").is_file() for k in (1, 2, 3))

    (out / "shard-2.json").unlink()
    again = submit(tmp_path, out, "--shards", "3")
    assert "shard 1/3: done already" in again.stdout and "shard 3/3: done already" in again.stdout
    assert "submitted 1 of 3 shards" in again.stdout and "complete" in again.stdout
    assert records(out / "merged.json") == records(whole)


@pytest.mark.slow
def test_a_shard_with_no_report_is_named_and_nothing_merges(tmp_path):
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "pytest_grounding", "submit", "--local", "--shards", "2", "--out", str(out),
        "--", str(REPO / "suites"), f"--dataset={tmp_path / 'absent'}", "-p", "no:cacheprovider",
    ]  # fmt: skip
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert "shard 1/2: FAILED, no report" in result.stdout and "shard 2/2: FAILED, no report" in result.stdout
    assert result.returncode == 2 and "nothing to merge" in (out / "merge.log").read_text()


@pytest.mark.slow
def test_a_partial_merge_names_the_missing_shard(tmp_path):
    from pytest_grounding.cli.submit import run_merge

    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *RUN,
            "--grounding-shard",
            "1/2",
            "--grounding-json",
            str(out / "shard-1.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
    )
    assert run_merge(str(out), 2) == 1
    merged = read_json(out / "merged.json")
    assert merged["partial"] and "2" in str(merged["merge"]["missing"])


def test_submit_refuses_what_it_sets_itself(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pytest_grounding", "submit", "--local", "--shards", "2", "--out", str(tmp_path),
         "--", "suites/", "--grounding-shard", "1/2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 2 and "gives each task its --grounding-shard" in result.stderr
