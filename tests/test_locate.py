"""The element-at-click building blocks: transforms and their mapping back, the retry driver,
scoring and aggregation, the floors' answer, and omniparser's locate on the real model."""

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from helpers import REPO
from pytest_grounding.analysis import metrics
from pytest_grounding.core.types import Box, Prediction, Sample
from pytest_grounding.detectors.floors import CenterDetector, RandomDetector
from pytest_grounding.evaluate import locate as loc
from pytest_grounding.evaluate import scoring
from pytest_grounding.evaluate.locate import LocateQuery, locate_with_retries
from pytest_grounding.evaluate.runner import evaluate_locate
from pytest_grounding.sections import summarize  # the core figures and the sections'

REAL_MODEL = REPO.parent / "shared" / "models" / "omniparser-v2-icon-detect-640.onnx"


def test_transform_order_is_fixed_and_documented():
    assert loc.TRANSFORM_NAMES == ("original", "crop_zoom", "contrast", "grayscale", "invert")
    assert "import pytest" not in Path(loc.__file__).read_text()


def test_crop_window_centres_on_the_point_and_stays_inside():
    assert loc.crop_window(1200, 900, (600, 450)) == (400, 300, 800, 600)
    assert loc.crop_window(1200, 900, (10, 890)) == (0, 600, 400, 900)
    assert loc.crop_window(300, 200, (150, 100)) == (22, 0, 278, 200)  # at least 256 px, at most the image


def test_crop_zoom_maps_boxes_back_to_the_original_frame():
    view = dict(loc.TRANSFORMS)["crop_zoom"](Image.new("RGB", (1200, 900)), (600, 450))
    assert view.image.size == (800, 600) and view.point == (400.0, 300.0)
    assert view.to_original(Box(380, 280, 420, 320)) == Box(590, 440, 610, 460)


def test_invert_applies_to_dark_screens_only():
    invert = dict(loc.TRANSFORMS)["invert"]
    assert invert(Image.new("RGB", (64, 64), "white"), (1, 1)) is None
    view = invert(Image.new("RGB", (64, 64), (20, 20, 20)), (1, 1))
    assert view.image.getpixel((0, 0)) == (235, 235, 235) and view.point == (1, 1)


def _screen(dark=False):
    image = Image.new("RGB", (600, 400), (30, 30, 30) if dark else (240, 240, 240))
    ImageDraw.Draw(image).rectangle((100, 100, 140, 120), fill=(90, 90, 90))
    return image


class Recorder:
    """A fake detector answering with `answers[n]` on its n-th call (in the transformed frame)."""

    def __init__(self, *answers):
        self.answers, self.sizes = list(answers), []

    def __call__(self, query):
        self.sizes.append(query.image.size)
        box = self.answers.pop(0)
        if isinstance(box, Exception):
            raise box
        return Prediction(box=box)


def test_retries_stop_at_the_first_box_containing_the_point():
    # original: no box; crop_zoom (crop 256x256 at (0, 0), zoom 2): a box around the point
    fake = Recorder(None, Box(200, 200, 280, 240))
    outcome = locate_with_retries(fake, LocateQuery(_screen(), (120, 110)))
    assert outcome.transform == "crop_zoom" and outcome.box == Box(100, 100, 140, 120)
    assert [a.transform for a in outcome.attempts] == ["original", "crop_zoom"]
    assert [a.contains_point for a in outcome.attempts] == [False, True]
    assert fake.sizes == [(600, 400), (512, 512)]


def test_retries_go_through_the_list_and_skip_inversion_on_light_screens():
    fake = Recorder(Box(0, 0, 10, 10), None, ValueError("boom"), None)
    outcome = locate_with_retries(fake, LocateQuery(_screen(), (120, 110)))
    assert [a.transform for a in outcome.attempts] == ["original", "crop_zoom", "contrast", "grayscale"]
    assert outcome.attempts[2].error == "ValueError: boom"
    assert outcome.transform is None and outcome.box == Box(0, 0, 10, 10)  # the first box any attempt gave
    dark = locate_with_retries(
        Recorder(None, None, None, None, Box(100, 100, 140, 120)), LocateQuery(_screen(dark=True), (120, 110))
    )
    assert dark.transform == "invert" and len(dark.attempts) == 5


def test_retries_restricted_to_named_transforms():
    outcome = locate_with_retries(Recorder(None), LocateQuery(_screen(), (1, 1)), transforms=("original",))
    assert len(outcome.attempts) == 1 and not outcome.found
    with pytest.raises(ValueError, match="unknown transform"):
        locate_with_retries(Recorder(), LocateQuery(_screen(), (1, 1)), transforms=("blur",))


def _tries(*names):
    return tuple(loc.Attempt(name, None, False, 0.0) for name in names)


def _sample(box=None, **kw):
    box = Box(0, 0, 10, 10) if box is None else box
    return Sample(dataset="d", id="s1", uid="s1", image=Path("x.png"), instruction="", bbox=box, **kw)


