"""`qwenvl` on Qwen3.5 (model types qwen3_5 and qwen3_5_moe): tiny random checkpoints built offline,
laid out in a hub cache and loaded by hub id with HF_HUB_OFFLINE=1, through the suite end to end;
the image reaching the model is the qwen3.5 preset's smart_resize frame with factor 32 (16 px
patches merged 2x2, read from the processor's image_grid_thw); and batching, which Qwen3.5's
gated-delta-net (linear attention) layers make a question of its own: left padding must not reach
their recurrent state. transformers zeroes the padded positions' hidden states before those layers
(`create_recurrent_attention_mask`); the test below shows batch N's logits equal batch 1's, and
that without that mask they would not."""

import json

import pytest

from helpers import FIXTURES, SERIAL, make_project, read_json

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
# This lookup imports transformers' model classes and torch's distributed parts, here, outside pytester's
# in-process runs, which cannot import them twice (the OCR's text encoder needs them later): keep it.
if not hasattr(transformers, "Qwen3_5ForConditionalGeneration"):
    pytest.skip("this transformers has no Qwen3.5", allow_module_level=True)

from test_batching import queries, sharpen  # noqa: E402 (the different-sized screens, the sharpened weights)
from test_uitars import FORCING_CONFTEST  # noqa: E402 (the forced-generate detector, shared)

from pytest_grounding.detectors.hub import place_in_cache  # noqa: E402
from pytest_grounding.detectors.qwenvl import ARCHITECTURES, QWENVL_DEFAULTS, QwenVLDetector  # noqa: E402

MINI = str(FIXTURES / "mini")
HUB_ID = "tiny-org/Tiny-Qwen3.5"
MOE_ID = "tiny-org/Tiny-Qwen3.5-MoE"
COMMIT = "35353535353535353535353535353535deadbeef"
TOOL = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [%s]}}\n</tool_call>'
SHORT_SYSTEM = "Answer."  # a short system turn: the long tool prompt drowns the screen in a 2-layer random model

# The forcing detector, and a sharpened `qwenvl` (random weights scaled so garbage depends on the screen).
CONFTEST = (
    FORCING_CONFTEST
    + """

def sharp_qwenvl(**options):
    import torch
    detector = QwenVLDetector(**options)
    with torch.no_grad():
        for parameter in detector.model.parameters():
            if parameter.ndim >= 2:
                parameter.mul_(20.0)
    return detector


_register_forced = pytest_grounding_register_detectors


def pytest_grounding_register_detectors(registry):
    _register_forced(registry)
    registry.register("qwenvl_sharp", sharp_qwenvl)
"""
)


@pytest.fixture(scope="session")
def tiny35(tmp_path_factory):
    """family -> a tiny random Qwen3.5 checkpoint folder, built on first use."""
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    class Folders(dict):
        def __missing__(self, family):
            self[family] = build_tiny_qwen25vl(tmp_path_factory.mktemp(f"tiny-{family}"), family=family)
            return self[family]

    return Folders()


@pytest.fixture(scope="session")
def cache35(tmp_path_factory, tiny35):
    cache = tmp_path_factory.mktemp("hub35")
    place_in_cache(tiny35["qwen3_5"], HUB_ID, cache, COMMIT)
    place_in_cache(tiny35["qwen3_5_moe"], MOE_ID, cache, COMMIT)
    return cache


@pytest.fixture
def offline35(monkeypatch, cache35):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache35))
    for name in ("PYTEST_GROUNDING_QWENVL_MODEL", "PYTEST_XDIST_WORKER"):
        monkeypatch.delenv(name, raising=False)
    return cache35


