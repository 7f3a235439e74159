"""Cropping strategies: the geometry against hand-computed cases, the spec grammar, the wrappers on
a scripted detector, and through the plugin: a dataset whose boxes move between two runs gives
identical predictions (a strategy never sees the target)."""

import json
import math
import shutil

import pytest
from PIL import Image

from helpers import FIXTURES, SERIAL, read_json
from pytest_grounding.core.types import Box, Prediction, Query
from pytest_grounding.detectors.strategies import Chain, ChainError, builtin_registry, split_chain
from pytest_grounding.detectors.strategies.geometry import (
    box_to_frame,
    candidate_patches,
    clamp_window,
    gaussian_vote,
    integral,
    nms,
    pad_to,
    patch_scores,
    shrink_toward,
    split_long,
    to_frame,
    window_around,
)
from pytest_grounding.detectors.strategies.wrappers import Regrounding, Zoom

FRAME = (1920.0, 1080.0)


# -- geometry -------------------------------------------------------------------------------------


def test_window_around_a_point_in_the_middle_is_centred():
    assert window_around((960, 540), (1024, 1024), FRAME) == Box(448, 28, 1472, 1052)


def test_window_near_a_corner_slides_inside_and_keeps_its_size():
    assert window_around((10, 1070), (400, 300), FRAME) == Box(0, 780, 400, 1080)
    assert window_around((1915, 5), (400, 300), FRAME) == Box(1520, 0, 1920, 300)


def test_window_larger_than_the_frame_is_the_frame_on_that_axis():
    assert window_around((100, 100), (1024, 1024), (800, 600)) == Box(0, 0, 800, 600)
    assert window_around((700, 300), (1024, 200), (800, 600)) == Box(0, 200, 800, 400)


def test_clamp_window_never_shrinks_a_window_that_fits():
    assert clamp_window(-50, -50, 100, 100, FRAME) == Box(0, 0, 100, 100)


def test_integral_rounds_to_whole_pixels_keeping_the_size_and_stays_inside():
    assert integral(Box(10.4, 20.6, 99.2, 50.0), FRAME) == Box(10, 21, 99, 50)
    assert integral(Box(823.5, 0.5, 2103.5, 768.5), (3440, 1440)) == Box(824, 1, 2104, 769)  # 1280 x 768 still
    assert integral(Box(-3, -3, 5000, 5000), FRAME) == Box(0, 0, 1920, 1080)
    assert integral(Box(50, 50, 50, 50), FRAME) == Box(50, 50, 51, 51)  # at least one pixel


def test_pad_to_grows_about_the_centre_and_slides_at_an_edge():
    assert pad_to(Box(900, 500, 1000, 560), (1280, 768), FRAME) == Box(310, 146, 1590, 914)
    assert pad_to(Box(0, 0, 40, 40), (1280, 768), FRAME) == Box(0, 0, 1280, 768)
    assert pad_to(Box(1900, 1060, 1920, 1080), (1280, 768), FRAME) == Box(640, 312, 1920, 1080)


def test_pad_to_keeps_a_side_already_long_enough():
    assert pad_to(Box(100, 500, 1800, 540), (1280, 768), FRAME) == Box(100, 136, 1800, 904)


def test_split_long_halves_along_the_long_side_only():
    assert split_long(Box(0, 0, 1800, 400), 2.5) == [Box(0, 0, 900, 400), Box(900, 0, 1800, 400)]
    assert split_long(Box(0, 0, 300, 900), 2.5) == [Box(0, 0, 300, 450), Box(0, 450, 300, 900)]
    assert split_long(Box(0, 0, 1000, 500), 2.5) == [Box(0, 0, 1000, 500)]


def test_candidate_patches_pad_small_split_elongated_keep_screen_shaped():
    small = candidate_patches(Box(950, 530, 970, 550), (1280, 768), 2.5, FRAME)
    assert small == [Box(320, 156, 1600, 924)]
    toolbar = candidate_patches(Box(0, 0, 1920, 60), (1280, 768), 2.5, FRAME)
    assert toolbar == [Box(0, 0, 1280, 768), Box(640, 0, 1920, 768)]
    screen_shaped = candidate_patches(Box(100, 100, 1500, 900), (1280, 768), 2.5, FRAME)
    assert screen_shaped == [Box(100, 100, 1500, 900)]