def _scored(outcome, threshold=0.5):
    return scoring.score_located(
        _sample(), outcome, detector="det", latency_ms=2.0, image_size=(100, 80), click=(5.0, 5.0), threshold=threshold
    )


def test_a_located_box_is_a_hit_a_false_positive_or_not_found():
    hit = _scored(loc.LocateOutcome(Box(0, 0, 10, 12), "original", _tries("original")), 0.25)
    assert hit["task"] == "locate" and hit["outcome"] == "hit" and hit["transform"] == "original"
    assert hit["iou"] == pytest.approx(100 / 120, abs=1e-6) and hit["attempts"] == 1
    fp = _scored(loc.LocateOutcome(Box(0, 0, 10, 30), None, _tries("original", "crop_zoom")))
    assert fp["outcome"] == "miss" and fp["transform"] is None and fp["attempts"] == 2  # a false positive
    assert _scored(loc.LocateOutcome(Box(0, 0, 10, 30), None, ()), threshold=0.3)["outcome"] == "hit"
    none = _scored(loc.LocateOutcome(None, None, _tries("original", "crop_zoom")))
    assert none["outcome"] == "wrong_format" and none["iou"] is None and none["point"] == [5.0, 5.0]
    assert [t["transform"] for t in none["meta"]["tried"]] == ["original", "crop_zoom"]
    assert json.loads(json.dumps(hit)) == hit  # plain data: it crosses xdist and lands in the JSON


def test_locate_figures_by_hand():
    def record(outcome, attempts, transform):
        return {"outcome": outcome, "attempts": attempts, "transform": transform, "threshold": 0.5}

    records = [
        record("hit", 1, "original"),
        record("hit", 2, "crop_zoom"),
        record("miss", 1, "original"),
        record("wrong_format", 4, None),
        {"outcome": "error"},
    ]
    figures = metrics.locate_figures(records)
    assert figures["detection_rate"] == 0.75 and figures["false_positive_rate"] == 0.25
    assert figures["mean_attempts"] == 2.0 and figures["threshold"] == 0.5
    assert figures["by_transform"] == {
        "crop_zoom": {"samples": 1, "hits": 1},
        "none": {"samples": 1, "hits": 0},
        "original": {"samples": 2, "hits": 1},
    }
    assert metrics.locate_figures([])["detection_rate"] is None


def test_a_detector_without_locate_is_an_error_naming_it(tmp_path):
    image = tmp_path / "x.png"
    Image.new("RGB", (100, 80)).save(image)
    sample = Sample(dataset="d", id="s1", uid="s1", image=image, instruction="", bbox=Box(0, 0, 10, 10))
    record = evaluate_locate(sample, object(), detector_name="plain").record
    assert record["outcome"] == "error" and record["task"] == "locate"
    assert "has no locate(query) method" in record["error"]


@pytest.mark.parametrize("floor", [CenterDetector(), RandomDetector(seed=1)], ids=["center", "random"])
def test_floors_answer_a_fixed_box_around_the_point(floor):
    image = Image.new("RGB", (100, 80))
    assert floor.locate(LocateQuery(image, (50, 40))).box == Box(34, 24, 66, 56)
    assert floor.locate(LocateQuery(image, (5, 78))).box == Box(0, 62, 21, 80)  # clipped to the image
    outcome = locate_with_retries(floor.locate, LocateQuery(image, (50, 40)))
    assert outcome.transform == "original" and len(outcome.attempts) == 1


@pytest.mark.slow
@pytest.mark.skipif(not REAL_MODEL.is_file(), reason=f"{REAL_MODEL} is not here (the AGPL model is not shipped)")
def test_omniparser_locates_known_controls_of_synthetic_screens(tmp_path):
    for module in ("onnxruntime", "cv2", "rapidfuzz"):
        pytest.importorskip(module)
    from pytest_grounding.datasets.pointerbench import load
    from pytest_grounding.datasets.synth import generate
    from pytest_grounding.detectors.omniparser import OmniParserDetector

    folder = generate(tmp_path / "syn", 16, seed=5)
    detector = OmniParserDetector(model=str(REAL_MODEL), ocr=False)
    records = []
    for sample in load(folder).samples:
        record = evaluate_locate(sample, detector, detector_name="omniparser").record
        assert record["outcome"] != "error", record
        width, height = record["image_size"]
        for attempt in record["meta"]["tried"]:  # every box mapped back to the original frame
            assert attempt["box"] is None or Box(*attempt["box"]).inside(width, height)
        records.append(record)
    block = summarize(records)["omniparser (locate)"]
    # the driver finds a box at the point for most targets, some of them tight (icons only: no OCR here)
    assert block["locate"]["detection_rate"] >= 0.6, block
    assert block["accuracy"] > 0 and block["locate"]["mean_attempts"] > 1, block
    assert sum(r["transform"] not in (None, "original") for r in records) >= 1  # a retry paid off
