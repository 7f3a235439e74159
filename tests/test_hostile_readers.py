"""Issue 60, readers and parsers (a held-out replay with other inputs): errata bound to their dataset, one
entry per sample whatever its scope, boxes named by their line; every reader of a user file bounded; the board
naming a damaged sidecar; review's terminal output escaped and its errata file kept whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import FIXTURES, REPO
from hostile import no_crash, run_suite
from pytest_grounding.analysis import errata as errata_mod
from pytest_grounding.cli.main import main

MINI = FIXTURES / "mini"
PRO = FIXTURES / "screenspot-pro"


# -- errata: one entry per sample, whatever scope each line names ---------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # unbound, then bound to a dataset: both correct mini's sample s1
        '{"id": "s1", "action": "drop"}\n{"id": "s1", "action": "drop", "dataset": "mini"}\n',
        # bound by name, then by fingerprint: both correct the sample of mini at version f1
        '{"id": "s1", "action": "drop", "dataset": "mini"}\n'
        '{"id": "s1", "action": "fix", "bbox": [1, 1, 4, 4], "fingerprint": "f1"}\n',
        # bound by fingerprint, then by name and that fingerprint
        '{"id": "s1", "action": "drop", "fingerprint": "f1"}\n{"id": "s2", "action": "drop"}\n'
        '{"id": "s1", "action": "drop", "fingerprint": "f1", "dataset": "other"}\n',
    ],
)
def test_two_lines_that_may_correct_one_sample_are_refused(text):
    with pytest.raises(errata_mod.ErrataError, match=r"line [23]: a second entry .* \(first: line 1\)"):
        errata_mod.parse(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "s1", "action": "drop", "dataset": "one"}\n{"id": "s1", "action": "drop", "dataset": "two"}\n',
        '{"id": "s1", "action": "drop", "fingerprint": "f1"}\n{"id": "s1", "action": "drop", "fingerprint": "f2"}\n',
        '{"id": "s1", "action": "drop", "dataset": "one", "fingerprint": "f1"}\n'
        '{"id": "s1", "action": "drop", "dataset": "one", "fingerprint": "f2"}\n',
    ],
)
def test_one_id_in_two_datasets_or_versions_is_two_entries(text):
    errata = errata_mod.parse(text.encode())
    assert len(errata.entries) == 2


@pytest.mark.parametrize(("box", "line"), [([0, 0, 101, 10], 1), ([50, 50, 60, 400], 2), ([0, 0, 1e300, 1e300], 3)])
def test_a_box_off_the_image_is_named_by_its_line(box, line):
    text = "".join(
        json.dumps({"id": f"s{n}", "action": "fix", "bbox": box if n == line else [1, 1, 5, 5]}) + "\n"
        for n in range(1, 4)
    )
    errata = errata_mod.parse(text.encode(), "errata.jsonl")
    records = [{"id": f"s{n}", "dataset": "d", "image_size": [100, 100]} for n in range(1, 4)]
    off = errata_mod.off_image(errata, records)
    assert len(off) == 1 and f"line {line}" in off[0] and f"s{line}" in off[0], off


def test_a_fingerprint_bound_entry_corrects_no_record_of_an_unknown_version():
    errata = errata_mod.parse(b'{"id": "s1", "action": "drop", "fingerprint": "f1"}\n')
    assert errata.entry_for({"id": "s1", "dataset": "one", "fingerprint": "f1"}) is not None
    assert errata.entry_for({"id": "s1", "dataset": "two", "fingerprint": "f2"}) is None
    assert errata.entry_for({"id": "s1", "dataset": "two"}) is None  # a record that names no version


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "\n",
        '{"id": "m01", "action": "fix", "bbox": [1, 2, ' + "7" * 1_000 + ", 4]}\n",
        '{"id": "m01", "action": "fix", "bbox": [1, 2, 1e400, 4]}\n',
        '{"id": "m01", "action": "drop"}\n{"id": "m01", "action": "drop"}\n',
        '{"id": "m01", "action": "fix", "bbox": [0, 0, 161, 5]}\n',
    ],
)
def test_the_run_refuses_a_hostile_errata_file_in_one_line(tmp_path, content):
    errata = tmp_path / "errata.jsonl"
    errata.write_text(content)
    result = run_suite(tmp_path / "run", f"--dataset={MINI}", "--detector", "center", f"--grounding-errata={errata}")
    text = no_crash(result)
    assert result.returncode != 0 and "line " in text and " passed" not in text, text[-2000:]


@pytest.mark.parametrize("kind", ["fifo", "devzero", "folder"])
def test_the_run_refuses_an_errata_file_that_is_no_regular_file(tmp_path, kind):
    target = tmp_path / "errata.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "devzero":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()
    result = run_suite(
        tmp_path / "run", f"--dataset={MINI}", "--detector", "center", f"--grounding-errata={target}", timeout=60
    )
    text = no_crash(result)
    assert result.returncode != 0 and "not a regular file" in text, text[-2000:]


@pytest.mark.parametrize("box", [[0, 0, 5000, 10], [10, 10, 20, 3000]])
def test_the_run_refuses_a_box_off_an_image_the_set_gives_no_size_of(tmp_path, box):
    errata = tmp_path / "errata.jsonl"  # the screenspot set names no sizes: the image's header does
    errata.write_text('{"id": "desktop_0001", "action": "drop"}\n' + json.dumps(
        {"id": "desktop_0000", "action": "fix", "bbox": box}) + "\n")  # fmt: skip
    result = run_suite(
        tmp_path / "run", f"--dataset={FIXTURES / 'screenspot'}", "--detector", "center", f"--grounding-errata={errata}"
    )
    text = no_crash(result)
    assert result.returncode != 0 and "line 2: id 'desktop_0000'" in text and "off the" in text, text[-2000:]
