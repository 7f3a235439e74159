"""The synthetic benchmark: determinism, exact boxes, schema, coverage, the embedded default."""

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from helpers import read_jsonl
from pytest_grounding.core.types import ELEMENT_TYPES, Box
from pytest_grounding.datasets import load_dataset
from pytest_grounding.datasets.synth import (
    archetypes,
    choose_targets,
    generate,
    generator,
    plan_screen,
    render_screen,
    screens_for,
)
from pytest_grounding.datasets.synth import default as default_set
from pytest_grounding.datasets.synth.archetypes import ARCHETYPES
from pytest_grounding.datasets.synth.draw.themes import PLATFORMS
from pytest_grounding.datasets.validate import check_dataset

ROW_KEYS = {
    "file_name",
    "id",
    "instruction",
    "bbox",
    "point",
    "answer_type",
    "eval",
    "data_type",
    "element_type",
    "app",
    "app_slug",
    "app_category",
    "platform",
    "source_id",
    "image_size",
    "synth",
}


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    """60 samples over every archetype, generated once for the module."""
    out = tmp_path_factory.mktemp("synth") / "set"
    generate(out, 60, seed=11, workers=1)
    return out


def files_of(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---- determinism ---------------------------------------------------------------------------------


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_same_seed_gives_the_same_bytes_in_another_process_and_hash_seed(tmp_path):
    generate(tmp_path / "here", 14, seed=5, workers=1)
    code = (
        "import sys; from pytest_grounding.datasets.synth import generate; generate(sys.argv[1], 14, seed=5, workers=2)"
    )
    env = dict(os.environ, PYTHONHASHSEED="4242")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "there")], check=True, env=env)
    here, there = files_of(tmp_path / "here"), files_of(tmp_path / "there")
    assert sorted(here) == sorted(there)
    assert [name for name in here if here[name] != there[name]] == []
    assert sum(name.endswith(".png") for name in here) == len(screens_for(14, 5))


# What (count=8, seed=1) generates: the metadata file and the decoded pixels of every screen (pixels,
# not PNG bytes, so that a different zlib build cannot fail it). Verified identical on CPython
# 3.10-3.13 with Pillow 11.3, 12.3 and 13.0. A change here changes every benchmark number: when it
# is intended, bump GENERATOR_VERSION and update both digests.
GOLDEN_METADATA = "b3baa05c7a75a4111d9a0db16b90b1eacafe80b8bef1413731e606369d39722a"
GOLDEN_PIXELS = "309615d761f388852945e3b0d8da1424ba936d727305dc80a70a044f5df933ed"


def test_output_is_pinned_across_machines_and_versions(tmp_path):
    folder = generate(tmp_path, 8, seed=1, workers=1) / "data" / "test"
    pixels = hashlib.sha256()
    for png in sorted(folder.glob("*.png")):
        with Image.open(png) as image:
            pixels.update(image.tobytes())
    assert hashlib.sha256((folder / "metadata.jsonl").read_bytes()).hexdigest() == GOLDEN_METADATA
    assert pixels.hexdigest() == GOLDEN_PIXELS


def test_another_seed_gives_other_screens(tmp_path):
    generate(tmp_path / "a", 5, seed=1, workers=1)
    generate(tmp_path / "b", 5, seed=2, workers=1)
    a, b = files_of(tmp_path / "a"), files_of(tmp_path / "b")
    assert a["data/test/screen_00000.png"] != b["data/test/screen_00000.png"]


def test_count_is_samples_and_a_screen_does_not_depend_on_the_count(tmp_path):
    for count in (1, 7, 23):
        assert sum(take for _, take in screens_for(count, 3)) == count
    assert plan_screen(3, 4) == screens_for(40, 3)[4][0]
    generate(tmp_path / "few", 7, seed=3, workers=1)
    generate(tmp_path / "more", 30, seed=3, workers=1)
    assert len(read_jsonl(tmp_path / "few" / "data" / "test" / "metadata.jsonl")) == 7
    few, more = files_of(tmp_path / "few"), files_of(tmp_path / "more")
    assert few["data/test/screen_00000.png"] == more["data/test/screen_00000.png"]


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_regenerating_into_a_folder_leaves_no_stale_screens(tmp_path):
    generate(tmp_path, 30, seed=0, workers=1)
    generate(tmp_path, 4, seed=0, workers=1)
    rows = read_jsonl(tmp_path / "data" / "test" / "metadata.jsonl")
    assert sorted(p.name for p in (tmp_path / "data" / "test").glob("*.png")) == sorted({r["file_name"] for r in rows})


