"""`audit`: label errors injected into screens of labelled buttons are found; clean samples are not."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import audit_screens
import pytest

from helpers import FIXTURES, SHARED_DATA, needs_shared
from pytest_grounding.analysis import audit as audit_mod
from pytest_grounding.analysis.audit import Run, ScreenRead, audit, consensus, edits, geometry, metadata, named_text
from pytest_grounding.cli.main import main
from pytest_grounding.core.types import Box, Sample

needs_ocr = pytest.mark.skipif(importlib.util.find_spec("rapidocr") is None, reason="the ocr extra is not installed")
KINDS = ("geometry", "text_mismatch", "typo", "ambiguous", "consensus")


def sample(sid="a", instruction="Click Save", box=(10, 10, 50, 30), **fields):
    return Sample("d", sid, sid, Path(f"/x/{fields.pop('image', 's.png')}"), instruction, Box(*box), **fields)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return audit_screens.build(tmp_path_factory.mktemp("audit"))


def drawn_screens(built):
    """What a perfect OCR reads: the labels as drawn."""
    return {path: ScreenRead(audit_screens.SIZE, tuple(texts)) for path, texts in built.texts.items()}


def test_each_injected_kind_is_found_and_clean_samples_are_not(built):
    from pytest_grounding.cli.audit import read_runs
    from pytest_grounding.datasets import load_dataset

    dataset = load_dataset(str(built.root))
    findings = audit(dataset.samples, drawn_screens(built), read_runs(built.runs))
    for kind in KINDS:
        assert audit_screens.flagged(findings, built, kind) >= 3, kind
    assert len(audit_screens.clean_flagged(findings, built)) <= 2
    assert [f.score for f in findings] == sorted((f.score for f in findings), reverse=True)


def test_without_runs_no_consensus_and_without_text_no_text_kinds(built):
    from pytest_grounding.datasets import load_dataset

    dataset = load_dataset(str(built.root))
    blind = {path: ScreenRead(audit_screens.SIZE) for path in built.texts}
    kinds = {f.kind for f in audit(dataset.samples, blind)}
    assert not kinds & {"consensus", "text_mismatch", "typo"}
    assert {"geometry", "ambiguous"} <= kinds


def test_geometry_kinds():
    screen = ScreenRead((100, 80))
    problems = {
        sid: {f.evidence["problem"] for f in geometry(s, screen)}
        for sid, s in {
            "degenerate": sample(box=(10, 10, 10, 30)),
            "tiny": sample(box=(10, 10, 12, 30)),
            "across": sample(box=(90, 10, 120, 30)),
            "outside": sample(box=(110, 10, 130, 30)),
            "oversized": sample(box=(0, 0, 100, 70)),
            "size": sample(image_size=(200, 160)),
            "clean": sample(),
        }.items()
    }
    assert problems == {
        "degenerate": {"degenerate"},
        "tiny": {"tiny"},
        "across": {"across"},
        "outside": {"outside"},
        "oversized": {"oversized"},
        "size": {"size"},
        "clean": set(),
    }


def test_edit_distance_counts_a_swap_as_one_edit():
    assert edits("exprot", "export") == 1
    assert edits("viavdo", "vivado") == 1
    assert edits("colse", "close") == 1
    assert edits("witnin", "within") == 1
    assert edits("pannel", "panel") == 1
    assert edits("garph", "graph") == 1
    assert edits("apple", "orange") == 3  # cut at limit + 1


def test_named_text_prefers_quotes_and_drops_verbs():
    assert named_text('Press the "Save As" button') == (["save", "as"], True)
    assert named_text("Click the Export button") == (["export"], False)


def test_typo_needs_a_near_word_on_the_screen_and_skips_inflections():
    screen = ScreenRead((100, 80), (("Vivado Trains", (0, 0, 60, 10)),))
    found = audit_mod.typos(sample(instruction="generate bitstream in viavdo for train"), screen, set())
    assert [(f.evidence["word"], f.evidence["correction"]) for f in found] == [("viavdo", "vivado")]


def test_text_mismatch_names_the_place_the_text_is_read():
    screen = ScreenRead((200, 80), (("Cancel", (10, 10, 50, 30)), ("Save", (100, 10, 140, 30))))
    found = audit_mod.text_mismatch(sample(instruction="Click Save", box=(8, 8, 52, 32)), screen)
    assert found and found[0].evidence["place"] == [100, 10, 140, 30]
    assert audit_mod.text_mismatch(sample(instruction="Click Save", box=(98, 8, 142, 32)), screen) == []


def test_consensus_needs_most_runs_clustered_outside_the_box():
    target = sample(box=(0, 0, 20, 20))

    def runs(*points):
        return [Run(f"r{i}", {"a": p}) for i, p in enumerate(points)]

    assert consensus(target, runs((100, 100), (102, 98), (99, 101)))
    assert consensus(target, runs((100, 100), (102, 98), (10, 10)))  # two of three
    assert not consensus(target, runs((100, 100), (10, 10), (12, 12)))  # most hit
    assert not consensus(target, runs((100, 100), (300, 10), (10, 300)))  # misses scattered
    assert not consensus(target, runs((100, 100)))  # one run is no consensus


def test_runs_that_click_alike_or_share_a_parser_count_as_one_opinion():
    points = {f"s{i}": (10.0 * i, 5.0) for i in range(10)}
    twin = {sid: (x + 1, y - 1) for sid, (x, y) in points.items()}  # within 3 px everywhere
    other = {sid: (x + 40, y + 40) for sid, (x, y) in points.items()}
    runs = [Run("a", points, "center"), Run("b", twin, "fake"), Run("c", other, "colour")]
    groups = audit_mod.opinions(runs)
    assert [g.runs for g in groups] == [("a", "b"), ("c",)]
    assert "a and b click alike on 10 of 10 samples" in groups[0].why
    parsers = audit_mod.opinions([Run("ocr", points, "ocr"), Run("omni", other, "omniparser:icons=off")])
    assert [g.runs for g in parsers] == [("ocr", "omni")] and "same parser (ocr)" in parsers[0].why
    lines = audit_mod.opinion_lines(groups)
    assert lines == [f"a and b count as one opinion: {groups[0].why} (consensus needs independent runs)"]
    # one sample alike is not "most samples" unless it is every common sample
    few = audit_mod.opinions([Run("x", {"s": (1, 1), "t": (50, 50)}), Run("y", {"s": (1, 1), "t": (90, 90)})])
    assert len(few) == 2


KIND_ARGS = ("--kinds", "consensus,ambiguous", "--json")


def test_identical_runs_make_no_consensus_a_single_run_would_not(built, tmp_path, capsys):
    copy = tmp_path / "copy.jsonl"
    copy.write_text(built.runs[0].read_text().replace('"model0"', '"model9"'))
    out = tmp_path / "audit.json"
    code = main(
        [
            "audit",
            "--dataset",
            str(built.root),
            "--runs",
            str(built.runs[0]),
            str(copy),
            "--no-ocr",
            *KIND_ARGS,
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "run0 and copy count as one opinion: run0 and copy click alike on 41 of 41 samples" in printed
    document = json.loads(out.read_text())
    assert not [f for f in document["findings"] if f["kind"] == "consensus"]
    assert document["opinions"][0]["runs"] == ["run0", "copy"]
    # with an independent run beside the copies, the consensus counts two opinions, and ranks below the label errors
    code = main(
        [
            "audit",
            "--dataset",
            str(built.root),
            "--runs",
            str(built.runs[0]),
            str(copy),
            str(built.runs[1]),
            "--no-ocr",
            *KIND_ARGS,
            str(out),
        ]
    )
    findings = json.loads(out.read_text())["findings"]
    found = [f for f in findings if f["kind"] == "consensus"]
    assert found and all(f["evidence"]["opinions"] == 2 for f in found)
    assert "2 of 2 independent runs" in found[0]["message"] and "run0 = copy" in found[0]["message"]
    kinds = [f["kind"] for f in findings]
    assert kinds.index("consensus") > max(i for i, k in enumerate(kinds) if k == "ambiguous")


def test_a_labelled_run_keeps_its_label(tmp_path, monkeypatch):
    from pytest_grounding.cli import audit as audit_cli
    from pytest_grounding.store import reports

    documents = {}
    for name, label in (("one", "mine"), ("two", None)):
        info = {"kind": "floor"} | ({"label": label} if label else {})
        samples = [{"id": "a", "point": [1, 2], "detector": "center"}]
        documents[name] = {"run": {"detectors": {"center": info}}, "samples": samples}
        (tmp_path / f"{name}.json").write_text("{}")
    monkeypatch.setattr(reports, "read_report", lambda path: documents[path.stem])  # the reading is tested elsewhere
    runs = audit_cli.read_runs([tmp_path / "one.json", tmp_path / "two.json"])
    assert [r.name for r in runs] == ["mine", "two"] and runs[0].detector == "center"


def test_metadata_flags_a_web_category_on_desktop_and_mobile_rows():
    rows = [sample(f"w{i}", app="shop", platform="web") for i in range(3)]
    rows += [sample(f"w{i}f", app="forum", platform="web") for i in range(3)]
    rows += [sample(f"d{i}", app="windows", platform="desktop") for i in range(3)]
    rows += [sample(f"m{i}", app="ios", platform="mobile") for i in range(3)]
    rows += [sample("d-shop", app="shop", platform="desktop"), sample("m-shop", app="shop", platform="mobile")]
    assert sorted(f.id for f in metadata(rows) if f.evidence["field"] == "app") == ["d-shop", "m-shop"]


def test_near_identical_screens_with_conflicting_boxes_are_ambiguous():
    a = sample("a", "Open the menu", (0, 0, 20, 20), image="one.png")
    b = sample("b", "Open the menu", (50, 50, 70, 70), image="two.png")
    screens = {"/x/one.png": ScreenRead((100, 80), phash=0b1011), "/x/two.png": ScreenRead((100, 80), phash=0b1010)}
    found = audit_mod.duplicates([a, b], screens)
    assert sorted(f.id for f in found if f.kind == "ambiguous") == ["a", "b"]
    far = {**screens, "/x/two.png": ScreenRead((100, 80), phash=(1 << 40) - 1)}
    assert audit_mod.duplicates([a, b], far) == []


def test_the_command_writes_json_and_html_without_ocr(built, tmp_path, capsys):
    out, page = tmp_path / "audit.json", tmp_path / "audit.html"
    runs = [str(p) for p in built.runs]
    code = main(
        ["audit", "--dataset", str(built.root), "--runs", *runs, "--no-ocr", "--json", str(out), "--html", str(page)]
    )
    assert code == 0
    printed = capsys.readouterr()
    assert "findings on" in printed.out and "audit: samples" in printed.err
    document = json.loads(out.read_text())
    assert document["runs"] == ["run0", "run1", "run2"] and document["ocr"] is False
    for kind in ("geometry", "ambiguous", "consensus"):
        assert audit_screens.flagged(document["findings"], built, kind) >= 3, kind
    consensus_finding = next(f for f in document["findings"] if f["kind"] == "consensus")
    assert set(consensus_finding["clicks"]) == {"run0", "run1", "run2"}
    text = page.read_text()
    assert text.count("class=f>") == len(document["findings"]) and "data:image/jpeg;base64," in text


def test_the_command_refuses_an_unknown_kind_and_a_missing_dataset(tmp_path, capsys):
    assert main(["audit", "--dataset", str(tmp_path / "nothing"), "--no-ocr"]) == 2
    assert main(["audit", "--dataset", str(tmp_path), "--kinds", "geometry,spelling"]) == 2
    assert "spelling" in capsys.readouterr().err
    assert main(["audit"]) == 2


@pytest.mark.slow
@needs_ocr
def test_the_command_with_ocr_finds_every_injected_kind(built, tmp_path):
    out = tmp_path / "audit.json"
    runs = [str(p) for p in built.runs]
    assert main(["audit", "--dataset", str(built.root), "--runs", *runs, "--json", str(out)]) == 0
    findings = json.loads(out.read_text())["findings"]
    for kind in KINDS:
        assert audit_screens.flagged(findings, built, kind) >= 3, kind
    assert len(audit_screens.clean_flagged(findings, built)) <= 3
    mismatch = next(f for f in findings if f["kind"] == "text_mismatch")
    assert mismatch["ocr_in_box"]  # the text read where the box is: the other button's label


@needs_shared
def test_screenspot_v1_geometry_and_metadata_without_ocr(tmp_path):
    out = tmp_path / "audit.json"
    spec = f"screenspot:{SHARED_DATA / 'screenspot-v1'}"
    assert main(["audit", "--dataset", spec, "--no-ocr", "--kinds", "geometry,metadata", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["dataset"]["samples"] == 1272


def test_screens_that_cannot_be_read_are_listed(tmp_path, capsys):
    """fixtures/mini: broken.png does not decode, missing.png is not there."""
    out, page = tmp_path / "audit.json", tmp_path / "audit.html"
    mini = str(FIXTURES / "mini")
    assert main(["audit", "--dataset", mini, "--no-ocr", "--json", str(out), "--html", str(page)]) == 0
    unread = {Path(e["image"]).name: e for e in json.loads(out.read_text())["unread_screens"]}
    assert set(unread) == {"broken.png", "missing.png"}
    assert unread["broken.png"]["samples"] == ["m07"] and unread["missing.png"]["samples"] == ["m08"]
    assert "FileNotFoundError" in unread["missing.png"]["problem"]
    printed = capsys.readouterr().out
    assert "2 screens not read (2 samples" in printed and "missing.png: FileNotFoundError" in printed
    assert "2 screens not read</h2>" in page.read_text()


def test_runs_of_another_dataset_are_refused_and_stray_ids_left_out(tmp_path, capsys):
    mini = str(FIXTURES / "mini")
    other = tmp_path / "other.jsonl"  # the same ids, made on other annotation files
    other.write_text(
        "".join(
            json.dumps({"id": f"m0{i}", "detector": "x", "point": [1, 1], "dataset": "v2", "fingerprint": "f" * 16})
            + "\n"
            for i in range(1, 7)
        )
    )
    assert main(["audit", "--dataset", mini, "--runs", str(other), "--no-ocr"]) == 2
    err = capsys.readouterr().err
    assert "was made on another dataset: v2 (fingerprint ffffffffffffffff): 6 records, not on mini" in err
    stranger = tmp_path / "stranger.jsonl"  # no fingerprint: known by its ids alone
    stranger.write_text("".join(json.dumps({"id": f"pbp_{i}", "point": [1, 1]}) + "\n" for i in range(3)))
    assert main(["audit", "--dataset", mini, "--runs", str(stranger), "--no-ocr"]) == 2
    assert "none of its sample ids is a sample of mini" in capsys.readouterr().err
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(stranger.read_text() + json.dumps({"id": "m05", "point": [80, 60]}) + "\n")
    out = tmp_path / "audit.json"
    assert main(["audit", "--dataset", mini, "--runs", str(mixed), "--no-ocr", "--json", str(out)]) == 0
    assert "3 ids are no sample of mini" in capsys.readouterr().err
    assert json.loads(out.read_text())["runs"] == ["mixed"]
