"""Samples lost or counted twice (issue 29): every item the run was to score ends in the report once,
scored, an error, or listed as not run, under every `--dist` mode, when xdist runs out of worker
restarts, and when a run stops early (-x, Ctrl-C). Items deselected (-k, --grounding-limit) are not
"not run": the run was never to score them."""

import json
from pathlib import Path

import pytest
from PIL import Image

from helpers import SERIAL, XDIST, make_project, read_json, read_jsonl

# A detector that finds the red square and reads the sample's id from the end of its instruction
# (never the target): it kills its process on the id in $GROUNDING_KILL, answers off target on
# $GROUNDING_MISS (a failed item, for -x) and raises KeyboardInterrupt on $GROUNDING_STOP.
CONFTEST = """
import os
import numpy as np
from pytest_grounding import Box, Prediction


class Killer:
    name = "killer"

    def predict(self, query):
        sample_id = query.instruction.rsplit(" ", 1)[-1]
        if sample_id == os.environ.get("GROUNDING_KILL"):
            os._exit(1)
        if sample_id == os.environ.get("GROUNDING_STOP"):
            raise KeyboardInterrupt
        if sample_id == os.environ.get("GROUNDING_MISS"):
            return Prediction(point=(1, 1))
        pixels = np.asarray(query.image).astype(int)
        ys, xs = np.nonzero(np.all(np.abs(pixels - (220, 30, 30)) < 12, axis=-1))
        return Prediction(box=Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1))


def pytest_grounding_register_detectors(registry):
    registry.register("killer", Killer)
"""

SCREENS, PER_SCREEN = 4, 4
IDS = [f"p{screen}{k}" for screen in range(SCREENS) for k in range(PER_SCREEN)]


def make_dataset(root: Path) -> Path:
    """SCREENS screens with PER_SCREEN instructions each (under loadgroup: a group per screen)."""
    folder = root / "lost" / "data" / "test"
    folder.mkdir(parents=True)
    rows = []
    for screen in range(SCREENS):
        x = 10 + 15 * screen
        image = Image.new("RGB", (96, 64), (235, 235, 235))
        image.paste((220, 30, 30), (x, 20, x + 12, 32))
        image.save(folder / f"screen{screen}.png")
        for k in range(PER_SCREEN):
            rows.append(
                {
                    "id": f"p{screen}{k}",
                    "file_name": f"screen{screen}.png",
                    "instruction": f"Click the red square p{screen}{k}",
                    "bbox": [x, 20, x + 12, 32],
                    "element_type": "icon",
                    "app": "Demo",
                    "image_size": [96, 64],
                }
            )
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "lost"


@pytest.fixture
def lost(pytester, tmp_path, monkeypatch):
    for name in ("GROUNDING_KILL", "GROUNDING_MISS", "GROUNDING_STOP"):
        monkeypatch.delenv(name, raising=False)
    make_project(pytester, conftest=CONFTEST)
    dataset = make_dataset(tmp_path)

    def run(*args, kill=None, miss=None, stop=None):
        for name, value in (("GROUNDING_KILL", kill), ("GROUNDING_MISS", miss), ("GROUNDING_STOP", stop)):
            if value is not None:
                monkeypatch.setenv(name, value)
        report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
        for path in (report, predictions):
            path.unlink(missing_ok=True)
        result = pytester.runpytest(
            f"--dataset={dataset}",
            "--detector",
            "killer",
            "--grounding-json",
            str(report),
            "--grounding-predictions",
            str(predictions),
            *args,
            no_reraise_ctrlc=True,  # a KeyboardInterrupt of the run under test ends that run, not this one
        )
        return result, read_json(report), read_jsonl(predictions)

    return run


