"""The perturbation axes: every variant's target box recounted from the variant's own pixels (the
target painted in a colour nothing else has, the variant rendered, the colour's extent found),
the overlay never over the target, drops and skips, the spec grammar and the screen cache."""

import json

import numpy as np
import pytest
from PIL import Image

from pytest_grounding.core.cache import CACHE_ENV
from pytest_grounding.core.targets import AnyOf
from pytest_grounding.core.types import Box, Sample
from pytest_grounding.core.variants import base_uid, original_uid, record_fields, variant_of
from pytest_grounding.perturb import builtin_registry, parse, split_specs, variant_again, with_variants
from pytest_grounding.perturb.images import materialize

MARK = (250, 10, 240)  # the target's colour: nothing else on the screen comes near it


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def screen(tmp_path, size, box, name="s.png"):
    """A textured grey screen with the target box painted in MARK (pixels [x1, x2) x [y1, y2))."""
    width, height = size
    rng = np.random.default_rng(7)
    pixels = (rng.integers(60, 200, (height, width, 1)) * np.ones((1, 1, 3))).astype(np.uint8)
    x1, y1, x2, y2 = box
    pixels[y1:y2, x1:x2] = MARK
    path = tmp_path / name
    Image.fromarray(pixels).save(path)
    return path


def sample(path, box, size, uid="u1", **extra):
    return Sample(
        dataset="d", id=uid, uid=uid, image=path, instruction="click it", bbox=Box(*box), image_size=size, **extra
    )


def extent(image, colour=MARK, tolerance=60):
    """[x1, y1, x2, y2] of the pixels nearer than `tolerance` to `colour` (edges as box edges)."""
    pixels = np.asarray(image.convert("RGB")).astype(int)
    ys, xs = np.nonzero(np.abs(pixels - np.array(colour)).sum(axis=-1) < tolerance)
    assert xs.size, "the target's colour is gone"
    return [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]


def variant(spec, base):
    made = parse(split_specs([spec]), builtin_registry())
    assert len(made) == 1
    return made[0], made[0].derive(base, base.image_size)


def rendered(found):
    assert materialize(found) is None
    with Image.open(found.image) as image:
        return image.convert("RGB")


@pytest.mark.parametrize(
    ("spec", "size", "box"),
    [
        ("zoom:scale=0.5", (400, 300), (100, 60, 180, 120)),  # halves land on whole pixels
        ("zoom:scale=0.7", (400, 300), (37, 41, 113, 97)),
        ("zoom:scale=1.25", (400, 300), (150, 100, 230, 180)),
        ("zoom:scale=0.8", (333, 211), (20, 150, 77, 190)),
        ("downscale:long_edge=200", (400, 300), (100, 60, 180, 120)),
        ("downscale:long_edge=150", (400, 300), (37, 41, 113, 97)),
        ("downscale:max_pixels=30000", (400, 300), (250, 200, 330, 260)),
    ],
)
def test_a_geometric_variant_s_box_is_where_its_pixels_are(tmp_path, spec, size, box):
    base = sample(screen(tmp_path, size, box), box, size)
    _, found = variant(spec, base)
    image = rendered(found)
    assert found.image_size == image.size
    recount = extent(image)
    mapped = found.bbox.as_list()
    assert all(abs(a - b) <= 1 for a, b in zip(mapped, recount, strict=True)), (mapped, recount)
    if spec == "zoom:scale=0.5" or spec == "downscale:long_edge=200":  # whole pixels: exact
        assert mapped == recount
    assert found.point is None or found.bbox.contains(found.point)


def test_zoom_keeps_the_screen_size_and_scales_around_its_centre(tmp_path):
    size, box = (400, 300), (190, 140, 210, 160)  # centred: stays centred
    base = sample(screen(tmp_path, size, box), box, size)
    _, found = variant("zoom:scale=0.7", base)
    image = rendered(found)
    assert image.size == size
    x1, y1, x2, y2 = extent(image)
    assert abs((x1 + x2) / 2 - 200) <= 1 and abs((y1 + y2) / 2 - 150) <= 1


