"""Shared constants and readers for the tests."""

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SHARED_DATA = REPO.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"{SHARED_DATA} is not here (a user's machine)")

XDIST = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])


def read_json(path):
    return json.loads(Path(path).read_text())


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def assert_counts(result, **expected):
    """Like pytester's assert_outcomes, knowing the plugin's `missed` (a miss: a failed item that
    the terminal counts under its own word)."""
    got = result.parseoutcomes()
    keys = {"passed", "failed", "missed", "errors", "xfailed", "skipped", "deselected"} | set(expected)
    assert {k: got.get(k, 0) for k in keys} == {k: expected.get(k, 0) for k in keys}, result.stdout.str()[-3000:]