def test_mapping_back_from_a_crop_and_a_scaled_crop():
    crop = Box(448, 28, 1472, 1052)
    assert to_frame((12, 30), crop) == (460, 58)
    assert to_frame((24, 60), crop, scale=2.0) == (460, 58)
    assert box_to_frame(Box(0, 0, 10, 20), crop) == Box(448, 28, 458, 48)


def test_gaussian_vote_is_one_at_the_centre_and_zero_outside():
    patch = Box(0, 0, 100, 100)
    assert gaussian_vote(patch, (50, 50)) == 1.0
    # at an edge's middle: d = 0.5, exp(-0.25 / 0.18)
    assert gaussian_vote(patch, (100, 50)) == pytest.approx(math.exp(-0.25 / 0.18))
    assert gaussian_vote(patch, (100.5, 50)) == 0.0
    corner = math.exp(-0.5 / 0.18)
    assert gaussian_vote(patch, (0, 0)) == pytest.approx(corner)


def test_patch_scores_sum_the_votes():
    patches = [Box(0, 0, 100, 100), Box(50, 0, 150, 100)]
    scores = patch_scores(patches, [(50, 50), (100, 50)])
    edge = math.exp(-0.25 / 0.18)
    assert scores == pytest.approx([1 + edge, edge + 1])


def test_nms_keeps_the_best_and_drops_overlaps_at_the_threshold():
    patches = [Box(0, 0, 100, 100), Box(10, 0, 110, 100), Box(200, 200, 300, 300), Box(50, 0, 150, 100)]
    # IoU(0,1) = 90/110 = 0.82; IoU(0,3) = 50/150 = 0.33; IoU(1,3) = 60/140 = 0.43
    assert nms(patches, [0.5, 0.9, 0.7, 0.1], iou=0.5) == [1, 2, 3]
    assert nms(patches, [0.5, 0.9, 0.7, 0.1], iou=0.4) == [1, 2]
    assert nms(patches, [1, 1, 1, 1], iou=0.5) == [0, 2, 3]  # ties: the earlier first


def test_shrink_toward_halves_and_stops_at_the_minimum():
    window = Box(0, 0, 1920, 1080)
    assert shrink_toward((960, 540), window, 0.5, 256, FRAME) == Box(480, 270, 1440, 810)
    assert shrink_toward((10, 10), Box(0, 0, 300, 300), 0.5, 256, FRAME) == Box(0, 0, 256, 256)
    assert shrink_toward((10, 10), Box(0, 0, 256, 256), 0.5, 256, FRAME) == Box(0, 0, 256, 256)


# -- the spec grammar -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "chain"),
    [
        ("ocr", Chain("ocr")),
        ("ocr+zoom", Chain("ocr", ("zoom",))),
        ("uitars:model=/m/UI-TARS+screenseeker:depth=2", Chain("uitars:model=/m/UI-TARS", ("screenseeker:depth=2",))),
        ("ocr:min_score=0.5+regrounding:size=800+zoom", Chain("ocr:min_score=0.5", ("regrounding:size=800", "zoom"))),
        ("uitars:model=/m/a+b/c+zoom", Chain("uitars:model=/m/a+b/c", ("zoom",))),  # '+' inside a path
        ("uitars:model=/m/a+b", Chain("uitars:model=/m/a+b")),
    ],
)
def test_split_chain(spec, chain):
    assert split_chain(spec, builtin_registry()) == chain


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("ocr+zom", ["unknown strategy 'zom'", "Did you mean 'zoom'"]),
        ("ocr+crop:size=3", ["unknown strategy 'crop'", "regrounding, screenseeker, zoom"]),
        ("+zoom", ["names no detector"]),
    ],
)
def test_split_chain_names_the_wrong_part(spec, words):
    with pytest.raises(ChainError) as info:
        split_chain(spec, builtin_registry())
    for word in words:
        assert word in str(info.value)


# -- the wrappers on a scripted detector ----------------------------------------------------------------


class Scripted:
    """Answers the centre of a dark square drawn on the screen, in the frame it is given; records
    the size of each image it saw. Knows nothing of any target box."""

    name = "scripted"

    def __init__(self, answers=None):
        self.seen = []
        self.answers = answers

    def predict(self, query):
        self.seen.append(query.image.size)
        if self.answers is not None:
            answer = self.answers.pop(0)
            return Prediction(point=answer) if answer else Prediction.no_answer(raw="nothing")
        pixels = query.image.convert("L").load()
        width, height = query.image.size
        dark = [(x, y) for y in range(0, height, 2) for x in range(0, width, 2) if pixels[x, y] < 50]
        if not dark:
            return Prediction.no_answer(raw="nothing dark")
        return Prediction(point=(sum(x for x, _ in dark) / len(dark), sum(y for _, y in dark) / len(dark)))


