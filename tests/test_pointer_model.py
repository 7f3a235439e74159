"""The tiny pointer model (ci/engines/train_pointer.py, issue 59) really clicks: run through the
harness in-process (`qwenvl:model=DIR`) on held-back drawn screens of four sizes (another seed
than training's), its accuracy is above the floors `center` and `random`.

The model is trained here when the recipe takes at most 3 minutes on this kind of machine
(`train_pointer.QUICK`); otherwise the one the script built into the engines cache is used
($GROUNDING_ENGINES_DIR/pointer, default ~/.cache/pytest-grounding/engines/pointer), and the test
skips, saying how to build it, where there is none (CI's engines install does not build it yet). The fast
tests check the pieces that need no training: the held-back screens the harness reads, and the
tokenizer that writes each answer number as one token."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "ci" / "engines" / "train_pointer.py"
ENGINES = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")
CACHED = ENGINES / "pointer"


def _script():
    """ci/engines/train_pointer.py as a module (registered first: its dataclass looks itself up)."""
    if "train_pointer" in sys.modules:
        return sys.modules["train_pointer"]
    spec = importlib.util.spec_from_file_location("train_pointer", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_pointer"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pointer_model(tmp_path_factory):
    """The trained checkpoint: trained here when quick, else the cached one."""
    script = _script()
    if script.QUICK:
        folder = tmp_path_factory.mktemp("pointer") / "model"
        subprocess.run([sys.executable, str(SCRIPT), str(folder)], check=True, cwd=ROOT, timeout=900)
        return folder
    if (CACHED / "config.json").is_file() and (CACHED / script.STAMP).is_file():
        return CACHED
    message = (
        f"the tiny pointer model takes longer than 3 minutes to train and is not cached in {CACHED}: "
        f"python ci/engines/train_pointer.py {CACHED}"
    )
    pytest.skip(message)  # CI's engines install does not train it (20 minutes): see docs/engines.md


@pytest.mark.slow  # minutes of CPU: out of the fast tier
def test_pointer_model_clicks_above_the_floors(pointer_model, tmp_path):
    script = _script()
    held = tmp_path / "held"
    subprocess.run([sys.executable, str(SCRIPT), "--dataset", str(held), "--count", "80"], check=True, cwd=ROOT)
    report = tmp_path / "report.json"
    model = f"qwenvl:model={pointer_model},max_pixels={script.MAX_PIXELS},threads=2"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "suites/",
            "-p",
            "no:cacheprovider",
            "-q",
            "--dataset",
            str(held),
            "--detector",
            model,
            "--detector",
            "center",
            "--detector",
            "random",
            "--grounding-json",
            str(report),
            "--grounding-runs-dir",
            "off",
        ],
        cwd=ROOT,
        timeout=900,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )
    accuracy = {spec: summary["accuracy"] for spec, summary in _summaries(report).items()}
    assert set(accuracy) == {model, "center", "random"}, accuracy
    # docs/engines.md: 22.5% against 3.8% (center) and 10% (random) on these 80 screens
    assert accuracy[model] >= max(accuracy["center"], accuracy["random"]) + 0.1, accuracy


def _summaries(report: Path) -> dict:
    document = json.loads(report.read_text(encoding="utf-8"))
    return document["summary"]


def test_held_back_screens_are_a_dataset_of_four_sizes_the_harness_reads(tmp_path):
    from PIL import Image

    from pytest_grounding.datasets import load_dataset

    script = _script()
    folder = script.write_dataset(tmp_path / "held", 8, seed=10_000)
    dataset = load_dataset(str(folder))
    assert len(dataset.samples) == 8
    sizes = set()
    for sample in dataset.samples:
        with Image.open(sample.image) as image:
            sizes.add(image.size)
            x1, y1, x2, y2 = sample.bbox.x1, sample.bbox.y1, sample.bbox.x2, sample.bbox.y2
            assert 0 <= x1 < x2 <= image.size[0] and 0 <= y1 < y2 <= image.size[1]
            colour = sample.instruction.split()[1]
            centre = image.convert("RGB").getpixel((int((x1 + x2) / 2), int((y1 + y2) / 2) + 2))
            assert centre == script.COLOURS[colour], sample.instruction  # the target has the colour named
    assert sizes == set(script.HELD_SIZES)
    again = script.write_dataset(tmp_path / "again", 8, seed=10_000)
    assert (again / "metadata.jsonl").read_bytes() == (folder / "metadata.jsonl").read_bytes()  # seeded


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_each_answer_number_is_one_token(tmp_path):
    from transformers import AutoTokenizer

    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    script = _script()
    folder = build_tiny_qwen25vl(tmp_path / "tok", family="qwen3_vl", vocab_size=1000, corpus=script.tokenizer_corpus())
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert tokenizer.tokenize("[350,620]") == ["[", "350", ",", "620", "]"]
    assert all(len(tokenizer.tokenize(str(step * 10))) == 1 for step in range(100))
    plain = AutoTokenizer.from_pretrained(build_tiny_qwen25vl(tmp_path / "plain", family="qwen3_vl"))
    assert plain.tokenize("[350,620]") != tokenizer.tokenize("[350,620]")  # the corpus made the difference
