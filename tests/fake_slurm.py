"""A stand-in for Slurm on this one machine (issue 57's submit tests): `sbatch`, `srun` and `sacct`,
the commands submitit's SlurmExecutor and ci/slurm-shards.sh call, as programs on PATH
(`install(folder)` writes them and returns the environment to run with).

- `sbatch [--key=value ...] SCRIPT [ARGS]` reads the script's `#SBATCH` directives as Slurm does at
  submission (the command line's options over them), keeps a copy of the script, answers
  `Submitted batch job N` (`N` with --parsable) and runs the job in the background: after the jobs
  its `--dependency=afterany:ID` names have ended, each task of its `--array=A-B%P` (at most P at
  once) as `bash SCRIPT ARGS` in the submission's folder, with the environment Slurm gives a task
  (SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID and the array's count, min, max and step,
  the partition, one node), its output in `--output` (and `--error`).
- `srun --output F [--error F] CMD` runs CMD with its output in F (Slurm's %j, %A, %a, %t filled in).
- `sacct -o FIELDS --parsable2 -j ID` prints each task's JobID (N_i for an array's task), State
  (PENDING, RUNNING, COMPLETED, FAILED) and NodeList.

Nothing else of Slurm is here: no resources are counted, no time limit is kept, and
`--gpus-per-node`, `--gres`, `--cpus-per-task` and `--mem` are only recorded."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")


def install(folder: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The commands in folder/bin, the state in folder/state: `env` (else this process's) to run with."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    (folder / "state").mkdir(exist_ok=True)
    for command in ("sbatch", "srun", "sacct"):
        path = bin_dir / command
        path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(__file__)} {command} "$@"\n')
        path.chmod(0o755)
    env = dict(os.environ if env is None else env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["FAKE_SLURM_DIR"] = str(folder / "state")
    return env


def jobs(folder: Path) -> list[dict]:
    """The submitted jobs in order: {"id", "directives", "script", "states"}."""
    found = []
    for job in sorted((folder / "state").glob("job-*"), key=lambda p: int(p.name[4:])):
        meta = json.loads((job / "job.json").read_text())
        states = {p.name[6:]: p.read_text() for p in sorted(job.glob("state-*"))}
        found.append({**meta, "script": (job / "script.sh").read_text(), "states": states})
    return found


def wait_all(folder: Path, timeout: float = 120) -> None:
    """Until every task of every job has ended (the runners write their last state after the job's
    own result is there)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(state in FINAL for job in jobs(folder) for state in job["states"].values()):
            return
        time.sleep(0.2)
    raise TimeoutError(f"stand-in Slurm jobs still running after {timeout} s: {jobs(folder)}")


# -- the commands ---------------------------------------------------------------------------------


def _state_dir() -> Path:
    return Path(os.environ["FAKE_SLURM_DIR"])


def directives(script: str) -> dict[str, str]:
    """`#SBATCH --key=value` (or `--flag`) lines, before the first command, as Slurm reads them."""
    found = {}
    for line in script.splitlines():
        if line.startswith("#SBATCH"):
            key, _, value = line[len("#SBATCH") :].strip().removeprefix("--").partition("=")
            found[key] = shlex.split(value)[0] if value else ""
        elif line.strip() and not line.startswith("#"):
            break
    return found


