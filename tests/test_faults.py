"""The fault matrix (issue 7): hostile datasets, detectors and outputs, each run through pytester
with and without `-n 2`. For every case: no INTERNALERROR, one record per item in the JSON report
and in the predictions file, the case named in the output, strict JSON, and an accuracy equal to
a recount made here from the predictions file and the dataset's own rows."""

import json
import os
from pathlib import Path

import pytest
from PIL import Image

from helpers import SERIAL, XDIST, assert_counts, make_project

RED = (220, 30, 30)
HUGE = 10**400  # an integer that no float holds

FAULT_CONFTEST = '''
import math
import os
import numpy as np
from pytest_grounding import Box, Prediction


def red_box(image):
    pixels = np.asarray(image).astype(int)
    ys, xs = np.nonzero(np.all(np.abs(pixels - (220, 30, 30)) < 12, axis=-1))
    if not len(xs):
        return None
    return (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def make(answer):
    """A detector that finds the red square, then answers through `answer(box)`."""
    class Faulty:
        name = answer.__name__

        def predict(self, query):
            box = red_box(query.image)
            if box is None:
                return Prediction.no_answer(raw="no red")
            return answer(box)
    return Faulty


def red(box):
    return Prediction(box=Box(*box))

def tuple_box(box):
    return Prediction(box=tuple(box))

def huge_point(box):
    return Prediction(point=(10 ** 400, 3))

def text_point(box):
    return Prediction(point=("left", "top"))

def three_point(box):
    return Prediction(point=(box[0] + 1, box[1] + 1, 7))

def nan_point(box):
    return Prediction(point=(math.nan, 5.0), raw="(nan, 5)")

def inf_box(box):
    return Prediction(box=Box(0, 0, math.inf, 5), raw="inf box")

def exits(box):
    raise SystemExit(3)

def kills_worker(box):
    if box[0] < 12:   # one sample only
        os._exit(1)
    return red(box)

def interrupts(box):
    if os.environ.get("GROUNDING_STOP_AT") and box[0] == int(os.environ["GROUNDING_STOP_AT"]):
        raise KeyboardInterrupt
    return red(box)

def breaks_json_folder(box):
    """Replaces the JSON report's folder by a file mid-run: its write at the end must fail loudly
    without losing the summary."""
    folder = os.environ.get("GROUNDING_BREAK_FOLDER")
    if folder and os.path.isdir(folder):
        # Under -n 2 both workers may get here: only the one whose rename wins makes the file.
        try:
            os.rename(folder, folder + ".gone")
        except OSError:
            return red(box)
        open(folder, "w").close()
    return red(box)


class Options:
    name = "options"

    def __init__(self, threshold: float = 0.5, seed: int = 0, label: str = "x", strict: bool = True):
        self.threshold = threshold

    def predict(self, query):
        return Prediction.no_answer()


def pytest_grounding_register_detectors(registry):
    for answer in (red, tuple_box, huge_point, text_point, three_point, nan_point, inf_box, exits,
                   kills_worker, interrupts, breaks_json_folder):
        registry.register(answer.__name__.replace("_", "-"), make(answer))
    registry.register("options", Options)
'''


def square(path: Path, x: int, y: int = 20, size=(96, 64), side: int = 12, fmt: str = "PNG") -> None:
    image = Image.new("RGB", size, (235, 235, 235))
    image.paste(RED, (x, y, x + side, y + side))
    image.save(path, format=fmt)


def row(sample_id: str, file_name: str, x: int, **fields):
    base = {
        "id": sample_id,
        "file_name": file_name,
        "instruction": "Click the red square",
        "bbox": [x, 20, x + 12, 32],
        "element_type": "icon",
        "app": "Demo",
        "app_category": "office",
        "platform": "linux",
        "image_size": [96, 64],
    }
    base.update(fields)
    return base


