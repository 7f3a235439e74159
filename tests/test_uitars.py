"""The `uitars` detector end to end on a tiny random Qwen2.5-VL built offline: the real processor,
chat template, vision tower and generate; the answer is forced token by token where a test needs a
parsed one (random weights answer garbage, which must come out as wrong format)."""

import json

import pytest

from helpers import FIXTURES, XDIST, make_project, read_json

pytest.importorskip("ui_tars")
# Imported here, once: pytester's in-process runs cannot load these extension modules twice.
pytest.importorskip("torch")
pytest.importorskip("transformers")

from pytest_grounding.detectors.qwenvl import QwenVLDetector
from pytest_grounding.detectors.uitars import UITarsDetector, pick_device

pytestmark = pytest.mark.slow  # the fast tier leaves this file out

MINI = str(FIXTURES / "mini")
FEW = ["-k", "m01 or m02 or m03"]

# A detector for the test: the real `uitars` whose generate is forced to write $FORCED_ANSWER and
# logs what the model was given (the prompt with its image tokens, the image grid) to $PROMPT_LOG.
FORCING_CONFTEST = """
import json, os
import torch
from transformers import LogitsProcessor, LogitsProcessorList
from pytest_grounding.detectors.qwenvl import QwenVLDetector, UITarsDetector


class Force(LogitsProcessor):
    def __init__(self, start, ids):
        self.start, self.ids = start, ids

    def __call__(self, input_ids, scores):
        step = min(input_ids.shape[1] - self.start, len(self.ids) - 1)
        forced = torch.full_like(scores, float("-inf"))
        forced[:, self.ids[step]] = 0.0
        return forced


def forced_uitars(detector_class=UITarsDetector, **options):
    detector = detector_class(**options)
    tokenizer = detector.processor.tokenizer
    ids = tokenizer(os.environ["FORCED_ANSWER"], add_special_tokens=False)["input_ids"]
    ids.append(tokenizer.convert_tokens_to_ids("<|im_end|>"))
    generate = detector.model.generate

    def forced_generate(**inputs):
        start = inputs["input_ids"].shape[1]
        with open(os.environ["PROMPT_LOG"], "a") as log:
            log.write(json.dumps({"prompt": tokenizer.decode(inputs["input_ids"][0]),
                                  "grid": inputs["image_grid_thw"][0].tolist()}) + "\\n")
        return generate(**inputs, logits_processor=LogitsProcessorList([Force(start, ids)]))

    detector.model.generate = forced_generate
    return detector


def forced_qwenvl(**options):
    return forced_uitars(QwenVLDetector, **options)


def pytest_grounding_register_detectors(registry):
    registry.register("uitars_forced", forced_uitars)
    registry.register("qwenvl_forced", forced_qwenvl)
"""


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    return build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny-qwen25vl"))


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    make_project(pytester, conftest=FORCING_CONFTEST)
    return pytester