def sbatch(args: list[str]) -> int:
    """`sbatch [--key=value | --flag ...] SCRIPT [ARGS]`: the command line's options over the script's."""
    at = next(i for i, arg in enumerate(args) if not arg.startswith("-"))
    script = Path(args[at]).read_text()
    found = directives(script)
    for option in args[:at]:
        key, sign, value = option.removeprefix("--").partition("=")
        assert option.startswith("--") and (sign or key == "parsable"), f"the stand-in reads --key=value only: {option}"
        found[key] = value
    tasks: list[int | None] = [None]
    if "array" in found:
        first, last = found["array"].split("%")[0].split("-")
        tasks = list(range(int(first), int(last) + 1))
    state = _state_dir()
    with (state / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = state / "next-id"
        job = int(counter.read_text()) if counter.exists() else 1000
        counter.write_text(str(job + len(tasks)))  # an array's tasks get ids of their own, as in Slurm
    folder = state / f"job-{job}"
    folder.mkdir()
    (folder / "script.sh").write_text(script)
    meta = {"id": str(job), "directives": found, "tasks": tasks, "cwd": os.getcwd(), "args": args[at + 1 :]}
    (folder / "job.json").write_text(json.dumps(meta))
    for task in tasks:
        _set_state(folder, task, "PENDING")
    with (folder / "runner.log").open("w") as log:
        subprocess.Popen(
            [sys.executable, __file__, "run", str(job)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    print(job if "parsable" in found else f"Submitted batch job {job}")
    return 0


def run(args: list[str]) -> int:
    """The job's runner (started by sbatch, in the background)."""
    folder = _state_dir() / f"job-{args[0]}"
    meta = json.loads((folder / "job.json").read_text())
    found = meta["directives"]
    for spec in filter(None, found.get("dependency", "").split(",")):
        kind, *ids = spec.split(":")
        assert kind == "afterany", f"the stand-in knows afterany only, not {spec}"
        for other in ids:
            _wait_ended(_state_dir() / f"job-{other.split('_')[0]}")
    tasks = meta["tasks"]
    parallel = int(found["array"].split("%")[1]) if "%" in found.get("array", "") else len(tasks)
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        list(pool.map(lambda task: _run_task(folder, meta, task), tasks))
    return 0


def _run_task(folder: Path, meta: dict, task: int | None) -> None:
    found, job = meta["directives"], int(meta["id"])
    env = dict(os.environ)  # sbatch's --export=ALL: the submitting environment
    env.update(
        SLURM_JOB_ID=str(job if task is None else job + task - meta["tasks"][0]),
        SLURM_JOB_NAME=found.get("job-name", "sbatch"),
        SLURM_JOB_PARTITION=found.get("partition", "debug"),
        SLURM_SUBMIT_DIR=meta["cwd"],
        SLURM_JOB_NUM_NODES=found.get("nodes", "1"),
        SLURM_JOB_NODELIST="localhost",
        SLURM_NTASKS=found.get("ntasks-per-node", "1"),
        SLURM_NODEID="0",
        SLURM_PROCID="0",
        SLURM_LOCALID="0",
    )
    if task is not None:
        tasks = meta["tasks"]
        env.update(
            SLURM_ARRAY_JOB_ID=str(job),
            SLURM_ARRAY_TASK_ID=str(task),
            SLURM_ARRAY_TASK_COUNT=str(len(tasks)),
            SLURM_ARRAY_TASK_MIN=str(tasks[0]),
            SLURM_ARRAY_TASK_MAX=str(tasks[-1]),
            SLURM_ARRAY_TASK_STEP="1",
        )
    if "gpus-per-node" in found:
        env["SLURM_GPUS_ON_NODE"] = found["gpus-per-node"]
    cwd = Path(meta["cwd"])
    output = cwd / _fill(found.get("output", f"slurm-{job}.out"), env)
    error = cwd / _fill(found["error"], env) if "error" in found else os.devnull
    _set_state(folder, task, "RUNNING")
    with open(output, "a") as out, open(error, "a") as err:
        script = ["bash", str(folder / "script.sh"), *meta["args"]]
        code = subprocess.run(script, cwd=cwd, env=env, stdout=out, stderr=err if "error" in found else out)
    _set_state(folder, task, "COMPLETED" if code.returncode == 0 else "FAILED")


def srun(args: list[str]) -> int:
    output = error = None
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("--output", "-o"):
            output = _fill(args.pop(0), os.environ)
        elif flag in ("--error", "-e"):
            error = _fill(args.pop(0), os.environ)
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(output, "a")) if output else None
        err = stack.enter_context(open(error, "a")) if error else out
        env = {**os.environ, "SLURM_STEP_ID": "0"}
        return subprocess.run(args, stdout=out, stderr=err, env=env).returncode


def sacct(args: list[str]) -> int:
    fields = ["JobID", "State"]
    ids = []
    while args:
        flag = args.pop(0)
        if flag in ("-o", "--format"):
            fields = args.pop(0).split(",")
        elif flag in ("-j", "--jobs"):
            ids += args.pop(0).split(",")
    print("|".join(fields))
    for job in ids:
        folder = _state_dir() / f"job-{job.split('_')[0]}"
        if not folder.is_dir():
            continue
        for name in sorted(p.name for p in folder.glob("state-*")):
            task = name[6:]
            row = {
                "JobID": folder.name[4:] + ("" if task == "job" else f"_{task}"),
                "State": (folder / name).read_text(),
                "NodeList": "localhost",
            }
            print("|".join(row.get(field, "") for field in fields))
    return 0


def _fill(pattern: str, env) -> str:
    """Slurm's filename patterns: %A the array's job, %a the task, %j the job, %t the task rank."""
    values = {
        "A": env.get("SLURM_ARRAY_JOB_ID", env.get("SLURM_JOB_ID", "")),
        "a": env.get("SLURM_ARRAY_TASK_ID", ""),
        "j": env.get("SLURM_JOB_ID", ""),
        "t": env.get("SLURM_PROCID", "0"),
    }
    return re.sub(r"%([Aajt])", lambda m: values[m.group(1)], pattern)


def _set_state(folder: Path, task: int | None, state: str) -> None:
    path = folder / f"state-{'job' if task is None else task}"
    tmp = folder / f".{path.name}.tmp"
    tmp.write_text(state)
    tmp.replace(path)


def _wait_ended(folder: Path) -> None:
    while not all(p.read_text() in FINAL for p in folder.glob("state-*")):
        time.sleep(0.2)


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    sys.exit({"sbatch": sbatch, "srun": srun, "sacct": sacct, "run": run}[command](rest))
