"""Scale: screen groups under xdist (one screen's samples on one worker), ids and totals that do
not depend on how the run is distributed, and the memory-sharing of loaded datasets."""

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from helpers import make_project, read_json
from pytest_grounding.core.types import Box, Sample
from pytest_grounding.datasets import assign_uids, load_dataset, screen_groups

pytestmark = pytest.mark.slow  # the fast tier leaves this file out


# A detector that says which process answered (the records carry it back) and clicks the centre.
CONFTEST = """
import os
from pytest_grounding.core.types import Prediction


class WhereAmI:
    name = "whereami"

    def predict(self, query):
        width, height = query.image.size
        return Prediction(point=(width / 2, height / 2), meta={"worker": os.environ.get("PYTEST_XDIST_WORKER", "-")})


def pytest_grounding_register_detectors(registry):
    registry.register("whereami", WhereAmI)
"""

SCREENS, PER_SCREEN = 6, 4
APPS = ["Excel", "VS Code", "Word"]


def make_dataset(root: Path) -> Path:
    """SCREENS screens with PER_SCREEN instructions each; consecutive ids on different screens,
    so a by-item distribution would spread every screen over both workers."""
    folder = root / "multi" / "data" / "test"
    folder.mkdir(parents=True)
    rows = []
    for screen in range(SCREENS):
        Image.new("RGB", (80, 60), (40 * screen, 90, 200)).save(folder / f"screen_{screen}.png")
    for index in range(SCREENS * PER_SCREEN):
        hit = index % 3 == 0  # the centre (40, 30) inside the box: a hit for the centre click
        box = [30, 20, 50, 40] if hit else [0, 0, 10, 10]
        rows.append(
            {
                "file_name": f"screen_{index % SCREENS}.png",
                "id": f"q{index:03d}",
                "bbox": box,
                "instruction": f"click thing {index}",
                "element_type": ("icon", "text")[index % 2],
                "app": APPS[index % 3],
                "image_size": [80, 60],
            }
        )
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder.parent.parent


@pytest.fixture
def multi(pytester, tmp_path):
    make_project(pytester, conftest=CONFTEST)
    return pytester, make_dataset(tmp_path)


def run(multi, *args):
    pytester, dataset = multi
    return pytester.runpytest(f"--dataset={dataset}", "--detector", "whereami", "--grounding-misses", "xfail", *args)


ITEM_LINE = re.compile(r"\[(gw\d+)\] (?:\[\s*\d+%\] )?\S+ (test_suite\.py::test_grounding\[[^\]]+\](?:@\S+)?)")


def worker_items(result):
    """(worker, node id) of every item from `-v` output under xdist."""
    return [m.groups() for m in map(ITEM_LINE.search, result.outlines) if m]


def test_one_screen_runs_on_one_worker_with_dist_loadgroup(multi, tmp_path):
    report = tmp_path / "r.json"
    result = run(multi, "-n", "2", "--dist", "loadgroup", "--grounding-json", str(report))
    result.assert_outcomes(passed=8, xfailed=16)
    records = read_json(report)["samples"]
    assert len(records) == SCREENS * PER_SCREEN
    workers_by_screen = {}
    for record in records:
        workers_by_screen.setdefault(Path(record["image"]).name, set()).add(record["meta"]["worker"])
    assert len(workers_by_screen) == SCREENS
    assert all(len(workers) == 1 for workers in workers_by_screen.values()), workers_by_screen
    assert {w for ws in workers_by_screen.values() for w in ws} == {"gw0", "gw1"}  # both workers used


def test_ids_and_totals_are_the_same_serial_and_with_xdist(multi, tmp_path):
    serial_ids = [line for line in run(multi, "--co", "-q").outlines if "::" in line]
    assert len(serial_ids) == SCREENS * PER_SCREEN
    documents, lines = [], []
    for workers in ([], ["-n", "2"]):
        report = tmp_path / f"r{len(workers)}.json"
        result = run(
            multi, "-v", "--grounding-json", str(report), *workers, *(["--dist", "loadgroup"] if workers else [])
        )
        documents.append(read_json(report))
        lines.append(
            result.outlines[
                result.outlines.index(next(line for line in result.outlines if "grounding summary" in line)) :
            ]
        )
    items = worker_items(result)  # the -n 2 run: ids end in "@<screen group>" under loadgroup
    assert len(items) == SCREENS * PER_SCREEN
    assert sorted(node.split("@")[0] for _, node in items) == sorted(serial_ids)
    assert all(re.search(r"\]@multi-screen_\d_png$", node) for _, node in items)
    for document in documents:
        for block in document["summary"].values():
            block.pop("latency_ms")
    assert documents[0]["summary"] == documents[1]["summary"]
    assert documents[0]["summary"]["whereami"]["hits"] == 8
    strip = [{k: v for k, v in r.items() if k not in ("latency_ms", "meta")} for r in documents[0]["samples"]]
    assert strip == [{k: v for k, v in r.items() if k not in ("latency_ms", "meta")} for r in documents[1]["samples"]]

    # The summary block reads the same (its latency line aside), group suffixes nowhere in it.
    def same(line):
        return "latency" not in line and " in " not in line and "JSON report" not in line

    def untimed(lines):  # the detector line carries its load time
        return [re.sub(r"load_s=[\d.]+", "load_s=?", line) for line in lines if same(line)]

    assert untimed(lines[0]) == untimed(lines[1])


