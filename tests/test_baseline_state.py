"""plugin/controller/baseline_state.py: BaselineCheck reads and checks a baseline before the run, writes one
on a first run (which then fails, saying so) and compares the next run with it."""

import pytest

from pytest_grounding.analysis.baseline import Tolerances
from pytest_grounding.core.record import Outcome
from pytest_grounding.plugin.common.settings import Selection, SettingError, Settings, VerdictSettings
from pytest_grounding.plugin.controller.baseline_state import BaselineCheck


def settings(path, update=False):
    return Settings(
        selection=Selection(("d",), "--dataset", ("center",), "--detector"),
        verdict=VerdictSettings(baseline_path=path, update_baseline=update, tolerances=Tolerances()),
    )


def records(*outcomes):
    return [
        {
            "task": "grounding",
            "detector": "center",
            "dataset": "d",
            "id": f"s{i}",
            "uid": f"s{i}",
            "fingerprint": "f",
            "outcome": outcome,
            "element_type": "icon",
            "app": "a",
            "app_category": "c",
            "platform": "p",
            "size": "<32",
            "latency_ms": 1.0,
        }
        for i, outcome in enumerate(outcomes)
    ]


def test_a_first_run_writes_the_baseline_and_fails_the_next_compares(tmp_path):
    path = tmp_path / "baseline.json"
    first = BaselineCheck(settings(path))
    first.load({"d": "f"})
    first.finish(records(Outcome.HIT, Outcome.MISS), interrupted=False)
    assert first.status == "written" and first.failed and path.exists()
    second = BaselineCheck(settings(path))
    second.load({"d": "f"})
    assert second.loaded and second.expectations()
    second.finish(records(Outcome.MISS, Outcome.MISS), interrupted=False)
    assert second.status == "compared" and second.failed and "1 regressions" in (second.problem or "")
    assert second.document()["status"] == "compared"


def test_an_interrupted_run_writes_no_baseline_and_another_dataset_version_is_refused(tmp_path):
    path = tmp_path / "baseline.json"
    check = BaselineCheck(settings(path))
    check.finish(records(Outcome.HIT), interrupted=True)
    assert check.status == "not written" and not path.exists()
    written = BaselineCheck(settings(path))
    written.finish(records(Outcome.HIT), interrupted=False)
    with pytest.raises(SettingError, match="--grounding-baseline"):
        BaselineCheck(settings(path)).load({"d": "another fingerprint"})
