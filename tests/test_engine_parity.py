"""ci/engines/parity.py (issue 59): the pointer model's held-back screens through every serving path,
each run's clicks paired with the in-process run's.

The fast tests check the pure part on fabricated records: pairing by uid, equal / within one step /
further, the hit<->miss flips, the reasons read from what a run says (never invented), the table and
the docs' block. The slow tests (marked like the real-engine tests) run the script on a few screens
with the models `ci/engines/install.sh pointer` trained: every path's clicks equal the in-process
ones except where a reason is named, and every path is above both floors; with the pixel-frame
model, a vLLM that keeps the preset's frame is not stopped by the token probe, one whose processor
shrinks every screen is, and with the probe off its clicks show the frame moved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import engine_script, pointer_model

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "ci" / "engines" / "parity.py"
ENGINES = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")


def _script():
    return engine_script("parity", "engine_parity")


def record(uid, x, y, outcome="miss", tokens=183, served=False):
    meta = {"model_coordinates": [x, y]} if x is not None else {}
    if served:
        meta["usage"] = {"prompt_tokens": tokens, "completion_tokens": 6}
    else:
        meta["prompt_tokens"] = tokens
    return {"uid": uid, "outcome": outcome, "point": None if x is None else [x, y], "meta": meta}


REFERENCE = [
    record("a", 100, 200, "hit"),
    record("b", 300, 400),
    record("c", 500, 500),
    record("d", 700, 100, "hit"),
    record("e", 50, 60),
]


def test_the_same_wrong_format_answer_on_both_sides_is_the_same_click():
    parity = _script()
    garbled = {"uid": "s1", "outcome": "wrong_format", "raw": "(,192,184)", "meta": {}, "point": None}
    other = {**garbled, "raw": "(,190,184)"}
    assert parity.pair([garbled], [dict(garbled)], 4.0).equal == 1
    assert parity.pair([garbled], [other], 4.0).far == 1  # another unreadable answer: not the same


def test_clicks_are_paired_by_uid_and_counted_equal_near_and_far():
    parity = _script()
    other = [
        record("e", 50, 60, served=True, tokens=184),  # another order: paired by uid
        record("a", 100, 200, "hit", served=True, tokens=184),
        record("b", 310, 390, served=True, tokens=184),  # one step on both axes: near
        record("c", 500, 521, "hit", served=True, tokens=184),  # 21 away: further, and a flip
        record("d", None, None, "error", served=True),  # no point: further, a flip
        record("z", 1, 1, served=True),  # not in the reference: ignored
    ]
    found = parity.pair(REFERENCE, other, step=10)
    assert (found.paired, found.equal, found.near, found.far, found.flips, found.missing) == (5, 2, 1, 2, 2, 0)
    assert found.far_uids == ("c", "d")
    assert found.token_offsets == {1: 4, 0: 1}  # the usual offset (a template token) and one other
    assert parity.resized(found) == 1
    shrunk = parity.Pairing(paired=80, equal=0, near=5, far=75, flips=27, missing=0,
                            token_offsets={-41: 60, -46: 20})  # fmt: skip
    assert parity.resized(shrunk) == 80  # every screen resized (by its size): none is the usual
    assert parity.resized(parity.pair(REFERENCE, REFERENCE, step=10)) == 0
    alone = parity.pair(REFERENCE, other[:2], step=10)
    assert alone.missing == 3 and alone.equal == 2 and alone.far == 0
    assert parity.pair(REFERENCE, REFERENCE, step=10).equal == 5


def test_the_reason_is_read_from_the_run_or_unexplained():
    parity = _script()
    same = parity.pair(REFERENCE, REFERENCE, step=10)
    near = parity.pair(REFERENCE, [record("a", 110, 200, "hit")], step=10)
    facts = parity.Facts("vllm-auto", 1, "vllm:...", dtype="bfloat16")
    assert parity.reason(facts, same, "float32") == ""  # nothing differs: nothing to explain
    assert parity.reason(facts, near, "float32") == "bfloat16 (in-process float32)"
    assert parity.reason(parity.Facts("vllm-f32", 1, "", dtype="float32"), near, "float32") == "unexplained"
    quant = parity.Facts("llamacpp-q8", 1, "", weights="Q8_0")
    assert parity.reason(quant, near, "float32") == "quantization Q8_0 weights"
    assert parity.reason(parity.Facts("llamacpp-f16", 1, "", weights="F16"), near, "float32") == "F16 weights"
    resized = parity.pair(REFERENCE, [record("a", 100, 300, tokens=200), *REFERENCE[1:]], step=10)
    assert parity.reason(parity.Facts("x", 1, ""), resized, "float32").startswith("resize: 1 screens")
    assert parity.reason(facts, None, "float32") == ""


def test_dtypes_are_read_from_a_command_line_or_a_vllm_log():
    parity = _script()
    assert parity.dtype_of("vllm serve m --enforce-eager --dtype float32") == "float32"
    assert parity.dtype_of("INFO Initializing a V1 LLM engine with config: dtype=torch.bfloat16, ...") == "bfloat16"
    assert parity.dtype_of("--dtype half") == "float16"
    assert parity.dtype_of("vllm serve m --enforce-eager") is None


def test_the_table_and_the_docs_block():
    parity = _script()
    runs = [
        (parity.Facts("inprocess", 1, "qwenvl:...", 0.4, 2, 5, (0.1, 0.8), dtype="float32"), REFERENCE),
        (parity.Facts("inprocess", 2, "qwenvl:...", 0.4, 2, 5, (0.1, 0.8), 0.0, (0.0, 0.0), "float32"), REFERENCE),
        (
            parity.Facts("vllm-auto", 1, "vllm:...", 0.2, 1, 5, (0.04, 0.6), -0.2, (-0.6, 0.2), "bfloat16"),
            [record("a", 110, 200), *REFERENCE[1:]],
        ),
        (parity.Facts("transformers", 1, "", error="server did not start"), None),
    ]
    found = parity.rows(REFERENCE, runs, step=10)
    assert [r.reason for r in found] == ["", "", "bfloat16 (in-process float32)", ""]
    text = parity.table(found, "one step")
    lines = text.splitlines()
    assert len(lines) == 6 and lines[0].count("|") == 12 and "within one step" in lines[0]
    assert "| inprocess | 1 | 40.0% (2/5) | 10.0-80.0% | reference | 5/5 | 0 | 0 | 0 | - |" in lines[2]
    assert "| vllm-auto | 1 | 20.0% (1/5) | 4.0-60.0% | -20.0 (-60.0 to +20.0) | 4/5 | 1 | 0 | 1 |" in lines[4]
    assert "no run: server did not start" in lines[5]
    header = {"command": "python ci/engines/parity.py M", "machine": "2 cores", "date": "2026-12-07"}
    block = parity.docs_block(found, "one step", {**header, "screens": "5 screens", "seconds": "1 minute"})
    assert block.startswith("Made by `python ci/engines/parity.py M` on 2 cores, 2026-12-07 (5 screens; 1 minute).")
    sentences = [line for line in block.splitlines() if line.startswith("- ")]
    assert sentences == [
        "- `vllm-auto`: 4 of 5 clicks the in-process one, 1 within one step, 0 further, 1 outcomes flipped; "
        "reason: bfloat16 (in-process float32)."
    ]


def test_an_n2_run_is_paired_with_its_serial_twin():
    parity = _script()
    moved = [record("a", 110, 200, "hit"), *REFERENCE[1:]]
    runs = [
        (parity.Facts("inprocess", 1, ""), REFERENCE),
        (parity.Facts("inprocess", 2, ""), REFERENCE),
        (parity.Facts("vllm-auto", 1, ""), REFERENCE),
        (parity.Facts("vllm-auto", 2, ""), moved),
        (parity.Facts("llamacpp-f16", 2, ""), REFERENCE),  # no serial twin: left out
        (parity.Facts("transformers", 1, ""), REFERENCE),
        (parity.Facts("transformers", 2, "", error="no run"), None),
    ]
    found = parity.twins(runs, step=10)
    assert [(path, p.equal) for path, p in found] == [("inprocess", 5), ("vllm-auto", 4)]
    assert parity.twin_sentence(found) == (
        "With `-n 2`, 1 of 2 paths gave the serial run's clicks on every sample; not `vllm-auto` (4 of 5 the same)."
    )
    assert parity.twin_sentence(found[:1]) == "With `-n 2`, 1 of 1 paths gave the serial run's clicks on every sample."
    assert parity.twin_sentence([]) == ""


def test_the_block_goes_between_the_markers_and_nowhere_else():
    parity = _script()
    text = f"# Engines\n\nbefore\n{parity.START}\nold table\n{parity.END}\nafter\n"
    assert parity.replace_block(text, "new table\n") == (
        f"# Engines\n\nbefore\n{parity.START}\nnew table\n{parity.END}\nafter\n"
    )
    for broken in ("no markers", f"{parity.END} {parity.START}", f"{parity.START}{parity.START}{parity.END}"):
        with pytest.raises(ValueError, match="markers"):
            parity.replace_block(broken, "x")
    named = parity.markers("gta1")  # a second model's table, its own markers: the first one stays
    both = f"{text}{named[0]}\nold\n{named[1]}\n"
    assert parity.replace_block(both, "mine", "gta1") == f"{text}{named[0]}\nmine\n{named[1]}\n"
    with pytest.raises(ValueError, match="parity:qwen:start"):
        parity.replace_block(both, "x", "qwen")


def test_the_stamp_names_the_preset_its_budget_and_the_options_a_spec_needs(tmp_path):
    import json

    parity = _script()
    assert parity.recipe(tmp_path) == (None, None, "")  # another checkpoint: the user names its preset
    (tmp_path / "pointer.json").write_text(json.dumps({"recipe": {"max_pixels": 100000}}))
    assert parity.recipe(tmp_path) == ("qwen3-vl", 100000, "")  # the first model's stamp named no preset
    detector = "preset=gta1,max_pixels=100000,factor=32"
    (tmp_path / "pointer.json").write_text(
        json.dumps({"recipe": {"preset": "gta1", "max_pixels": 100000, "detector": detector}})
    )
    assert parity.recipe(tmp_path) == ("gta1", 100000, "factor=32")
    spec = parity.spec_of("inprocess", tmp_path, "gta1", 100000, None, None, "factor=32")
    assert spec == f"qwenvl:model={tmp_path},preset=gta1,max_pixels=100000,factor=32"


def test_the_shrunk_copy_halves_the_processors_budget_and_links_the_rest(tmp_path):
    import json

    parity = _script()
    model = tmp_path / "model"
    model.mkdir()
    (model / "preprocessor_config.json").write_text(
        json.dumps({"max_pixels": 100000, "size": {"longest_edge": 100000, "shortest_edge": 3136}})
    )
    (model / "model.safetensors").write_bytes(b"weights")
    copy = parity.shrunk_copy(model, tmp_path / "out", 100000)
    config = json.loads((copy / "preprocessor_config.json").read_text())
    assert config["max_pixels"] == config["size"]["longest_edge"] == 50000 and config["size"]["shortest_edge"] == 3136
    assert (copy / "model.safetensors").is_symlink() and (copy / "model.safetensors").read_bytes() == b"weights"
    spec = parity.spec_of("vllm-shrunk-unprobed", model, "gta1", 100000, None, None, "factor=32", copy)
    assert spec.startswith(f"vllm:model={copy},preset=gta1,max_pixels=100000,factor=32,probe=false,")
    assert ",probe=" not in parity.spec_of("vllm-shrunk", model, "gta1", 100000, None, None, "", copy)


def test_paths_are_checked_and_the_reference_always_runs():
    parity = _script()
    assert parity.wanted(["llamacpp-f16/n2", "vllm-f32"]) == [("inprocess", 1), ("vllm-f32", 1), ("llamacpp-f16", 2)]
    with pytest.raises(SystemExit, match="unknown path 'sglang'"):
        parity.wanted(["sglang"])


def test_the_command_that_made_the_table_is_what_was_asked():
    import argparse

    parity = _script()
    every = parity.DEFAULT_PATHS
    asked = argparse.Namespace(
        count=80,
        dataset=None,
        preset=None,
        max_pixels=None,
        options=None,
        paths=every,
        write_docs=True,
        docs_block=None,
    )
    assert parity.command_line(asked) == "python ci/engines/parity.py MODEL_DIR --count 80 --write-docs"
    mine = argparse.Namespace(
        count=40,
        dataset="my set",
        preset="gta1",
        max_pixels=None,
        options="factor=32",
        paths=["vllm-f32"],
        write_docs=False,
        docs_block="gta1",
    )
    assert parity.command_line(mine) == (
        "python ci/engines/parity.py MODEL_DIR --dataset 'my set' --preset gta1 --options factor=32 "
        "--paths vllm-f32 --docs-block gta1"
    )


def test_the_probe_and_the_frame_check_as_the_report_carries_them():
    parity = _script()
    report = {
        "notes": ["the server enlarged the 320x240 probe to 1,024 image tokens", "another note"],
        "frame_check": {"spec": {"name": "unknown", "readable": 0, "requests": 12}},
    }
    assert parity.checks_of(report, served=True) == (
        "the server enlarged the 320x240 probe to 1,024 image tokens",
        "frame check: unknown (0 of 12 answers readable)",
    )
    assert parity.checks_of({}, served=True) == ("probe: no finding", "")
    assert parity.checks_of({}, served=False) == ("", "")
    assert parity.checks_of({}, served=True, probed=False) == ("probe: off", "")


def test_docs_carry_the_table_the_script_wrote():
    parity = _script()
    text = (ROOT / "docs" / "engines.md").read_text()
    inside = text.split(parity.START, 1)[1].split(parity.END, 1)[0]
    assert "Made by `python ci/engines/parity.py" in inside and "| inprocess | 1 |" in inside
    assert "| reference |" in inside


# -- slow: the script itself on the cached model --------------------------------------------------

SLOW_COUNT = 12


@pytest.mark.engines
@pytest.mark.slow
def test_every_path_clicks_where_the_in_process_run_does(tmp_path):
    """A few screens, in-process, vLLM (float32) and llama.cpp F16 serially, llama.cpp with -n 2."""
    model = pointer_model("qwen3-vl")
    engines_installed("vllm", "llamacpp")
    out = tmp_path / "parity"
    paths = ["inprocess", "vllm-f32", "llamacpp-f16", "llamacpp-f16/n2"]
    command = [sys.executable, str(SCRIPT), str(model), "--count", str(SLOW_COUNT), "--out", str(out)]
    started = time.monotonic()
    done = subprocess.run([*command, "--paths", *paths], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    document = json.loads((out / "parity.json").read_text())
    rows = document["rows"]
    assert [(r["path"], r["workers"]) for r in rows] == [
        ("inprocess", 1),
        ("vllm-f32", 1),
        ("llamacpp-f16", 1),
        ("llamacpp-f16", 2),
    ]
    floors = document["floors"]
    assert set(floors) == {"center", "random"}
    for row in rows:
        assert not row["error"], row
        pairing = row["pairing"]
        assert pairing["paired"] == SLOW_COUNT and pairing["missing"] == 0, row
        if not row["reason"]:  # no reason named: every click the in-process one
            assert pairing["equal"] == SLOW_COUNT, row
        assert row["reason"] != "unexplained", row
        assert row["accuracy"] > max(floors.values()), (row, floors)
    assert rows[1]["dtype"] == "float32"
    compared = (out / "compare.md").read_text()  # compare's own table: each run against the in-process one
    assert sum(line.startswith("- ") and " vs " in line for line in compared.splitlines()) == len(rows) - 1
    print(f"parity on {SLOW_COUNT} screens: {time.monotonic() - started:.0f} s")


def engines_installed(*names):
    for engine in names:
        if not (ENGINES / engine / ".stamp").is_file():
            message = f"{engine} is not installed in {ENGINES / engine}: bash ci/engines/install.sh"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)


@pytest.mark.engines
@pytest.mark.slow
def test_the_probe_stops_a_server_that_shrinks_the_screen_as_the_clicks_show(tmp_path):
    """The pixel-frame model (gta1): vLLM keeping the preset's frame runs every screen (its clicks the
    in-process ones); a vLLM whose processor keeps half the pixel budget is stopped by the token probe
    before any sample; with the probe off, its clicks show what the probe saw (moved on most screens)."""
    model = pointer_model("gta1")
    engines_installed("vllm")
    out = tmp_path / "parity"
    paths = ["inprocess", "vllm-f32", "vllm-shrunk", "vllm-shrunk-unprobed"]
    command = [sys.executable, str(SCRIPT), str(model), "--count", str(SLOW_COUNT), "--out", str(out)]
    done = subprocess.run([*command, "--paths", *paths], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {row["path"]: row for row in json.loads((out / "parity.json").read_text())["rows"]}
    assert list(rows) == paths
    kept = rows["vllm-f32"]
    assert not kept["error"] and kept["pairing"]["equal"] == SLOW_COUNT, kept  # not stopped, the same clicks
    stopped = (out / "vllm-shrunk" / "output.txt").read_text()
    assert rows["vllm-shrunk"]["error"] and "the server shrank the screen" in stopped, stopped[-3000:]
    moved = rows["vllm-shrunk-unprobed"]
    assert not moved["error"], moved
    assert moved["pairing"]["far"] > SLOW_COUNT // 2, moved  # the frame moved: most clicks elsewhere
    assert moved["reason"].startswith("resize"), moved
