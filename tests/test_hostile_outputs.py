"""Issue 29, writing outside: a report written to something that is not a regular file (a device,
a FIFO) is written into it, never replaced by a regular file; a link planted at the old predictable
temporary name (`<out>.tmp`) is not followed; a replaced file keeps its mode."""

import json
import os
import stat
import threading

import pytest

from helpers import FIXTURES
from pytest_grounding.cli.main import main

FEW = ["-k", "m01 or m02"]


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(test_suite=(FIXTURES.parent / "suites" / "test_grounding.py").read_text())
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    return pytester


def fifo_reader(path):
    """A FIFO at `path` and a thread that reads what is written into it."""
    os.mkfifo(path)
    got = {}

    def read():
        with open(path, encoding="utf-8") as handle:
            got["text"] = handle.read()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, got


@pytest.mark.slow
@pytest.mark.parametrize("option", ["--grounding-json", "--grounding-html"])
def test_a_fifo_stays_a_fifo_and_receives_the_report(suite, tmp_path, option):
    target = tmp_path / "out"
    thread, got = fifo_reader(target)
    suite.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector=center", option, str(target), *FEW)
    thread.join(10)
    assert stat.S_ISFIFO(os.lstat(target).st_mode), "the FIFO was replaced by a regular file"
    assert "pytest-grounding" in got.get("text", "") or "<html" in got.get("text", "")


@pytest.mark.slow
def test_report_html_into_a_fifo(suite, tmp_path, capsys):
    report = tmp_path / "r.json"
    suite.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector=center", "--grounding-json", str(report), *FEW)
    target = tmp_path / "page"
    thread, got = fifo_reader(target)
    assert main(["report", str(report), "--html", str(target)]) == 0
    thread.join(10)
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert "<html" in got.get("text", "")


@pytest.mark.slow
@pytest.mark.parametrize("option", ["--grounding-json", "--grounding-html"])
def test_a_link_planted_at_the_old_temporary_name_is_not_followed(suite, tmp_path, option):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "out"
    (tmp_path / "out.tmp").symlink_to(victim)
    suite.runpytest(f"--dataset={FIXTURES / 'mini'}", "--detector=center", option, str(target), *FEW)
    assert victim.read_text() == "precious\n"
    assert target.is_file() and target.stat().st_size > 100
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith((".out", "out.")) and p.name != "out.tmp"] == []


def test_write_atomic_keeps_the_mode_and_leaves_no_temporary(tmp_path):
    from pytest_grounding.store.reports import write_atomic

    target = tmp_path / "a.json"
    target.write_text("{}")
    target.chmod(0o644)
    write_atomic(target, json.dumps({"x": 1}))
    assert json.loads(target.read_text()) == {"x": 1}
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    new = tmp_path / "sub" / "b.bin"
    write_atomic(new, b"\x00\x01")
    assert new.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(new.stat().st_mode) & 0o044  # readable as any new file, not 0600
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.json", "b.bin", "sub"]


@pytest.mark.slow
def test_the_gallery_never_reads_an_image_the_run_refused_as_outside_the_dataset(suite, tmp_path, capsys):
    import shutil

    from PIL import Image

    from pytest_grounding.render.html.thumbs import Thumbnails

    outside = tmp_path / "secret.png"
    Image.new("RGB", (97, 53), (1, 2, 3)).save(outside)
    folder = tmp_path / "set"
    shutil.copytree(FIXTURES / "mini", folder)
    meta = folder / "data" / "test" / "metadata.jsonl"
    rows = [json.loads(line) for line in meta.read_text().splitlines() if line.strip()]
    rows[0]["file_name"] = str(outside)
    meta.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = tmp_path / "r.json"
    suite.runpytest(f"--dataset={folder}", "--detector=center", "--grounding-json", str(report), "-k", "m01 or m02")
    records = json.loads(report.read_text())["samples"]
    refused = next(r for r in records if r["id"] == "m01")
    assert refused["outcome"] == "error" and "outside the dataset" in refused["error"]
    assert str(outside) not in Thumbnails([refused]).screens
    assert main(["report", str(report), "--html", str(tmp_path / "p.html")]) == 0
    assert "from 1 screens" in capsys.readouterr().out  # m02's screen only