def forced(model, answer, log, monkeypatch, **options):
    monkeypatch.setenv("FORCED_ANSWER", answer)
    monkeypatch.setenv("PROMPT_LOG", str(log))
    namespace: dict = {}
    exec(FORCING_CONFTEST, namespace)
    return namespace["forced_qwenvl"](model=model, **options)


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_the_architecture_table_is_what_transformers_maps_qwen3_5_to():
    """The processor and factor qwenvl uses are the ones transformers' Auto classes pick for a Qwen3.5
    checkpoint: Qwen3VLProcessor, the Qwen2-VL image processor, 16 px patches merged 2x2."""
    from transformers.models.auto.image_processing_auto import IMAGE_PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    for model_type, prefix in (("qwen3_5", "Qwen3_5"), ("qwen3_5_moe", "Qwen3_5Moe")):
        processor, factor = ARCHITECTURES[model_type]
        assert PROCESSOR_MAPPING_NAMES[model_type] == processor == "Qwen3VLProcessor"
        assert IMAGE_PROCESSOR_MAPPING_NAMES[model_type]["pil"] == "Qwen2VLImageProcessorPil"
        assert MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES[model_type] == f"{prefix}ForConditionalGeneration"
        vision = getattr(transformers, f"{prefix}Config")().vision_config
        assert vision.patch_size * vision.spatial_merge_size == factor == 32
        assert QWENVL_DEFAULTS[model_type] == "qwen3.5"