def hostile_dataset(root: Path) -> Path:
    """Pointerbench layout. Images outside the dataset hold a red square exactly at their row's
    box, so a plugin that opened them would score a hit."""
    folder = root / "hostile" / "data" / "test"
    folder.mkdir(parents=True)
    outside = root / "outside.png"
    square(outside, 40)
    for name, x in (("a.png", 10), ("b.png", 30), ("c.png", 50), ("d.png", 70)):
        square(folder / name, x)
    (folder / "zero.png").write_bytes(b"")
    (folder / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n not a png at all")
    os.symlink(outside, folder / "link.png")
    rows = [
        row("h01", "a.png", 10),
        row("h02", "b.png", 30),
        row("h03", "c.png", 50, image_size=[HUGE, 64]),  # a size that does not fit: that sample's error
        row("h04", str(outside), 40),  # absolute path
        row("h05", "../../../outside.png", 40),  # climbs out
        row("h06", "link.png", 40),  # a symlink out
        row("h07", "a.png", 10, bbox=[HUGE, 20, 22, 32]),  # a bbox that does not fit a float
        row("h08", "d.png", 70, image_size=[192, 128]),  # declared size is not the real one
        row("h09", "zero.png", 10),
        row("h10", "corrupt.png", 10),
        row("h11", "gone.png", 10),
        row("h12", "a.png", 10, bbox=[200, 200, 220, 220]),  # wholly outside the image
        row("h02", "d.png", 70),  # a duplicate id, kept as it is
    ]
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "hostile"


def good_dataset(root: Path, count: int = 6) -> Path:
    folder = root / "good" / "data" / "test"
    folder.mkdir(parents=True)
    rows = []
    for index in range(count):
        x = 6 + index * 12
        square(folder / f"g{index}.png", x)
        rows.append(row(f"g{index:02d}", f"g{index}.png", x))
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "good"


@pytest.fixture
def faults(pytester):
    make_project(pytester, conftest=FAULT_CONFTEST)
    return pytester


def strict_json(path: Path):
    def refuse(value):
        raise ValueError(f"non-strict JSON constant {value} in {path}")

    return json.loads(path.read_text(), parse_constant=refuse)


def strict_jsonl(path: Path):
    return [strict_json_line(line) for line in path.read_text().splitlines() if line.strip()]


def strict_json_line(line: str):
    def refuse(value):
        raise ValueError(f"non-strict JSON constant {value}")

    return json.loads(line, parse_constant=refuse)


def dataset_rows(dataset: Path):
    return [json.loads(line) for line in (dataset / "data" / "test" / "metadata.jsonl").read_text().splitlines()]


def check_run(result, report: Path, predictions: Path, datasets, detectors):
    """The invariants every case keeps; returns the JSON document."""
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    document = strict_json(report)
    lines = strict_jsonl(predictions)
    expected = sum(len(dataset_rows(d)) for d in datasets) * len(detectors)
    for records in (document["samples"], lines):
        keys = [(r["detector"], r["dataset"], r["uid"]) for r in records]
        assert len(keys) == len(set(keys)) == expected, (len(keys), len(set(keys)), expected)
    # the accuracy recounted from the predictions file and the rows themselves
    boxes = {}
    for dataset in datasets:
        for r in dataset_rows(dataset):
            boxes.setdefault(r["id"], []).append(r["bbox"])
    for detector in detectors:
        mine = [line for line in lines if line["detector"] == detector and line["outcome"] != "error"]
        hits = 0
        for line in mine:
            if line["point"] is None:
                continue
            x, y = line["point"]
            # a duplicated id may have several boxes; the record's own target says which one
            assert line["target"] in [[float(v) for v in b] for b in boxes[line["id"]]]
            x1, y1, x2, y2 = line["target"]
            hits += x1 <= x <= x2 and y1 <= y <= y2
        block = document["summary"].get(detector)
        accuracy = hits / len(mine) if mine else None
        assert (block["accuracy"] if block else None) == accuracy
    return document


def by_id(document, detector):
    return {
        r["id"] + ("" if not r["uid"].endswith("dup2") else "#2"): r
        for r in document["samples"]
        if r["detector"] == detector
    }


@pytest.mark.slow
@SERIAL
def test_hostile_dataset_every_row_recorded_nothing_read_outside(faults, workers, tmp_path):
    dataset = hostile_dataset(tmp_path)
    report, predictions = tmp_path / "out" / "r.json", tmp_path / "out" / "p.jsonl"
    result = faults.runpytest(
        f"--dataset={dataset}",
        "--detector",
        "red",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *workers,
    )
    assert result.ret == 1
    document = check_run(result, report, predictions, [dataset], ["red"])
    records = by_id(document, "red")
    outcome = {key: (r["outcome"], r["error"] or "") for key, r in records.items()}
    assert outcome["h01"][0] == outcome["h02"][0] == outcome["h02#2"][0] == "hit"
    assert outcome["h03"][0] == "error" and "is not [width, height] in positive pixels" in outcome["h03"][1]
    for key in ("h04", "h05", "h06"):
        assert outcome[key][0] == "error" and "leads outside the dataset folder" in outcome[key][1]
    assert outcome["h07"][0] == "error" and "unusable bbox" in outcome["h07"][1]
    assert outcome["h08"][0] == "error" and "declared image size 192x128 differs" in outcome["h08"][1]
    assert outcome["h09"][0] == outcome["h10"][0] == "error" and "cannot read image" in outcome["h09"][1]
    assert outcome["h11"][0] == "error" and "image not found" in outcome["h11"][1]
    assert outcome["h12"][0] == "error" and "lies outside" in outcome["h12"][1]
    result.stdout.fnmatch_lines(["*note: dataset hostile: 1 samples reuse an id (first: 'h02')*"])
    result.stdout.fnmatch_lines(["*h04*leads outside the dataset folder*"])
    result.stdout.fnmatch_lines(["*errors FAILED: detector red: 10 of 13 samples*"])
    assert_counts(result, passed=3, errors=10)


ANSWERS = {
    # detector: (outcome, what the output names)
    "red": ("hit", None),
    "tuple-box": ("hit", None),
    "huge-point": ("error", "point x is too large for a float"),
    "text-point": ("error", "point x is str 'left', not a number"),
    "three-point": ("error", "point has 3 items, expected (x, y)"),
    "nan-point": ("wrong_format", "wrong format"),
    "inf-box": ("wrong_format", "wrong format"),
    "exits": ("error", "raised SystemExit"),
}


@pytest.mark.slow
@SERIAL
def test_odd_answers_are_scored_or_errors_never_lost_or_repaired(faults, workers, tmp_path):
    dataset = good_dataset(tmp_path, count=3)
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    detectors = [arg for name in ANSWERS for arg in ("--detector", name)]
    result = faults.runpytest(
        f"--dataset={dataset}",
        *detectors,
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        "--grounding-show-misses",
        "all",
        *workers,
    )
    document = check_run(result, report, predictions, [dataset], list(ANSWERS))
    for name, (outcome, named) in ANSWERS.items():
        records = [r for r in document["samples"] if r["detector"] == name]
        assert {r["outcome"] for r in records} == {outcome}, name
        if named:
            assert named in result.stdout.str(), name
    tuple_record = next(r for r in document["samples"] if r["detector"] == "tuple-box")
    assert tuple_record["iou"] == 1.0 and tuple_record["box"] == tuple_record["target"]
    assert_counts(result, passed=6, missed=6, errors=12)


@pytest.mark.slow
def test_a_worker_that_dies_leaves_an_error_record(faults, tmp_path):
    dataset = good_dataset(tmp_path, count=4)
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = faults.runpytest(
        f"--dataset={dataset}",
        "--detector",
        "kills-worker",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        "-n",
        "2",
    )
    document = check_run(result, report, predictions, [dataset], ["kills-worker"])
    crashed = [r for r in document["samples"] if r["outcome"] == "error"]
    assert len(crashed) == 1 and "crashed while running" in crashed[0]["error"]
    assert crashed[0]["id"] == "g00" and crashed[0]["instruction"] == "Click the red square"
    assert document["partial"] is False
    assert document["summary"]["kills-worker"]["samples"] == 4


@pytest.mark.slow
@SERIAL
def test_the_same_dataset_twice_runs_once(faults, workers, tmp_path):
    dataset = good_dataset(tmp_path, count=3)
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = faults.runpytest(
        f"--dataset={dataset}",
        f"--dataset={dataset}/data/test/metadata.jsonl",
        "--detector",
        "red",
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *workers,
    )
    check_run(result, report, predictions, [dataset], ["red"])
    result.stdout.fnmatch_lines(["*note: dataset *metadata.jsonl' is good * given again: it runs once*"])
    assert_counts(result, passed=3)


@pytest.mark.parametrize(
    "case",
    [
        "directory",
        "under-a-file",
        "nan-timeout",
        "inf-timeout",
        "nan-option",
        "typo-option",
        "ill-typed-option",
        "resume-alone",
    ],
)
def test_bad_settings_are_usage_errors_before_any_sample(faults, tmp_path, case):
    dataset = good_dataset(tmp_path, count=2)
    (tmp_path / "a-file").write_text("")
    args = {
        "directory": (["--grounding-json", str(tmp_path)], f"--grounding-json: {tmp_path} is a directory"),
        "under-a-file": (
            ["--grounding-predictions", str(tmp_path / "a-file" / "p.jsonl")],
            "--grounding-predictions: cannot create the folder",
        ),
        "nan-timeout": (["--grounding-timeout", "nan"], "--grounding-timeout: 'nan' must be a finite number > 0"),
        "inf-timeout": (["--grounding-timeout", "inf"], "--grounding-timeout: 'inf' must be a finite number > 0"),
        "nan-option": (["--detector", "options:threshold=nan"], "*option threshold='nan': expected a finite number*"),
        "typo-option": (
            ["--detector", "options:thresold=0.2"],
            "*has no option 'thresold'. Did you mean 'threshold'? Its options: threshold=0.5 (float)*",
        ),
        "ill-typed-option": (["--detector", "options:seed=abc"], "*option seed='abc': expected a whole number*"),
        "resume-alone": (["--grounding-resume"], "*--grounding-resume needs --grounding-predictions PATH*"),
    }[case]
    result = faults.runpytest(f"--dataset={dataset}", *args[0])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{args[1]}*" if not args[1].startswith("*") else args[1]])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_missing_extra_is_one_usage_error_naming_the_install(faults, tmp_path, monkeypatch):
    import pytest_grounding.plugin.common.plan as session

    monkeypatch.setattr(session, "missing_extra", lambda extra: "rapidfuzz" if extra == "ocr" else None)
    result = faults.runpytest(f"--dataset={good_dataset(tmp_path, count=2)}", "--detector", "ocr")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*detector 'ocr' needs the 'ocr' extra (rapidfuzz is not installed): "
            'pip install "pytest-grounding[[]ocr[]]"*'
        ]
    )


