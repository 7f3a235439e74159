"""The HTML page and the plots: the writer on a real report made by a real small run, the `report`
command, the plugin's --grounding-html / --grounding-plots (with and without xdist), and the page
in a real headless browser (Debian's chromium; skipped, saying why, where there is none)."""

import copy
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from helpers import FIXTURES, REPO, SERIAL, XDIST, read_json
from pytest_grounding.analysis.figures import design_figures, slice_figure
from pytest_grounding.cli.main import main
from pytest_grounding.render.html import render, write_html
from pytest_grounding.render.html import svg as svg_mod
from pytest_grounding.render.html.thumbs import MIN_REGION, region_of

MINI = str(FIXTURES / "mini")
ENTRY = re.compile(r'<article class="entry"([^>]*)>')
NON_HITS = ("miss", "wrong_format", "error")


@pytest.fixture(scope="module")
def real_report(tmp_path_factory):
    """A real run of the floors on two fixture datasets (a missing and a corrupt image among them)."""
    folder = tmp_path_factory.mktemp("real")
    path = folder / "report.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-p", "no:cacheprovider", "-q"]
    command += ["-p", "no:xdist", f"--dataset={MINI}", f"--dataset={FIXTURES / 'screenspot'}"]
    command += ["--detector", "center", "--detector", "random", "--grounding-json", str(path)]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert path.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return read_json(path)


def entries(page):
    return [dict(re.findall(r'data-([a-z]+)="([^"]*)"', attrs)) for attrs in ENTRY.findall(page)]


def non_hits(document):
    return [r for r in document["samples"] if r["outcome"] in NON_HITS]


