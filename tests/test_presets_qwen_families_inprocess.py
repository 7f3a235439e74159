"""The Qwen-family presets (tests/test_presets_qwen_families.py) on Qwen2.5-VL, Qwen3-VL or Qwen3.5 checkpoints,
in-process with `qwenvl` on tiny random checkpoints built offline: the preset's prompt reaches the chat template in
its order, the image is the preset's frame, and a forced answer in the family's format lands where it should."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from test_uitars import FORCING_CONFTEST  # the forced-generate detector, shared

TOOL = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [%s]}}\n</tool_call>'

# (family, preset, forced answer, the image the model sees, the point on the 160x120 screen). 160x120 with factor
# 32 and MAI-UI's 1,024 px (EvoCUA's 3,136) minimum rounds to 160x128; Qwen3-VL's 65,536 px minimum (Holo2) lifts
# it by sqrt(65536/19200) = 1.8475 and ceils to 32 px: 320x224; factor 28 (GroundNext) rounds to 168x112.
IN_PROCESS = [
    (
        "qwen3_vl",
        "mai-ui",
        '<grounding_think>x</grounding_think><answer>{"coordinate": [500,500]}</answer>',
        [160, 128],
    ),
    ("qwen3_vl", "evocua", "Action: click it.\n" + TOOL % "999, 0", [160, 128]),
    ("qwen3_vl", "holo2", '{"x": 250, "y": 750}', [320, 224]),
    ("qwen3_vl", "kv-ground", TOOL % "250, 750" + "<|im_end|>", [320, 224]),  # 65,536 px minimum, as Holo2
    ("qwen2_5_vl", "groundnext", TOOL % "84, 56", [168, 112]),
    ("qwen3_5", "qwen3.5", "<think>\nthe red one\n</think>\n\n" + TOOL % "250, 750", [160, 128]),  # 1,024 px min
]
EXPECTED = {
    "mai-ui": (80.0, 60.0),
    "evocua": (160.0, 0.0),
    "holo2": (40.0, 90.0),
    "kv-ground": (40.0, 90.0),
    "groundnext": (80.0, 60.0),
    "qwen3.5": (40.0, 90.0),
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    class Models(dict):
        def __missing__(self, family):
            self[family] = build_tiny_qwen25vl(tmp_path_factory.mktemp(f"tiny-{family}"), family=family)
            return self[family]

    return Models()


@pytest.mark.slow
@pytest.mark.parametrize("family, preset, answer, seen", IN_PROCESS)
def test_qwenvl_runs_the_2026_presets_on_a_tiny_checkpoint(tiny, tmp_path, monkeypatch, family, preset, answer, seen):
    from PIL import Image

    from pytest_grounding.core.types import Query

    monkeypatch.setenv("FORCED_ANSWER", answer)
    monkeypatch.setenv("PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    namespace: dict = {}
    exec(FORCING_CONFTEST, namespace)
    detector = namespace["forced_qwenvl"](model=str(tiny[family]), preset=preset)
    prediction = detector.predict(Query(Image.new("RGB", (160, 120), "white"), "Click the red square"))
    assert prediction.meta["model_image"] == seen
    assert prediction.point == pytest.approx(EXPECTED[preset], abs=0.2)
    (sent,) = [json.loads(line) for line in (tmp_path / "prompts.jsonl").read_text().splitlines()]
    prompt = sent["prompt"]
    messages = detector.preset.prompt.messages("Click the red square", tuple(seen))
    texts = [part["text"] for message in messages for part in message["content"] if part.get("text")]
    for text in texts:
        assert text in prompt
    # MAI-UI puts its text before the image; the others the image first
    text_at, image_at = prompt.index(texts[-1]), prompt.index("<|vision_start|>")
    assert (text_at < image_at) == (preset == "mai-ui")


@pytest.mark.slow  # a tiny checkpoint on torch: the slow tier's (conftest's tiers)
def test_an_architecture_qwenvl_does_not_run_is_one_clear_message(tmp_path):
    """Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5 (dense and MoE) run in-process; any other model type
    (here LLaVA, a VLM transformers has) is refused with one message that says to serve it."""
    transformers = pytest.importorskip("transformers")
    from pytest_grounding.detectors.qwenvl import QwenVLDetector

    transformers.LlavaConfig().save_pretrained(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"")  # weights present as far as the folder check goes
    with pytest.raises(ValueError, match=r"holds a 'llava' model.*runs qwen2_vl, .*qwen3_5, qwen3_5_moe in-process"):
        QwenVLDetector(model=str(tmp_path), preset="qwen3-vl")
