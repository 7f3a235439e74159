"""In-process batching (`qwenvl` / `uitars` with `batch=N`): N queries in one `generate` with left
padding give batch 1's greedy answers, token for token, on the tiny random checkpoints of all the
families (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5 and its MoE: gated-delta-net layers, whose
recurrent state transformers keeps free of the left padding; test_qwenvl_qwen35.py checks the
logits) with screens of different sizes in one batch; each answer is mapped back through its own
frame; a query that fails does not lose the others. The batch interface's caller side
(`batching.batch_outcomes`) on plain stand-ins."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from pytest_grounding.core.types import Prediction, Query
from pytest_grounding.detectors.batching import BatchError, batch_outcomes, batch_size
from pytest_grounding.detectors.qwenvl_batch import CUDA_BATCH, batch_size_for, own_length

# Four screens whose smart_resize frames all differ (so do their image-token counts), two of them
# portrait: one batch mixes sizes and aspect ratios.
SIZES = [(160, 120), (330, 200), (180, 350), (420, 236)]
# A short prompt per family: the answers, not the prompt, are under test.
PRESETS = {
    "qwen2_5_vl": "gta1",
    "qwen2_vl": "os-atlas-7b",
    "qwen3_vl": "qwen3-vl",
    "qwen3_5": "qwen3.5",
    "qwen3_5_moe": "qwen3.5",
}
# qwen3.5's system turn (a tool schema of ~900 tokens) drowns the screen in a 2-layer random model: every
# row writes the same garbage. A short one lets the rows differ.
OPTIONS = {"qwen3_5": {"system": "Answer."}, "qwen3_5_moe": {"system": "Answer."}}
# How many of the four rows write different garbage (at least): 4, but 2 for the dense tiny Qwen3.5, whose
# answers barely depend on its input (test_qwenvl_qwen35.py compares its logits row by row instead).
DISTINCT = {"qwen3_5": 2}


def screen(size: tuple[int, int], index: int) -> Image.Image:
    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).rectangle([8 + 9 * index, 8, 30 + 9 * index, 30], fill=(220, 30, 30))
    return image


def queries(count: int = len(SIZES)) -> list[Query]:
    return [Query(screen(SIZES[i % len(SIZES)], i), f"click the red square {i}" + " now" * i) for i in range(count)]


@pytest.fixture(scope="session")
def tiny_checkpoints(tmp_path_factory):
    """family -> a tiny random checkpoint folder, built on first use (torch + transformers needed)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    class Folders(dict):
        def __missing__(self, family):
            self[family] = build_tiny_qwen25vl(tmp_path_factory.mktemp(f"batch-{family}"), family=family)
            return self[family]

    return Folders()


class Recorder:
    """Wraps a detector's `model.generate`: records each call's rows, padding and new tokens, and
    optionally forces answers (by a logits processor) or fails."""

    def __init__(self, detector, answers=None, fail=None):
        import torch
        from transformers import LogitsProcessor, LogitsProcessorList

        self.calls: list[dict] = []
        tokenizer = detector.processor.tokenizer
        image_pad = tokenizer.convert_tokens_to_ids("<|image_pad|>")
        end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        # image-token count of a row -> the token ids it must write (its answer, then <|im_end|>)
        forced = {
            count: tokenizer(text, add_special_tokens=False)["input_ids"] + [end]
            for count, text in (answers or {}).items()
        }
        generate = detector.model.generate

        class Force(LogitsProcessor):
            def __init__(self, start):
                self.start = start

            def __call__(self, input_ids, scores):
                out = torch.full_like(scores, float("-inf"))
                for row in range(input_ids.shape[0]):
                    ids = forced[int((input_ids[row, : self.start] == image_pad).sum())]
                    out[row, ids[min(input_ids.shape[1] - self.start, len(ids) - 1)]] = 0.0
                return out

        def recorded(**inputs):
            start = int(inputs["input_ids"].shape[1])
            counts = [int((row == image_pad).sum()) for row in inputs["input_ids"]]
            if fail is not None and fail(counts):
                raise RuntimeError("generate failed for this batch")
            extra = {"logits_processor": LogitsProcessorList([Force(start)])} if forced else {}
            output = generate(**inputs, **extra)
            mask = inputs["attention_mask"]
            self.calls.append(
                {
                    "rows": len(counts),
                    "width": start,
                    "image_tokens": counts,
                    "left_padding": [int((m == 0).sum()) for m in mask],
                    "right_padding": [int(m[-1] == 0) for m in mask],
                    "new": [row[start:].tolist() for row in output],
                }
            )
            return output

        detector.model.generate = recorded


