"""Issue 29, reading outside: the HTML gallery (during the run and `report --html`) and `review` read
only images that belong to the dataset; a crafted report or annotations file cannot make them embed
another file of the machine (an absolute path, a `..` path, a symlink planted inside the dataset
that points out of it, a report that names `/` as its dataset's folder). `review` without a
terminal is one clear error (exit 2), and it keeps annotations.json's mode."""

import base64
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest
from PIL import Image

from helpers import FIXTURES, REPO

SECRET_COLOUR = (13, 250, 77)  # no fixture screen has it: a thumbnail this colour is the secret's
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def make_secret(path):
    Image.new("RGB", (97, 53), SECRET_COLOUR).save(path)
    return path


def thumbnails(page):
    """Every image embedded in the page, decoded."""
    for data in re.findall(r"data:image/jpeg;base64,([A-Za-z0-9+/=]+)", page):
        yield Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")


def shows_secret(page):
    for image in thumbnails(page):
        pixels = list(zip(*[iter(image.tobytes())] * 3, strict=True))
        near = sum(1 for p in pixels if all(abs(a - b) < 24 for a, b in zip(p, SECRET_COLOUR, strict=True)))
        if near > len(pixels) // 2:
            return True
    return False


def placeholders(page):
    return re.findall(r'<div class="missing" data-missing="1"[^>]*>([^<]*)</div>', page)


def make_run(folder, workers=()):
    """A real run on a copy of the mini set with one more row: `link.png`, a symlink inside the
    dataset folder to a file outside it (the run refuses it). The JSON report and the run's page."""
    secret = make_secret(folder / "secret.png")
    dataset = folder / "set"
    shutil.copytree(FIXTURES / "mini", dataset)
    test = dataset / "data" / "test"
    (test / "link.png").symlink_to(secret)
    rows = [json.loads(line) for line in (test / "metadata.jsonl").read_text().splitlines() if line.strip()]
    linked = {**rows[0], "file_name": "link.png", "id": "m99", "source_id": "m99"}
    (test / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in [*rows, linked]))
    command = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-p", "no:cacheprovider", "-q"]
    command += [*(workers or ["-p", "no:xdist"]), f"--dataset={dataset}", "--detector=center"]
    command += ["--grounding-json", str(folder / "r.json"), "--grounding-html", str(folder / "run.html")]
    done = subprocess.run(command, cwd=folder, env=ENV, capture_output=True, text=True, timeout=300)
    assert (folder / "r.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return folder, json.loads((folder / "r.json").read_text())


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("outside"))


def report_html(folder, document, name):
    """`python -m pytest_grounding report` on `document`: (exit status, stdout+stderr, the page)."""
    source = folder / f"{name}.json"
    source.write_text(json.dumps(document))
    page = folder / f"{name}.html"
    command = [sys.executable, "-m", "pytest_grounding", "report", str(source), "--html", str(page)]
    done = subprocess.run(command, cwd=folder, env=ENV, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr, page.read_text(encoding="utf-8") if page.exists() else ""


def misses(document):
    return [r for r in document["samples"] if r["outcome"] == "miss"]


# -- the gallery during the run ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "workers", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.slow)]
)
def test_the_run_page_does_not_read_the_refused_image_and_says_why(run, workers, tmp_path):
    folder, document = run if not workers else make_run(tmp_path, workers)
    refused = next(r for r in document["samples"] if r["id"] == "m99")
    assert refused["outcome"] == "error" and "outside the dataset" in refused["error"]
    page = (folder / "run.html").read_text(encoding="utf-8")
    assert not shows_secret(page)
    assert any("outside the dataset" in text for text in placeholders(page))
    assert "no image in the record" not in page  # the record has one: it was refused, and the page says so


# -- report --html on a report someone hands you ---------------------------------------------------


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_report_command_shows_the_datasets_own_images(run):
    folder, document = run
    status, output, page = report_html(folder, document, "plain")
    assert status == 0, output
    assert not shows_secret(page)
    assert "from 5 screens" in output  # s1, s2, s3, broken.png, missing.png: the set's screens with a non-hit


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_report_command_reads_a_folder_again_by_the_format_it_is_recognised_as(run):
    """A hub repository of files is recorded as format `hf` and read by the format of its files."""
    folder, document = run
    recorded = json.loads(json.dumps(document))
    recorded["run"]["datasets"][0]["format"] = "hf"
    status, output, page = report_html(folder, recorded, "hub")
    assert status == 0, output
    assert "from 5 screens" in output and not shows_secret(page)


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_report_command_reads_no_image_a_crafted_record_names(run):
    folder, document = run
    crafted = json.loads(json.dumps(document))
    chosen = misses(crafted)[:3]
    assert len(chosen) == 3
    chosen[0]["image"] = str(folder / "secret.png")  # absolute, outside the dataset
    chosen[1]["image"] = "secret.png"  # relative to the report's folder, outside the dataset
    chosen[2]["image"] = str(folder / "set" / "data" / "test" / "link.png")  # inside, a link pointing out
    refused = next(r for r in crafted["samples"] if r["id"] == "m99")
    refused["error"] = "image unreadable"  # the run's refusal edited away
    status, output, page = report_html(folder, crafted, "crafted")
    assert status == 0, output
    assert not shows_secret(page)
    withheld = [text for text in placeholders(page) if text.startswith("not shown")]
    assert len(withheld) >= 4, placeholders(page)
    assert all("not an image of dataset" in text for text in withheld)