# -- the writer ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_gallery_has_one_entry_per_non_hit(real_report, tmp_path):
    written = write_html(real_report, tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    expected = non_hits(real_report)
    assert 0 < len(expected) < len(real_report["samples"]) or all(r["outcome"] != "hit" for r in expected)
    assert written.entries == len(expected) == len(entries(page))
    got = sorted((e["detector"], e["dataset"], e["outcome"]) for e in entries(page))
    assert got == sorted((r["detector"], r["dataset"], r["outcome"]) for r in expected)
    assert written.bytes == (tmp_path / "page.html").stat().st_size


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_page_is_self_contained(real_report):
    page, _, _ = render(real_report)
    assert not re.search(r'(src|href)="https?:', page), "nothing may load from the network"
    assert "url(http" not in page
    assert page.count("data:image/jpeg;base64,") >= 2


def test_header_names_datasets_detectors_versions_and_checks(real_report):
    page, _, _ = render(real_report)
    for dataset in real_report["run"]["datasets"]:
        assert dataset["fingerprint"] in page
    for spec, info in real_report["run"]["detectors"].items():
        assert f"<b>{spec}</b>" in page and info["class"] in page
    assert f"pytest {real_report['versions']['pytest']}" in page
    assert "Error share" in page and "FAILED" in page  # 2 of 13 are errors: more than the 10% allowed
    assert "<h3>Comparison</h3>" in page  # two detectors
    assert 'id="partial"' not in page


def test_missing_and_corrupt_images_are_shown_not_raised(real_report):
    page, _, _ = render(real_report)
    missing = re.findall(r'<div class="missing" data-missing="1">([^<]*)</div>', page)
    assert any(text.startswith("image missing:") and "missing.png" in text for text in missing)
    assert any(text.startswith("image unreadable:") and "broken.png" in text for text in missing)


def test_a_report_whose_images_are_gone_still_makes_a_page(real_report, tmp_path):
    moved = copy.deepcopy(real_report)
    for record in moved["samples"]:
        record["image"] = str(tmp_path / "gone" / os.path.basename(record["image"]))
    page, count, _ = render(moved)
    assert count == len(non_hits(moved)) == page.count('data-missing="1"')
    assert "data:image/jpeg" not in page


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_thumbnails_are_made_once_per_screen_region(real_report):
    """Both detectors miss the same targets: one crop per (screen, region), shared."""
    page, _, screens = render(real_report)
    images = {r["image"] for r in non_hits(real_report)}
    assert screens == len(images)
    crops = set(re.findall(r"\.(c\d+-\d+)\{background-image", page))
    used = re.findall(r'class="shot (c\d+-\d+)"', page)
    assert set(used) == crops and len(used) > len(crops)  # each crop serves several entries


def test_partial_report_is_marked(real_report):
    partial = {**real_report, "partial": True}
    page, _, _ = render(partial)
    assert 'id="partial"' in page and "<title>[partial]" in page and 'data-partial="1"' in page


def test_region_around_a_target():
    assert region_of([10, 10, 30, 30], (160, 120)) == (0, 0, 160, 120)  # a small screen: all of it
    x1, y1, x2, y2 = region_of([1000, 500, 1020, 510], (1920, 1080))
    assert x1 <= 1000 and y1 <= 500 and x2 >= 1020 and y2 >= 510
    assert (x2 - x1, y2 - y1) == MIN_REGION
    assert region_of([1900, 1070, 1919, 1079], (1920, 1080))[2:] == (1920, 1080)  # moved inside, not cut
    assert region_of(None, (50, 40)) == (0, 0, 50, 40)


def test_figures_from_the_report(real_report):
    figures = {f.key: f for f in design_figures(real_report)}
    assert set(figures) == {"accuracy-by-size", "latency-vs-accuracy", "accuracy-by-app-category"}
    size = figures["accuracy-by-size"]
    assert [s.name for s in size.series] == ["center", "random"]
    expected = {row["value"]: row["accuracy"] for row in real_report["summary"]["random"]["by"]["size"]}
    assert dict(zip(size.categories, size.series[1].values, strict=True)) == {
        bucket: expected.get(bucket) for bucket in size.categories
    }
    for figure in figures.values():
        assert f'data-figure="{figure.key}"' in svg_mod.render(figure)
    apps = slice_figure(list(real_report["summary"].items()), "app", limit=2)
    assert apps is not None and len(apps.categories) == 2


def test_locate_report_has_the_iou_histogram():
    records = [{"task": "locate", "detector": "d", "iou": value} for value in (0.05, 0.55, 0.58, 1.0)]
    figure = next(f for f in design_figures({"summary": {}, "samples": records}) if f.key == "locate-iou-histogram")
    assert figure.series[0].values[0] == 1 and figure.series[0].values[5] == 2 and figure.series[0].values[9] == 1


# -- the report command --------------------------------------------------------------------------


def test_report_command_writes_the_same_page(real_report, tmp_path, capsys):
    source = tmp_path / "report.json"
    source.write_text(__import__("json").dumps(real_report))
    assert main(["report", str(source), "--html", str(tmp_path / "cli.html")]) == 0
    assert f"{len(non_hits(real_report))} gallery entries" in capsys.readouterr().out
    write_html(real_report, tmp_path / "direct.html")
    assert (tmp_path / "cli.html").read_bytes() == (tmp_path / "direct.html").read_bytes()


def test_report_command_refuses_what_it_cannot_use(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "other.json").write_text('{"tool": "something else"}')
    assert main(["report", str(tmp_path / "bad.json"), "--html", str(tmp_path / "x.html")]) == 2
    assert main(["report", str(tmp_path / "other.json"), "--html", str(tmp_path / "x.html")]) == 2
    assert main(["report", str(tmp_path / "other.json")]) == 2
    err = capsys.readouterr().err
    assert "is not JSON" in err and "not a pytest-grounding JSON report" in err and "nothing to write" in err
    assert not (tmp_path / "x.html").exists()


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_plots_are_pngs(real_report, tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from pytest_grounding.render.plots import write_plots

    paths = write_plots(real_report, tmp_path / "plots")
    assert sorted(p.name for p in paths) == sorted(f"{f.key}.png" for f in design_figures(real_report))
    for path in paths:
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width >= 400


# -- the plugin ----------------------------------------------------------------------------------


@SERIAL
def test_plugin_writes_the_page_of_its_json(project, workers, tmp_path):
    page, report = tmp_path / "out" / "page.html", tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={MINI}", "--detector", "colour", "--grounding-json", str(report), "--grounding-html", str(page),
        *workers,
    )  # fmt: skip
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"grounding HTML report: {page}"])
    document = read_json(report)
    html = page.read_text(encoding="utf-8")
    assert len(entries(html)) == len(non_hits(document)) == 3  # m06 wrong format, m07 corrupt, m08 missing
    write_html(document, tmp_path / "again.html")
    assert (tmp_path / "again.html").read_bytes() == page.read_bytes()  # the same code, the same page


def test_plugin_html_path_from_the_ini_file_is_relative_to_the_rootdir(project, tmp_path):
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\ngrounding_html = reports/page.html\n")
    result = project.runpytest(f"--dataset={MINI}", "--detector", "colour")
    assert result.ret == 1
    assert (project.path / "reports" / "page.html").exists()


