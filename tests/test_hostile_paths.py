"""Hostile inputs (issue 60; docs/security.md): a path no file system takes (a name longer than it allows,
a component too long) is one clear message naming the option, the spec or the row, never a traceback.
pathlib's `exists()` and `is_file()` raise for such a path instead of answering False."""

import json
import shutil

import pytest

from helpers import FIXTURES, XDIST
from pytest_grounding.cli.main import main

LONG = "9" * 5000  # one component far past the 255 bytes a Linux file system takes
DEEP = "a/" * 3000 + "b"  # a whole path past the 4,096 bytes a Linux path may have
MINI = str(FIXTURES / "mini")


def said(result):
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-2000:]
    return text


@pytest.mark.parametrize("name", [LONG, DEEP], ids=["long-name", "long-path"])
@pytest.mark.parametrize(
    "option",
    [
        "--grounding-json",
        "--grounding-html",
        "--grounding-predictions",
        "--grounding-baseline",
        "--grounding-plots",
        "--grounding-cache",
        "--grounding-runs-dir",
    ],
)
def test_a_path_option_no_file_system_takes_is_a_usage_error_naming_it(project, option, name):
    result = project.runpytest("--dataset", MINI, "--detector", "center", f"{option}={name}")
    text = said(result)
    assert result.ret == 4, text[-2000:]
    assert option in text and "too long" in text


def test_an_empty_progress_mode_is_the_default_as_for_every_option(project):
    result = project.runpytest("--dataset", MINI, "--detector", "center", "--grounding-progress=")
    said(result)
    assert result.ret == 1  # the floor misses: the run ran
    result = project.runpytest("--dataset", MINI, "--detector", "center", "--grounding-progress=sometimes")
    assert result.ret == 4 and "--grounding-progress" in said(result)


@pytest.mark.parametrize(
    ("detector", "extra"),
    [
        (f"omniparser:model={LONG}", "omniparser"),
        (f"qwenvl:model={LONG}", "uitars"),
        (f"uitars:model={LONG}", "uitars"),
        (f"dataset:{LONG}", None),
    ],
    ids=["omniparser", "qwenvl", "uitars", "dataset"],
)
def test_a_model_or_dataset_path_no_file_system_takes_is_one_usage_error(project, detector, extra):
    from pytest_grounding.plugin.common.extras import missing_extra

    if extra is not None and missing_extra(extra) is not None:  # the core install: the extra's message comes first
        pytest.skip(f"the {extra} extra is not installed")
    if detector.startswith("dataset:"):
        args = ["--dataset", detector.split(":", 1)[1], "--detector", "center"]
    else:
        args = ["--dataset", MINI, "--detector", detector]
    result = project.runpytest(*args)
    text = said(result)
    assert result.ret == 4 and "too long" in text, text[-500:]


@XDIST
def test_a_row_whose_image_name_no_file_system_takes_is_that_samples_error(project, tmp_path, workers):
    data = tmp_path / "ds" / "data" / "test"
    data.mkdir(parents=True)
    shutil.copy(FIXTURES / "mini" / "data" / "test" / "s1.png", data / "s1.png")
    rows = [
        {"file_name": "s1.png", "id": "ok", "instruction": "Click red", "bbox": [10, 10, 30, 30]},
        {"file_name": LONG + ".png", "id": "long", "instruction": "Click red", "bbox": [10, 10, 30, 30]},
        {"file_name": DEEP + ".png", "id": "deep", "instruction": "Click red", "bbox": [10, 10, 30, 30]},
    ]
    (data / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = tmp_path / "r.json"
    result = project.runpytest(
        "--dataset", str(tmp_path / "ds"), "--detector", "center", f"--grounding-json={report}", *workers
    )
    said(result)
    outcomes = {record["id"]: record["outcome"] for record in json.loads(report.read_text())["samples"]}
    assert outcomes == {"ok": "miss", "long": "error", "deep": "error"}
    assert main(["validate", str(tmp_path / "ds")]) == 1


@pytest.mark.parametrize(
    "command",
    [["summary", LONG], ["board", LONG], ["generate", "--out", LONG], ["annotate", "--out", "x.json", LONG]],
    ids=["summary", "board", "generate", "annotate"],
)
def test_a_command_given_a_path_no_file_system_takes_says_so_in_one_line(command, capsys):
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "too long" in err and "Traceback" not in err and len(err) < 1000
