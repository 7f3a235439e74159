"""plugin/controller/resume_state.py: a resumed predictions file read back: this run's lines kept (re-scored,
never trusted), errors run again, another detector's file refused."""

import json

import pytest

from helpers import FIXTURES, make_project
from pytest_grounding.plugin.common.settings import SettingError
from pytest_grounding.plugin.controller.resume_state import load_resumed
from pytest_grounding.plugin.sessions import plan_of, startup_of

MINI = str(FIXTURES / "mini")


@pytest.mark.slow
def test_what_a_file_holds_for_this_run_is_kept_re_scored_and_another_detector_s_refused(pytester, tmp_path):
    make_project(pytester)
    predictions = tmp_path / "p.jsonl"
    pytester.runpytest(f"--dataset={MINI}", "--detector=center", f"--grounding-predictions={predictions}", "-k", "m0")
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    missed = next(i for i, line in enumerate(lines) if line["outcome"] == "miss")
    lines[missed]["outcome"] = "hit"  # a stored outcome is never trusted: the answer is scored again
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = (f"--dataset={MINI}", "--detector=center", f"--grounding-predictions={predictions}", "--grounding-resume")
    config = pytester.parseconfigure(*args)
    plan, startup = plan_of(config), startup_of(config)
    startup.check_run_settings(lambda line: None)
    resumed = load_resumed(plan, startup.notes.add)
    kept = {r["uid"]: r for r in resumed.records}
    assert set(kept) == {line["uid"] for line in lines if line["outcome"] != "error"}
    assert kept[lines[missed]["uid"]]["outcome"] == "miss"
    assert ("grounding", "center", lines[missed]["dataset"], lines[missed]["uid"]) in resumed.done_keys
    config = pytester.parseconfigure(*args[:1], "--detector=random", *args[2:])
    startup_of(config).check_run_settings(lambda line: None)
    with pytest.raises(SettingError, match="is from detector 'center'"):
        load_resumed(plan_of(config), startup_of(config).notes.add)