def _screen(size=(1600, 1000), square=(1500, 900, 1520, 920)):
    image = Image.new("RGB", size, "white")
    image.paste((0, 0, 0), square)
    return Query(image=image, instruction="click the dark square")


def test_zoom_halves_the_window_around_each_answer_and_maps_back():
    inner = Scripted()
    prediction = Zoom(inner, rounds=3).predict(_screen())
    assert inner.seen == [(1600, 1000), (800, 500), (400, 256), (256, 256)]
    meta = prediction.meta
    assert meta["attempts"] == 4 and meta["strategy"] == "zoom"
    assert meta["crops"] == [
        [0, 0, 1600, 1000],
        [800, 500, 1600, 1000],
        [1200, 744, 1600, 1000],
        [1344, 744, 1600, 1000],
    ]
    assert meta["final_crop"] == meta["crops"][-1]
    assert prediction.point == pytest.approx((1509, 909))  # the square's sampled centre, in screen pixels


def test_zoom_stops_with_the_last_answer_when_a_round_has_none():
    inner = Scripted(answers=[(800, 500), (100, 100), None])
    prediction = Zoom(inner, rounds=3).predict(_screen())
    assert prediction.point == (400 + 100, 250 + 100)
    assert prediction.meta["attempts"] == 3 and "no answer" in prediction.meta["stopped"]
    assert prediction.meta["final_crop"] == [400, 250, 1200, 750]


def test_zoom_and_regrounding_return_no_answer_when_the_first_call_has_none():
    for strategy in (Zoom(Scripted(answers=[None])), Regrounding(Scripted(answers=[None]))):
        prediction = strategy.predict(_screen())
        assert prediction.click is None and prediction.meta["attempts"] == 1


def test_regrounding_crops_a_window_around_the_first_answer():
    inner = Scripted()
    prediction = Regrounding(inner, size=512).predict(_screen())
    assert inner.seen == [(1600, 1000), (512, 512)]
    assert prediction.meta["crops"] == [[0, 0, 1600, 1000], [1088, 488, 1600, 1000]]
    assert prediction.point == pytest.approx((1509, 909))
    assert prediction.meta["attempts"] == 2


def test_regrounding_on_a_screen_no_larger_than_the_window_asks_once():
    inner = Scripted()
    prediction = Regrounding(inner, size=1024).predict(_screen(size=(800, 600), square=(100, 100, 120, 120)))
    assert inner.seen == [(800, 600)] and prediction.meta["attempts"] == 1


def test_nested_strategies_add_up_attempts():
    inner = Scripted()
    prediction = Regrounding(Zoom(inner, rounds=1), size=512).predict(_screen())
    assert len(inner.seen) == 4 and prediction.meta["attempts"] == 4


def test_a_wrapped_detector_describes_itself_and_closes_the_inner_one():
    closed = []

    class Closing(Scripted):
        def close(self):
            closed.append(True)

        def describe(self):
            return {"headline": "scripted v1"}

    strategy = Zoom(Closing(), rounds=2)
    info = strategy.describe()
    assert info["headline"] == "zoom (rounds=2, factor=0.5, min_size=256) around scripted v1"
    assert info["inner"]["headline"] == "scripted v1"
    strategy.close()
    assert closed == [True]


# -- through the plugin ---------------------------------------------------------------------------------

# Small crops on the 160x120 mini screens, so that every strategy really crops.
WRAPPED = [
    "colour+zoom:min_size=32",
    "colour+regrounding:size=64",
    "colour+screenseeker:min_width=64,min_height=48",
]


def _moved_copy(tmp_path, name, dx, dy):
    """fixtures/mini with every box (and point) moved by (dx, dy): same screens, other targets."""
    copy = tmp_path / name
    shutil.copytree(FIXTURES / "mini", copy)
    metadata = copy / "data" / "test" / "metadata.jsonl"
    rows = [json.loads(line) for line in metadata.read_text().splitlines() if line.strip()]
    for row in rows:
        x1, y1, x2, y2 = row["bbox"]
        row["bbox"] = [x1 + dx, y1 + dy, x2 + dx, y2 + dy]
        if "eval" in row:
            row["eval"]["bbox"] = row["bbox"]
        if row.get("point"):
            row["point"] = [row["point"][0] + dx, row["point"][1] + dy]
    metadata.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return copy