@XDIST
def test_forced_answer_is_parsed_mapped_and_recorded(suite, tiny_model, workers, tmp_path, monkeypatch):
    # mini's screens are 160x120: smart_resize lifts them to the 78,400 px minimum, 336x252 (12 x 9 tiles
    # of 28 px: 108 image tokens). (42,42) there is (42*160/336, 42*120/252) = (20, 20) on the screen.
    monkeypatch.setenv("FORCED_ANSWER", "Action: click(start_box='(42,42)')")
    monkeypatch.setenv("PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite's own worker, when run under -n
    report = tmp_path / "r.json"
    result = suite.runpytest(
        f"--dataset={MINI}",
        "--detector",
        f"uitars_forced:model={tiny_model},max_new_tokens=40",
        "--grounding-json",
        str(report),
        *FEW,
        *workers,
    )
    assert result.ret == 1  # m02 and m03 are misses
    records = {r["id"]: r for r in read_json(report)["samples"]}
    assert sorted(records) == ["m01", "m02", "m03"]
    for record in records.values():
        assert record["raw"] == "Action: click(start_box='(42,42)')"
        assert record["point"] == [20.0, 20.0]
        assert record["meta"]["model_image"] == [336, 252] and record["meta"]["device"] == "cpu"
        assert record["meta"]["answer_shape"] == "action point"
    assert records["m01"]["outcome"] == "hit" and records["m02"]["outcome"] == "miss"
    sent = [json.loads(line) for line in (tmp_path / "prompts.jsonl").read_text().splitlines()]
    assert len(sent) == 3 and all(s["grid"] == [1, 18, 24] for s in sent)  # 14 px patches: 252/14, 336/14
    prompts = sorted(s["prompt"] for s in sent)
    assert prompts[0] == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<|vision_start|>"
        + "<|image_pad|>" * 108
        + "<|vision_end|>Output only the coordinate of one point in your response. "
        "What element matches the following task: Click the blue square<|im_end|>\n<|im_start|>assistant\n"
    )
    info = read_json(report)["run"]["detectors"][f"uitars_forced:model={tiny_model},max_new_tokens=40"]
    assert info["device"] == "cpu" and info["dtype"] == "float32" and info["attn_implementation"] == "sdpa"
    assert info["preset"]["name"] == "uitars-1.5-point" and info["preset"]["preprocess"]["max_pixels"] == 12845056
    assert info["preset"]["decoding"]["max_new_tokens"] == 40 and info["preset"]["decoding"]["temperature"] == 0
    assert info["xdist_worker"] in ({"gw0", "gw1"} if workers else {None})


@XDIST
def test_random_weights_answer_garbage_recorded_as_wrong_format(suite, tiny_model, workers, tmp_path):
    report = tmp_path / "r.json"
    result = suite.runpytest(
        f"--dataset={MINI}",
        "--detector",
        f"uitars:model={tiny_model},max_new_tokens=6",
        "--grounding-json",
        str(report),
        *FEW,
        *workers,
    )
    assert result.ret == 1
    records = read_json(report)["samples"]
    assert len(records) == 3
    for record in records:
        assert record["outcome"] == "wrong_format" and isinstance(record["raw"], str)
        assert record["meta"]["new_tokens"] >= 1 and record["meta"]["model_image"] == [336, 252]
    result.stdout.fnmatch_lines(
        [
            "*detector uitars:model=*Qwen2_5_VLForConditionalGeneration from * on cpu "
            "float32 sdpa, preset uitars-1.5-point, smart_resize factor 28, min_pixels 78400, max_pixels 12845056, "
            "greedy, 6 tokens*"
        ]
    )


def test_model_folder_from_the_environment(tiny_model, monkeypatch):
    monkeypatch.setenv("PYTEST_GROUNDING_UITARS_MODEL", str(tiny_model))
    detector = UITarsDetector(preset="uitars-1.5-computer-use", max_pixels=200000)
    assert detector.folder == tiny_model.resolve()
    assert "## User Instruction\nopen it<|im_end|>" in detector.prompt_text("open it")
    assert detector.describe()["preset"]["preprocess"]["max_pixels"] == 200000


