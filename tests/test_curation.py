"""The curation commands' pure parts and files: the annotations model, box edits, the review's state
machine, the previews, annotate with a stand-in lister, the recorded dataset; the harness loader's and
the checker's handling of statuses. The terminal and X11 sides are in test_curation_tui.py and
test_curation_record.py."""

import base64
import io
import json
import os
import re
from pathlib import Path

import pytest
from PIL import Image

from helpers import SERIAL, assert_counts
from pytest_grounding.cli.curation import annotate, document, preview, record
from pytest_grounding.cli.curation.boxedit import BoxEdit, clamp_box, default_box
from pytest_grounding.cli.curation.review import Review, to_normalized, to_pixels
from pytest_grounding.cli.main import main
from pytest_grounding.core.types import Box
from pytest_grounding.datasets import load_dataset
from pytest_grounding.datasets.validate import check_dataset, validate_path
from pytest_grounding.detectors.base import ListedElement


def element(eid, bbox, text, status="draft", **more):
    return {"id": eid, "bbox": bbox, "text": text, "type": "text", "status": status, **more}


def write_doc(folder: Path, elements, size=(200, 100)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, "white").save(folder / "s.png")
    doc = {
        "version": "1.0",
        "dataset": "demo",
        "samples": [{"id": "s", "image": "s.png", "width": size[0], "height": size[1], "elements": elements}],
    }
    path = folder / "annotations.json"
    path.write_text(json.dumps(doc))
    return path


THREE = [
    element("e0", [0.1, 0.1, 0.3, 0.3], "One"),
    element("e1", [0.4, 0.1, 0.6, 0.3], "Two"),
    element("e2", [0.7, 0.1, 0.9, 0.3], "Three"),
]


# --- box edits ------------------------------------------------------------------------------------


def test_box_edit_moves_the_chosen_edge_and_stays_inside_the_image():
    edit = BoxEdit((20.0, 10.0, 60.0, 30.0), 200, 100)
    assert edit.edge == "left"
    assert edit.key("left").box == (19.0, 10.0, 60.0, 30.0)
    assert edit.key("s-left").box == (10.0, 10.0, 60.0, 30.0)  # Shift: ten steps
    assert edit.key("up").box == edit.box  # the left edge does not move up
    right = edit.key("tab").key("tab")
    assert right.edge == "right" and right.key("right").box == (20.0, 10.0, 61.0, 30.0)
    bottom = right.key("tab")
    assert bottom.edge == "bottom" and bottom.key("s-down").box[3] == 40.0
    for _ in range(8):
        bottom = bottom.key("s-down")
    assert bottom.box == (20.0, 10.0, 60.0, 100.0)  # clamped at the image's bottom
    assert edit.key("s-tab").edge == "box"
    whole = edit.key("s-tab").key("+").key("+")
    assert whole.step == 4 and whole.key("right").box == (24.0, 10.0, 64.0, 30.0)
    assert whole.key("-").step == 2 and edit.key("-").step == 1
    far = edit.key("s-tab")
    for _ in range(30):
        far = far.key("s-right")
    assert far.box == (160.0, 10.0, 200.0, 30.0)  # the whole box stops at the image edge, same size
    squeezed = edit
    for _ in range(10):
        squeezed = squeezed.key("s-right")
    assert squeezed.box[0] == 59.0  # the left edge stops one pixel short of the right one
    assert edit.key("x") is edit


def test_clamp_and_default_box():
    assert clamp_box((-5, -5, 250, 120), 200, 100) == (0.0, 0.0, 200.0, 100.0)
    assert clamp_box((300, 50, 400, 60), 200, 100) == (199.0, 50.0, 200.0, 60.0)
    x1, y1, x2, y2 = default_box(200, 100)
    assert (x2 - x1, y2 - y1) == (10.0, 10.0) and x1 == 95.0 and y1 == 45.0


# --- the document and the review ------------------------------------------------------------------


