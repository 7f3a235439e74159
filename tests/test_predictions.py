"""plugin/controller/predictions.py: the predictions file held by one run, one line per record, what went wrong
said at the end."""

import json

import pytest

from pytest_grounding.plugin.common.settings import SettingError
from pytest_grounding.plugin.controller.predictions import PredictionsStream


def test_records_are_written_as_they_come_after_the_kept_ones(tmp_path):
    path = tmp_path / "p.jsonl"
    stream = PredictionsStream(path)
    stream.hold(["--detector", "center"], 0.0)
    stream.open([{"uid": "kept"}])
    stream.write({"uid": "new"})
    assert stream.close() is None
    stream.let_go()
    assert [json.loads(line)["uid"] for line in path.read_text().splitlines()] == ["kept", "new"]


def test_a_file_held_by_another_run_is_a_usage_error_naming_it(tmp_path):
    path = tmp_path / "p.jsonl"
    first = PredictionsStream(path)
    first.hold(["--detector", "center"], 0.0)
    with pytest.raises(SettingError, match="--grounding-predictions"):
        PredictionsStream(path).hold(["--detector", "ocr"], 0.0)
    first.let_go()
    PredictionsStream(path).hold([], 0.0)  # free again


def test_without_a_path_nothing_is_written(tmp_path):
    stream = PredictionsStream(None)
    stream.hold([], 0.0)
    stream.write({"uid": "x"})
    assert stream.close() is None and list(tmp_path.iterdir()) == []
