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
    assert "--count must be at least 1" in capsys.readouterr().err


def test_a_command_is_required(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_module_entry_point_returns_the_validator_status(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pytest_grounding", "validate", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout.startswith("error: ")