def test_review_decisions_move_on_and_store_where_they_stopped(tmp_path):
    path = write_doc(tmp_path, [dict(e) for e in THREE])
    review = Review.start(document.load(path))
    assert review.element["id"] == "e0" and review.position() == (1, 3)
    review.accept()
    assert review.element["id"] == "e1"
    review.set_box((80.0, 10.0, 132.0, 30.0))
    review.set_instruction("  Click   Two ")
    review.reject()
    assert review.element["id"] == "e2" and review.document["review"]["at"] == "s/e2"
    document.save(path, review.document)
    saved = json.loads(path.read_text())
    e0, e1, e2 = saved["samples"][0]["elements"]
    assert (e0["status"], e1["status"], e2["status"]) == ("accepted", "rejected", "draft")
    assert e1["bbox"] == [0.4, 0.1, 0.66, 0.3] and e1["instruction"] == "Click Two"
    assert Review.start(document.load(path)).element["id"] == "e2"  # resumes there
    review.accept()
    assert review.done and "at" not in review.document["review"]


def test_skip_comes_round_again_and_resume_falls_forward_to_a_draft(tmp_path):
    path = write_doc(tmp_path, [dict(e) for e in THREE])
    review = Review.start(document.load(path))
    review.skip()
    review.accept()  # e1
    review.accept()  # e2
    assert review.element["id"] == "e0"  # the skipped one, wrapping round
    assert review.drafts_left() == 1
    doc = document.load(path)
    doc["review"] = {"at": "s/e1"}
    doc["samples"][0]["elements"][1]["status"] = "accepted"  # decided since: the next draft after it
    assert Review.start(doc).element["id"] == "e2"
    doc["review"] = {"at": "s/gone"}  # a stored key that no longer exists: the first draft
    assert Review.start(doc).element["id"] == "e0"


def test_added_element_is_accepted_and_edits_drop_a_stale_click_point(tmp_path):
    path = write_doc(tmp_path, [element("e0", [0.1, 0.1, 0.3, 0.3], "One", click_point=[0.2, 0.2])])
    review = Review.start(document.load(path))
    review.add_element((10.0, 50.0, 30.0, 60.0), "Click the new thing")
    added = review.sample["elements"][-1]
    assert added["status"] == "accepted" and added["bbox"] == [0.05, 0.5, 0.15, 0.6] and added["id"] == "added1"
    assert review.element["id"] == "e0"  # still on the element shown
    review.set_box((0.0, 0.0, 10.0, 10.0))
    assert "click_point" not in review.element
    assert to_pixels([0.05, 0.5, 0.15, 0.6], 200, 100) == pytest.approx((10, 50, 30, 60))
    assert to_normalized((10, 50, 30, 60), 200, 100) == [0.05, 0.5, 0.15, 0.6]
    assert document.counts(review.document) == {"draft": 1, "accepted": 1, "rejected": 0}


def test_save_is_atomic_and_keeps_boxes_on_one_line(tmp_path, monkeypatch):
    path = write_doc(tmp_path, [dict(e) for e in THREE])
    doc = document.load(path)
    doc["samples"][0]["elements"][0]["text"] = "[1,\n2]"  # text that looks like a list stays as it is
    document.save(path, doc)
    text = path.read_text()
    assert '"bbox": [0.1, 0.1, 0.3, 0.3]' in text and json.loads(text) == doc
    before = path.read_bytes()

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    doc["samples"][0]["elements"][0]["status"] = "accepted"
    with pytest.raises(OSError, match="disk full"):
        document.save(path, doc)
    assert path.read_bytes() == before  # the old file, whole
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # no temporary left


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "invalid JSON"),
        ('{"samples": 3}', "'samples' list"),
        ('{"samples": [{"elements": []}]}', "samples[0] has no image"),
        ('{"samples": [{"image": "a.png", "elements": [1]}]}', "samples[0].elements"),
    ],
)
def test_load_names_the_file_and_the_fault(tmp_path, content, message):
    path = tmp_path / "annotations.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(document.CurationError, match=re.escape(message)) as info:
        document.load(path)
    assert str(path) in str(info.value)
    assert main(["review", str(path)]) == 2


# --- statuses in the harness loader and the checker -----------------------------------------------


