"""`python -m pytest_grounding generate|validate`."""

import subprocess
import sys

import pytest

from helpers import read_jsonl
from pytest_grounding.cli.main import main


def test_generate_then_validate(tmp_path, capsys):
    assert main(["generate", "--out", str(tmp_path / "set"), "--count", "9", "--seed", "4", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wrote 9 samples on ") and "(seed 4)" in out
    assert len(read_jsonl(tmp_path / "set" / "data" / "test" / "metadata.jsonl")) == 9
    assert main(["validate", str(tmp_path / "set")]) == 0
    assert "9 samples on" in capsys.readouterr().out


def test_generate_refuses_a_count_below_one(tmp_path, capsys):
    assert main(["generate", "--out", str(tmp_path), "--count", "0"]) == 2
    assert "--count must be between 1 and" in capsys.readouterr().err


def test_a_command_is_required(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_module_entry_point_returns_the_validator_status(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pytest_grounding", "validate", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout.startswith("error: ")


PIPED = [
    ["board", "DIR"],
    ["board", "--markdown", "DIR"],
    ["compare", "R", "R"],
    ["compare", "--markdown", "R", "R"],
    ["rescore", "R", "--json", "OUT"],
    ["summary", "R"],
    ["presets"],
]


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.parametrize("command", PIPED, ids=[" ".join(c[:2]) for c in PIPED])
def test_output_piped_into_a_reader_that_stops_early_ends_quietly(project, tmp_path, command):
    """`... | head`: the reader is gone before the command writes; no BrokenPipeError traceback."""
    import os

    from helpers import FIXTURES, REPO

    report = tmp_path / "runs" / "run.json"
    project.runpytest("--dataset", str(FIXTURES / "mini"), "--detector", "center", "--grounding-json", str(report))
    assert report.is_file()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    names = {"DIR": str(report.parent), "R": str(report), "OUT": str(tmp_path / "rescored.json")}
    args = [names.get(arg, arg) for arg in command]
    reader = subprocess.Popen(
        [sys.executable, "-m", "pytest_grounding", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    reader.stdout.close()  # as `head` does once it has its lines
    try:
        err = reader.stderr.read().decode()
        code = reader.wait(timeout=60)
    finally:
        reader.kill()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code == 1, (code, err)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--count", "9" * 400], "--count must be between 1 and 1,000,000"),
        (["--count", "0"], "--count must be between 1 and 1,000,000"),
        (["--workers", "9" * 400], "--workers must be between 1 and 1,024"),
        (["--workers", "0"], "--workers must be between 1 and 1,024"),
    ],
)
def test_generate_refuses_a_count_or_workers_no_machine_can_take(tmp_path, capsys, args, said):
    """A count of 400 digits ran until killed; as many workers was an OverflowError traceback."""
    assert main(["generate", "--out", str(tmp_path / "g"), *args]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "g").exists()