def sharpen(detector, scale: float = 20.0):
    """Scale the tiny model's weight matrices: at their initial 0.02 spread it repeats one token
    whatever it is shown; sharper, it writes garbage that depends on the screen and instruction,
    so equal answers mean something."""
    import torch

    with torch.no_grad():
        for parameter in detector.model.parameters():
            if parameter.ndim >= 2:
                parameter.mul_(scale)
    return detector


def build(folder, family, **options):
    from pytest_grounding.detectors.qwenvl import QwenVLDetector

    return QwenVLDetector(model=str(folder), preset=PRESETS[family], **{**OPTIONS.get(family, {}), **options})


@pytest.mark.slow
@pytest.mark.parametrize("family", list(PRESETS))
def test_batch_of_n_answers_batch_of_one_token_for_token(tiny_checkpoints, family):
    # Random weights: garbage, special tokens kept so the raw text shows every token written.
    options = dict(batch=4, max_new_tokens=10, skip_special_tokens=False)
    batched = sharpen(build(tiny_checkpoints[family], family, **options))
    single = sharpen(build(tiny_checkpoints[family], family, **options))
    batch_log, single_log = Recorder(batched), Recorder(single)
    asked = queries(5)  # one batch of 4 different screens, then one of 1

    together = batched.predict_batch(asked)
    alone = [single.predict(q) for q in asked]

    assert [c["rows"] for c in batch_log.calls] == [4, 1]
    first = batch_log.calls[0]
    assert len(set(first["image_tokens"])) == 4  # four frames in one generate
    assert max(first["left_padding"]) > 0 and min(first["left_padding"]) == 0  # padded, on the left
    assert first["right_padding"] == [0, 0, 0, 0]
    assert together == alone  # raw answers, points, boxes, frames, token counts
    assert len({p.raw for p in together[:4]}) >= DISTINCT.get(family, 4)  # rows' own garbage: not trivially equal
    assert len({tuple(p.meta["model_image"]) for p in together[:4]}) == 4
    rows = [(call, row) for call in batch_log.calls for row in range(call["rows"])]
    for index, prediction in enumerate(together):  # the same tokens, up to where the row stopped
        call, row = rows[index]
        alone_call = single_log.calls[index]
        written = prediction.meta["new_tokens"]
        assert written > 0 and call["new"][row][:written] == alone_call["new"][0][:written]
        assert prediction.meta["prompt_tokens"] == alone_call["width"] == call["width"] - call["left_padding"][row]
    assert single.predict_batch([asked[2]]) == [alone[2]]  # predict is a batch of one