def test_loader_skips_rejected_runs_drafts_and_the_checker_warns(tmp_path, capsys):
    path = write_doc(
        tmp_path,
        [
            element("e0", [0.1, 0.1, 0.3, 0.3], "One", "accepted"),
            element("e1", [0.4, 0.1, 0.6, 0.3], "Two", "rejected"),
            element("e2", [0.7, 0.1, 0.9, 0.3], "Three", "draft"),
            element("e3", [0.7, 0.5, 0.9, 0.7], "", "draft"),  # an icon nobody described yet
            {"id": "e4", "bbox": [0.1, 0.5, 0.3, 0.7], "text": "Old"},  # no status: reviewed by hand
        ],
    )
    dataset = load_dataset(str(path))
    assert [s.id for s in dataset.samples] == ["s-e0", "s-e2", "s-e4"]
    assert [s.extra["status"] for s in dataset.samples] == ["accepted", "draft", "accepted"]
    assert list(dataset.problems) == ["s-e3: draft element without an instruction left out (review it)"]
    kinds = [(p.kind, p.sample_id) for p in check_dataset(dataset)]
    assert ("draft-element", "s-e2") in kinds and ("loader-note", "-") in kinds  # s-e3 is no sample
    assert all(kind in ("draft-element", "loader-note") for kind, _ in kinds)
    assert validate_path(str(path)) == 0  # warnings only
    assert "draft-element: 1" in capsys.readouterr().out


def test_an_unknown_status_is_an_error_naming_it(tmp_path):
    path = write_doc(tmp_path, [element("e0", [0.1, 0.1, 0.3, 0.3], "One", "acepted")])
    (sample,) = load_dataset(str(path)).samples
    assert "unknown status 'acepted'" in sample.defect and str(path) in sample.defect
    assert ("unusable-sample", "s-e0") in [(p.kind, p.sample_id) for p in check_dataset(load_dataset(str(path)))]
    assert validate_path(str(path)) == 1


# --- previews -------------------------------------------------------------------------------------


def test_preview_crops_around_the_box_and_draws_it():
    screen = Image.new("RGB", (1000, 800), "white")
    image = preview.render(screen, (500.0, 400.0, 540.0, 420.0))
    assert image.size == (401, 401)  # at least MIN_CROP around a small box
    left, top = 520 - 200, 410 - 200  # the crop is centred on the box
    assert image.getpixel((500 - left - 2, 410 - top)) == preview.BOX_COLOUR  # the left edge, outside the box
    assert image.getpixel((520 - left, 410 - top)) == (255, 255, 255)  # inside stays visible
    assert preview.render(screen, None).size == (1000, 800)
    assert preview.fit(Image.new("RGB", (1280, 100))).size == (640, 50)


def test_kitty_sequence_carries_the_png_in_chunks():
    png = preview.png_bytes(Image.effect_noise((64, 64), 80).convert("RGB"))
    sequence = preview.kitty_sequence(png, chunk=1024)
    parts = sequence.split("\x1b\\")[:-1]
    assert len(parts) > 1 and parts[0].startswith("\x1b_Ga=T,f=100,m=1;") and parts[-1].startswith("\x1b_Gm=0;")
    payload = "".join(part.split(";", 1)[1] for part in parts)
    assert base64.b64decode(payload) == png


def test_sixel_sequence_has_one_band_per_six_rows_and_the_colours():
    image = Image.new("RGB", (10, 13), (255, 0, 0))
    image.paste((0, 0, 255), (0, 6, 10, 13))
    sequence = preview.sixel_sequence(image)
    assert sequence.startswith('\x1bP0;1;0q"1;1;10;13') and sequence.endswith("\x1b\\")
    assert sequence.count("-") == 3  # 13 rows: bands of 6, 6 and 1
    assert ";2;100;0;0" in sequence and ";2;0;0;100" in sequence
    assert "!10~" in sequence  # a full band of one colour: ten columns of all six bits, run-length encoded


@pytest.mark.parametrize(
    "requested, env, attributes, expected",
    [
        ("auto", {"TERM": "xterm-kitty"}, None, "kitty"),
        ("auto", {"KITTY_WINDOW_ID": "1", "TMUX": "/tmp/t"}, None, "file"),  # through tmux: not trusted
        ("auto", {"TERM": "xterm-256color"}, "\x1b[?62;4;22c", "sixel"),
        ("auto", {"TERM": "xterm-256color"}, "\x1b[?62;22c", "file"),
        ("auto", {"TERM": "xterm-256color"}, "\x1b[?4c", "file"),  # 4 as the class, not an attribute
        ("auto", {}, None, "file"),
        ("sixel", {}, None, "sixel"),
    ],
)
def test_graphics_are_chosen_conservatively(requested, env, attributes, expected):
    assert preview.choose_mode(requested, env, attributes) == expected


