"""Issue 57: `python -m pytest_grounding submit` through submitit's local executor: three shards as
subprocesses, each its own report, merged into one report with the records of one run; a shard
whose report is there is not run again; a shard that writes no report is named, the merge partial.
And through submitit's Slurm executor, its real code path (the sbatch scripts it writes, its sacct
polling), on stand-in Slurm commands that run the jobs on this machine (tests/fake_slurm.py): no
cluster is here."""

import subprocess
import sys

import fake_slurm
import pytest

from helpers import FIXTURES, REPO, read_json

pytest.importorskip("submitit")

RUN = [str(REPO / "suites"), f"--dataset={FIXTURES / 'mini'}", "--detector", "center", "-p", "no:cacheprovider"]


def submit(tmp_path, out, *extra, where=("--local",), env=None, run=tuple(RUN)):
    command = [sys.executable, "-m", "pytest_grounding", "submit", *where, "--out", str(out), *extra, "--", *run]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)


def one_run(tmp_path):
    whole = tmp_path / "whole.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", *RUN, "--grounding-json", str(whole)], cwd=tmp_path, capture_output=True
    )
    return whole


def records(report):
    return sorted((r["dataset"], r["id"], r["outcome"], r.get("point")) for r in read_json(report)["samples"])


@pytest.mark.slow
def test_three_local_shards_merge_to_the_records_of_one_run_and_a_resubmit_runs_only_the_missing(tmp_path):
    whole = one_run(tmp_path)
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
def test_a_slurm_array_and_its_merge_job_through_submitits_slurm_executor(tmp_path):
    """`submit --slurm-partition gpu --gpus-per-task 1 --shards 3 --parallel 2 --wait`: one array job
    of three tasks (at most two at once), one GPU each on the partition, and a merge job after the
    whole array (afterany) with no GPU; the merged report has one run's records. Resubmitted with a
    report gone: one plain job (no array) for that shard, the merge after it."""
    slurm = tmp_path / "slurm"
    env = fake_slurm.install(slurm)
    whole = one_run(tmp_path)
    out = tmp_path / "out"
    where = ("--slurm-partition", "gpu", "--gpus-per-task", "1")
    run = (*RUN, "--grounding-max-errors", "1")  # the fixture's two error samples: the merge passes (exit 0)
    try:
        done = submit(tmp_path, out, "--shards", "3", "--parallel", "2", "--wait", where=where, env=env, run=run)
    finally:
        fake_slurm.wait_all(slurm)
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "submitted 3 of 3 shards (a Slurm array)" in said, said[-3000:]
    assert "merge: " in said and "complete" in said, said[-3000:]
    array, merge = fake_slurm.jobs(slurm)
    assert array["directives"]["array"] == "0-2%2" and array["tasks"] == [0, 1, 2]
    for key, value in {"partition": "gpu", "gpus-per-node": "1", "ntasks-per-node": "1", "nodes": "1",
                       "time": "240", "job-name": "grounding-shard"}.items():  # fmt: skip
        assert array["directives"][key] == value, (key, array["directives"])
    assert merge["directives"]["dependency"] == f"afterany:{array['id']}"
    assert merge["directives"]["job-name"] == "grounding-merge" and merge["directives"]["partition"] == "gpu"
    assert "gpus-per-node" not in merge["directives"] and "array" not in merge["directives"]
    assert "srun" in array["script"] and "submitit.core._submit" in array["script"]
    assert set(array["states"].values()) == {"COMPLETED"} and merge["states"] == {"job": "COMPLETED"}
    for task in (0, 1, 2):  # submitit's own job environment read Slurm's array variables in each task
        log = (out / "submitit" / f"{array['id']}_{task}_0_log.out").read_text()
        assert f"job_id={array['id']}_{task}" in log, log[-2000:]
    assert records(out / "merged.json") == records(whole)
    assert [f"--grounding-shard {k}/3" in (out / f"shard-{k}.log").read_text() for k in (1, 2, 3)] == [True] * 3

    (out / "shard-2.json").unlink()
    try:
        again = submit(tmp_path, out, "--shards", "3", "--wait", where=where, env=env, run=run)
    finally:
        fake_slurm.wait_all(slurm)
    said = again.stdout + again.stderr
    assert again.returncode == 0 and "submitted 1 of 3 shards" in said and "shard 1/3: done already" in said, said
    _, _, single, merge = fake_slurm.jobs(slurm)
    assert "array" not in single["directives"] and single["directives"]["gpus-per-node"] == "1"
    assert merge["directives"]["dependency"] == f"afterany:{single['id']}"
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


def test_a_slurm_submission_on_a_machine_without_slurm_says_so_in_one_line(tmp_path, monkeypatch):
    """submitit's own error was a RuntimeError traceback ("Could not detect srun")."""
    import os

    path = os.pathsep.join(
        p
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and not (os.path.exists(os.path.join(p, "sbatch")) or os.path.exists(os.path.join(p, "srun")))
    )
    env = {**os.environ, "PATH": path}
    done = submit(tmp_path, tmp_path / "out", "--shards", "2", where=("--slurm-partition", "gpu"), env=env)
    assert done.returncode == 2, done.stderr
    assert "sbatch" in done.stderr and "--local" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()  # nothing made for a submission that cannot happen