@pytest.mark.parametrize(("spec", "colour"), [("invert", tuple(255 - c for c in MARK)), ("jpeg:quality=30", MARK)])
def test_colour_variants_keep_the_box(tmp_path, spec, colour):
    size, box = (200, 150), (40, 30, 90, 70)
    base = sample(screen(tmp_path, size, box), box, size)
    _, found = variant(spec, base)
    image = rendered(found)
    assert image.size == size and found.bbox == base.bbox
    recount = extent(image, colour, tolerance=90)
    assert all(abs(a - b) <= 1 for a, b in zip(box, recount, strict=True)), recount
    original = np.asarray(Image.open(base.image).convert("RGB")).astype(int)
    assert np.abs(np.asarray(image).astype(int) - original).mean() > 1  # the pixels did change


def test_a_target_pushed_off_screen_is_dropped(tmp_path):
    size, box = (400, 300), (0, 0, 30, 20)  # a corner: zoomed 125% it leaves the screen
    base = sample(screen(tmp_path, size, box), box, size)
    assert variant("zoom:scale=1.25", base)[1] is None
    assert variant("zoom:scale=0.7", base)[1] is not None


def test_several_boxes_are_not_mapped_by_geometric_axes(tmp_path):
    size, box = (200, 150), (40, 30, 90, 70)
    base = sample(screen(tmp_path, size, box), box, size, target=AnyOf((Box(*box), Box(1, 1, 5, 5))))
    assert variant("zoom:scale=0.7", base)[1] is None
    assert variant("invert", base)[1] is not None


@pytest.mark.parametrize("uid", [f"s{k}" for k in range(12)])
def test_the_overlay_never_covers_the_target(tmp_path, uid):
    rng = np.random.default_rng(len(uid) * 31 + int(uid[1:]))
    size = (320, 240)
    x1, y1 = int(rng.integers(0, 250)), int(rng.integers(0, 180))
    box = (x1, y1, x1 + int(rng.integers(10, 70)), y1 + int(rng.integers(10, 60)))
    base = sample(screen(tmp_path, size, box, f"{uid}.png"), box, size, uid=uid)
    _, found = variant("occlude:size=0.35", base)
    assert found is not None
    image = np.asarray(rendered(found)).astype(int)
    original = np.asarray(Image.open(base.image).convert("RGB")).astype(int)
    changed = np.nonzero(np.abs(image - original).sum(axis=-1) > 0)
    assert changed[0].size > 0.05 * size[0] * size[1]  # an overlay is there
    cx1, cy1, cx2, cy2 = changed[1].min(), changed[0].min(), changed[1].max() + 1, changed[0].max() + 1
    assert cx2 <= box[0] or cx1 >= box[2] or cy2 <= box[1] or cy1 >= box[3]  # recounted: clear of the target
    assert extent(Image.fromarray(image.astype(np.uint8))) == list(box)  # the target untouched
    assert variant_of(found)["overlay"] == [int(cx1), int(cy1), int(cx2), int(cy2)]


def test_no_place_for_the_overlay_is_no_variant(tmp_path):
    size, box = (200, 150), (60, 40, 140, 110)  # the target's margins leave no room for half the screen
    base = sample(screen(tmp_path, size, box), box, size)
    assert variant("occlude:size=0.5", base)[1] is None


def test_variants_are_deterministic_and_named(tmp_path):
    size, box = (320, 240), (40, 30, 90, 70)
    base = sample(screen(tmp_path, size, box), box, size)
    made = parse(split_specs(["zoom,invert", "occlude"]), builtin_registry())
    first, again = with_variants([base], made), with_variants([base], made)
    assert [s.uid for s in first] == ["u1", "u1~zoom70", "u1~zoom125", "u1~invert", "u1~occlude"]
    assert first == again and [s.image for s in first] == [s.image for s in again]
    assert record_fields(first[1]) == {
        "variant": "zoom70",
        "axis": "zoom",
        "perturbation": "zoom:scale=0.7",
        "original_uid": "u1",
    }
    assert record_fields(base) == {}
    assert (
        original_uid("u1~zoom70", "zoom70") == "u1"
        and base_uid({"uid": "u1~zoom70-e2", "epoch": 2, "variant": "zoom70"}) == "u1"
    )
    assert variant_again(base, "zoom:scale=0.7", "zoom70") == first[1]