def _predictions(project, dataset, report, detectors, workers):
    args = [f"--dataset={dataset}", "--grounding-json", str(report), *workers]
    for spec in detectors:
        args += ["--detector", spec]
    result = project.runpytest(*args)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    samples = read_json(report)["samples"]
    return result, {(r["detector"], r["id"]): r for r in samples}


@pytest.mark.slow
@SERIAL
def test_moved_boxes_give_identical_predictions(project, tmp_path, workers):
    _, first = _predictions(project, FIXTURES / "mini", tmp_path / "a.json", WRAPPED, workers)
    moved = _moved_copy(tmp_path, "moved", 17, 9)
    _, second = _predictions(project, moved, tmp_path / "b.json", WRAPPED, workers)
    assert first.keys() == second.keys() and len(first) == len(WRAPPED) * 8
    for key, record in first.items():
        other = second[key]
        if record["outcome"] == "error":  # the mini set's unreadable image and unusable row
            assert other["outcome"] == "error"
            continue
        assert other["target"] != record["target"]  # the boxes did move
        assert (other["point"], other["box"], other["raw"], other["attempts"]) == (
            record["point"],
            record["box"],
            record["raw"],
            record["attempts"],
        ), key
        assert other["meta"]["crops"] == record["meta"]["crops"], key
    # and the strategies really cropped: more than one call, a final crop smaller than the screen
    assert all(r["attempts"] >= 2 for r in first.values() if r["outcome"] in ("hit", "miss"))
    assert any(r["meta"]["final_crop"] != [0, 0, 160, 120] for r in first.values() if r["meta"])
    # the original boxes are hit, the moved ones mostly missed: outcomes depend on the target, clicks do not
    assert sum(r["outcome"] == "hit" for r in first.values()) > sum(r["outcome"] == "hit" for r in second.values())


@SERIAL
def test_wrapped_detectors_run_with_attempts_in_the_summary(project, tmp_path, workers):
    result, _ = _predictions(project, FIXTURES / "mini", tmp_path / "r.json", ["colour", *WRAPPED], workers)
    summary = read_json(tmp_path / "r.json")["summary"]
    assert summary["colour"]["mean_attempts"] == 1.0
    assert summary["colour+zoom:min_size=32"]["mean_attempts"] > 1.0
    info = read_json(tmp_path / "r.json")["run"]["detectors"]["colour+zoom:min_size=32"]
    assert info["strategy"] == "zoom" and info["options"]["min_size"] == 32
    result.stdout.fnmatch_lines(["detector colour+zoom:min_size=32  (zoom (rounds=3, factor=0.5, min_size=32) around*"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("colour+zom", "*--detector colour+zom: unknown strategy 'zom'*Did you mean 'zoom'?*"),
        ("colour+zoom:round=2", "*strategy part 'zoom:round=2': strategy 'zoom' has no option 'round'*rounds*"),
        ("colour+zoom:rounds=0", "*strategy part 'zoom:rounds=0': rounds=0: at least 1*"),
        ("colour+regrounding:size=big", "*strategy part 'regrounding:size=big'*expected a whole number*"),
        ("nosuch+zoom", "*--detector nosuch+zoom: unknown detector 'nosuch'*"),
    ],
)
def test_a_bad_strategy_spec_is_a_usage_error_naming_the_part(project, spec, message):
    result = project.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector", spec)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


def test_a_project_registers_its_own_strategy(project, tmp_path):
    project.makeconftest(
        (project.path / "conftest.py").read_text()
        + """

class Twice:
    name = "twice"

    def __init__(self, detector, /, *, times: int = 2):
        self.inner, self.times = detector, times

    def predict(self, query):
        for _ in range(self.times):
            answer = self.inner.predict(query)
        return Prediction(point=answer.click, meta={"attempts": self.times})


def pytest_grounding_register_strategies(registry):
    registry.register("twice", Twice)
"""
    )
    _, records = _predictions(project, FIXTURES / "mini", tmp_path / "r.json", ["colour+twice:times=3"], [])
    answered = [r for r in records.values() if r["outcome"] != "error"]
    assert {r["attempts"] for r in answered} == {3}
    assert sum(r["outcome"] == "hit" for r in answered) == 5