@pytest.mark.parametrize("root", ["/", "{folder}"])
def test_report_command_with_a_dataset_folder_rewritten(run, root):
    """A report that names a folder holding no dataset (the whole disk, the secret's folder): no
    image under it is read, though every image the records name lies inside it."""
    folder, document = run
    crafted = json.loads(json.dumps(document))
    crafted["run"]["datasets"][0]["path"] = root.format(folder=folder)
    for record in misses(crafted):
        record["image"] = str(folder / "secret.png")
    status, output, page = report_html(folder, crafted, "rooted")
    assert status == 0, output
    assert not shows_secret(page)
    assert "from 0 screens" in output
    texts = placeholders(page)
    assert texts and all("cannot be read again" in text for text in texts if "secret.png" in text), texts


def test_report_command_when_the_dataset_is_gone_still_writes_a_page(run, tmp_path):
    _, document = run
    moved = json.loads(json.dumps(document))
    moved["run"]["datasets"][0]["path"] = str(tmp_path / "gone")
    status, output, page = report_html(tmp_path, moved, "gone")
    assert status == 0, output
    assert "from 0 screens" in output and "data:image/jpeg" not in page
    assert any("cannot be read again" in text for text in placeholders(page))


# -- review ----------------------------------------------------------------------------------------


@pytest.fixture
def review_folder(tmp_path):
    """annotations.json with one screen inside its folder and three that lead out of it."""
    secret = make_secret(tmp_path / "secret.png")
    folder = tmp_path / "set"
    folder.mkdir()
    Image.new("RGB", (200, 100), (200, 200, 200)).save(folder / "in.png")
    (folder / "link.png").symlink_to(secret)
    element = {"id": "e1", "bbox": [0.1, 0.1, 0.3, 0.3], "instruction": "the thing", "status": "draft"}
    samples = [
        {"id": name, "image": image, "elements": [dict(element)]}
        for name, image in (("out", str(secret)), ("up", "../secret.png"), ("link", "link.png"), ("in", "in.png"))
    ]
    path = folder / "annotations.json"
    path.write_text(json.dumps({"version": "1.0", "dataset": "set", "samples": samples}))
    path.chmod(0o640)
    return path


def review(path, *args):
    command = [sys.executable, "-m", "pytest_grounding", "review", str(path), *args]
    return subprocess.run(
        command, cwd=path.parent, env=ENV, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )


def test_review_without_a_terminal_is_one_clear_error(review_folder):
    done = review(review_folder, "--preview", "file")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "EOFError" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "terminal" in errors[0], done.stderr
    assert not (review_folder.parent / ".review-preview.png").exists()


def test_review_with_nothing_left_needs_no_terminal(review_folder):
    document = json.loads(review_folder.read_text())
    for sample in document["samples"]:
        sample["elements"][0]["status"] = "accepted"
    review_folder.write_text(json.dumps(document))
    done = review(review_folder)
    assert done.returncode == 0 and "nothing left to review" in done.stdout, done.stdout + done.stderr


def test_review_reads_no_image_outside_its_folder_and_keeps_the_mode(review_folder):
    done = review(review_folder)
    document = json.loads(review_folder.read_text())
    sizes = {s["id"]: (s.get("width"), s.get("height")) for s in document["samples"]}
    assert sizes == {"out": (None, None), "up": (None, None), "link": (None, None), "in": (200, 100)}
    assert done.stdout.count("outside the dataset folder") == 3, done.stdout
    assert stat.S_IMODE(review_folder.stat().st_mode) == 0o640  # saved (the sizes), its mode kept


def test_review_preview_of_an_outside_image_is_refused(review_folder):
    from pytest_grounding.cli.curation import document as curation_document
    from pytest_grounding.cli.curation.review import Review
    from pytest_grounding.cli.curation.tui import show

    loaded = curation_document.load(review_folder)
    for sample in loaded["samples"]:
        sample.setdefault("width", 200)
        sample.setdefault("height", 100)
    state = Review.start(loaded)
    for _ in range(3):  # out, up, link: each leads outside the folder
        out = io.StringIO()
        show(state, review_folder, "file", {}, out)
        assert "outside the dataset folder" in out.getvalue(), out.getvalue()
        assert not (review_folder.parent / ".review-preview.png").exists()
        state.skip()
    out = io.StringIO()
    show(state, review_folder, "file", {}, out)  # the screen inside the folder is shown
    assert (review_folder.parent / ".review-preview.png").exists(), out.getvalue()


def test_a_new_file_gets_the_umask_default_not_0600(tmp_path):
    """write_atomic makes its temporary file with mkstemp (0600); the file it leaves has the mode
    any new file would: 0666 less the umask (here 027: 0640)."""
    code = (
        "import os, sys; os.umask(0o027); from pathlib import Path; "
        "from pytest_grounding.store.reports import write_atomic; write_atomic(Path(sys.argv[1]), b'x')"
    )
    target = tmp_path / "new.html"
    subprocess.run([sys.executable, "-c", code, str(target)], env=ENV, check=True, timeout=60)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["new.html"]  # no temporary left beside it