def test_a_variant_s_screen_is_made_once(tmp_path):
    size, box = (200, 150), (40, 30, 90, 70)
    path = screen(tmp_path, size, box)
    samples = [sample(path, box, size, uid=f"u{k}") for k in range(3)]
    made = parse(["invert"], builtin_registry())
    variants = [s for s in with_variants(samples, made) if variant_of(s)]
    assert len({s.image for s in variants}) == 1  # one file for the screen's samples
    materialize(variants[0])
    stamp = variants[0].image.stat().st_mtime_ns
    for found in variants:
        materialize(found)
    assert variants[0].image.stat().st_mtime_ns == stamp


def test_paraphrase_rewords_from_the_table_and_skips_the_rest(tmp_path):
    table = tmp_path / "reworded.jsonl"
    table.write_text(json.dumps({"id": "u1", "instruction": "press the pink thing"}) + "\n")
    size, box = (200, 150), (40, 30, 90, 70)
    path = screen(tmp_path, size, box)
    samples = [sample(path, box, size, uid="u1"), sample(path, box, size, uid="u2")]
    made = parse([f"paraphrase:file={table},name=relational"], builtin_registry())
    out = with_variants(samples, made)
    assert [(s.uid, s.instruction) for s in out] == [
        ("u1", "click it"),
        ("u1~relational", "press the pink thing"),
        ("u2", "click it"),
    ]
    assert out[1].image == path and materialize(out[1]) is None  # the original's pixels


@pytest.mark.parametrize(
    ("specs", "words"),
    [
        (["blur"], "unknown"),
        (["zoom:scale=1"], "between 0.1 and 4"),
        (["zoom:factor=2"], "unknown option factor"),
        (["jpeg:quality=300"], "1 to 100"),
        (["zoom:scale=0.7", "zoom:scale=0.7"], "two perturbations give the variant 'zoom70'"),
        (["downscale:max_pixels=10,long_edge=5"], "not both"),
        (["paraphrase"], "needs file=PATH"),
    ],
)
def test_bad_specs_are_named(specs, words):
    with pytest.raises(ValueError, match=words):
        parse(split_specs(specs), builtin_registry())


def test_spec_lists_split_on_axes_not_options():
    assert split_specs(["downscale:long_edge=1280,zoom:scale=0.7,x=1", "invert,jpeg"]) == [
        "downscale:long_edge=1280",
        "zoom:scale=0.7,x=1",
        "invert",
        "jpeg",
    ]


MIRROR = """
from dataclasses import dataclass
from typing import ClassVar

from pytest_grounding.core.types import Box
from pytest_grounding.perturb.base import Perturbation, derived


@dataclass(frozen=True)
class Mirror(Perturbation):
    axis: ClassVar[str] = "mirror"

    @classmethod
    def variants(cls, **options):
        cls.no_more(options)
        return [cls()]

    @property
    def label(self):
        return "mirror"

    def derive(self, sample, size):
        b = sample.bbox
        return derived(sample, self, bbox=Box(size[0] - b.x2, b.y1, size[0] - b.x1, b.y2), point=None, image_size=size)

    def render(self, image, sample):
        from PIL import ImageOps

        return ImageOps.mirror(image)


def pytest_grounding_register_perturbations(registry):
    registry.register("mirror", Mirror.variants)
"""


def test_a_project_registers_its_own_axis(pytester, tmp_path):
    from helpers import FIXTURES, make_project, read_json

    make_project(pytester, conftest=MIRROR)
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        f"--dataset={FIXTURES / 'mini'}", "--detector", "center", "--grounding-perturb", "mirror",
        "--grounding-json", str(report), "-k", "m01 or m02",
    )  # fmt: skip
    records = read_json(report)["samples"]
    assert sorted(r["id"] for r in records) == ["m01", "m01~mirror", "m02", "m02~mirror"], result.stdout.str()
    for record in records:
        if record.get("variant") == "mirror":
            original = next(r for r in records if r["uid"] == record["original_uid"])
            width = original["image_size"][0]
            x1, y1, x2, y2 = original["target"]
            assert record["target"] == [width - x2, y1, width - x1, y2]
            with Image.open(record["image"]) as image, Image.open(original["image"]) as source:
                assert np.array_equal(np.asarray(image.convert("RGB")), np.asarray(source.convert("RGB"))[:, ::-1])


def test_an_unknown_axis_is_a_usage_error(pytester):
    from helpers import make_project

    make_project(pytester)
    result = pytester.runpytest("--detector", "center", "--grounding-perturb", "zoom,blurr")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--grounding-perturb: perturbation 'blurr'*"])