# ---- exact boxes ---------------------------------------------------------------------------------


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("index", range(len(ARCHETYPES)))
def test_every_box_is_exactly_the_pixels_drawn_for_its_target(index):
    """Render the screen again without the target: the pixels that change are the target's, and
    their bounding box (last pixel + 1 on the right and bottom) is the recorded box. This also
    proves that nothing drawn later covers any part of it."""
    plan = plan_screen(7, index)
    canvas = render_screen(plan)
    full = np.asarray(canvas.image)
    targets = choose_targets(canvas, plan)
    assert len(targets) >= plan.targets
    for target in targets:
        without = np.asarray(render_screen(plan, skip=[target.element_key]).image)
        ys, xs = np.nonzero(np.any(full != without, axis=2))
        assert (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1) == target.box, target.instruction
        box = Box(*target.box)
        assert box.inside(plan.width, plan.height)
        assert box.contains(target.point)
        pixels = zip(xs, ys, strict=True)
        assert all(box.contains((x, y)) and box.contains((x + 1, y + 1)) for x, y in pixels)  # pixel squares


def test_skipping_an_element_changes_only_that_element():
    plan = plan_screen(2, 0)
    canvas = render_screen(plan)
    other = render_screen(plan, skip=[10**6])  # no such element: the same screen
    assert np.array_equal(np.asarray(canvas.image), np.asarray(other.image))


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_targets_are_fair(small_set):
    rows = read_jsonl(small_set / "data" / "test" / "metadata.jsonl")
    for row in rows:
        x1, y1, x2, y2 = row["bbox"]
        width, height = row["image_size"]
        assert x2 - x1 >= generator.MIN_SIDE and y2 - y1 >= generator.MIN_SIDE
        assert not (x1 <= width / 2 <= x2 and y1 <= height / 2 <= y2), "the centre click must never score"
    per_image = Counter((r["file_name"], r["instruction"]) for r in rows)
    assert max(per_image.values()) == 1


# ---- schema --------------------------------------------------------------------------------------


def test_rows_follow_the_pointerbench_pro_schema(small_set):
    folder = small_set / "data" / "test"
    rows = read_jsonl(folder / "metadata.jsonl")
    assert len(rows) == 60
    assert [r["id"] for r in rows] == [f"syn_{i:05d}" for i in range(60)]
    sizes = {}
    for row in rows:
        assert set(row) == ROW_KEYS
        assert isinstance(row["instruction"], str) and row["instruction"].strip()
        assert all(isinstance(v, int) for v in row["bbox"] + row["point"] + row["image_size"])
        x1, y1, x2, y2 = row["bbox"]
        assert 0 <= x1 < x2 <= row["image_size"][0] and 0 <= y1 < y2 <= row["image_size"][1]
        assert Box(*row["bbox"]).contains(row["point"])
        assert row["answer_type"] == "point" and row["eval"] == {"type": "point_in_bbox", "bbox": row["bbox"]}
        assert row["element_type"] in ELEMENT_TYPES and row["data_type"] == row["element_type"]
        assert row["platform"] in PLATFORMS
        assert row["app_slug"] == row["app"].lower().replace(" ", "_")
        assert row["source_id"].startswith(f"synth-v{generator.GENERATOR_VERSION}/seed11/")
        if row["file_name"] not in sizes:
            with Image.open(folder / row["file_name"]) as image:
                assert image.format == "PNG" and image.mode == "RGB"
                sizes[row["file_name"]] = list(image.size)
        assert row["image_size"] == sizes[row["file_name"]]
    assert json.loads((small_set / "synth.json").read_text())["count"] == 60


def test_the_loader_reads_it_and_the_checker_finds_nothing(small_set):
    dataset = load_dataset(str(small_set))
    assert dataset.format == "pointerbench" and len(dataset.samples) == 60
    assert not dataset.problems and not any(s.defect for s in dataset.samples)
    assert check_dataset(dataset) == []


# ---- coverage ------------------------------------------------------------------------------------


def test_a_moderate_set_covers_archetypes_themes_resolutions_and_platforms():
    plans = [plan_screen(0, i) for i in range(120)]
    assert {p.archetype for p in plans} == {a.name for a in ARCHETYPES}
    assert {p.platform for p in plans} == set(PLATFORMS)
    sizes = {(p.width, p.height) for p in plans}
    assert {(1024, 768), (1920, 1080), (3440, 1440)} <= sizes
    themes = {p.theme for p in plans}
    assert any(t.startswith("dark") or t == "midnight" for t in themes) and any(t.startswith("light") for t in themes)
    assert {p.scale for p in plans} == {1.0, 1.25}


