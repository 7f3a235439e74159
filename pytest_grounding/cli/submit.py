"""`python -m pytest_grounding submit --shards N [--local | --slurm-partition P ...] --out DIR -- PYTEST
ARGS`: a run too big for one machine as one job array through submitit (the `submit` extra,
imported only here): each task runs pytest with its shard (`--grounding-shard K/N`) and its own
report (`DIR/shard-K.json`, its output in `DIR/shard-K.log`); then the reports are merged into
`DIR/merged.json` and `DIR/merged.html` (`merge`, unchanged). On Slurm the merge is one more job
that waits for the array (`--dependency=afterany`: a failed task still gets a partial report naming
it); `--local` runs the same tasks as local subprocesses (submitit's LocalExecutor) and merges when
they end. A shard whose report is already in DIR is not run again: resubmitting runs the missing
ones. A `vllm:` or `llamacpp:` detector starts its own server in each task (each is a whole run)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..core import safejson
from ..core.record import MAX_SHARDS
from ..core.safetext import terminal_line

DESCRIPTION = (
    "Run pytest as N shards of one run through submitit (a Slurm job array, or local subprocesses with "
    "--local), each with its own report in --out, then merge them into OUT/merged.json and OUT/merged.html. "
    "A shard whose report is already there is not run again. Exit: the merge's (0 merged and every gate "
    "passed; 1 a gate failed or a shard is missing: partial; 2 nothing to merge); with Slurm, 0 once submitted."
)


def add_command(commands: Any) -> None:
    submit = commands.add_parser(
        "submit",
        help="run the shards of a run as a Slurm job array (or locally) and merge them",
        description=DESCRIPTION,
    )
    submit.add_argument("--shards", type=int, required=True, metavar="N", help="how many shards (tasks)")
    submit.add_argument("--out", type=Path, required=True, metavar="DIR", help="the shards' reports, logs, the merge")
    where = submit.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", action="store_true", help="run the tasks here, as subprocesses")
    where.add_argument("--slurm-partition", metavar="P", help="the Slurm partition to submit to")
    submit.add_argument("--gpus-per-task", type=int, default=0, metavar="G", help="GPUs per task (Slurm)")
    submit.add_argument("--cpus-per-task", type=int, default=None, metavar="C", help="CPUs per task (Slurm)")
    submit.add_argument("--mem-gb", type=float, default=None, metavar="GB", help="memory per task (Slurm)")
    submit.add_argument("--timeout-min", type=int, default=240, metavar="M", help="each task's time limit (240)")
    submit.add_argument("--parallel", type=int, default=None, metavar="K", help="at most K tasks at once")
    submit.add_argument(
        "--wait", action="store_true", help="with Slurm: wait for the array and the merge, exit with the merge's status"
    )
    submit.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST ARGS", help="the run's pytest arguments"
    )


def shard_report(out: Path, index: int) -> Path:
    return out / f"shard-{index}.json"


def run_shard(index: int, count: int, out: str, pytest_args: list[str]) -> int:
    """One task: pytest with its shard and its own report (what submitit runs; module-level: pickled)."""
    folder = Path(out)
    command = [
        sys.executable, "-m", "pytest", *pytest_args,
        "--grounding-shard", f"{index}/{count}", "--grounding-json", str(shard_report(folder, index)),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_ARRAY")}  # K/N given: not read again
    with (folder / f"shard-{index}.log").open("w", encoding="utf-8") as log:
        log.write(" ".join(command) + "\n")
        log.flush()
        return subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False).returncode


def run_merge(out: str, count: int) -> int:
    """The merge of the reports in `out` (a missing shard: partial, named by `merge`)."""
    folder = Path(out)
    reports = [str(shard_report(folder, k)) for k in range(1, count + 1) if shard_report(folder, k).is_file()]
    if not reports:
        (folder / "merge.log").write_text("no shard wrote a report: nothing to merge\n", encoding="utf-8")
        return 2
    command = [
        sys.executable, "-m", "pytest_grounding", "merge", *reports,
        "--json", str(folder / "merged.json"), "--html", str(folder / "merged.html"),
    ]  # fmt: skip
    with (folder / "merge.log").open("w", encoding="utf-8") as log:
        return subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False).returncode


def done(out: Path, index: int, count: int) -> bool:
    """A shard whose report is in `out` (readable, of this shard of N) is not run again."""
    path = shard_report(out, index)
    try:
        shard = safejson.read_path(path).get("shard") or {}  # a regular file, bounded
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(shard, dict) and shard.get("index") == index and shard.get("count") == count


def run(args: argparse.Namespace) -> int:
    pytest_args = list(args.pytest_args)
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    if not 1 <= args.shards <= MAX_SHARDS:
        print(f"error: --shards {args.shards}: between 1 and {MAX_SHARDS:,}", file=sys.stderr)
        return 2
    if any(arg.startswith(("--grounding-shard", "--grounding-json")) for arg in pytest_args):
        print("error: submit gives each task its --grounding-shard and --grounding-json itself", file=sys.stderr)
        return 2
    try:
        import submitit
    except ImportError:
        print('error: submit needs submitit: pip install "pytest-grounding[submit]"', file=sys.stderr)
        return 2
    if not args.local:
        import shutil

        missing = [command for command in ("sbatch", "srun") if shutil.which(command) is None]
        if missing:  # submitit's own error is a traceback from deep inside it
            print(
                f"error: --slurm-partition submits with Slurm's {' and '.join(missing)}, which this machine does not "
                "have on PATH: run submit on a login node of the cluster, or --local to run the shards here",
                file=sys.stderr,
            )
            return 2
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    count = args.shards
    todo = [k for k in range(1, count + 1) if not done(out, k, count)]
    for k in sorted(set(range(1, count + 1)) - set(todo)):
        print(f"shard {k}/{count}: done already ({shard_report(out, k)}): not run again")
    executor = _executor(submitit, args, out, name="grounding-shard")
    if not args.local:
        gpus = {"gpus_per_node": args.gpus_per_task} if args.gpus_per_task else {}
        parallel = {"slurm_array_parallelism": args.parallel} if args.parallel else {}
        executor.update_parameters(**gpus, **parallel)
    jobs = []
    if todo:
        jobs = executor.map_array(
            run_shard, todo, [count] * len(todo), [str(out)] * len(todo), [pytest_args] * len(todo)
        )
        how = "local subprocesses" if args.local else "a Slurm array" if len(todo) > 1 else "a Slurm job"
        print(f"submitted {len(todo)} of {count} shards ({how}): reports and logs in {out}")
    if not args.local:
        merge = _executor(submitit, args, out, name="grounding-merge")  # the array's resources less its GPUs
        return _slurm_merge(merge, list(zip(todo, jobs, strict=True)), out, count, args.wait)
    for k, job in zip(todo, jobs, strict=True):
        _say(k, count, out, _result(job))
    code = run_merge(str(out), count)
    _say_merge(out, code)
    return code


def _executor(submitit: Any, args: argparse.Namespace, out: Path, name: str) -> Any:
    """An executor with the run's time limit and, on Slurm, its partition, CPUs and memory (one node,
    one task: each task is a whole pytest run)."""
    executor = submitit.AutoExecutor(folder=out / "submitit", cluster="local" if args.local else "slurm")
    parameters: dict[str, Any] = {"timeout_min": args.timeout_min, "name": name}
    if not args.local:
        parameters.update(slurm_partition=args.slurm_partition, tasks_per_node=1, nodes=1)
        if args.cpus_per_task:
            parameters["cpus_per_task"] = args.cpus_per_task
        if args.mem_gb:
            parameters["mem_gb"] = args.mem_gb
    executor.update_parameters(**parameters)
    return executor


def _slurm_merge(executor: Any, jobs: list[tuple[int, Any]], out: Path, count: int, wait: bool) -> int:
    """One job after the array (afterany): the merge; with --wait, its status."""
    if jobs:
        array = str(jobs[0][1].job_id).split("_")[0]
        executor.update_parameters(slurm_additional_parameters={"dependency": f"afterany:{array}"})
    merge = executor.submit(run_merge, str(out), count)
    print(f"merge: job {merge.job_id} after the array (afterany): {out / 'merged.json'} and merged.html")
    if not wait:
        return 0
    for k, job in jobs:
        _say(k, count, out, _result(job))
    code = int(_result(merge) or 0)
    _say_merge(out, code)
    return code


def _result(job: Any) -> int | None:
    try:
        return int(job.result())
    except Exception:  # the task itself failed (killed, out of time): its log says why
        return None


def _say(index: int, count: int, out: Path, code: int | None) -> None:
    report = shard_report(out, index)
    if report.is_file():
        print(f"shard {index}/{count}: report {report} (pytest exit {code})")
    else:
        print(f"shard {index}/{count}: FAILED, no report (exit {code}; log {out / f'shard-{index}.log'})")


def _say_merge(out: Path, code: int) -> None:
    merged = out / "merged.json"
    if not merged.is_file():
        print(f"merge: no merged report (exit {code}; {out / 'merge.log'})")
        return
    try:
        partial = bool(safejson.read_path(merged).get("partial"))  # a regular file, bounded
    except (OSError, ValueError, AttributeError) as exc:
        print(terminal_line(f"merge: {merged} cannot be read ({exc}; exit {code}; {out / 'merge.log'})"))
        return
    state = "PARTIAL: a shard is missing (submit again to run only the missing ones)" if partial else "complete"
    print(f"merge: {merged} and {out / 'merged.html'}, {state} (exit {code}; {out / 'merge.log'})")