def accounted(result, document, lines, expected=IDS):
    """Each sample the run was to score once: in the records (the report's and the predictions
    file's alike) or in `not_run`; the summary counts what it holds; `partial` and the terminal
    say so when samples were not run. Returns (records by id, ids not run)."""
    output = result.stdout.str()
    assert "INTERNALERROR" not in output
    records = {r["id"]: r for r in document["samples"]}
    assert len(records) == len(document["samples"]), sorted(r["id"] for r in document["samples"])
    assert sorted(line["id"] for line in lines) == sorted(records), "the predictions file says what the report says"
    not_run = [entry["id"] for entry in document["not_run"]]
    assert len(not_run) == len(set(not_run)) and not set(not_run) & set(records)
    assert sorted([*records, *not_run]) == sorted(expected), (sorted(records), not_run)
    assert all(entry["detector"] == "killer" and entry["dataset"] == "lost" for entry in document["not_run"])
    assert document["summary"]["killer"]["samples"] == len(records)
    if not_run:
        assert document["partial"] is True
        result.stdout.fnmatch_lines([f"*not run: {len(not_run)} of {len(expected)} samples*{not_run[0]}*"])
    else:
        assert "not run:" not in output
    return records, not_run


@pytest.mark.slow
@pytest.mark.parametrize("restarts", ["0", "1"])
def test_restarts_spent_the_samples_never_run_are_listed(lost, restarts):
    result, document, lines = lost("-n", "2", "--max-worker-restart", restarts, kill="p00")
    records, not_run = accounted(result, document, lines)
    assert records["p00"]["outcome"] == "error" and "crashed while running" in records["p00"]["error"]
    if restarts == "0":  # the other worker stops with its queue: samples are left, healthy ones among them
        assert not_run and document["partial"] is True
        result.stdout.fnmatch_lines(["*verdict: run interrupted, no verdict*"])
    else:  # one replacement: the crashed worker's queue runs there, nothing is lost
        assert not_run == [] and document["partial"] is False


@pytest.mark.slow
@pytest.mark.parametrize("restarts", [[], ["--max-worker-restart", "1"]], ids=["default", "one"])
def test_loadgroup_records_a_crashing_sample_once(lost, restarts):
    result, document, lines = lost("-n", "2", "--dist", "loadgroup", *restarts, kill="p10")
    records, _ = accounted(result, document, lines)
    assert records["p10"]["outcome"] == "error"
    assert sum(1 for line in lines if line["id"] == "p10") == 1
    assert all(r["outcome"] == "hit" for key, r in records.items() if key != "p10")


@pytest.mark.slow
@pytest.mark.parametrize("dist", ["load", "loadgroup", "loadscope", "worksteal", "each"])
def test_counts_stay_true_under_every_dist_mode(lost, dist):
    clean = lost("-n", "2", "--dist", dist)
    records, not_run = accounted(*clean)
    assert not_run == [] and clean[1]["partial"] is False
    assert {r["outcome"] for r in records.values()} == {"hit"}
    result, document, lines = lost("-n", "2", "--dist", dist, "--max-worker-restart", "2", kill="p21")
    records, _ = accounted(result, document, lines)
    assert records["p21"]["outcome"] == "error"


@XDIST
def test_a_run_stopped_by_x_says_how_many_were_not_run(lost, workers):
    result, document, lines = lost("-x", *workers, miss="p01")
    records, not_run = accounted(result, document, lines)
    assert records["p01"]["outcome"] == "miss" and not_run
    assert document["partial"] is True


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_an_interrupted_run_says_how_many_were_not_run(lost):
    result, document, lines = lost(stop="p12")
    records, not_run = accounted(result, document, lines)
    assert "p12" not in records and "p12" in not_run
    assert not_run == IDS[IDS.index("p12") :]  # collection order: where it stopped, and all after


@SERIAL
def test_deselected_samples_are_not_listed_as_not_run(lost, workers):
    result, document, lines = lost("-k", "p0 or p1", "--grounding-limit", "6", *workers)
    _, not_run = accounted(result, document, lines, expected=["p00", "p01", "p02", "p03", "p10", "p11"])
    assert not_run == [] and document["partial"] is False


@pytest.mark.slow
def test_deselected_samples_are_not_listed_when_restarts_run_out(lost):
    result, document, lines = lost("-n", "2", "--max-worker-restart", "0", "-k", "p2 or p3", kill="p20")
    records, _ = accounted(result, document, lines, expected=IDS[8:])
    assert records["p20"]["outcome"] == "error"
