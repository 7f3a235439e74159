"""ci/github-actions-shards.yml and ci/slurm-shards.sh, shown working: the workflow passes a YAML lint,
its shard and merge commands run here as bash runs them (the matrix value and GROUNDING_SHARD filled
in as GitHub fills them, the center detector for OCR, a cut of the embedded default), and the Slurm
script submits its array and merge job to stand-in Slurm commands that run them here."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import fake_slurm
import pytest

from helpers import FIXTURES, REPO, read_json

WORKFLOW = REPO / "ci" / "github-actions-shards.yml"
SLURM = REPO / "ci" / "slurm-shards.sh"
LINT = "{extends: default, rules: {line-length: {max: 120}, document-start: disable, truthy: {check-keys: false}}}"
LIMIT = 30  # samples of the embedded default: seconds, not minutes


def workflow():
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(WORKFLOW.read_text())


def test_the_workflow_passes_a_yaml_lint():
    pytest.importorskip("yamllint")
    result = subprocess.run(
        [sys.executable, "-m", "yamllint", "-f", "parsable", "-d", LINT, str(WORKFLOW)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = workflow()["jobs"]
    assert jobs["merge"]["needs"] == "shard" and jobs["merge"]["if"] == "always()"
    assert jobs["shard"]["strategy"]["fail-fast"] is False
    assert jobs["shard"]["env"]["GROUNDING_SHARD"] == "${{ matrix.shard }}/${{ strategy.job-total }}"


def steps_of(job):
    return {step.get("name"): step for step in workflow()["jobs"][job]["steps"]}


def resolve(text, shard, total):
    """The expressions GitHub fills in: the matrix value and the job total."""
    text = text.replace("${{ matrix.shard }}", str(shard)).replace("${{ strategy.job-total }}", str(total))
    assert "${{" not in text, text
    return text


@pytest.fixture
def work(tmp_path):
    from pytest_grounding.datasets.synth import default_dataset_dir

    folder = tmp_path / "repo"
    (folder / "suites").mkdir(parents=True)
    shutil.copy(REPO / "suites" / "test_grounding.py", folder / "suites")
    env = {
        **os.environ,
        "PYTEST_GROUNDING_CACHE": str(default_dataset_dir().parent),
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    for key in [k for k in env if k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT", "SLURM_", "GROUNDING_"))]:
        del env[key]
    return folder, env


def bash(command, cwd, env):
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_the_workflow_shards_and_its_merge_step_give_one_report(work):
    folder, env = work
    matrix = workflow()["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    shard_env_template = workflow()["jobs"]["shard"]["env"]["GROUNDING_SHARD"]
    run_shard = steps_of("shard")["Run this shard"]["run"]
    for k in matrix:
        command = resolve(run_shard.strip(), k, len(matrix))
        command = command.replace("--detector ocr", "--detector center").replace("-n 2 ", "")
        command += f" --grounding-limit {LIMIT}"
        shard_env = {**env, "GROUNDING_SHARD": resolve(shard_env_template, k, len(matrix))}
        result = bash(command, folder, shard_env)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]  # misses are xfail
        assert re.search(
            rf"grounding shard {k}/{len(matrix)}: \d+ of \d+ samples \(GROUNDING_SHARD={k}/{len(matrix)}\)",
            result.stdout,
        )
    merge_step = steps_of("merge")["Merge the shards and judge the gates"]["run"].strip()
    merged = bash(merge_step, folder, env)
    assert merged.returncode == 1, merged.stdout[-3000:] + merged.stderr  # the centre hits little: a gate fails
    report = read_json(folder / "grounding-out" / "report.json")
    assert report["partial"] is False and len(report["samples"]) == LIMIT
    assert [r["shard"] for r in report["merge"]["reports"]] == list(matrix)
    assert [g["slice"] for g in report["gates"]] == ["overall", "element_type=text"]
    assert (folder / "grounding-out" / "report.html").is_file()
    assert len((folder / "grounding-out" / "predictions.jsonl").read_text().splitlines()) == LIMIT
    summary = bash(steps_of("merge")["Job summary"]["run"], folder, env)
    assert summary.returncode == 0 and "## Grounding benchmark" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()

    (folder / "grounding-out" / "shard-3.json").unlink()  # a shard that never uploaded
    partial = bash(merge_step, folder, env)
    assert partial.returncode == 1 and "missing shards: 3;" in partial.stdout
    assert read_json(folder / "grounding-out" / "report.json")["merge"]["missing"] == [3]


@pytest.mark.slow
def test_the_slurm_script_submits_an_array_and_a_merge_after_it(work, tmp_path):
    """`bash ci/slurm-shards.sh` on the login node, with stand-in Slurm commands (tests/fake_slurm.py):
    an array of three tasks (--array=1-3), each task's `--grounding-shard env` reading Slurm's array
    variables, and the merge job after the whole array (afterany), with no GPU."""
    folder, env = work
    settings = {
        "GROUNDING_SHARDS": "3",
        "GROUNDING_DETECTOR": "center",
        "GROUNDING_DATASETS": f"--dataset {FIXTURES / 'mini'} --dataset {FIXTURES / 'screenspot'}",
        "GROUNDING_GATES": "--min-accuracy 0.0 --max-errors 1",
    }
    env = fake_slurm.install(tmp_path / "slurm", {**env, **settings})
    try:
        submitted = bash(f"bash {SLURM}", folder, env)
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    finally:
        fake_slurm.wait_all(tmp_path / "slurm", timeout=600)
    array, merge = fake_slurm.jobs(tmp_path / "slurm")
    assert array["directives"]["array"] == "1-3" and array["directives"]["gres"] == "gpu:1"
    assert array["args"] == ["shard"] and merge["args"] == ["merge"]
    assert merge["directives"]["dependency"] == f"afterany:{array['id']}" and merge["directives"]["gres"] == "none"
    assert set(array["states"].values()) <= {"COMPLETED", "FAILED"}  # pytest's 1: mini's broken rows are errors
    assert merge["states"] == {"job": "COMPLETED"}
    for task in (1, 2, 3):
        log = (folder / "grounding-out" / f"slurm-{array['id']}_{task}.out").read_text()
        said = rf"grounding shard {task}/3: \d+ of \d+ samples \(SLURM_ARRAY_TASK_ID={task}"
        assert re.search(said, log), log[-3000:]
    report = read_json(folder / "grounding-out" / "report.json")
    assert len(report["samples"]) == 8 + 5 and report["partial"] is False
    assert bash(f"bash {SLURM} nonsense", folder, env).returncode == 2
