"""The omniparser detector: pure geometry against hand-computed cases, the session on a tiny ONNX
model built here, and the real OmniParser v2 icon detector (../shared/models) on generated
screens and on ScreenAgent dev screens."""

import json

import numpy as np
import pytest
from PIL import Image

from helpers import REPO, SERIAL, SHARED_DATA, read_json

pytestmark = pytest.mark.slow  # the fast tier leaves this file out


# Imported here, once: pytester's in-process runs cannot load these extension modules twice. The
# omniparser extra brings them (and rapidfuzz, through ocr); a core install skips this file.
for _module in ("rapidfuzz", "onnxruntime", "cv2"):
    pytest.importorskip(_module)

from pytest_grounding.core.types import Box, Query  # noqa: E402
from pytest_grounding.detectors import _yolo, builtin_registry  # noqa: E402
from pytest_grounding.detectors.omniparser import (  # noqa: E402
    CPU,
    CUDA,
    MODEL_ENV,
    OcrText,
    ParsedElements,
    create_session,
    element_at,
    merge_elements,
    resolve_model,
    snap,
)

SHARED_MODELS = REPO.parent / "shared" / "models"
REAL_MODEL = SHARED_MODELS / "omniparser-v2-icon-detect-640.onnx"
needs_model = pytest.mark.skipif(
    not REAL_MODEL.is_file(), reason=f"{REAL_MODEL} is not here (a user's machine: the AGPL model is not shipped)"
)
DEV = SHARED_DATA / "screenagent-dev" / "data" / "test"


# --- letterbox -----------------------------------------------------------------------------


def test_letterbox_of_a_4_3_screen():
    box = _yolo.Letterbox.fit(1024, 768)
    assert (box.gain, box.new_width, box.new_height, box.left, box.top) == (0.625, 640, 480, 0, 80)
    assert box.to_original(np.array([[0, 80, 640, 560]])).tolist() == [[0, 0, 1024, 768]]
    assert box.to_original(np.array([[64, 144, 128, 208]])).tolist() == [[102.4, 102.4, 204.8, 204.8]]


def test_letterbox_odd_padding_and_clipping():
    # 100x33: gain 6.4, height round(211.2) = 211, padding 429 split 214 above, 215 below
    box = _yolo.Letterbox.fit(100, 33)
    assert (box.new_width, box.new_height, box.left, box.top) == (640, 211, 0, 214)
    # a box reaching into the padding is clipped to the image
    assert box.to_original(np.array([[-10, 200, 64, 278]])).tolist() == [[0, 0, 10, 10]]
    np.testing.assert_allclose(box.to_letterbox(box.to_original(np.array([[32, 220, 64, 240]]))), [[32, 220, 64, 240]])


def test_letterbox_image_pads_centred_with_114():
    tensor, box = _yolo.letterbox_image(Image.new("RGB", (200, 100), (255, 0, 0)), size=64)
    assert tensor.shape == (1, 3, 64, 64) and tensor.dtype == np.float32
    assert (box.top, box.new_height) == (16, 32)
    assert tensor[0, :, 0, 0].tolist() == pytest.approx([114 / 255] * 3)  # padding above
    assert tensor[0, :, 63, 63].tolist() == pytest.approx([114 / 255] * 3)  # padding below
    assert tensor[0, :, 32, 32].tolist() == pytest.approx([1.0, 0.0, 0.0])  # the red image, RGB order


# --- decode and NMS ------------------------------------------------------------------------


def _raw(rows):
    """[1, 5, N] from rows of (cx, cy, w, h, score)."""
    return np.array(rows, dtype=np.float32).T[None]


def test_decode_keeps_scores_above_conf_as_corner_boxes():
    boxes, scores = _yolo.decode(_raw([(50, 60, 20, 10, 0.9), (10, 10, 4, 4, 0.05), (100, 100, 8, 6, 0.3)]), 0.05)
    assert boxes.tolist() == [[40, 55, 60, 65], [96, 97, 104, 103]]  # 0.05 is not above 0.05
    assert scores.tolist() == pytest.approx([0.9, 0.3])