def test_missing_or_wrong_model_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_GROUNDING_UITARS_MODEL", raising=False)
    monkeypatch.delenv("PYTEST_GROUNDING_QWENVL_MODEL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ValueError, match=r"ByteDance-Seed/UI-TARS-1\.5-7B are not in the hub cache"):
        UITarsDetector()  # no model: the default, looked for in the (empty) hub cache
    with pytest.raises(ValueError, match="qwenvl needs a model"):
        QwenVLDetector()
    with pytest.raises(ValueError, match="is not a checkpoint"):
        UITarsDetector(model=str(tmp_path))
    with pytest.raises(ValueError, match="unknown option"):
        UITarsDetector(model=str(tmp_path), max_pixel=3)


@pytest.mark.parametrize(
    "requested, gpus, worker, expected",
    [
        ("auto", 0, None, "cpu"),
        ("auto", 0, 3, "cpu"),
        ("auto", 1, None, "cuda:0"),
        ("auto", 4, 1, "cuda:1"),
        ("auto", 4, 5, "cuda:1"),
        ("cuda", 2, 2, "cuda:0"),
        ("cuda:1", 2, 0, "cuda:1"),
        ("cpu", 4, 1, "cpu"),
    ],
)
def test_each_xdist_worker_takes_its_own_gpu(requested, gpus, worker, expected):
    assert pick_device(requested, gpus, worker) == expected


def test_cuda_without_a_gpu_is_an_error():
    with pytest.raises(ValueError, match="no CUDA"):
        pick_device("cuda", 0, None)


def test_a_qwen2_vl_checkpoint_gets_the_ui_tars_1_0_preset_and_its_0_to_1000_answers(
    tmp_path_factory, tmp_path, monkeypatch
):
    from PIL import Image

    from pytest_grounding.core.types import Query
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    folder = build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny-qwen2vl"), family="qwen2_vl")
    monkeypatch.setenv("FORCED_ANSWER", "click(start_box='<|box_start|>(500,250)<|box_end|>')")
    monkeypatch.setenv("PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    namespace = {}
    exec(FORCING_CONFTEST, namespace)
    detector = namespace["forced_uitars"](model=str(folder))
    prediction = detector.predict(Query(Image.new("RGB", (160, 120), "white"), "Click the red square"))
    # 0-1000 of the screen: (500/1000*160, 250/1000*120) = (80, 30)
    assert prediction.point == pytest.approx((80.0, 30.0))
    assert detector.describe()["preset"]["name"] == "uitars-1.0"
    assert detector.describe()["preset_from"] == "default for qwen2_vl"
    # the Qwen2-VL processor defaults: 160x120 is above 3,136 px, rounded to 28: 168x112
    assert prediction.meta["model_image"] == [168, 112]


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory, tiny_model):
    """family -> a tiny checkpoint folder, each built on first use."""
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    class Models(dict):
        def __missing__(self, family):
            self[family] = build_tiny_qwen25vl(tmp_path_factory.mktemp(f"tiny-{family}"), family=family)
            return self[family]

    return Models(qwen2_5_vl=tiny_model)


TOOL_CALL = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [%s]}}'


# (family, preset, forced answer, the image the model sees, the point on the 160x120 screen). Qwen2(.5)-VL's
# processor defaults (3,136 px min) round 160x120 to 28 px tiles: 168x112; Qwen3-VL's 65,536 px min lifts it
# by sqrt(65536/19200) = 1.8475 and ceils to 32 px: 320x224. ShowUI's and GUI-Owl's 200,704 px min lifts it by
# 3.2332: ceil(517.3/28)*28 = 532, ceil(388/28)*28 = 392 (28 px); ceil(517.3/32)*32 = 544, ceil(388/32)*32 = 416.
IN_PROCESS = [
    ("qwen2_5_vl", "qwen2.5-vl", TOOL_CALL % "84, 56", [168, 112], (80.0, 60.0)),
    ("qwen2_5_vl", "gta1", "(42,28)", [168, 112], (40.0, 30.0)),
    ("qwen2_vl", "os-atlas-7b", "<|box_start|>(250,250),(750,750)<|box_end|>", [168, 112], (80.0, 60.0)),
    ("qwen2_vl", "showui", "[0.25, 0.75]", [532, 392], (40.0, 90.0)),
    ("qwen3_vl", "qwen3-vl", "[500,500]", [320, 224], (80.0, 60.0)),
    ("qwen3_vl", "gui-owl-1.5", TOOL_CALL % "250, 750", [544, 416], (40.0, 90.0)),
]