TOOL_CALL = (
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [250, 750]}}'
    + "\n</tool_call>"
)
# The answer forced for a frame of model size (w, h), and the stop string that ends its useful part.
FORCED = {
    # GTA1 answers pixels of the resized image: a quarter across, three quarters down
    "qwen2_5_vl": (lambda w, h: f"({w // 4},{3 * h // 4})", ")"),
    # OS-Atlas: a box in 0-1000 (special tokens kept), its centre is the click
    "qwen2_vl": (lambda w, h: "<|box_start|>(200,700),(300,800)<|box_end|>", "<|box_end|>"),
    # Qwen3-VL: a point in 0-1000
    "qwen3_vl": (lambda w, h: "[250,750]", "]"),
    # Qwen3.5 (the ScreenSpot-Pro harness's prompt): a tool call, 0-1000
    "qwen3_5": (lambda w, h: TOOL_CALL, "</tool_call>"),
    "qwen3_5_moe": (lambda w, h: TOOL_CALL, "</tool_call>"),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", list(PRESETS))
@pytest.mark.parametrize("stopped", [False, True])
def test_forced_answers_are_mapped_back_through_each_rows_own_frame(tiny_checkpoints, family, stopped):
    answer, stop = FORCED[family]
    options = dict(batch=4, max_new_tokens=80)  # room for the longest: a tool call (~63 tokens)
    if stopped:  # a stop string ends the answer; the row is only padding after it
        options["stop"] = stop
    single = build(tiny_checkpoints[family], family, **options)
    frames = [single.preset.preprocess.frame(size) for size in SIZES]
    written = {}
    for index, (tokens, frame) in enumerate(zip(frames_tokens(single), frames, strict=True)):
        # answers of different lengths: rows finish at different steps and are padded after that
        written[tokens] = "ok " * index + answer(*frame.model) + " tail" * (3 - index)
    batched = build(tiny_checkpoints[family], family, **options)
    batch_log, single_log = Recorder(batched, written), Recorder(single, written)

    together = batched.predict_batch(queries(4))
    alone = [single.predict(q) for q in queries(4)]

    assert [c["rows"] for c in batch_log.calls] == [4] and len(single_log.calls) == 4
    assert together == alone
    lengths = []
    for prediction, tokens, frame in zip(together, frames_tokens(single), frames, strict=True):
        w, h = frame.original
        assert prediction.click == pytest.approx((w / 4, 3 * h / 4), abs=w / frame.model[0] + 1e-6)
        assert tuple(prediction.meta["model_image"]) == frame.model
        text = written[tokens]
        assert prediction.raw == (text[: text.index(stop) + len(stop)] if stopped else text)
        lengths.append(prediction.meta["new_tokens"])
    assert len(set(lengths)) == 4  # rows really finished at different steps
    assert any(batch_log.calls[0]["new"][row][lengths[row] :] for row in range(4))  # padded after its end


@pytest.mark.slow
def test_a_failing_query_does_not_lose_the_others(tiny_checkpoints):
    family = "qwen3_vl"
    options = dict(batch=4, max_new_tokens=6, skip_special_tokens=False)
    single = sharpen(build(tiny_checkpoints[family], family, **options))
    asked = queries(4)
    alone = [single.predict(q) for q in asked]
    assert len({p.raw for p in alone}) == 4  # so an answer given to the wrong query would show

    # One screen cannot be prepared at all (smart_resize refuses an aspect ratio over 200): that query's
    # own error; the three others still run as one batch.
    broken = [*asked[:2], Query(Image.new("RGB", (4000, 10), "white"), "click it"), asked[2]]
    detector = sharpen(build(tiny_checkpoints[family], family, **options))
    log = Recorder(detector)
    with pytest.raises(BatchError) as caught:
        detector.predict_batch(broken)
    outcomes = caught.value.outcomes
    assert caught.value.failed == [2] and "aspect ratio" in str(outcomes[2]) and "query 2" in str(caught.value)
    assert [outcomes[0], outcomes[1], outcomes[3]] == alone[:3]
    assert [c["rows"] for c in log.calls] == [3]
    again = batch_outcomes(detector, broken)  # the caller's side: the same outcomes, no exception
    assert isinstance(again[2], ValueError) and [again[0], again[1], again[3]] == alone[:3]

    # generate fails whenever the third screen is in it: the batch fails, then each query runs alone,
    # so only that query is an error.
    poisoned = frames_tokens(single)[2]
    detector = sharpen(build(tiny_checkpoints[family], family, **options))
    log = Recorder(detector, fail=lambda counts: poisoned in counts)
    with pytest.raises(BatchError) as caught:
        detector.predict_batch(asked)
    outcomes = caught.value.outcomes
    assert caught.value.failed == [2] and "generate failed" in str(outcomes[2])
    assert [outcomes[0], outcomes[1], outcomes[3]] == [alone[0], alone[1], alone[3]]
    assert [c["rows"] for c in log.calls] == [1, 1, 1]  # the failed batch left no record
    with pytest.raises(RuntimeError, match="generate failed"):  # predict raises the query's own error
        detector.predict(asked[2])
    assert detector.predict(asked[1]) == alone[1]


def frames_tokens(detector) -> list[int]:
    factor = detector.preset.preprocess.factor
    frames = [detector.preset.preprocess.frame(size) for size in SIZES]
    counts = [(f.model[0] // factor) * (f.model[1] // factor) for f in frames]
    assert len(set(counts)) == len(SIZES)  # each screen's image-token count tells its row apart
    return counts


@pytest.mark.slow
def test_batch_option(tiny_checkpoints):
    detector = build(tiny_checkpoints["qwen3_vl"], "qwen3_vl", batch=6)
    assert detector.batch_size == 6 and detector.describe()["batch_size"] == 6
    assert build(tiny_checkpoints["qwen3_vl"], "qwen3_vl").batch_size == 1  # auto on CPU
    with pytest.raises(ValueError, match="batch must be auto or a whole number"):
        build(tiny_checkpoints["qwen3_vl"], "qwen3_vl", batch=0)


@pytest.mark.parametrize(
    "value, device, expected",
    [("auto", "cpu", 1), ("auto", "cuda:1", CUDA_BATCH), (16, "cpu", 16), ("4", "cuda:0", 4), ("AUTO", "cuda:0", 8)],
)
def test_batch_size_for_device(value, device, expected):
    assert batch_size_for(value, device) == expected


@pytest.mark.parametrize("value", [0, -2, "x", "2.5", 2.5, None])
def test_batch_size_refuses_what_is_not_a_count(value):
    with pytest.raises(ValueError, match="batch must be"):
        batch_size_for(value, "cpu")


def test_own_length_cuts_at_the_first_end_or_stop_string():
    decode = lambda ids: "".join(chr(ord("a") + i) for i in ids)  # noqa: E731
    assert own_length([3, 4, 9, 0, 0], {9}, (), decode) == 3  # the end token is counted, padding not
    assert own_length([3, 4, 5], {9}, (), decode) == 3  # ran to max_new_tokens
    assert own_length([3, 4, 5, 6, 0, 0], {9}, ("ef",), decode) == 3  # "def": the stop string ends there
    assert own_length([0, 0, 9], {0}, (), decode) == 1  # a pad token that is also an end token


class Plain:
    """A detector without the batch interface: it fails on instructions that say so."""

    name = "plain"

    def __init__(self):
        self.calls = 0

    def predict(self, query):
        self.calls += 1
        if "fail" in query.instruction:
            raise ValueError(f"cannot ground {query.instruction}")
        return Prediction(point=(len(query.instruction), 0.0))


class Batched(Plain):
    """The batch interface: predict_batch answers all or raises for all (as an out-of-memory would)."""

    name = "batched"
    batch_size = 3

    def __init__(self):
        super().__init__()
        self.batches: list[int] = []

    def predict_batch(self, queries):
        self.batches.append(len(queries))
        if any("fail" in q.instruction for q in queries):
            raise RuntimeError("the whole batch failed")
        return [Prediction(point=(len(q.instruction), 0.0)) for q in queries]


def plain_queries(*instructions):
    image = Image.new("RGB", (8, 8))
    return [Query(image, text) for text in instructions]


def test_batch_outcomes_on_detectors_with_and_without_the_interface():
    asked = plain_queries("a", "bb", "fail here", "dddd", "eeeee")
    plain, batched = Plain(), Batched()
    assert batch_size(plain) == 1 and batch_size(batched) == 3
    for detector in (plain, batched):
        outcomes = batch_outcomes(detector, asked)
        assert [o.point[0] for o in outcomes if isinstance(o, Prediction)] == [1, 2, 4, 5]
        assert isinstance(outcomes[2], ValueError) and "fail here" in str(outcomes[2])
    assert batched.batches == [3, 2]  # the failed batch of 3 went one by one, the next one batched
    assert plain.calls == 5 and batched.calls == 3


def test_batch_error_names_the_failures_and_keeps_every_outcome():
    boom = ValueError("bad image")
    error = BatchError([Prediction(point=(1, 1)), boom, Prediction.no_answer("x")])
    assert error.failed == [1] and error.__cause__ is boom
    assert str(error) == "1 of 3 queries in the batch failed: query 1: ValueError: bad image"
    assert error.outcomes[0] == Prediction(point=(1, 1))
