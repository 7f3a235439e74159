"""`agent=crop` in-process (detectors/qwenvl_agent.py) on a tiny random Qwen2.5-VL built offline,
its `generate` forced to follow a script: a crop as `<tool_call>` text, then a click on the crop.
The crop reaches the model at the preset's size, the click maps back to the intended screen pixel,
the trace counts the model's own tokens."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # a model is built and run on torch


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    return build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny-agent"))


def scripted(detector, answers, log):
    """The detector's generate writes answers[k] when the prompt holds k + 1 images."""
    import torch

    tokenizer = detector.processor.tokenizer
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def generate(**inputs):
        images = inputs["image_grid_thw"].tolist()
        log.append({"images": images, "prompt": tokenizer.decode(inputs["input_ids"][0])})
        ids = tokenizer(answers[len(images) - 1], add_special_tokens=False)["input_ids"] + [end]
        return torch.cat([inputs["input_ids"], torch.tensor([ids], dtype=inputs["input_ids"].dtype)], dim=1)

    detector.model.generate = generate


@pytest.mark.parametrize("size", [(640, 480), (1024, 768)])
def test_a_scripted_crop_then_click_maps_to_the_screen_pixel(tiny_model, size):
    from PIL import Image

    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors.qwenvl import QwenVLDetector

    detector = QwenVLDetector(
        model=str(tiny_model), preset="qwen2.5-vl", extractors="paren", agent="crop", device="cpu"
    )
    w, h = size
    region = (w // 4, h // 4, 3 * w // 4, 3 * h // 4)
    target = (w // 4 + 90, h // 4 + 80)
    screen = detector.preset.preprocess.frame(size).model
    crop = detector.preset.preprocess.frame((region[2] - region[0], region[3] - region[1])).model
    box = [region[0] * screen[0] / w, region[1] * screen[1] / h, region[2] * screen[0] / w, region[3] * screen[1] / h]
    click = (90 * crop[0] / (region[2] - region[0]), 80 * crop[1] / (region[3] - region[1]))
    answers = [
        "<tool_call>" + json.dumps({"name": "crop", "arguments": {"box": box}}) + "</tool_call>",
        f"({click[0]!r}, {click[1]!r})",
    ]
    log = []
    scripted(detector, answers, log)
    prediction = detector.predict(Query(Image.new("RGB", size, (200, 200, 200)), "the thing"))
    assert prediction.meta["agent_end"] == "click", prediction.meta
    assert prediction.point == pytest.approx(target, abs=1e-6)
    turns = prediction.meta["turns"]
    assert [t["shown"] for t in turns] == [[[0, 0, w, h]], [list(region)]]
    assert [len(entry["images"]) for entry in log] == [1, 2]
    patch = detector.patch  # the grid is in patches: each image reached the model at the preset's size
    assert log[0]["images"][0][1:] == [screen[1] // patch, screen[0] // patch]
    assert log[1]["images"][1][1:] == [crop[1] // patch, crop[0] // patch]
    assert all(t["tokens"]["prompt"] > 0 and t["tokens"]["completion"] > 0 for t in turns)
    assert "crop" in log[0]["prompt"]  # the hint after the instruction
    assert detector.describe()["agent"]["mode"] == "crop" and detector.batch_size == 1
    detector.close()