@pytest.mark.parametrize("family, preset, answer, seen, expected", IN_PROCESS)
def test_qwenvl_runs_each_family_with_its_presets(
    tiny_models, tmp_path, monkeypatch, family, preset, answer, seen, expected
):
    from PIL import Image

    from pytest_grounding.core.types import Query

    monkeypatch.setenv("FORCED_ANSWER", answer)
    monkeypatch.setenv("PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    namespace = {}
    exec(FORCING_CONFTEST, namespace)
    detector = namespace["forced_qwenvl"](model=str(tiny_models[family]), preset=preset)
    prediction = detector.predict(Query(Image.new("RGB", (160, 120), "white"), "Click the red square"))
    assert prediction.meta["model_image"] == seen
    assert prediction.point == pytest.approx(expected) or prediction.box.center == pytest.approx(expected)
    (sent,) = [json.loads(line) for line in (tmp_path / "prompts.jsonl").read_text().splitlines()]
    messages = detector.preset.prompt.messages("Click the red square", tuple(seen))
    for message in messages:  # every text of the preset's messages, in the chat template's prompt
        for part in message["content"]:
            assert part.get("text", "") in sent["prompt"]
    info = detector.describe()
    assert info["preset"]["name"] == preset and info["model_type"] == family and info["preset_from"] == "option"


def test_qwenvl_keeps_special_tokens_where_the_preset_says(tiny_models, tmp_path, monkeypatch):
    from PIL import Image

    from pytest_grounding.core.types import Query

    monkeypatch.setenv("FORCED_ANSWER", "<|box_start|>(250,250),(750,750)<|box_end|>")
    monkeypatch.setenv("PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    namespace = {}
    exec(FORCING_CONFTEST, namespace)
    detector = namespace["forced_qwenvl"](model=str(tiny_models["qwen2_vl"]), preset="os-atlas-7b")
    prediction = detector.predict(Query(Image.new("RGB", (160, 120), "white"), "Click the red square"))
    assert prediction.raw == "<|box_start|>(250,250),(750,750)<|box_end|>"
    dropped = namespace["forced_qwenvl"](
        model=str(tiny_models["qwen2_vl"]), preset="os-atlas-7b", skip_special_tokens=True
    )
    assert dropped.predict(Query(Image.new("RGB", (160, 120)), "x")).raw == "(250,250),(750,750)"


def test_qwenvl_refusal_and_defaults_by_architecture(tiny_models, tmp_path, monkeypatch):
    from PIL import Image

    from pytest_grounding.core.types import Query

    monkeypatch.setenv("FORCED_ANSWER", "[-1,-1]")
    monkeypatch.setenv("PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    namespace = {}
    exec(FORCING_CONFTEST, namespace)
    detector = namespace["forced_qwenvl"](model=str(tiny_models["qwen3_vl"]))
    assert detector.preset.name == "qwen3-vl" and detector.describe()["preset_from"] == "default for qwen3_vl"
    prediction = detector.predict(Query(Image.new("RGB", (160, 120)), "Click the red square"))
    assert prediction.point is None and prediction.meta["refusal"] is True
    assert QwenVLDetector(model=str(tiny_models["qwen2_5_vl"])).preset.name == "qwen2.5-vl"
    assert UITarsDetector(model=str(tiny_models["qwen2_5_vl"])).preset.name == "uitars-1.5-point"


@pytest.mark.parametrize(
    "family, options, message",
    [
        ("qwen2_vl", {}, "needs preset=NAME"),
        ("qwen2_5_vl", {"preset": "qwen3-vl"}, "factor 28"),
        ("qwen3_vl", {"preset": "qwen2.5-vl"}, "factor 32"),
        ("qwen2_5_vl", {"preset": "gpt-box"}, "openai detector sends any image"),
    ],
)
def test_qwenvl_refuses_a_preset_its_architecture_would_see_differently(tiny_models, family, options, message):
    with pytest.raises(ValueError, match=message):
        QwenVLDetector(model=str(tiny_models[family]), **options)


@XDIST
def test_qwenvl_by_name_through_the_plugin_on_a_tiny_qwen3_vl(suite, tiny_models, workers, tmp_path):
    report = tmp_path / "r.json"
    spec = f"qwenvl:model={tiny_models['qwen3_vl']},max_new_tokens=4"
    result = suite.runpytest(
        f"--dataset={MINI}", "--detector", spec, "--grounding-json", str(report), "-k", "m01 or m02", *workers
    )
    assert result.ret == 1  # random weights: wrong formats
    records = read_json(report)["samples"]
    assert [r["outcome"] for r in records] == ["wrong_format"] * 2
    assert all(r["meta"]["model_image"] == [320, 224] for r in records)
    info = read_json(report)["run"]["detectors"][spec]
    assert info["model_type"] == "qwen3_vl" and info["preset"]["name"] == "qwen3-vl"
    result.stdout.fnmatch_lines(["*Qwen3VLForConditionalGeneration from * preset qwen3-vl, smart_resize factor 32*"])
