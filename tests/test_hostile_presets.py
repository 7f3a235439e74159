"""Issue 29, presets: values no model takes (factor 0, negative pixels, NaN temperature) are
refused when the preset is made (a detector option, a TOML file), not by failing every sample."""

import math

import pytest

pytest.importorskip("PIL")

from pytest_grounding.detectors.vlm import presets_from_toml, resolve_preset


@pytest.mark.parametrize(
    "override, word",
    [
        ({"factor": 0}, "factor"),
        ({"max_pixels": -5}, "max_pixels"),
        ({"min_pixels": 0}, "min_pixels"),
        ({"temperature": math.nan}, "temperature"),
        ({"temperature": -1}, "temperature"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"top_p": 1.5}, "top_p"),
    ],
)
def test_out_of_range_preset_values_are_refused_when_made(override, word):
    with pytest.raises(ValueError, match=word):
        resolve_preset("qwen2.5-vl", **override)


def test_out_of_range_values_in_a_presets_file_are_refused(tmp_path):
    for body, word in [
        ("preprocess = { factor = 0 }", "factor"),
        ('preprocess = { kind = "resize", width = 0, height = 600 }', "width"),
        ("decoding = { temperature = nan }", "temperature"),
    ]:
        toml = tmp_path / "p.toml"
        toml.write_text(f"[presets.bad]\nbase = 'qwen2.5-vl'\n{body}\n")
        with pytest.raises(ValueError, match=word):
            presets_from_toml(toml)


def test_the_shipped_presets_are_all_in_range():
    from pytest_grounding.detectors.vlm import all_presets

    assert len(all_presets()) > 5  # each was made, so each passed the checks


def test_a_project_preset_that_takes_a_built_in_name_is_not_the_published_setup():
    from dataclasses import replace

    from pytest_grounding.analysis import reproduce
    from pytest_grounding.core.record import plain
    from pytest_grounding.detectors.vlm.presets import register_preset, unregister_project_presets
    from pytest_grounding.plugin.common.environment import registered_preset

    changed = replace(resolve_preset("qwen2.5-vl", max_pixels=1_000_000), name="qwen2.5-vl")
    register_preset(changed, origin="presets.toml")
    try:
        from pytest_grounding.detectors.vlm.presets import get_preset

        info = {"preset": plain(get_preset("qwen2.5-vl").describe())}  # what the detector runs
        assert "preprocess" in reproduce.overridden(info, registered_preset("qwen2.5-vl"))
    finally:
        unregister_project_presets()