@SERIAL
def test_a_report_that_cannot_be_written_at_the_end_keeps_the_run_and_the_summary(
    faults, workers, tmp_path, monkeypatch
):
    dataset = good_dataset(tmp_path, count=3)
    folder = tmp_path / "reports"
    monkeypatch.setenv("GROUNDING_BREAK_FOLDER", str(folder))
    predictions = tmp_path / "p.jsonl"
    result = faults.runpytest(
        f"--dataset={dataset}",
        "--detector",
        "breaks-json-folder",
        "--grounding-json",
        str(folder / "r.json"),
        "--grounding-predictions",
        str(predictions),
        *workers,
    )
    assert_counts(result, passed=3)
    result.stdout.fnmatch_lines(
        [
            "*grounding summary*",
            "*accuracy 100.0%*(3/3 scored*",
            f"*grounding output FAILED: JSON report {folder / 'r.json'} not written*",
        ]
    )
    assert len(strict_jsonl(predictions)) == 3


@pytest.mark.slow
@XDIST
def test_resume_skips_what_was_done_and_reports_the_whole_run(faults, workers, tmp_path, monkeypatch):
    dataset = good_dataset(tmp_path, count=6)
    predictions, report = tmp_path / "p.jsonl", tmp_path / "r.json"
    common = [
        f"--dataset={dataset}",
        "--detector",
        "interrupts",
        "--grounding-predictions",
        str(predictions),
        "--grounding-json",
        str(report),
    ]
    straight = tmp_path / "straight.json"
    faults.runpytest(*common[:3], "--grounding-json", str(straight), *workers)

    monkeypatch.setenv("GROUNDING_STOP_AT", "42")  # the sample g03 (x = 6 + 3 * 12)
    # Ctrl-C in the middle of a serial run, in a process of its own (in-process, the interrupt would
    # reach the xdist worker that runs this test).
    first = faults.runpytest_subprocess(*common, "-p", "no:xdist")
    assert first.ret == pytest.ExitCode.INTERRUPTED
    done_before = len(strict_jsonl(predictions))
    assert 0 < done_before < 6
    monkeypatch.delenv("GROUNDING_STOP_AT")

    second = faults.runpytest(*common, "--grounding-resume", *workers)
    assert second.ret == 0
    # (under xdist the workers deselect, and the controller's closing line does not count them)
    assert_counts(second, passed=6 - done_before, deselected=0 if workers else done_before)
    second.stdout.fnmatch_lines([f"*resuming {predictions}: {done_before} samples done before*"])
    resumed, whole = strict_json(report), strict_json(straight)
    assert resumed["resumed"] == done_before and resumed["partial"] is False
    strip = lambda records: [{k: v for k, v in r.items() if k != "latency_ms"} for r in records]  # noqa: E731
    assert strip(resumed["samples"]) == strip(whole["samples"])
    for document in (resumed, whole):
        document["summary"]["interrupts"].pop("latency_ms")
    assert resumed["summary"] == whole["summary"]
    assert sorted(line["id"] for line in strict_jsonl(predictions)) == [f"g{i:02d}" for i in range(6)]


def test_resume_refuses_another_detector_or_dataset_version(faults, tmp_path):
    dataset = good_dataset(tmp_path, count=2)
    predictions = tmp_path / "p.jsonl"
    faults.runpytest(f"--dataset={dataset}", "--detector", "red", "--grounding-predictions", str(predictions))
    other = faults.runpytest(
        f"--dataset={dataset}",
        "--detector",
        "tuple-box",
        "--grounding-predictions",
        str(predictions),
        "--grounding-resume",
    )
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    other.stderr.fnmatch_lines(["*is from detector 'red'; this run's detectors are tuple-box. Refusing to mix*"])
    rows = dataset / "data" / "test" / "metadata.jsonl"
    rows.write_text(rows.read_text().replace("Click the red square", "Click the red box"))
    changed = faults.runpytest(
        f"--dataset={dataset}", "--detector", "red", "--grounding-predictions", str(predictions), "--grounding-resume"
    )
    assert changed.ret == pytest.ExitCode.USAGE_ERROR
    changed.stderr.fnmatch_lines(["*with fingerprint *; this run has fingerprint *. Refusing to mix dataset versions*"])
