"""`audit --diff OLD NEW`: the changes made between two versions are counted, and the unchanged ids written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import audit_screens
import pytest

from pytest_grounding.analysis.dataset_diff import classify, diff
from pytest_grounding.cli.main import main
from pytest_grounding.core.types import Box, Sample


def sample(sid, instruction="Click Save", box=(10, 10, 50, 30), image="s.png", **fields):
    return Sample("d", sid, sid, Path(f"/x/{image}"), instruction, Box(*box), **fields)


def test_classify_each_change():
    old = sample("a")
    assert classify(old, sample("a")) == "unchanged"
    assert classify(old, sample("a", instruction="Save the file")) == "rewritten"
    assert classify(old, sample("a", box=(60, 10, 100, 30))) == "moved"
    assert classify(old, sample("a", instruction="Click Save now", box=(14, 10, 54, 30))) == "rewritten_and_moved"
    assert classify(old, sample("a", instruction="Open the history", box=(200, 100, 240, 130))) == "retargeted"


def test_rows_without_shared_ids_are_matched_on_their_screen():
    old = [sample("desktop_0", "clock", (0, 0, 10, 10)), sample("desktop_1", "wifi", (50, 0, 60, 10))]
    new = [sample("row_7", "wifi", (50, 0, 60, 10)), sample("row_8", "open the clock", (0, 0, 10, 10))]
    found = diff(old, new)
    assert found.counts()["unchanged"] == 1 and found.counts()["rewritten"] == 1
    assert found.unchanged_ids() == [("desktop_1", "row_7")]


def test_identical_rows_are_matched_before_ids():
    """ScreenSpot's ids are row positions: v2 without its first row shifts every id by one."""
    old = [
        sample("desktop_0113", "open word", (0, 0, 40, 20)),
        sample("desktop_0114", "open paint 3d", (50, 0, 90, 20)),
        sample("desktop_0115", "open microsoft edge", (100, 0, 140, 20)),
    ]
    new = [
        sample("desktop_0113", "open paint 3d", (50, 0, 90, 20)),
        sample("desktop_0114", "open microsoft edge", (100, 0, 140, 20)),
    ]
    found = diff(old, new)
    assert found.counts()["unchanged"] == 2 and found.counts()["dropped"] == 1
    assert found.unchanged_ids() == [("desktop_0114", "desktop_0113"), ("desktop_0115", "desktop_0114")]


def test_rows_alike_in_nothing_are_never_paired():
    old = [sample("a", "Open Options", (315, 20, 445, 60))]
    new = [sample("b", "Scroll down the list", (170, 150, 200, 190))]
    counts = diff(old, new).counts()
    assert (counts["retargeted"], counts["dropped"], counts["added"]) == (0, 1, 1)


def write_screenspot(folder, rows):
    folder.mkdir(parents=True)
    (folder / "images").mkdir()
    for name in {r["img_filename"] for r in rows}:
        (folder / "images" / name).write_bytes(b"")
    (folder / "screenspot_desktop.json").write_text(json.dumps(rows))


def test_screenspot_positions_are_not_ids(tmp_path, capsys):
    """Two rows of one screen rewritten and swapped in the file: by position they would be retargeted."""
    row = {"img_filename": "pc_1.png", "data_type": "text", "data_source": "windows"}
    word = dict(row, instruction="open word", bbox=[0, 0, 40, 20])
    paint = dict(row, instruction="open paint 3d", bbox=[50, 0, 40, 20])
    write_screenspot(tmp_path / "v1", [word, paint])
    write_screenspot(
        tmp_path / "v2",
        [dict(paint, instruction="launch the paint 3d app"), dict(word, instruction="start microsoft word")],
    )
    out = tmp_path / "diff.json"
    args = ["audit", "--diff", f"screenspot:{tmp_path / 'v1'}", f"screenspot:{tmp_path / 'v2'}", "--json", str(out)]
    assert main(args) == 0
    document = json.loads(out.read_text())
    assert document["counts"]["rewritten"] == 2 and document["counts"]["retargeted"] == 0
    assert document["matched_by_id"] is False
    assert "rows matched by their content, not by id" in capsys.readouterr().out


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """v1: the audit's test screens; v2: the same with known edits."""
    root = tmp_path_factory.mktemp("versions")
    built = audit_screens.build(root / "v1")
    rows = [json.loads(line) for line in (root / "v1/data/test/metadata.jsonl").read_text().splitlines()]
    v2 = root / "v2/data/test"
    shutil.copytree(root / "v1/data/test", v2)
    by_id = {r["id"]: r for r in rows}
    edits = {
        "rewritten": ["s0b0", "s0b1", "s0b2"],
        "moved": ["s1b0", "s1b1"],
        "retargeted": ["s4b0", "s4b1"],
        "dropped": ["s4b2", "s4b3"],
        "type": ["s4b4", "s4b5"],
        "renumbered": ["s2b4", "s2b5", "s3b0"],
    }
    for sid in edits["rewritten"]:
        by_id[sid]["instruction"] = "Use the control " + by_id[sid]["instruction"].split()[-1]
    for sid in edits["moved"]:
        x1, y1, x2, y2 = by_id[sid]["bbox"]
        by_id[sid]["bbox"] = [x1 + 60, y1, x2 + 60, y2]
    for sid in edits["retargeted"]:
        by_id[sid]["instruction"] = "Look at the circle drawn in red"
        by_id[sid]["bbox"] = [406, 146, 434, 174]  # the same id on another element: retargeted
    for sid in edits["type"]:
        by_id[sid]["element_type"] = "icon"
    for sid in edits["renumbered"]:
        by_id[sid]["id"] = "v2-" + sid
    kept = [r for r in rows if r["id"] not in edits["dropped"]]
    added = dict(kept[0], id="added-1", instruction="Tap the red disc again", bbox=[1, 1, 30, 30])
    # on the screen of the dropped rows, like none of them: one more added row, not one of them changed
    unrelated = dict(by_id["s4b0"], id="added-2", instruction="Scroll down the list", bbox=[170, 150, 200, 190])
    (v2 / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*kept, added, unrelated]))
    return root, built, len(rows), edits


def test_the_command_counts_the_changes_made(versions, tmp_path, capsys):
    root, _, old_rows, edits = versions
    out, ids = tmp_path / "diff.json", tmp_path / "unchanged.txt"
    assert (
        main(["audit", "--diff", str(root / "v1"), str(root / "v2"), "--json", str(out), "--unchanged-ids", str(ids)])
        == 0
    )
    document = json.loads(out.read_text())
    changed = sum(len(edits[k]) for k in ("rewritten", "moved", "retargeted", "dropped"))
    assert document["counts"] == {
        "unchanged": old_rows - changed,
        "rewritten": 3,
        "moved": 2,
        "rewritten_and_moved": 0,
        "retargeted": 2,
        "dropped": 2,
        "added": 2,
    }
    assert document["slice_changes"] == {"element_type": 2}
    lines = [line for line in ids.read_text().splitlines() if not line.startswith("#")]
    assert len(lines) == old_rows - changed
    assert (
        "s2b4\tv2-s2b4" in lines and "s1b2\ts1b2" in lines and "s0b3\ts0b3" not in lines
    )  # s0b3 does not exist; s0b0 was rewritten
    assert not any(line.startswith("s0b0") for line in lines)
    printed = capsys.readouterr().out
    assert "instruction rewritten, same box" in printed and "element_type label changed" in printed
