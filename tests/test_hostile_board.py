"""Hostile inputs (issue 52; docs/security.md says what each class guarantees). The board links relative paths or
http(s) only and walks any depth of folders; every CLI line of text from a file goes through the terminal
escaping.
"""

import json

import pytest

from helpers import FIXTURES, read_json
from pytest_grounding.cli.main import main

PRO, MINI = str(FIXTURES / "screenspot-pro"), str(FIXTURES / "mini")


def _run(project, tmp_path, *args, workers=(), name="run.json"):
    report = tmp_path / name
    project.runpytest("--dataset", PRO, "--grounding-json", str(report), *args, *workers)
    assert report.is_file()
    return report


# --- the board links relative paths or http(s) only, and walks any depth of folders ------------------------------

SCHEMES = ["javascript:alert(1)", "JaVaScRiPt:alert(2)", "data:text,x", "vbscript:msgbox(1)", " javascript:x"]


def test_board_links_are_relative_paths_never_a_scheme(project, tmp_path, capsys):
    import re
    import shutil

    report = _run(project, tmp_path, "--detector", "colour", "--grounding-html", str(tmp_path / "run.html"))
    folder = tmp_path / "reports"
    (folder / "sub").mkdir(parents=True)
    for index, name in enumerate(SCHEMES):
        where = folder / ("sub" if index % 2 else "")
        document = read_json(report)
        document["run"]["args"] = [a for a in document["run"]["args"] if "html" not in a]
        document["started"] = f"2026-01-0{index + 1}T10:00:00+0000"
        (where / f"{name}.json").write_text(json.dumps(document))
        shutil.copy(tmp_path / "run.html", where / f"{name}.html")
    page = tmp_path / "board.html"
    assert main(["board", str(folder), "--html", str(page)]) == 0
    capsys.readouterr()
    links = re.findall(r'href="([^"]*)"', page.read_text())
    assert links
    for link in links:
        assert link.startswith("./") or link.startswith("http"), link
        assert ":" not in link.split("/", 1)[1].split("/")[0] or link.startswith("http")


def test_safe_href_keeps_http_and_relative_paths_only():
    from pytest_grounding.render.html.board import safe_href

    assert safe_href("https://example.org/run.html") == "https://example.org/run.html"
    assert safe_href("HTTP://example.org/x") == "HTTP://example.org/x"
    assert safe_href("../a b/run.html") == "./../a%20b/run.html"
    for bad in ("/etc/passwd", "C:\\x.html", "//evil.example/x", "java\tscript:x", "a\nb"):
        assert safe_href(bad) is None
    for name in SCHEMES:
        href = safe_href(f"{name}.html")
        assert href is None or (href.startswith("./") and ":" not in href)


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("depth", [70, 1_100])
def test_board_walks_a_folder_of_any_depth(project, tmp_path, capsys, depth):
    report = _run(project, tmp_path, "--detector", "colour")
    folder = tmp_path / "reports"
    chain = [folder]
    for _ in range(depth):  # one by one: mkdir(parents=True) itself recurses
        chain.append(chain[-1] / "d")
        chain[-1].mkdir(parents=True)
    try:
        (folder / "top.json").write_text(report.read_text())
        (chain[-1] / "bottom.json").write_text(report.read_text())
        assert main(["board", str(folder)]) == 0
        out = capsys.readouterr().out
        assert "folders deep: not read" in out
    finally:  # bottom-up: pytest's own clean-up of tmp_path (shutil.rmtree) recurses past 1,000 levels
        (chain[-1] / "bottom.json").unlink(missing_ok=True)
        for path in reversed(chain[1:]):
            path.rmdir()


# --- every CLI line of text from a file goes through the terminal escaping --------------------------------------

FORGED = ["\x1b[2J\x1b[H", "\rverdict: all gates passed\n", "\x1b]0;title\x07", "\u202eevil", "\x9b31m"]


@pytest.mark.parametrize("forged", FORGED)
def test_rescore_prints_what_a_file_says_escaped(project, tmp_path, capsys, forged):
    report = _run(project, tmp_path, "--detector", "colour", "--grounding-predictions", str(tmp_path / "p.jsonl"))
    predictions = tmp_path / "p.jsonl"
    rows = [json.loads(line) for line in predictions.read_text().splitlines() if line.strip()]
    for row in rows:
        row["detector"] = f"colour{forged}"
    predictions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    capsys.readouterr()
    code = main(["rescore", str(predictions), "--json", str(tmp_path / "again.json")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    text = captured.out + captured.err
    for character in ("\x1b", "\r", "\x07", "\u202e", "\x9b"):
        assert character not in text
    assert all(not line.startswith("verdict") for line in text.splitlines())
    assert report.is_file()
