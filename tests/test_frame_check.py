"""Issue 46 end to end: a loopback model that SEES the screenshot (tests/seeing_model.py) answers in
a frame chosen per run. The frame check, sent beside the first samples, stops a run in a wrong frame
when its verdict comes, naming it (the samples scored by then kept, the rest not run; with a budget
it is waited for, and stops the run before any dataset request); with `warn` the run's diagnosis
names the frame and `rescore` with its suggestion gives the samples back; the right frame gets no
finding; near and wrong-element misses are classified; the tolerance curve equals a recount from the
records; the check runs once per run, serially and with -n 2, and the answer cache answers it."""

import json
import math

import numpy as np
import pytest
from PIL import Image
from seeing_model import COLOURS, SeeingModel

from helpers import SERIAL, XDIST, read_json, read_jsonl
from pytest_grounding.core.cache import CACHE_ENV

pytest.importorskip("ui_tars")  # the openai extra: the default preset's parser

SCREENS = {  # name -> size, {colour: square}
    "wide.png": (
        (1280, 800),
        {"red": (200, 150, 240, 190), "blue": (900, 500, 940, 540), "green": (560, 640, 600, 680)},
    ),
    "tall.png": (
        (900, 1200),
        {"green": (100, 900, 140, 940), "red": (600, 300, 640, 340), "blue": (380, 560, 420, 600)},
    ),
    "long.png": (
        (1400, 1000),
        {"blue": (150, 700, 190, 740), "green": (1100, 180, 1140, 220), "red": (800, 560, 840, 600)},
    ),
}
N = sum(len(found) for _, found in SCREENS.values())
SPEC = "openai:base_url={url},model=seeing,preset=uitars-1.5-point"


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "squares" / "data" / "test"
    folder.mkdir(parents=True)
    lines = []
    for name, ((width, height), found) in SCREENS.items():
        pixels = np.full((height, width, 3), 250, np.uint8)
        for colour, (x1, y1, x2, y2) in found.items():
            pixels[y1:y2, x1:x2] = COLOURS[colour]
            lines.append(
                {
                    "file_name": name,
                    "id": f"{name[:-4]}-{colour}",
                    "instruction": f"Press the {colour} square",
                    "bbox": [x1, y1, x2, y2],
                    "answer_type": "point",
                    "eval": {"type": "point_in_bbox", "bbox": [x1, y1, x2, y2]},
                    "element_type": "icon",
                    "app": "Squares",
                    "app_category": "test",
                    "platform": "linux",
                    "image_size": [width, height],
                }
            )
        Image.fromarray(pixels).save(folder / name)
    (folder / "metadata.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path / "squares"


@pytest.fixture
def model(request):
    served = SeeingModel(request.param)
    yield served
    served.close()


def run(pytester, tmp_path, model, dataset, *args, tag="r"):
    report, predictions = tmp_path / f"{tag}.json", tmp_path / f"{tag}.jsonl"
    result = pytester.runpytest(
        f"--dataset={dataset}", "--detector", SPEC.format(url=model.url),
        "--grounding-json", str(report), "--grounding-predictions", str(predictions),
        "--grounding-misses", "xfail", *args,
    )  # fmt: skip
    return result, report, predictions


WRONG = [("rel1000", "rel1000"), ("swapped", "swapped"), ("shrunk", "resized-by-server")]


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("model,frame", WRONG, indirect=["model"])
def test_with_a_budget_a_wrong_frame_stops_the_run_before_any_dataset_request(
    pytester, project, tmp_path, model, dataset, frame
):
    """A --grounding-budget: the check's requests come off the samples' share, so it is waited for and
    its `fail` is a usage error before the first sample (without one it runs beside them: below)."""
    result, report, _ = run(pytester, tmp_path, model, dataset, "--grounding-budget=requests=1000")
    assert result.ret == 4, result.stdout.str()[-3000:]
    text = result.stdout.str() + result.stderr.str()
    assert f"answers in frame '{frame}" in text
    assert "No dataset sample was sent" in text
    assert model.calibration_requests() == 12
    assert model.dataset_requests() == 0
    assert not report.exists()


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("model,frame", WRONG, indirect=["model"])
def test_warn_runs_names_the_frame_and_its_suggestion_gives_the_samples_back(
    pytester, project, tmp_path, model, dataset, frame, workers
):
    result, report, predictions = run(pytester, tmp_path, model, dataset, "--grounding-frame-check=warn", *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]  # every sample misses (reported as xfail)
    assert model.calibration_requests() == 12  # once per run, not per worker
    assert model.dataset_requests() == N
    document = read_json(report)
    assert document["frame_check"][SPEC.format(url=model.url)]["name"] == frame
    (block,) = document["summary"].values()
    finding = block["diagnosis"]["frame"]
    assert finding["name"] == frame, finding
    assert block["hits"] <= N // 3
    out = tmp_path / "rescored.json"
    from pytest_grounding.cli.main import main

    assert main(["rescore", str(predictions), *finding["suggestion"], "--json", str(out)]) == 0
    (again,) = read_json(out)["summary"].values()
    assert again["hits"] == again["scored"] == N
    assert again["diagnosis"]["frame"]["name"] == "as-preset"


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("model", ["right"], indirect=True)
def test_the_right_frame_gets_no_finding(pytester, project, tmp_path, model, dataset, workers):
    result, report, _ = run(pytester, tmp_path, model, dataset, *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert "frame check" in result.stdout.str() and "answers in the preset's frame (12 requests)" in result.stdout.str()
    document = read_json(report)
    (check,) = document["frame_check"].values()
    assert (check["name"], check["suggestion"], check["requests"]) == ("as-preset", [], 12)
    (block,) = document["summary"].values()
    assert block["hits"] == N
    assert block["diagnosis"]["frame"]["name"] == "as-preset"
    assert block["diagnosis"]["frame"]["suggestion"] == []
    assert model.calibration_requests() == 12


def recount(records):
    """Accuracy at each tolerance from the records' points and targets alone."""
    out = {}
    for tolerance in (0, 5, 10, 20, 50, 100):
        good = 0
        for r in records:
            if r["point"] is None:
                continue
            x1, y1, x2, y2 = r["target"]
            x, y = r["point"]
            good += math.hypot(max(x1 - x, 0, x - x2), max(y1 - y, 0, y - y2)) <= tolerance
        out[tolerance] = good / len(records)
    return out


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("model,kind", [("near", "near"), ("wrong", "wrong_element")], indirect=["model"])
def test_near_and_wrong_element_misses_are_classified_and_the_curve_is_recounted(
    pytester, project, tmp_path, model, dataset, kind
):
    result, report, predictions = run(pytester, tmp_path, model, dataset)
    assert result.ret == 0, result.stdout.str()[-3000:]  # misses reported as xfail
    records = read_jsonl(predictions)
    assert [r["miss_kind"] for r in records] == [kind] * N
    if kind == "near":
        assert all(0 < r["distance_px"] <= 10 for r in records)
    document = read_json(report)
    (block,) = document["summary"].values()
    assert block["miss_analysis"]["kinds"][kind] == N
    assert {row["px"]: row["accuracy"] for row in block["tolerance"]} == recount(document["samples"])
    assert block["diagnosis"]["frame"]["name"] in ("as-preset", "unknown")  # no frame to blame


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("model", ["garbage"], indirect=True)
def test_unreadable_answers_say_so_and_never_stop_the_run(pytester, project, tmp_path, model, dataset):
    result, report, _ = run(pytester, tmp_path, model, dataset)
    assert result.ret == 0, result.stdout.str()[-3000:]  # wrong formats: misses (xfail), the run went on
    assert "calibration answers could not be read" in result.stdout.str()
    assert model.dataset_requests() == N
    (block,) = read_json(report)["summary"].values()
    assert block["miss_analysis"]["kinds"]["no_answer"] == N


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@pytest.mark.parametrize("model", ["rel1000"], indirect=True)
def test_off_skips_the_check_and_the_cache_answers_it(pytester, project, tmp_path, model, dataset):
    result, report, _ = run(pytester, tmp_path, model, dataset, "--grounding-frame-check=off")
    assert model.calibration_requests() == 0 and "frame_check" not in read_json(report)
    cache = tmp_path / "answers"
    for tag in ("first", "second"):
        result, report, _ = run(
            pytester, tmp_path, model, dataset, "--grounding-frame-check=warn", "--grounding-cache", str(cache), tag=tag
        )
        assert result.ret == 0, result.stdout.str()[-3000:]
    assert model.calibration_requests() == 12  # the second run's check came from the cache
    (check,) = read_json(report)["frame_check"].values()
    assert (check["requests"], check["cached"], check["name"]) == (12, 12, "rel1000")


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("model", ["wrong"], indirect=True)
def test_rescore_and_merge_keep_the_runs_miss_kinds_of_a_subset(pytester, project, tmp_path, model, dataset, workers):
    """One sample of a screen (-k): the run classifies its miss against every element of the dataset;
    rescore and merge hold that record alone and keep its kind while its click and outcome stand."""
    from pytest_grounding.cli.main import main

    result, report, predictions = run(pytester, tmp_path, model, dataset, "-k", "wide and red", *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    (record,) = read_jsonl(predictions)
    assert record["miss_kind"] == "wrong_element"
    for source in (predictions, report):
        out = tmp_path / f"rescored-{source.suffix[1:]}.json"
        assert main(["rescore", str(source), "--json", str(out)]) == 0
        (again,) = read_json(out)["samples"]
        assert again["miss_kind"] == "wrong_element", source
    merged = tmp_path / "merged.json"
    main(["merge", str(report), "--json", str(merged)])  # 1: a partial merge (-k), no verdict
    (again,) = read_json(merged)["samples"]
    assert again["miss_kind"] == "wrong_element"


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("model,frame", WRONG, indirect=["model"])
def test_an_agent_carries_its_last_turns_numbers_so_a_wrong_frame_is_named(
    pytester, project, tmp_path, model, dataset, frame
):
    """agent=crop: the episode's last click carries its numbers and its view's size, as a single
    answer does, so the check fits every frame, not only an offset."""
    spec = SPEC.format(url=model.url) + ",agent=crop"
    result = pytester.runpytest(f"--dataset={dataset}", "--detector", spec, "--grounding-misses", "xfail")
    assert result.ret == 4, result.stdout.str()[-3000:]
    text = result.stdout.str() + result.stderr.str()
    assert f"answers in frame '{frame}" in text


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("model", ["rel1000"], indirect=True)
def test_an_agents_records_are_diagnosed_and_rescored_in_the_frame_found(
    pytester, project, tmp_path, model, dataset, workers
):
    from pytest_grounding.cli.main import main

    spec = SPEC.format(url=model.url) + ",agent=crop"
    report, predictions = tmp_path / "agent.json", tmp_path / "agent.jsonl"
    result = pytester.runpytest(
        f"--dataset={dataset}", "--detector", spec, "--grounding-misses", "xfail", "--grounding-frame-check=warn",
        "--grounding-json", str(report), "--grounding-predictions", str(predictions), *workers,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert model.calibration_requests() == 12  # once per run, not per worker
    (block,) = read_json(report)["summary"].values()
    finding = block["diagnosis"]["frame"]
    assert finding["name"] == "rel1000", finding
    assert all(r["meta"]["model_coordinates"] for r in read_jsonl(predictions))
    out = tmp_path / "rescored.json"
    assert main(["rescore", str(predictions), *finding["suggestion"], "--json", str(out)]) == 0
    (again,) = read_json(out)["summary"].values()
    assert again["hits"] == again["scored"] == N


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("model", ["right"], indirect=True)
def test_a_labelled_detector_is_named_by_its_label_in_the_check_and_header_lines(
    pytester, project, tmp_path, model, dataset
):
    """label= (issue 51): the frame check's header line and note, and the detector's header line, name
    the label, not the long spec with its URL."""
    spec = SPEC.format(url=model.url)
    report = tmp_path / "labelled.json"
    result = pytester.runpytest(
        f"--dataset={dataset}", "--detector", f"{spec},label=seeing", "--grounding-json", str(report),
        "--grounding-misses", "xfail",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    lines = result.stdout.str().splitlines()
    check = [line for line in lines if "frame check" in line]
    assert check and all("frame check seeing:" in line and "base_url" not in line for line in check), check
    assert any(line.startswith("grounding: detector seeing: ") for line in lines), lines[:20]
    assert not any(line.startswith("grounding: detector openai:") for line in lines)
    assert spec in read_json(report)["frame_check"]  # the report keys on the spec


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_the_calibration_screens_are_encoded_once_per_process_for_each_preset(monkeypatch):
    """Every run sends the same calibration screens: a second check (another run in the process, or
    a second detector with the preset) encodes none of them again; another preset's resize does."""
    from pytest_grounding.detectors import served as served_module
    from pytest_grounding.detectors.encoding import SAME_IN_EVERY_RUN
    from pytest_grounding.detectors.frame_check import calibration_screens, run_check

    encoded = []
    real = served_module.data_url_bytes
    monkeypatch.setattr(served_module, "data_url_bytes", lambda image: encoded.append(image.size) or real(image))
    monkeypatch.setattr(SAME_IN_EVERY_RUN, "_values", type(SAME_IN_EVERY_RUN._values)())  # this test's own
    served = SeeingModel("right")
    try:

        def check(preset):
            encoded.clear()
            detector = served_module.OpenAIDetector(base_url=served.url, model="seeing", preset=preset)
            result = run_check("x", detector, calibration_screens()[::4])  # one screen of each size
            assert result.failed == 0 and not result.finding.mismatch
            return sum(min(size) >= 500 for size in encoded)  # the screens (the probe's small image aside)

        screens = len(calibration_screens()[::4])
        assert check("uitars-1.5-point") == screens
        assert check("uitars-1.5-point") == 0  # a new detector, the same preset: none encoded again
        assert served.calibration_requests() == 2 * screens  # yet every check asks them all
        assert check("qwen2.5-vl") == screens  # another resize: its own encodings
        assert check("qwen2.5-vl") == 0
    finally:
        served.close()


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@XDIST
def test_the_check_does_not_hold_back_the_first_sample(pytester, project, tmp_path, dataset, workers):
    """The model answers no calibration request before it has answered a dataset sample (it would wait
    30 s for one where the check held the samples back): the first sample reaches the server before the
    check's requests are answered, serially and under -n 2 (its workers start while the check is in
    flight), and the check's result is the report's as before."""
    model = SeeingModel("right", calibration_after=1)
    try:
        result, report, _ = run(pytester, tmp_path, model, dataset, *workers)
    finally:
        model.close()
    assert result.ret == 0, result.stdout.str()[-3000:]
    first_sample = min(came for calibration, came, _ in model.times if not calibration)
    answered = [done for calibration, _, done in model.times if calibration]
    assert len(answered) == 12 and first_sample < min(answered), (first_sample, sorted(answered))
    document = read_json(report)
    (check,) = document["frame_check"].values()
    assert (check["name"], check["requests"]) == ("as-preset", 12)
    (block,) = document["summary"].values()
    assert block["hits"] == N
    assert "answers in the preset's frame (12 requests)" in result.stdout.str()


@pytest.mark.slow  # 4 s and more: the samples after the verdict are answered one at a time
@XDIST
def test_a_wrong_frame_found_while_samples_run_stops_the_run_keeping_what_was_scored(
    pytester, project, tmp_path, dataset, workers
):
    """`fail` with the check in flight: when its verdict comes the run stops with today's message and
    exit 4; the samples scored by then are in the report, every other one is in its not_run. The model
    answers the calibration screens once two samples are answered, then the samples one at a time."""
    model = SeeingModel("rel1000", sample_delay=0.4, calibration_after=2)
    try:
        result, report, predictions = run(pytester, tmp_path, model, dataset, *workers)
    finally:
        model.close()
    assert result.ret == 4, result.stdout.str()[-3000:]
    text = result.stdout.str() + result.stderr.str()
    assert "answers in frame 'rel1000'" in text and "the samples scored before this verdict are kept" in text
    document = read_json(report)
    scored, not_run = document["samples"], document["not_run"]
    assert scored and not_run and len(scored) + len(not_run) == N, (len(scored), len(not_run))
    kept = read_jsonl(predictions) if predictions.exists() else []  # none scored: no predictions file
    assert {r["id"] for r in kept} >= {r["id"] for r in scored}
    (check,) = document["frame_check"].values()
    assert (check["name"], check["mode"]) == ("rel1000", "fail")
    assert "the frame check stopped the run" in text