@pytest.mark.slow
@pytest.mark.parametrize(
    "hub_id, model_type, architecture",
    [
        (HUB_ID, "qwen3_5", "Qwen3_5ForConditionalGeneration"),
        (MOE_ID, "qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration"),
    ],
)
def test_a_qwen3_5_by_hub_id_sees_the_presets_frame_and_maps_the_answer_back(
    offline35, tmp_path, monkeypatch, hub_id, model_type, architecture
):
    from PIL import Image

    from pytest_grounding.core.types import Query

    log = tmp_path / "prompts.jsonl"
    # a 1920x1080 screen with max_pixels 200,000: shrunk by sqrt(2,073,600 / 200,000) = 3.2199 to
    # 596.3x335.4, floored to 32 px: 576x320, so 36x20 patches of 16 px (image_grid_thw [1, 20, 36])
    detector = forced(hub_id, TOOL % "250, 750", log, monkeypatch, max_pixels=200_000, max_new_tokens=60)
    prediction = detector.predict(Query(Image.new("RGB", (1920, 1080), "white"), "Click the red square"))
    assert prediction.meta["model_image"] == [576, 320]
    assert prediction.point == pytest.approx((480.0, 810.0))  # 0-1000 of the image: a quarter across, 3/4 down
    (sent,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert sent["grid"] == [1, 20, 36]
    assert sent["prompt"].count("<|image_pad|>") == 20 * 36 // 4  # merged 2x2 into one token each
    info = detector.describe()
    assert info["model"] == hub_id and info["model_commit"] == COMMIT and info["model_source"] == "hub"
    assert info["model_type"] == model_type and info["architecture"] == architecture
    assert info["preset"]["name"] == "qwen3.5" and info["preset_from"] == f"default for {model_type}"
    assert type(detector.processor).__mro__[1].__name__ == "Qwen3VLProcessor"
    assert type(detector.processor.image_processor).__name__ == "Qwen2VLImageProcessorPil"
    # the preset's system prompt (the ScreenSpot-Pro harness's), the image, then the instruction
    system = detector.preset.prompt.system
    assert system and system in sent["prompt"]
    assert sent["prompt"].index(system) < sent["prompt"].index("<|vision_start|>")
    assert sent["prompt"].endswith("<|vision_end|>Click the red square<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.slow
@SERIAL
def test_qwen3_5_through_the_suite_by_hub_id(pytester, offline35, workers, tmp_path, monkeypatch):
    # mini's screens are 160x120: within the qwen3.5 preset's 1,024..8,294,400 px, rounded to 32 px:
    # 160x128, 10x8 patches of 16 px. (125, 166) of 1000 is (20, 19.92) on the screen: m01's square.
    monkeypatch.setenv("FORCED_ANSWER", TOOL % "125, 166")
    monkeypatch.setenv("PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    make_project(pytester, conftest=CONFTEST)
    report = tmp_path / "r.json"
    spec = f"qwenvl_forced:model={HUB_ID},max_new_tokens=60"
    result = pytester.runpytest(
        f"--dataset={MINI}", "--detector", spec, "--grounding-json", str(report), "-k", "m01 or m02 or m03", *workers
    )
    assert result.ret == 1, result.stdout.str()  # m02 and m03 are misses
    records = {r["id"]: r for r in read_json(report)["samples"]}
    assert sorted(records) == ["m01", "m02", "m03"]
    for record in records.values():
        assert record["point"] == pytest.approx([20.0, 19.92])
        assert record["meta"]["model_image"] == [160, 128] and record["meta"]["device"] == "cpu"
    assert records["m01"]["outcome"] == "hit" and records["m02"]["outcome"] == "miss"
    sent = [json.loads(line) for line in (tmp_path / "prompts.jsonl").read_text().splitlines()]
    assert len(sent) == 3 and all(s["grid"] == [1, 8, 10] for s in sent)
    info = read_json(report)["run"]["detectors"][spec]
    assert info["model"] == HUB_ID and info["model_commit"] == COMMIT and info["model_type"] == "qwen3_5"
    assert info["xdist_worker"] in ({"gw0", "gw1"} if workers else {None})
    result.stdout.fnmatch_lines(
        [
            f"*Qwen3_5ForConditionalGeneration from {HUB_ID}@3535353 on cpu float32 sdpa, preset qwen3.5, "
            "smart_resize factor 32, min_pixels 1024, max_pixels 8294400, greedy, 60 tokens*"
        ]
    )


def write_dataset(folder):
    """Four screens of different sizes (different frames, so different prompt lengths in a batch)."""
    data = folder / "data" / "test"
    data.mkdir(parents=True)
    rows = []
    for index, query in enumerate(queries(4)):
        name = f"s{index}.png"
        query.image.save(data / name)
        box = [8 + 9 * index, 8, 30 + 9 * index, 30]
        rows.append(
            {
                "file_name": name,
                "id": f"q{index}",
                "instruction": query.instruction,
                "bbox": box,
                "answer_type": "point",
                "eval": {"type": "point_in_bbox", "bbox": box},
                "image_size": list(query.image.size),
            }
        )
    (data / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


@pytest.mark.slow
@SERIAL
def test_batch_4_gives_batch_1s_answers_through_the_suite(pytester, offline35, workers, tmp_path):
    make_project(pytester, conftest=CONFTEST)
    dataset = write_dataset(tmp_path / "sizes")
    answers = {}
    for batch in (1, 4):  # batch 1 serially (the reference), batch 4 serial or under -n 2
        report = tmp_path / f"r{batch}.json"
        spec = (
            f"qwenvl_sharp:model={HUB_ID},batch={batch},max_new_tokens=8,skip_special_tokens=true,system={SHORT_SYSTEM}"
        )
        result = pytester.runpytest(
            f"--dataset={dataset}", "--detector", spec, "--grounding-json", str(report), *(workers if batch > 1 else [])
        )
        assert result.ret in (0, 1), result.stdout.str()
        records = read_json(report)["samples"]
        assert len(records) == 4 and read_json(report)["run"]["detectors"][spec]["batch_size"] == batch
        answers[batch] = {
            r["id"]: (r["raw"], tuple(r["meta"]["model_image"]), r["meta"]["new_tokens"]) for r in records
        }
    assert answers[4] == answers[1]
    assert len({raw for raw, _, _ in answers[1].values()}) > 1  # garbage that depends on the screen
    assert len({image for _, image, _ in answers[1].values()}) == 4  # four frames, one batch


def last_logits(detector, asked, *, masked=True):
    """The model's next-token logits after each prompt: the rows of one left-padded batch, and each
    prompt alone. masked=False drops the padding mask the linear-attention layers get (what a model
    without it would compute)."""
    from contextlib import nullcontext
    from unittest import mock

    import torch

    from pytest_grounding.detectors.qwenvl_batch import prepare

    tokenizer = detector.processor.tokenizer
    tokenizer.padding_side = "left"
    prepared = [prepare(detector, q) for q in asked]

    def forward(rows):
        inputs = detector.processor(
            text=[p.text for p in rows], images=[p.image for p in rows], padding=True, return_tensors="pt"
        )
        with torch.inference_mode():
            return detector.model(**inputs).logits[:, -1].float(), inputs["attention_mask"]

    module = type(detector.model).__module__
    unmask = mock.patch(f"{module}.create_recurrent_attention_mask", lambda *a, **k: None)
    with nullcontext() if masked else unmask:
        batched, mask = forward(prepared)
        alone = torch.cat([forward([p])[0] for p in prepared])
    return batched, alone, (mask == 0).sum(dim=1).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("family", ["qwen3_5", "qwen3_5_moe"])
def test_left_padding_does_not_reach_the_linear_attention_state(tiny35, family):
    import torch

    detector = sharpen(QwenVLDetector(model=str(tiny35[family]), system=SHORT_SYSTEM), 4.0)
    asked = queries(4)
    batched, alone, padding = last_logits(detector, asked)
    assert min(padding) == 0 and len(set(padding)) == 4  # each row its own amount of left padding
    # the rows differ from one another by far more than batch and alone differ: the check can see a row
    spread = min((alone[i] - alone[j]).abs().max().item() for i in range(4) for j in range(i + 1, 4))
    assert spread > 1e-2
    assert torch.allclose(batched, alone, atol=1e-4, rtol=1e-4), (batched - alone).abs().max(dim=1)
    # Without transformers' padding mask for the recurrent layers, the pads (zero-attended by the
    # full-attention layers) would enter the gated delta rule's state and the conv window.
    unmasked, alone_again, _ = last_logits(detector, asked, masked=False)
    assert torch.allclose(alone_again, alone)
    drift = (unmasked - alone).abs().max(dim=1).values.tolist()
    assert drift[padding.index(0)] < 1e-4  # the longest row has no padding: unchanged
    assert all(d > 1e-3 for d, pad in zip(drift, padding, strict=True) if pad), drift


def test_a_preset_of_factor_28_is_refused_for_qwen3_5(tiny35):
    with pytest.raises(ValueError, match=r"a qwen3_5 model in-process sees smart_resize with factor 32"):
        QwenVLDetector(model=str(tiny35["qwen3_5"]), preset="qwen2.5-vl")


def test_an_image_processor_that_disagrees_with_the_architecture_is_refused(tiny35, tmp_path):
    import shutil

    folder = tmp_path / "patch14"
    shutil.copytree(tiny35["qwen3_5"], folder)
    config = json.loads((folder / "preprocessor_config.json").read_text())
    config["patch_size"] = 14
    (folder / "preprocessor_config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"14 px patches merged 2x2 \(factor 28\); a qwen3_5 model has factor 32"):
        QwenVLDetector(model=str(folder))


@pytest.mark.slow
def test_without_the_padding_mask_batched_answers_would_differ(tiny35):
    """The token-for-token check of test_batching.py can fail on Qwen3.5: with transformers' padding mask
    for the recurrent layers taken away, some padded rows of the tiny MoE write other greedy answers."""
    from unittest import mock

    options = dict(batch=4, max_new_tokens=10, skip_special_tokens=False, system=SHORT_SYSTEM)
    single = sharpen(QwenVLDetector(model=str(tiny35["qwen3_5_moe"]), **options))
    batched = sharpen(QwenVLDetector(model=str(tiny35["qwen3_5_moe"]), **options))
    asked = queries(4)
    alone = [single.predict(q).raw for q in asked]
    assert [p.raw for p in batched.predict_batch(asked)] == alone
    module = type(batched.model).__module__
    with mock.patch(f"{module}.create_recurrent_attention_mask", lambda *a, **k: None):
        unmasked = [p.raw for p in batched.predict_batch(asked)]
    assert unmasked[-1] == alone[-1]  # the longest screen's row has no padding
    assert unmasked != alone