# --- annotate -------------------------------------------------------------------------------------


def test_draft_elements_clip_boxes_and_leave_out_empty_ones():
    listed = [
        ListedElement(Box(-10, 10, 50, 30), "text", "  Save   As "),
        ListedElement(Box(150, 90, 250, 150), "icon", None),
        ListedElement(Box(300, 10, 320, 30), "icon", None),  # wholly outside the 200x100 screen
    ]
    out = annotate.draft_elements(listed, 200, 100)
    assert [e["id"] for e in out] == ["e0", "e1"]
    assert out[0] == {
        "id": "e0",
        "bbox": [0.0, 0.1, 0.25, 0.3],
        "text": "Save As",
        "instruction": "Save As",
        "type": "text",
        "status": "draft",
    }
    assert out[1]["bbox"] == [0.75, 0.9, 1.0, 1.0] and out[1]["instruction"] == ""


class FakeLister:
    """Lists two elements per screen wherever they are: annotate's file handling, not a parser."""

    name = "fake"

    def elements(self, image):
        return [ListedElement(Box(1, 1, 11, 11), "icon", "Menu"), ListedElement(Box(20, 5, 60, 15), "text", "Open")]


def test_annotate_writes_drafts_copies_images_and_adds_only_new_screens(tmp_path, monkeypatch, capsys):
    shots = tmp_path / "shots"
    shots.mkdir()
    for name in ("b.png", "a.jpg"):
        Image.new("RGB", (100, 50), "white").save(shots / name)
    (shots / "notes.txt").write_text("not a screenshot")
    monkeypatch.setattr(annotate, "load_lister", lambda spec: FakeLister())
    out = tmp_path / "set" / "annotations.json"
    assert main(["annotate", str(shots), "--detector", "fake", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [s["image"] for s in doc["samples"]] == ["images/a.jpg", "images/b.png"]
    assert (tmp_path / "set" / "images" / "a.jpg").is_file()
    assert all(e["status"] == "draft" for s in doc["samples"] for e in s["elements"])
    assert doc["dataset"] == "set" and doc["samples"][0]["width"] == 100
    assert validate_path(str(out)) == 0
    Image.new("RGB", (100, 50), "white").save(shots / "c.png")
    doc["samples"][0]["elements"][0]["status"] = "accepted"  # a review in between is kept
    out.write_text(json.dumps(doc))
    assert main(["annotate", str(shots), "--detector", "fake", "--out", str(out)]) == 0
    again = json.loads(out.read_text())
    assert [s["image"] for s in again["samples"]] == ["images/a.jpg", "images/b.png", "images/c.png"]
    assert again["samples"][0]["elements"][0]["status"] == "accepted"
    assert "1 new screens" in capsys.readouterr().out


def test_annotate_inside_the_screenshots_folder_copies_nothing(tmp_path, monkeypatch):
    Image.new("RGB", (100, 50), "white").save(tmp_path / "a.png")
    monkeypatch.setattr(annotate, "load_lister", lambda spec: FakeLister())
    assert main(["annotate", str(tmp_path), "--out", str(tmp_path / "annotations.json")]) == 0
    assert json.loads((tmp_path / "annotations.json").read_text())["samples"][0]["image"] == "a.png"
    assert not (tmp_path / "images").exists()


def test_annotate_refuses_a_detector_that_cannot_list_and_an_empty_folder(tmp_path, capsys):
    Image.new("RGB", (100, 50), "white").save(tmp_path / "a.png")
    assert main(["annotate", str(tmp_path), "--detector", "center", "--out", str(tmp_path / "x.json")]) == 2
    message = capsys.readouterr().out
    assert "detector 'center' cannot list a screen's elements" in message and "use ocr or omniparser" in message
    assert main(["annotate", str(tmp_path), "--detector", "nosuch", "--out", str(tmp_path / "x.json")]) == 2
    assert "nosuch" in capsys.readouterr().out
    assert main(["annotate", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.json")]) == 2
    assert "no screenshots" in capsys.readouterr().out
    assert not (tmp_path / "x.json").exists()


class FailingLister(FakeLister):
    def elements(self, image):
        if image.width == 99:
            raise RuntimeError("parser crashed")
        return super().elements(image)


def test_annotate_goes_on_past_a_screen_the_detector_fails_on_or_cannot_read(tmp_path, monkeypatch, capsys):
    Image.new("RGB", (100, 50), "white").save(tmp_path / "a.png")
    Image.new("RGB", (99, 50), "white").save(tmp_path / "b.png")
    (tmp_path / "c.png").write_bytes(b"not a png")
    monkeypatch.setattr(annotate, "load_lister", lambda spec: FailingLister())
    assert main(["annotate", str(tmp_path), "--out", str(tmp_path / "annotations.json")]) == 0
    out = capsys.readouterr().out
    assert f"skipped {tmp_path / 'b.png'}: the detector failed: RuntimeError: parser crashed" in out
    assert f"skipped {tmp_path / 'c.png'}: cannot read the image" in out
    doc = json.loads((tmp_path / "annotations.json").read_text())
    assert [s["image"] for s in doc["samples"]] == ["a.png"]


def test_ocr_lists_label_items_and_leaves_running_text_out():
    pytest.importorskip("rapidfuzz")  # the ocr extra: its module imports the matcher
    from pytest_grounding.detectors.ocr import ScreenText, listed_texts

    def line(text, x, y, gap=4):
        words, left = [], x
        for word in text.split():
            words.append(ScreenText(word, Box(left, y, left + 8 * len(word), y + 14), 0.9, "word", len(text.split())))
            left += 8 * len(word) + gap
        return [ScreenText(text, Box(x, y, words[-1].box.x2, y + 14), 0.9, "line", len(words)), *words]

    texts = [
        *line("File Edit View", 10, 10, gap=18),
        *line("Word Count", 10, 40),
        *line("one two three four five six seven eight nine", 10, 70),
        ScreenText("OK", Box(10, 100, 30, 114), 0.9, "line", 1),
    ]
    listed = listed_texts(texts)
    assert [text for text, _ in listed] == ["File", "Edit", "View", "Word Count", "OK"]
    assert listed[3][1] == Box(10, 40, 86, 54)


# --- record (the dataset side) --------------------------------------------------------------------


def test_widget_box_takes_the_window_under_a_top_level_only():
    top = ((0.0, 0.0, 400.0, 300.0), True)
    frame = ((0.0, 0.0, 400.0, 300.0), False)
    button = ((100.0, 120.0, 238.0, 151.0), False)
    assert record.widget_box([top, frame, button], 800, 600) == button[0]
    assert record.widget_box([top, frame], 800, 600) is None  # Tk's content frame, as large as its top-level
    panel = ((0.0, 0.0, 500.0, 250.0), False)
    assert record.widget_box([((0.0, 0.0, 600.0, 400.0), True), panel], 800, 600) is None  # over a quarter
    assert record.widget_box([top], 800, 600) is None  # a toolkit drawing its widgets itself
    assert record.widget_box([button], 800, 600) is None  # no top-level above it: not a widget
    assert record.widget_box([], 800, 600) is None


def test_around_keeps_the_point_inside_and_the_box_on_screen():
    assert record.around((100, 100), 40, 800, 600) == (80, 80, 120, 120)
    assert record.around((5, 598), 40, 800, 600) == (0, 560, 40, 600)


def test_a_second_recording_session_numbers_after_the_first(tmp_path):
    assert next(record.count_from(tmp_path)) == 1
    for name in ("click-0001.png", "click-0003.png", "click-x.png", "other.png"):
        (tmp_path / name).write_bytes(b"")
    numbers = record.count_from(tmp_path)
    assert (next(numbers), next(numbers)) == (4, 5)


def test_recorded_clicks_make_a_dataset_the_checker_passes(tmp_path):
    (tmp_path / "images").mkdir()
    Image.new("RGB", (800, 600), "grey").save(tmp_path / "images" / "click-0001.png")
    Image.new("RGB", (800, 600), "grey").save(tmp_path / "images" / "click-0002.png")
    doc = document.new_document("rec")
    record.add_click(
        doc, record.Click("images/click-0001.png", 800, 600, (150, 135), (100, 120, 238, 151), record.WINDOW), "Save"
    )
    guess = record.around((400, 300), 40, 800, 600)
    record.add_click(doc, record.Click("images/click-0002.png", 800, 600, (400, 300), guess, record.AROUND), " Open ")
    document.save(tmp_path / "annotations.json", doc)
    first, second = (s["elements"][0] for s in doc["samples"])
    assert first["status"] == "accepted" and second["status"] == "draft" and second["instruction"] == "Open"
    assert first["click_point"] == [0.1875, 0.225]
    samples = load_dataset(str(tmp_path)).samples
    assert [s.id for s in samples] == ["click-0001-click", "click-0002-click"]
    assert samples[0].point == pytest.approx((150, 135)) and samples[0].bbox.as_list() == pytest.approx(
        [100, 120, 238, 151]
    )
    assert validate_path(str(tmp_path), out=io.StringIO()) == 0


def test_record_without_a_display_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    assert main(["record", "--out", str(tmp_path / "rec")]) == 2
    assert "needs an X11 display" in capsys.readouterr().out


@SERIAL
def test_a_recorded_dataset_runs_under_the_suite(tmp_path, project, workers):
    """The same schema from the recorder's pure side, under the suite with and without -n 2 (no X needed)."""
    from PIL import Image

    from pytest_grounding.cli.curation import document, record

    (tmp_path / "rec" / "images").mkdir(parents=True)
    image = Image.new("RGB", (800, 600), "grey")
    image.save(tmp_path / "rec" / "images" / "click-0001.png")
    doc = document.new_document("rec")
    box = (380.0, 280.0, 420.0, 320.0)  # around the screen centre: the center detector hits it
    record.add_click(doc, record.Click("images/click-0001.png", 800, 600, (400, 300), box, record.WINDOW), "Middle")
    document.save(tmp_path / "rec" / "annotations.json", doc)
    result = project.runpytest(f"--dataset={tmp_path / 'rec'}", "--detector=center", *workers)
    assert_counts(result, passed=1)


def test_review_screen_lines_fill_sizes_and_a_missing_image(tmp_path):
    from pytest_grounding.cli.curation import tui

    path = write_doc(tmp_path, [dict(e) for e in THREE])
    doc = document.load(path)
    del doc["samples"][0]["width"], doc["samples"][0]["height"]
    doc["samples"].append({"id": "gone", "image": "gone.png", "elements": [element("e0", [0, 0, 0.5, 0.5], "X")]})
    out = io.StringIO()
    assert tui.fill_sizes(doc, tmp_path, out) is True
    assert (doc["samples"][0]["width"], doc["samples"][0]["height"]) == (200, 100)
    assert "gone.png: cannot read the image" in out.getvalue()
    review = Review.start(doc)
    out = io.StringIO()
    tui.show(review, path, preview.FILE, {}, out)
    text = out.getvalue()
    assert "[1/4] s.png 200x100, element e0: draft, type text" in text and "box: [20, 10, 60, 30] px" in text
    assert f"preview: {tmp_path / tui.PREVIEW_NAME}" in text and (tmp_path / tui.PREVIEW_NAME).is_file()
    review.index = 3  # the screen whose image is missing: said, and no box can be edited
    out = io.StringIO()
    tui.show(review, path, preview.FILE, {}, out)
    assert "image: cannot read gone.png" in out.getvalue() and "box: none" in out.getvalue()
    assert tui.edit_box(review, out) is None and "size is unknown" in out.getvalue()
    out = io.StringIO()
    tui.show(review, path, preview.KITTY, {}, out)  # no image: nothing inline either
    assert "\x1b_G" not in out.getvalue()
    review.index = 0
    out = io.StringIO()
    tui.show(review, path, preview.KITTY, {}, out)
    assert "\x1b_Ga=T,f=100" in out.getvalue() and "preview:" not in out.getvalue()