@pytest.mark.slow
@XDIST
def test_plugin_marks_the_page_of_an_interrupted_run(project, workers, tmp_path):
    page = tmp_path / "page.html"
    result = project.runpytest_subprocess(
        f"--dataset={MINI}", "--detector", "interrupting", "--grounding-html", str(page), *workers
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert 'id="partial"' in page.read_text(encoding="utf-8")


def test_plugin_html_path_that_is_a_folder_is_a_usage_error(project, tmp_path):
    result = project.runpytest(f"--dataset={MINI}", "--detector", "colour", "--grounding-html", str(tmp_path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--grounding-html: * is a directory, expected a file path*"])


def test_plugin_page_that_fails_is_said_and_the_json_still_written(project, monkeypatch, tmp_path):
    def broken(*args, **kwargs):
        raise RuntimeError("no page today")

    monkeypatch.setattr("pytest_grounding.render.html.write_html", broken)
    report = tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={MINI}", "--detector", "colour", "--grounding-json", str(report), "--grounding-html",
        str(tmp_path / "page.html"),
    )  # fmt: skip
    assert result.ret == 1 and report.exists() and not (tmp_path / "page.html").exists()
    result.stdout.fnmatch_lines(["*grounding output FAILED: HTML report * not written: RuntimeError: no page today*"])


def test_plugin_plots_without_matplotlib_is_a_usage_error(project, monkeypatch, tmp_path):
    monkeypatch.setattr("pytest_grounding.render.plots.matplotlib_installed", lambda: False)
    result = project.runpytest(f"--dataset={MINI}", "--detector", "colour", "--grounding-plots", str(tmp_path / "p"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--grounding-plots: needs the 'plots' extra*pip install ?pytest-grounding?plots??*"])


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_plugin_writes_plots(project, tmp_path):
    pytest.importorskip("matplotlib")
    result = project.runpytest(f"--dataset={MINI}", "--detector", "colour", "--grounding-plots", str(tmp_path / "p"))
    assert result.ret == 1
    assert {p.name for p in (tmp_path / "p").iterdir()} >= {"accuracy-by-size.png", "latency-vs-accuracy.png"}


# -- a real browser ------------------------------------------------------------------------------

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser():
    found = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    if found is None:
        pytest.skip(
            "no headless browser: none of chromium, chromium-browser, google-chrome is on PATH "
            "(Debian: apt-get install -y chromium; .ci/run tries to install it)"
        )
    return found


def load(page, fragment=""):
    """The DOM after the page's script ran, and the browser's console lines."""
    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    command += ["--virtual-time-budget=5000", "--dump-dom", page.as_uri() + fragment]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    return done.stdout, console


def visible(dom):
    return [attrs for attrs in ENTRY.findall(dom) if " hidden" not in attrs]


@pytest.mark.browser
def test_browser_shows_the_gallery_and_filters_it(real_report, tmp_path):
    page = tmp_path / "page.html"
    write_html(real_report, page)
    dom, console = load(page)
    assert console == [], console
    assert 'data-ready="1"' in dom, "the page's script did not run to its end"
    expected = non_hits(real_report)
    assert len(visible(dom)) == len(expected)
    errors = sum(1 for r in expected if r["outcome"] == "error")
    assert 0 < errors < len(expected)
    dom, console = load(page, "#outcome=error")
    assert console == [], console
    assert len(visible(dom)) == errors
    assert f'<b id="shown">{errors}</b>' in dom
    dom, _ = load(page, "#outcome=error&detector=random")
    assert len(visible(dom)) == sum(1 for r in expected if r["outcome"] == "error" and r["detector"] == "random")


@pytest.mark.browser
def test_browser_sorts_by_distance(real_report, tmp_path):
    page = tmp_path / "page.html"
    write_html(real_report, page)
    dom, _ = load(page, "#sort=far&outcome=miss")
    shown = [dict(re.findall(r'data-([a-z]+)="([^"]*)"', attrs)) for attrs in visible(dom)]
    distances = [float(e["distance"]) for e in shown]
    assert distances == sorted(distances, reverse=True) and len(set(distances)) > 1


@pytest.mark.browser
def test_browser_shows_the_partial_marker(real_report, tmp_path):
    page = tmp_path / "page.html"
    write_html({**real_report, "partial": True}, page)
    dom, console = load(page)
    assert console == [] and 'id="partial"' in dom and "Partial run" in dom


# -- the thumbnails drawn while the run goes (issue 60) -------------------------------------------


def _screens(folder, count):
    from PIL import Image

    paths = []
    for k in range(count):
        path = folder / f"s{k}.png"
        Image.new("RGB", (900 + 40 * k, 600), (20 * k % 255, 90, 160)).save(path)
        paths.append(path)
    return paths


def _miss(path, box, outcome="miss", error=None):
    return {"dataset": "d", "image": str(path), "target": box, "outcome": outcome, "error": error, "id": str(box)}


@pytest.mark.parametrize("count", [1, 3, 7])
def test_screens_drawn_early_give_the_same_page_and_none_is_drawn_again(tmp_path, monkeypatch, count):
    from pytest_grounding.render.html import thumbs

    paths = _screens(tmp_path, count)
    boxes = {str(p): [[10 * k, 20, 10 * k + 30, 50], [400, 300, 460, 340]] for k, p in enumerate(paths)}
    records = [_miss(p, box) for p in paths for box in boxes[str(p)]]
    fresh = thumbs.Thumbnails(records).css()
    early = thumbs.Prefetch(NON_HITS, lambda: boxes)
    for record in records:
        early.add(record)  # the first non-hit of a screen draws it with every target the run has on it
    deadline = time.monotonic() + 30
    while len(early.done) < count and time.monotonic() < deadline:  # drawn in the background as the run goes
        time.sleep(0.02)
    early.close()
    assert set(early.done) == {str(p) for p in paths}
    drawn = []
    monkeypatch.setattr(thumbs, "draw", lambda screen: drawn.append(screen) or screen)
    thumbs.install(early)
    try:
        assert thumbs.Thumbnails(records).css() == fresh and drawn == []
    finally:
        thumbs.install(None)


@pytest.mark.parametrize("change", ["rewritten", "new target", "never drawn"])
def test_a_screen_drawn_early_is_drawn_again_where_it_no_longer_fits(tmp_path, change):
    from PIL import Image

    from pytest_grounding.render.html import thumbs

    (path,) = _screens(tmp_path, 1)
    record = _miss(path, [10, 10, 40, 40])
    early = thumbs.Prefetch(NON_HITS, lambda: {})
    if change != "never drawn":
        early.add(record)
    early.close()
    records = [record]
    if change == "rewritten":
        Image.new("RGB", (700, 500), (200, 10, 10)).save(path)  # another size: another stamp
    if change == "new target":
        records.append(_miss(path, [600, 400, 640, 440]))
    fresh = thumbs.Thumbnails(records).css()
    thumbs.install(early)
    try:
        assert thumbs.Thumbnails(records).css() == fresh
    finally:
        thumbs.install(None)


@pytest.mark.parametrize(
    ("outcome", "error"), [("hit", None), ("miss", "image leads outside the dataset folder: /etc/x")]
)
def test_hits_and_refused_images_are_never_drawn_early(tmp_path, outcome, error):
    from pytest_grounding.core.record import OUTSIDE_DATASET
    from pytest_grounding.render.html import thumbs

    (path,) = _screens(tmp_path, 1)
    early = thumbs.Prefetch(NON_HITS, lambda: {})
    early.add(_miss(path, [1, 1, 9, 9], outcome=outcome, error=error and f"{OUTSIDE_DATASET}: {error}"))
    early.close()
    assert early.done == {}


@SERIAL
def test_the_runs_page_takes_the_screens_drawn_as_its_misses_came(project, workers, tmp_path, monkeypatch):
    from pytest_grounding.render.html import thumbs

    taken = []
    reuse = thumbs.Prefetch.reuse
    monkeypatch.setattr(thumbs.Prefetch, "reuse", lambda self, screen: taken.append(reuse(self, screen)) or taken[-1])
    monkeypatch.setattr(thumbs.Prefetch, "JOIN_S", 30.0)
    add = thumbs.Prefetch.add

    def add_and_wait(self, record):  # each screen drawn before the next record: the run's end finds all drawn
        add(self, record)
        deadline = time.monotonic() + 30
        while self._queue.qsize() and time.monotonic() < deadline:
            time.sleep(0.01)

    monkeypatch.setattr(thumbs.Prefetch, "add", add_and_wait)
    page, report = tmp_path / "page.html", tmp_path / "r.json"
    result = project.runpytest(
        f"--dataset={MINI}", "--detector", "random", "--grounding-json", str(report), "--grounding-html", str(page),
        *workers,
    )  # fmt: skip
    assert result.ret == 1
    assert taken and any(taken)  # the page took screens drawn during the run
    write_html(read_json(report), tmp_path / "again.html")
    assert (tmp_path / "again.html").read_bytes() == page.read_bytes()  # and it is the page drawn at the end