@pytest.mark.parametrize("workers", [[], ["-n", "2", "--dist", "loadgroup"]], ids=["serial", "xdist"])
def test_keyword_selection_is_unaffected_by_groups(multi, tmp_path, workers):
    report = tmp_path / "r.json"
    result = run(multi, "-k", "excel and icon", "--grounding-json", str(report), *workers)
    expected = sorted(f"q{i:03d}" for i in range(SCREENS * PER_SCREEN) if i % 3 == 0 and i % 2 == 0)
    assert sorted(r["id"] for r in read_json(report)["samples"]) == expected
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("xfailed", 0) == len(expected)
    # Group names are not keywords: selecting by a screen's group name selects nothing.
    nothing = run(multi, "-k", "screen_0_png", *workers)
    assert "passed" not in nothing.parseoutcomes()


def test_plain_n_keeps_xdist_s_default_load_scheduling_and_plain_ids(multi):
    result = run(multi, "-n", "2", "-v")
    items = worker_items(result)
    assert len(items) == SCREENS * PER_SCREEN
    assert not any("@" in node for _, node in items)


# -- pure parts -----------------------------------------------------------------------------------


def sample(uid, image, dataset="d"):
    return Sample(dataset=dataset, id=uid, uid=uid, image=Path(image), instruction="x", bbox=Box(0, 0, 1, 1))


def test_screen_groups_one_per_screen_in_any_order():
    samples = [sample(f"s{i}", f"/data/a/screen_{i % 3}.png") for i in range(9)]
    groups = screen_groups(samples, workers=2)
    assert groups == ["d-screen_0_png", "d-screen_1_png", "d-screen_2_png"] * 3
    assert screen_groups(list(reversed(samples)), workers=2) == list(reversed(groups))


def test_screen_groups_split_a_screen_bigger_than_its_share_and_keep_names_apart():
    big = [sample(f"s{i}", "/data/a/one.png") for i in range(8)]
    groups = screen_groups(big, workers=2)  # share: 8 / (2 x 2) = 2 samples per part
    assert groups == ["d-one_png"] * 2 + ["d-one_png-part2"] * 2 + ["d-one_png-part3"] * 2 + ["d-one_png-part4"] * 2
    same_name = [sample("a", "/x/shot.png"), sample("b", "/y/shot.png"), sample("c", "/x/shot.png", dataset="e")]
    assert len(set(screen_groups(same_name, workers=1))) == 3


def test_loaded_samples_share_repeated_values(tmp_path):
    dataset = load_dataset(str(make_dataset(tmp_path)))
    by_screen = {}
    for item in dataset.samples:
        by_screen.setdefault(item.image, []).append(item)
    assert len(by_screen) == SCREENS
    for items in by_screen.values():
        assert all(item.image is items[0].image for item in items)
    excel = [item for item in dataset.samples if item.app == "Excel"]
    assert len(excel) == 8 and all(item.app is excel[0].app for item in excel)
    assert dataset.samples[0].uid == "multi-q000-excel-icon"


def test_assign_uids_keeps_its_ids_and_suffixes_duplicates():
    raw = [
        Sample(
            dataset="",
            id="A 1",
            uid="",
            image=Path("/i.png"),
            instruction=t,
            bbox=Box(0, 0, 1, 1),
            app="VS Code",
            element_type="text",
        )
        for t in ("b", "a")
    ]
    assert [s.uid for s in assign_uids("ds", raw)] == ["ds-a_1-vs_code-text", "ds-a_1-vs_code-text-dup2"]
    assert [s.instruction for s in assign_uids("ds", raw)] == ["a", "b"]