def test_targets_mix_types_forms_and_sizes(small_set):
    rows = read_jsonl(small_set / "data" / "test" / "metadata.jsonl")
    assert {r["element_type"] for r in rows} == set(ELEMENT_TYPES)
    assert {r["synth"]["instruction_form"] for r in rows} == {"literal", "functional"}
    sides = [Box(*r["bbox"]).side for r in rows]
    assert min(sides) < 16 and any(s < 32 for s in sides) and any(s > 32 for s in sides)
    small_icons = [
        r
        for r in rows
        if r["element_type"] == "icon" and max(r["bbox"][2] - r["bbox"][0], r["bbox"][3] - r["bbox"][1]) <= 14
    ]
    assert small_icons, "icons down to 12-14 px"


# ---- the embedded default ------------------------------------------------------------------------


@pytest.fixture
def tiny_default(monkeypatch):
    monkeypatch.setattr(default_set, "DEFAULT_COUNT", 6)
    return default_set


def test_default_set_is_generated_once_into_the_cache_and_reused(tmp_path, tiny_default, monkeypatch):
    monkeypatch.setenv("PYTEST_GROUNDING_CACHE", str(tmp_path / "cache"))
    folder = tiny_default.default_dataset_dir()
    assert folder.parent == tmp_path / "cache"
    assert f"v{generator.GENERATOR_VERSION}" in folder.name and "seed0" in folder.name and "n6" in folder.name
    assert len(read_jsonl(folder / "data" / "test" / "metadata.jsonl")) == 6

    def must_not_run(*args, **kwargs):
        raise AssertionError("a finished default set must be reused")

    monkeypatch.setattr(generator, "generate", must_not_run)
    assert tiny_default.default_dataset_dir() == folder
    assert tiny_default.default_dataset_dir(tmp_path / "cache") == folder
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [folder.name]  # no temporary folder left


def test_losing_the_race_to_another_process_keeps_its_set(tmp_path, tiny_default, monkeypatch):
    """Another process renamed its finished set into place while we generated ours: ours is dropped."""
    real_generate = generator.generate
    final = tmp_path / f"synthetic-v{generator.GENERATOR_VERSION}-{default_set.source_digest()}-seed0-n6"

    def racing_generate(out, count, seed):
        real_generate(final, count, seed, workers=1)  # the other process, finishing first
        (final / "theirs").write_text("")
        return real_generate(out, count, seed, workers=1)

    monkeypatch.setattr(generator, "generate", racing_generate)
    assert tiny_default.default_dataset_dir(tmp_path) == final
    assert (final / "theirs").exists()
    assert [p.name for p in tmp_path.iterdir()] == [final.name]


def test_default_set_constants_are_a_few_hundred_samples():
    assert 200 <= default_set.DEFAULT_COUNT <= 500
    assert 40 <= len(screens_for(default_set.DEFAULT_COUNT, default_set.DEFAULT_SEED)) <= 120


def test_finding_the_cached_default_set_imports_no_drawing_code():
    """Every run and every xdist worker looks the default set up: that must not import the
    generator (0.5 s of archetypes, widgets and fonts per process)."""
    default_set.default_dataset_dir()  # generated here first if this cache has no set yet
    code = (
        "import sys; from pytest_grounding.datasets.synth import default_dataset_dir; default_dataset_dir(); "
        "print(sorted(m for m in sys.modules if m.startswith('pytest_grounding.datasets.synth.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found = done.stdout.strip()
    assert found == "['pytest_grounding.datasets.synth.default', 'pytest_grounding.datasets.synth.identity']"


# ---- the archetype registry ----------------------------------------------------------------------


def archetype_modules():
    return sorted(p.stem for p in Path(archetypes.__file__).parent.glob("*.py") if not p.name.startswith("_"))


def test_every_archetype_module_is_registered_once_under_its_own_name():
    """A module copied into synth/archetypes/ but not listed in ARCHETYPES would never be drawn."""
    assert sorted(a.name for a in ARCHETYPES) == archetype_modules()
    for archetype in ARCHETYPES:
        module = importlib.import_module(f"{archetypes.__name__}.{archetype.name}")
        assert module.ARCHETYPE is archetype and archetype.compose is module.compose
        assert archetype.apps and archetype.menus and archetype.documents and 0 <= archetype.dark_bias <= 1


def test_an_edit_to_an_archetype_module_changes_the_cache_key(tmp_path):
    """The default set's folder is keyed on source_digest(): it must see into archetypes/."""
    copy = tmp_path / "synth"
    shutil.copytree(Path(generator.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__", "fonts"))
    assert default_set.source_digest(copy) == default_set.source_digest()
    with open(copy / "archetypes" / "cad.py", "a") as module:
        module.write("# edited\n")
    assert default_set.source_digest(copy) != default_set.source_digest()