def test_nms_drops_boxes_overlapping_a_better_one():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [20, 20, 30, 30], [0, 5, 10, 15]], dtype=float)
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    # IoU with the first: 90/110 = 0.82 and 50/150 = 0.33
    assert _yolo.nms(boxes, scores, 0.1).tolist() == [0, 2]
    assert _yolo.nms(boxes, scores, 0.5).tolist() == [0, 2, 3]
    assert _yolo.nms(boxes, scores, 0.9).tolist() == [0, 1, 2, 3]
    assert _yolo.nms(np.zeros((0, 4)), np.zeros(0), 0.1).tolist() == []


def test_detections_map_back_to_the_original_frame():
    letterbox = _yolo.Letterbox.fit(1280, 960)  # gain 0.5, 80 px above and below
    raw = _raw([(150, 230, 100, 100, 0.9), (155, 230, 100, 100, 0.5), (600, 400, 20, 20, 0.02)])
    boxes, scores = _yolo.detections(raw, letterbox, conf=0.05, iou=0.1)
    assert boxes.tolist() == [[200, 200, 400, 400]] and scores.tolist() == pytest.approx([0.9])


# --- OmniParser's merge --------------------------------------------------------------------


def test_overlap_is_the_largest_of_iou_and_containment():
    assert _yolo.overlap((0, 0, 10, 10), (0, 0, 10, 10)) == pytest.approx(1.0)
    assert _yolo.overlap((0, 0, 100, 100), (10, 10, 20, 20)) == pytest.approx(1.0)  # small inside large
    assert _yolo.overlap((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(0.5)
    assert _yolo.overlap((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0


def test_merge_keeps_the_smaller_of_two_overlapping_icons():
    elements = _yolo.merge([(0, 0, 100, 100), (10, 10, 50, 50), (200, 0, 220, 20)], [])
    assert [e.box for e in elements] == [(10, 10, 50, 50), (200, 0, 220, 20)]
    # 0.7 is OmniParser's threshold: two boxes sharing half of each other stay
    assert len(_yolo.merge([(0, 0, 10, 10), (5, 0, 15, 10)], [])) == 2


def test_merge_text_inside_icon_becomes_its_content_and_icon_inside_text_goes():
    icons = [(0, 0, 100, 30), (300, 0, 310, 10), (500, 500, 520, 520)]
    texts = [
        ((10, 5, 50, 25), "Save"),
        ((55, 5, 95, 25), "As"),
        ((290, 0, 400, 20), "Long text line"),
        ((600, 0, 700, 20), "Alone"),
    ]
    elements = _yolo.merge(icons, texts, icon_scores=[0.9, 0.8, 0.7])
    as_tuples = [(e.type, e.box, e.content, e.texts) for e in elements]
    assert as_tuples == [
        ("text", (290, 0, 400, 20), "Long text line", (2,)),
        ("text", (600, 0, 700, 20), "Alone", (3,)),
        ("icon", (0, 0, 100, 30), "Save As", (0, 1)),  # both texts are > 80% inside the button
        ("icon", (500, 500, 520, 520), None, ()),  # the icon at 300 lies inside the text line: dropped
    ]
    assert elements[2].score == 0.9


def test_merge_text_mostly_outside_an_icon_stays_text():
    # 60% of the text lies in the icon, 50% of the icon in the text: both under OmniParser's 80%
    elements = _yolo.merge([(0, 0, 60, 40)], [((0, 0, 100, 20), "Partly")])
    assert [(e.type, e.content) for e in elements] == [("text", "Partly"), ("icon", None)]


def test_merge_elements_uses_ocr_lines_not_words():
    texts = [
        OcrText("File Edit", (0, 0, 60, 10), "line", 2),
        OcrText("File", (0, 0, 25, 10), "word", 2),
        OcrText("Edit", (35, 0, 60, 10), "word", 2),
    ]
    elements = merge_elements([(33, 0, 58, 10)], [0.5], texts)
    assert [(e.type, e.content) for e in elements] == [("text", "File Edit")]  # the icon lies in the line


# --- choosing the element for a matched text, and the element at a point --------------------


def _icon(box):
    return _yolo.Element("icon", box, None)


def test_snap_label_inside_a_button_answers_the_button():
    assert snap((110, 105, 150, 115), "Click OK", [_icon((100, 100, 160, 120))]) == ((100, 100, 160, 120), "inside")


def test_snap_does_not_take_a_row_or_a_panel_for_a_button():
    text = (40, 105, 80, 115)
    row = _icon((10, 100, 200, 120))  # text off the row's middle
    panel = _icon((0, 0, 120, 220))  # text in the middle but 66 times its area
    assert snap(text, "Select config", [row, panel]) == (text, "text")


def test_snap_label_beside_a_checkbox_only_for_a_toggle():
    text, box = (30, 100, 90, 112), _icon((12, 99, 26, 113))
    assert snap(text, "Untick the 'Whole word' checkbox", [box]) == ((12, 99, 26, 113), "beside")
    assert snap(text, "Click Whole word", [box]) == (text, "text")
    far = _icon((-30, 99, -16, 113))  # 46 px away: not its checkbox
    assert snap(text, "Tick Whole word", [far]) == (text, "text")


def _parsed(elements, texts=()):
    return ParsedElements(tuple(elements), tuple(texts), (), 0, 0.0, 0.0)


def test_element_at_smallest_containing_then_word_then_nearest():
    texts = [
        OcrText("File Edit View", (0, 0, 100, 10), "line", 3),
        OcrText("File", (0, 0, 25, 10), "word", 3),
        OcrText("Edit", (35, 0, 60, 10), "word", 3),
        OcrText("View", (70, 0, 100, 10), "word", 3),
    ]
    elements = [
        _yolo.Element("text", (0, 0, 100, 10), "File Edit View", (0,)),
        _icon((200, 200, 300, 300)),
        _icon((240, 240, 260, 260)),
    ]
    parsed = _parsed(elements, texts)
    assert element_at((250, 250), parsed) == ((240, 240, 260, 260), "icon", None)
    assert element_at((210, 210), parsed) == ((200, 200, 300, 300), "icon", None)
    assert element_at((40, 5), parsed) == ((35, 0, 60, 10), "text", "Edit")
    assert element_at((30, 5), parsed) == ((0, 0, 100, 10), "text", "File Edit View")  # between words
    assert element_at((303, 250), parsed, radius=4) == ((200, 200, 300, 300), "icon", None)
    assert element_at((310, 250), parsed, radius=4) is None


# --- the session, on a tiny model with the real one's input and output --------------------


def tiny_model(path, rows):
    """A model with OmniParser's input `images` [1,3,640,640] and output `output0` [1,5,8400]:
    the constant raw output `rows` (cx, cy, w, h, score), plus 0 * the mean of the input (so the
    input is used)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    raw = np.zeros((1, 5, 8400), dtype=np.float32)
    raw[0, :, : len(rows)] = np.array(rows, dtype=np.float32).T
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean"], keepdims=1),
        helper.make_node("Reshape", ["mean", "shape"], ["mean3"]),
        helper.make_node("Mul", ["mean3", "zero"], ["nothing"]),
        helper.make_node("Add", ["raw", "nothing"], ["output0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-omniparser",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 640, 640])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 5, 8400])],
        initializer=[
            numpy_helper.from_array(raw, "raw"),
            numpy_helper.from_array(np.zeros(1, np.float32), "zero"),
            numpy_helper.from_array(np.array([1, 1, 1], np.int64), "shape"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


@pytest.fixture
def tiny(tmp_path):
    # one box at (150, 230) 100x100 in the letterbox: (200, 200, 400, 400) on a 1280x960 screen
    return tiny_model(
        tmp_path / "tiny.onnx", [(150, 230, 100, 100, 0.9), (155, 232, 100, 100, 0.4), (600, 400, 20, 20, 0.01)]
    )


def test_session_asks_for_cuda_when_listed_and_reads_back_what_runs(tiny, monkeypatch):
    import onnxruntime as ort

    monkeypatch.setattr(ort, "get_available_providers", lambda: [CUDA, CPU])
    session, requested, used = create_session(tiny, "auto")
    assert requested == [CUDA, CPU]
    assert used == session.get_providers() and used[-1] == CPU
    _, requested, used = create_session(tiny, "cpu")
    assert requested == [CPU] and used == [CPU]
    monkeypatch.setattr(ort, "get_available_providers", lambda: [CPU])
    assert create_session(tiny, "auto")[1] == [CPU]
    with pytest.raises(ValueError, match="device"):
        create_session(tiny, "gpu")


def test_detector_on_the_tiny_model_without_ocr(tiny):
    from pytest_grounding.detectors.omniparser import OmniParserDetector
    from pytest_grounding.evaluate.locate import LocateQuery

    detector = OmniParserDetector(model=str(tiny), ocr=False, threads=1)
    image = Image.new("RGB", (1280, 960), "white")
    boxes, scores = detector.detect_icons(image)
    assert boxes.tolist() == [[200, 200, 400, 400]] and scores.tolist() == pytest.approx([0.9])
    located = detector.locate(LocateQuery(image, (300, 300)))
    assert located.box == Box(200, 200, 400, 400) and located.meta["element_type"] == "icon"
    assert detector.locate(LocateQuery(image, (900, 900))).box is None
    answer = detector.predict(Query(image, "Click OK"))
    assert answer.click is None and "ocr=false" in answer.meta["reason"]
    info = detector.describe()
    assert info["providers"] == detector.providers == detector._session.get_providers()
    assert ", ".join(detector.providers) in info["headline"] and "icons only" in info["headline"]
    if CUDA in info["providers_requested"] and CUDA not in info["providers"]:  # onnxruntime-gpu, no GPU
        # the header names the provider that runs, without the CUDA noise; the JSON keeps it
        assert "not usable" not in info["headline"] and CUDA not in info["headline"] and info["provider_note"]
    assert detector.parse_calls == 1  # one parse per screen, reused by predict and locate
    detector.close()


def test_elements_lists_the_parsed_icons_for_annotate(tiny, tmp_path, capsys):
    from pytest_grounding.cli.curation import annotate
    from pytest_grounding.detectors.base import ElementLister, ListedElement

    spec = f"omniparser:model={tiny},ocr=false,threads=1"
    detector = annotate.load_lister(spec)
    assert isinstance(detector, ElementLister)
    image = Image.new("RGB", (1280, 960), "white")
    assert detector.elements(image) == [ListedElement(Box(200, 200, 400, 400), "icon", None)]
    assert detector.elements(image.copy()) and detector.parse_calls == 1  # the same pixels: parsed once
    image.save(tmp_path / "screen.png")
    assert annotate.run_annotate(tmp_path, spec, tmp_path / "annotations.json") == 0
    (sample,) = read_json(tmp_path / "annotations.json")["samples"]
    assert sample["elements"] == [
        {
            "id": "e0",
            "bbox": [0.15625, 0.2083333333, 0.3125, 0.4166666667],
            "text": "",
            "instruction": "",
            "type": "icon",
            "status": "draft",
        }
    ]
    detector.close()


def test_selector_gets_the_numbered_list_and_the_picture_and_answers_an_element(tiny, monkeypatch):
    import base64
    import io
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from pytest_grounding.detectors.omniparser import SELECTOR_KEY_ENV, OmniParserDetector

    seen = []

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, self.headers.get("Authorization"), body))
            reply = json.dumps({"choices": [{"message": {"content": answers.pop(0)}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    answers = ["ID 0", "I cannot tell"]
    server = HTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(SELECTOR_KEY_ENV, "sk-test-secret")
    try:
        detector = OmniParserDetector(
            model=str(tiny),
            ocr=False,
            threads=1,
            selector_model="picker",
            selector_url=f"http://127.0.0.1:{server.server_port}/v1",
        )
        image = Image.new("RGB", (1280, 960), "white")
        answer = detector.predict(Query(image, "Click the big square"))
        assert answer.box == Box(200, 200, 400, 400) and answer.meta["selected"] == 0 and answer.raw == "ID 0"
        wrong = detector.predict(Query(image, "Click the big square"))
        assert wrong.click is None and wrong.raw == "I cannot tell"  # wrong format, not a crash
        info = json.dumps(detector.describe())
        assert "sk-test-secret" not in info and '"key_set": true' in info
    finally:
        server.shutdown()
    path, auth, body = seen[0]
    assert path == "/v1/chat/completions" and auth == "Bearer sk-test-secret" and body["model"] == "picker"
    text, picture = body["messages"][0]["content"]
    assert "ID 0, icon: (no text)" in text["text"] and "Click the big square" in text["text"]
    png = base64.b64decode(picture["image_url"]["url"].split(",", 1)[1])
    marked = Image.open(io.BytesIO(png))
    assert marked.size == (1280, 960) and marked.getpixel((200, 300)) != (255, 255, 255)  # the box is drawn
    with pytest.raises(ValueError, match="together"):
        OmniParserDetector(model=str(tiny), ocr=False, selector_url="http://127.0.0.1:1/v1")


@SERIAL
def test_omniparser_runs_in_the_suite_and_reports_its_provider(project, workers, tiny, tmp_path):
    from pytest_grounding.datasets.synth import generate

    screens = generate(tmp_path / "syn", count=4, seed=2)
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={screens}",
        "--detector",
        f"omniparser:model={tiny},ocr=false",
        "--grounding-json",
        str(report),
        *workers,
    )
    assert result.ret in (0, 1)  # icons only: nothing to match, every sample a wrong-format miss
    document = read_json(report)
    (spec,) = document["run"]["detectors"]  # keyed by the --detector spec, options included
    info = document["run"]["detectors"][spec]
    assert spec.startswith("omniparser:") and info["ocr"] is None
    assert info["providers"] and set(info["providers"]) <= {CUDA, CPU}
    block = document["summary"][spec]
    assert block["samples"] == 4 and block["errors"] == 0 and block["wrong_format"] == 4
    result.stdout.fnmatch_lines(
        [f"detector omniparser:*  (OmniParser v2 icon detector * providers {', '.join(info['providers'])}*icons only*"]
    )


def test_missing_model_says_where_it_looked_and_how_to_make_it(tmp_path, monkeypatch):
    monkeypatch.delenv(MODEL_ENV, raising=False)
    monkeypatch.setenv("PYTEST_GROUNDING_CACHE", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        resolve_model()
    message = str(info.value)
    assert str(tmp_path / "models" / "omniparser-v2-icon-detect-640.onnx") in message and "yolo export" in message
    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "elsewhere.onnx"))
    with pytest.raises(FileNotFoundError, match=r"elsewhere\.onnx"):
        resolve_model()
    (tmp_path / "mine.onnx").write_bytes(b"")
    assert resolve_model(str(tmp_path / "mine.onnx")) == tmp_path / "mine.onnx"


def test_registered_as_a_builtin():
    assert "omniparser" in builtin_registry().names()


# --- the real OmniParser v2 icon detector ---------------------------------------------------


@pytest.fixture(scope="module")
def icons_only():
    from pytest_grounding.detectors.omniparser import OmniParserDetector

    return OmniParserDetector(model=str(REAL_MODEL), ocr=False)


def _covers(box, target):
    """A detected box around the control: at least 80% of the target inside it, and not a whole
    panel (at most 8 times the target's area). The synthetic targets of icon buttons are their
    glyphs, tighter than the button the detector boxes, so IoU alone undercounts."""
    return _yolo.inside_share(target.as_list(), box) >= 0.8 and _yolo.area(box) <= 8 * target.area


@needs_model
def test_real_model_finds_the_known_controls_of_synthetic_screens(icons_only, tmp_path):
    from pytest_grounding.datasets.synth import generate

    folder = generate(tmp_path / "syn", 30, seed=3) / "data" / "test"
    rows = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines()]
    controls = [r for r in rows if r["element_type"] in ("icon", "other")]
    assert len(controls) >= 8
    found, tight, screens = 0, 0, {}
    for row in controls:
        if row["file_name"] not in screens:
            screens[row["file_name"]] = icons_only.detect_icons(Image.open(folder / row["file_name"]))[0].tolist()
        target = Box(*row["bbox"])
        boxes = screens[row["file_name"]]
        found += any(_covers(b, target) for b in boxes)
        tight += any(target.iou(Box(*b)) >= 0.5 for b in boxes)
    assert all(len(b) >= 5 for b in screens.values())  # every screen has controls to find
    assert found > len(controls) / 2, f"{found} of {len(controls)} known controls boxed"
    assert tight >= 1


@needs_model
@pytest.mark.skipif(not DEV.is_dir(), reason=f"{DEV} is not here")
def test_real_model_on_screenagent_dev_screens(icons_only):
    rows = [json.loads(line) for line in (DEV / "metadata.jsonl").read_text().splitlines()][:8]
    hits = 0
    for row in rows:
        image = Image.open(DEV / row["file_name"])
        boxes, scores = icons_only.detect_icons(image)
        width, height = image.size
        assert len(boxes) >= 10, row["id"]  # real desktops are full of controls
        assert (scores > 0.05).all() and (np.diff(scores) <= 0).all()
        assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= width).all() and (boxes[:, 3] <= height).all()
        target = Box(*row["bbox"])
        hits += any(b.contains(target.center) for b in map(lambda v: Box(*v), boxes.tolist()))
    assert hits >= len(rows) / 2, f"a box at the target's centre on {hits} of {len(rows)} screens"
