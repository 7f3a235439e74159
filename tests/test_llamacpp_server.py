"""The `llamacpp` detector's parts that need no llama-server: the launch plan (the preset's image
budget as --image-min-tokens/--image-max-tokens, slots and their context), finding the server,
GGUF files from a path or a hub cache laid out as huggingface_hub lays it out (offline), the
projector beside the model, and the messages when something is missing. The real server:
test_real_engines.py."""

from __future__ import annotations

import os
import stat

import pytest

pytest.importorskip("httpx")

from pytest_grounding.detectors.hub import ModelUnavailable
from pytest_grounding.detectors.llamacpp_server import (
    LlamaCppDetector,
    beside,
    find_server,
    image_token_range,
    launch_plan,
    resolve_file,
)
from pytest_grounding.detectors.vlm.presets import resolve_preset


def test_the_launch_plan_keeps_every_screen_in_the_presets_frame():
    preset = resolve_preset("uitars-1.5-point")
    assert image_token_range(preset) == (100, 16384)  # min_pixels 100*28*28, the 12,845,056 px budget
    plan = launch_plan("/m/model-Q8_0.gguf", "/m/mmproj.gguf", preset, port=18080, server="/bin/llama-server", slots=2)
    argv = list(plan.argv)
    assert argv[:5] == ["/bin/llama-server", "-m", "/m/model-Q8_0.gguf", "--mmproj", "/m/mmproj.gguf"]
    assert argv[argv.index("--alias") + 1] == "model-Q8_0" == plan.served_name
    assert argv[argv.index("--image-min-tokens") + 1] == "100"
    assert argv[argv.index("--image-max-tokens") + 1] == "16384"
    per_slot = -(-(16384 + 4096 + preset.decoding.max_new_tokens) // 1024) * 1024
    assert plan.max_model_len == per_slot and argv[argv.index("--ctx-size") + 1] == str(2 * per_slot)
    assert argv[argv.index("--parallel") + 1] == "2" and "--no-kv-unified" in argv
    assert plan.base_url == "http://127.0.0.1:18080/v1"
    # a raised budget raises the maximum; the user's flags come last and win
    raised = launch_plan("/m/a.gguf", None, preset, port=1, server_max_pixels=20000 * 784, server_args="-t 2")
    assert raised.argv[raised.argv.index("--image-max-tokens") + 1] == "20000" and raised.argv[-2:] == ("-t", "2")
    assert "--mmproj" not in raised.argv
    # Qwen3-VL: 32 px merged patches
    assert image_token_range(resolve_preset("qwen3-vl"))[1] == 16384
    # a preset without smart_resize: no image flags, no context
    box = launch_plan("/m/a.gguf", "/m/p.gguf", resolve_preset("gpt-box"), port=1)
    assert "--image-max-tokens" not in box.argv and "--ctx-size" not in box.argv


def test_the_server_is_found_where_the_engine_script_builds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDING_ENGINES_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(ModelUnavailable, match="no llama-server") as missing:
        find_server(None)
    assert "ci/engines/install.sh llamacpp" in str(missing.value)
    built = tmp_path / "llamacpp" / "bin" / "llama-server"
    built.parent.mkdir(parents=True)
    built.write_text("#!/bin/sh\n")
    built.chmod(built.stat().st_mode | stat.S_IXUSR)
    assert find_server(None) == str(built)
    with pytest.raises(ModelUnavailable, match="is not an executable"):
        find_server(str(tmp_path / "elsewhere"))
    assert find_server(str(built)) == str(built)


def test_gguf_files_from_a_path_or_an_offline_hub_cache(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    model = tmp_path / "local" / "model.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    assert resolve_file(str(model), "model") == str(model)
    assert beside(str(model)) is None
    (model.parent / "mmproj.gguf").write_bytes(b"GGUF")
    assert beside(str(model)) == str(model.parent / "mmproj.gguf")
    (model.parent / "mmproj-f32.gguf").write_bytes(b"GGUF")
    assert beside(str(model)) is None  # two: which one is not guessed
    # the hub cache as huggingface_hub lays it out: models--ORG--NAME/{refs/main, snapshots/COMMIT/FILE}
    hub = tmp_path / "hf" / "hub"
    repo = hub / "models--ggml-org--Tiny-VL-GGUF"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "tiny-Q8_0.gguf").write_bytes(b"GGUF")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    found = resolve_file("ggml-org/Tiny-VL-GGUF/tiny-Q8_0.gguf", "model")
    assert os.path.realpath(found) == os.path.realpath(snapshot / "tiny-Q8_0.gguf")
    with pytest.raises(ModelUnavailable, match="the hub file cannot be had") as absent:
        resolve_file("ggml-org/Tiny-VL-GGUF/mmproj.gguf", "mmproj")
    assert "download it once while online" in str(absent.value)
    with pytest.raises(ModelUnavailable, match="no file here and no hub file"):
        resolve_file("nothing.gguf", "model")


def test_bad_options_are_one_clear_error():
    with pytest.raises(ValueError, match="llamacpp needs model="):
        LlamaCppDetector()
    with pytest.raises(ValueError, match="use the openai detector"):
        LlamaCppDetector(model="m.gguf", base_url="http://x/v1")
    with pytest.raises(ValueError, match="slots=0"):
        LlamaCppDetector(model="m.gguf", slots=0)


@pytest.mark.parametrize(
    ("options", "words"),
    [({"slots": 2.5}, "whole number"), ({"slots": True}, "whole number"), ({"slots": 257}, "between 1 and 256"),
     ({"slots": "1e9"}, "whole number"), ({"start_timeout": "inf"}, "86400"), ({"start_timeout": True}, "86400"),
     ({"server_max_pixels": -5}, "between 1 and"), ({"server_max_pixels": 0}, "between 1 and"),
     ({"server_max_pixels": "nan"}, "whole number of pixels"), ({"server_max_pixels": 10**12}, "between 1 and"),
     ({"server_max_pixels": 1.5e6 + 0.5}, "whole number of pixels"),
     ({"server_max_pixels": 10**8, "slots": 256}, "--ctx-size 33,816,576"),
     ({"server_max_pixels": 5 * 10**7, "slots": 256}, "fewer slots=")],
)  # fmt: skip
def test_options_are_checked_before_any_server_starts(monkeypatch, options, words):
    from pytest_grounding.detectors import llamacpp_server

    monkeypatch.setattr(llamacpp_server, "find_server", lambda *a: pytest.fail("a server was looked for"))
    monkeypatch.setattr(llamacpp_server, "ensure_server", lambda *a: pytest.fail("a server was started"))
    with pytest.raises(ValueError, match=r"^llamacpp: ") as caught:
        LlamaCppDetector(model="m.gguf", **options)
    assert words in str(caught.value)


@pytest.mark.parametrize(("slots", "pixels"), [(1, None), ("4", None), (4.0, 3_211_264), (256, None), (16, 10**7)])
def test_the_context_asked_for_stays_within_the_bound(slots, pixels):
    from pytest_grounding.detectors.llamacpp_server import MAX_CONTEXT, slot_context

    preset = resolve_preset("qwen2.5-vl")
    plan = launch_plan("m.gguf", None, preset, port=1, slots=int(float(slots)), server_max_pixels=pixels)
    size = int(plan.argv[plan.argv.index("--ctx-size") + 1])
    assert size == slot_context(preset, pixels) * int(float(slots)) <= MAX_CONTEXT


@pytest.mark.parametrize("pixels", [-1, "lots", 10**10, float("inf")])
def test_the_vllm_detector_checks_server_max_pixels_before_starting(monkeypatch, pixels):
    from pytest_grounding.detectors import vllm_server

    monkeypatch.setattr(vllm_server, "ensure_server", lambda *a: pytest.fail("a server was started"))
    with pytest.raises(ValueError, match=r"^vllm: server_max_pixels="):
        vllm_server.VLLMDetector(model="org/m", preset="qwen2.5-vl", server_max_pixels=pixels)
