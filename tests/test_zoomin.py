"""`+zoomin`: two-stage zoom-in as its own configuration (issue 28). The second stage crops the
authors' share of the screen around the first answer (ClawGUI's Gemini: 25% of the sides, resized
to 1920x1080), maps back exactly, is named in the headline and summary and compared with
single-stage; and it never sees the ground truth: moving the boxes leaves every prediction as it was."""

import json
import shutil

import numpy as np
import pytest
from PIL import Image, ImageDraw

from helpers import FIXTURES, SERIAL, LoopbackServer, decode_data_url, json_body, needs_openai, read_json
from pytest_grounding.core.types import Prediction, Query

COLOURS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (40, 70, 220)}  # the mini fixture's squares


class Finder:
    """A detector that clicks the named colour's centre in the image it is given, and logs the sizes."""

    def __init__(self):
        self.seen = []

    def predict(self, query):
        pixels = np.asarray(query.image.convert("RGB")).astype(int)
        self.seen.append(query.image.size)
        word = next(c for c in COLOURS if c in query.instruction.lower())
        ys, xs = np.nonzero(np.all(np.abs(pixels - COLOURS[word]) < 40, axis=-1))
        if not len(xs):
            return Prediction.no_answer(raw="none")
        return Prediction(point=(float(xs.mean()), float(ys.mean())))


def screen(size, box, colour="red"):
    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).rectangle(box, fill=COLOURS[colour])
    return image


@pytest.mark.slow
def test_zoomin_crops_the_share_around_the_first_answer_and_maps_back():
    from pytest_grounding.detectors.strategies.zoomin import ZoomIn

    inner = Finder()
    zoom = ZoomIn(inner, ratio=0.25)
    prediction = zoom.predict(Query(screen((6016, 3384), (4000, 2000, 4119, 2059)), "Click the red square"))
    # 25% of 6016x3384 = 1504x846 around (4059.5, 2029.5): x 3307.5 -> 3308..4812, y 1606.5 -> 1607..2453
    assert inner.seen == [(6016, 3384), (1504, 846)]
    assert prediction.meta["crops"][1] == [3308.0, 1607.0, 4812.0, 2453.0]
    assert prediction.point == pytest.approx((4059.5, 2029.5))
    assert prediction.meta["first_stage"] == pytest.approx([4059.5, 2029.5]) and prediction.meta["attempts"] == 2


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_zoomin_takes_the_authors_crop_for_the_preset_and_resizes_like_them():
    from pytest_grounding.detectors.strategies.zoomin import ZoomIn

    inner = Finder()
    inner.preset = type("P", (), {"name": "gemini-point"})()  # what an openai detector carries
    zoom = ZoomIn(inner)
    assert zoom.options() == {"ratio": 0.25, "resize": "1920x1080"} and "gemini_inferencer.py" in zoom.source
    prediction = zoom.predict(Query(screen((6016, 3384), (4000, 2000, 4119, 2059)), "Click the red square"))
    assert inner.seen == [(6016, 3384), (1920, 1080)]  # the crop resized as ClawGUI sends it
    assert prediction.point == pytest.approx((4059.5, 2029.5), abs=1.0)  # back through the per-axis scale
    other = Finder()
    assert ZoomIn(other).source.endswith("no published crop for this preset") and ZoomIn(other).ratio == 0.5
    headline = ZoomIn(Finder(), ratio=0.3).describe()["headline"]
    assert headline.startswith("zoomin (ratio=0.3, resize=none) around")
    with pytest.raises(ValueError, match="ratio"):
        ZoomIn(Finder(), ratio=1.5)
    with pytest.raises(ValueError, match="resize"):
        ZoomIn(Finder(), resize="big")


# ---------------------------------------------------------------------------------------------------------------
# End to end: the openai detector with preset qwen3-vl (0-1000 of the image received) against a loopback server
# that finds the named square in what it receives; single-stage and +zoomin in one run; then the boxes moved.
def answer(body):
    url = next(
        p["image_url"]["url"]
        for m in body["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    )
    image = decode_data_url(url)
    texts = [p["text"] for m in body["messages"] if isinstance(m["content"], list) for p in m["content"] if "text" in p]
    word = next((c for c in COLOURS if any(c in t.lower() for t in texts)), "red")
    pixels = np.asarray(image).astype(int)
    ys, xs = np.nonzero(np.all(np.abs(pixels - COLOURS[word]) < 40, axis=-1))
    if not len(xs):
        return "[-1,-1]"
    return f"[{round(xs.mean() / image.size[0] * 1000)},{round(ys.mean() / image.size[1] * 1000)}]"


@pytest.fixture(scope="module")
def server():
    loopback = LoopbackServer(
        lambda handler: (
            200,
            {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer(json_body(handler))}}]},
        )
    )
    yield loopback
    loopback.close()


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    return pytester


def mirrored(folder):
    """The mini dataset with every target box (and point) mirrored left to right inside its 160 px wide
    screen, away from where it was: the images untouched."""
    path = folder / "data" / "test" / "metadata.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def flip(box):
        return [160 - box[2], box[1], 160 - box[0], box[3]]

    for row in rows:
        row["bbox"] = flip(row["bbox"])
        if row.get("point"):
            row["point"] = [160 - row["point"][0], row["point"][1]]
        if isinstance(row.get("eval"), dict) and row["eval"].get("bbox"):
            row["eval"]["bbox"] = flip(row["eval"]["bbox"])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@needs_openai
@pytest.mark.slow
@SERIAL
def test_zoomin_end_to_end_named_compared_and_blind_to_the_boxes(suite, server, workers, tmp_path):
    data = tmp_path / "mini"
    shutil.copytree(FIXTURES / "mini", data)
    plain = f"openai:base_url={server.url},model=m,preset=qwen3-vl"
    zoomed = plain + "+zoomin:ratio=0.5"
    runs = []
    for name in ("before", "after"):
        if name == "after":
            mirrored(data)
        report = tmp_path / f"{name}.json"
        args = [f"--dataset={data}", "--detector", plain, "--detector", zoomed, "--grounding-json", str(report)]
        result = suite.runpytest(*args, "-k", "m01 or m02 or m03", *workers)
        assert result.ret in (0, 1), result.stdout.str()
        runs.append((result, read_json(report)))
    (first, before), (_, after) = runs
    first.stdout.fnmatch_lines(["*zoomin (ratio=0.5, resize=none) around*"])
    info = before["run"]["detectors"][zoomed]
    assert info["strategy"] == "zoomin" and info["options"] == {"ratio": 0.5, "resize": "none"}
    assert info["crop_from"] == "options"

    def points(document):
        return {(r["detector"], r["id"]): r["point"] for r in document["samples"]}

    assert points(before) == points(after)  # the boxes moved, the predictions did not
    zoom_records = [r for r in before["samples"] if r["detector"] == zoomed]
    assert len(zoom_records) == 3 and all(len(r["meta"]["crops"]) == 2 for r in zoom_records)
    assert [r["outcome"] for r in before["samples"]] == ["hit"] * 6
    assert [r["outcome"] for r in after["samples"]] == ["miss"] * 6  # the same clicks, scored on moved boxes
    out = first.stdout.str()
    assert plain in out and zoomed in out
