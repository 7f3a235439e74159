"""The headline first (render/html/headline.py and the end of the run): the HTML page opens with a
card per detector, its accuracy with interval and n, the gates' verdict, wrong formats and errors,
the run's metadata folded below; a one-detector page draws no one-point scatter; a gated run's last
line is the gates' verdict, after pytest's counts, with the page's path just above it."""

import re

import pytest

from helpers import FIXTURES, SERIAL, make_project, read_json
from pytest_grounding.render.html import render

MINI = str(FIXTURES / "mini")


@pytest.fixture
def project(pytester):
    from conftest import PROJECT_CONFTEST

    return make_project(pytester, PROJECT_CONFTEST)


def page_of(project, tmp_path, *args):
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    result = project.runpytest(
        f"--dataset={MINI}", *args, "--grounding-json", str(report), "--grounding-html", str(page)
    )
    return result, read_json(report), page.read_text(encoding="utf-8")


@SERIAL
def test_the_page_opens_with_a_card_per_detector_and_the_run_folded(project, tmp_path, workers):
    _, document, page = page_of(
        project, tmp_path, "--detector", "colour", "--detector", "center", "--grounding-min-accuracy", "0.5", *workers
    )
    body = page[page.index("<main>") :]
    cards = re.findall(r'<div class="card" data-detector="([^"]+)">(.*?)<div class="card-diagnosis"', body, re.S)
    assert [name for name, _ in cards] == list(document["summary"])  # every detector, the report's order
    for name, html in cards:
        block = document["summary"][name]
        assert f"{block['accuracy'] * 100:.1f}%" in html
        low, high = block["ci95"]
        assert f"95% CI {low * 100:.1f}-{high * 100:.1f}" in html and f"n = {block['scored']} scored" in html
        assert f"{block['wrong_format']} wrong format" in html and f"{block['errors']} errors" in html
        passed = all(g["passed"] for g in document["gates"] if g["detector"] == name)
        assert ("gate FAILED" in html) != passed
    # the cards come first; the run's metadata is folded below them, the gates and tables after
    assert body.index('id="headline"') < body.index("<details") < body.index("<h2>Run</h2>")
    assert body.index("<h2>Run</h2>") < body.index("<h2>Gates</h2>") < body.index("<h2>Summary</h2>")
    assert 'data-figure="latency-vs-accuracy"' in page  # two detectors: the scatter says something


def test_a_single_detector_page_has_its_card_and_no_one_point_scatter(project, tmp_path):
    _, _, page = page_of(project, tmp_path, "--detector", "colour")
    assert page.count('<div class="card" ') == 1
    assert 'data-figure="latency-vs-accuracy"' not in page
    assert 'data-figure="accuracy-by-size"' in page or "<svg" in page  # the other charts stay


def test_a_card_holds_a_slot_for_a_sections_diagnosis():
    from pytest_grounding.render.html import headline

    document = {"summary": {"m": {"detector": "m", "accuracy": 0.5, "ci95": [0.4, 0.6], "scored": 10, "samples": 10}}}
    html = headline.cards(document, {"m": "<b>answers read in the 0-1000 frame</b>"})
    assert '<div class="card-diagnosis" data-slot="diagnosis"><b>answers read in the 0-1000 frame</b></div>' in html
    assert "no gate set" in html and "50.0%" in html
    assert "no sample finished" in headline.cards({"summary": {}})
    assert render({"summary": {}, "samples": []})[0].count('id="headline"') == 1


@SERIAL
def test_a_gated_run_ends_with_its_verdict_after_pytests_counts(project, tmp_path, workers):
    page = tmp_path / "r.html"
    result = project.runpytest(
        f"--dataset={MINI}",
        "--detector",
        "center",
        "--grounding-min-accuracy",
        "0.5",
        "--grounding-html",
        str(page),
        *workers,
    )
    lines = [line for line in result.stdout.lines if line.strip()]
    assert lines[-1].startswith("verdict: 1 of 1 gates FAILED"), lines[-4:]
    assert lines[-2] == f"grounding HTML report: {page}"
    assert re.search(r"=+ .*xfailed.* in [\d.]+s", lines[-3]), lines[-4:]
    assert result.ret == 1


def test_an_ungated_run_ends_with_pytests_counts(project):
    result = project.runpytest(f"--dataset={MINI}", "--detector", "center", "--grounding-runs-dir=off")
    lines = [line for line in result.stdout.lines if line.strip()]
    assert re.search(r"=+ .* in [\d.]+s", lines[-1]), lines[-3:]


def test_a_report_section_fills_the_cards_slot_and_one_that_fails_leaves_the_page_whole():
    from pytest_grounding import sections as sections_pkg
    from pytest_grounding.render.html import headline

    class Frame(sections_pkg.Section):
        name = "frame-check"

        def card(self, document, key):
            return f"answers of {key} read in the <b>0-1000</b> frame"

    class Broken(sections_pkg.Section):
        name = "broken"

        def card(self, document, key):
            raise RuntimeError("a section's bug")

    document = {"summary": {"m": {"detector": "m", "accuracy": 0.5, "ci95": [0.4, 0.6], "scored": 10, "samples": 10}}}
    html = headline.cards(document, sections=[Broken(), Frame()])  # the run's sections, handed in
    assert '<div class="card-diagnosis" data-slot="diagnosis"><div>answers of m read in the <b>0-1000</b> frame' in html
    assert sections_pkg.Section().card(document, "m") == ""  # the default adds nothing
