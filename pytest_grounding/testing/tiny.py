"""A tiny random Qwen2.5-VL (or Qwen2-VL, Qwen3-VL, Qwen3.5, Qwen3.5-MoE) checkpoint built offline
(no hub): a byte-level BPE tokenizer trained in memory with Qwen's special tokens, the PIL image
processor and a 2-layer model. For tests and for smoke-testing an install (CPU or CUDA) without downloading
weights; it answers garbage."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|vision_pad|>",
)

THINK_TOKENS = ("<think>", "</think>")

# Qwen2-VL's chat template, shortened to images and text (it adds the default system prompt, as
# UI-TARS-1.5-7B's own template does).
CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] == 'text' %}{{ content['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    "Output only the coordinate of one point in your response.",
    "What element matches the following task: click the red square",
    "Action: click(start_box='(235,512)') click(point='<point>235 512</point>') (1000,200)",
    "0123456789 ,()[]<>=' abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 250]}}',
]
FAMILIES = ("qwen2_5_vl", "qwen2_vl", "qwen3_vl", "qwen3_5", "qwen3_5_moe")
# 16 px patches (merged 2x2: smart_resize factor 32); the others 14 px (factor 28).
PATCH_16 = ("qwen3_vl", "qwen3_5", "qwen3_5_moe")


def build_tiny_qwen25vl(
    folder: str | Path,
    seed: int = 0,
    vocab_size: int = 400,
    family: str = "qwen2_5_vl",
    head_dim: int = 16,
    think_tokens: bool = False,
    corpus: Sequence[str] = (),
) -> Path:
    """Write tokenizer, image processor and a random 2-layer Qwen2.5-VL (or Qwen2-VL, the
    architecture of UI-TARS 1.0, with family="qwen2_vl"; Qwen3-VL with "qwen3_vl": 16 px patches,
    so smart_resize's factor is 32; Qwen3.5 with "qwen3_5" / "qwen3_5_moe": 16 px patches, one
    gated-delta-net (linear attention) layer and one full-attention layer) to `folder`.

    `head_dim`: the text model's attention head size (2 heads, so its width is twice that). 16
    keeps the in-process tests fast; vLLM's CPU attention takes 32, 64, 80, ... only, so the
    real-engine tests build with 32 (the vision tower runs on SDPA and keeps 16). `think_tokens`:
    the vocabulary also holds `<think>` and `</think>`, so a server's reasoning parser (vLLM's
    `--reasoning-parser deepseek_r1`) can run on it (issue 56). `corpus`: more text the tokenizer
    is trained on (ci/engines/train_pointer.py adds its answers' numbers, so each is one token)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
    )
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    if head_dim % 8:
        raise ValueError(f"head_dim must be a multiple of 8, not {head_dim}")
    width = 2 * head_dim  # the text model's hidden size; the vision merger projects into it
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, not {family!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    special = (*SPECIAL_TOKENS, *(THINK_TOKENS if think_tokens else ()))
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(special), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator([*_CORPUS, *corpus], trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(special[1:]),
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    patch = 16 if family in PATCH_16 else 14
    Qwen2VLImageProcessorPil(
        min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28, patch_size=patch, merge_size=2
    ).save_pretrained(folder)

    ids: dict[str, Any] = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    vision: dict[str, Any] = (
        dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=width,
            fullatt_block_indexes=[1],
            window_size=112,
        )
        if family == "qwen2_5_vl"
        else dict(depth=2, embed_dim=32, hidden_size=width, mlp_ratio=2, num_heads=2)
    )
    # the t, h, w sections of the rotary frequencies sum to head_dim / 2
    section = [head_dim // 8, 3 * head_dim // 16, head_dim // 2 - head_dim // 8 - 3 * head_dim // 16]
    rope: dict[str, Any] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section}
    text_extra: dict[str, Any] = {}
    if family == "qwen3_vl":
        from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

        vision = dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=width,
            patch_size=16,
            spatial_merge_size=2,
            temporal_patch_size=2,
            num_position_embeddings=64,
            deepstack_visual_indexes=[1],
        )
        rope["mrope_interleaved"] = True
        text_extra["head_dim"] = head_dim
    if family in ("qwen3_5", "qwen3_5_moe"):
        return _save_qwen3_5(folder, family, len(tokenizer), ids, seed)
    config_class: Any
    model_class: Any
    config_class, model_class = {
        "qwen2_5_vl": (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration),
        "qwen2_vl": (Qwen2VLConfig, Qwen2VLForConditionalGeneration),
    }.get(family) or (Qwen3VLConfig, Qwen3VLForConditionalGeneration)
    config = config_class(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=width,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=32768,  # holds the largest screens' tokens (a served context is capped by it)
            rope_parameters=rope,
            **text_extra,
            **_text_tokens(ids),
        ),
        vision_config=vision,
        **_media_tokens(ids),
    )
    torch.manual_seed(seed)
    return _saved(model_class(config).eval(), ids, folder)


def _text_tokens(ids: dict[str, Any]) -> dict[str, Any]:
    """The text model's special tokens, as Qwen's chat template uses them."""
    return {
        "bos_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "pad_token_id": ids["<|endoftext|>"],
    }


def _media_tokens(ids: dict[str, Any]) -> dict[str, Any]:
    """The vision-language config's image and video tokens."""
    return {
        "image_token_id": ids["<|image_pad|>"],
        "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"],
        "vision_end_token_id": ids["<|vision_end|>"],
        "tie_word_embeddings": True,
    }


def _saved(model: Any, ids: dict[str, Any], folder: Path) -> Path:
    """The model saved with a generation config that stops at the chat's end token."""
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(folder)
    return folder


def _save_qwen3_5(folder: Path, family: str, vocab: int, ids: dict[str, Any], seed: int) -> Path:
    """Qwen3.5 (or its MoE): a linear-attention (gated delta net) layer, then a full-attention one,
    as the real models interleave them (3:1); a one-block vision tower of 16 px patches."""
    import torch
    import transformers

    rope = {
        "rope_type": "default",
        "rope_theta": 10000.0,
        "partial_rotary_factor": 0.25,  # head_dim 32 -> 8 rotary dims -> 4 frequencies: t, h, w sections
        "mrope_section": [2, 1, 1],
        "mrope_interleaved": True,
    }
    text: dict[str, Any] = dict(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        layer_types=["linear_attention", "full_attention"],
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        linear_key_head_dim=16,
        linear_value_head_dim=16,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        max_position_embeddings=4096,
        rope_parameters=rope,
        **_text_tokens(ids),
    )
    if family == "qwen3_5_moe":
        text.update(moe_intermediate_size=16, shared_expert_intermediate_size=16, num_experts=4, num_experts_per_tok=2)
    vision = dict(
        depth=1,
        hidden_size=32,
        intermediate_size=64,
        num_heads=2,
        out_hidden_size=32,
        patch_size=16,
        spatial_merge_size=2,
        temporal_patch_size=2,
        num_position_embeddings=64,
    )
    prefix = "Qwen3_5Moe" if family == "qwen3_5_moe" else "Qwen3_5"
    config = getattr(transformers, prefix + "Config")(
        text_config=text,
        vision_config=vision,
        **_media_tokens(ids),
    )
    torch.manual_seed(seed)
    model = getattr(transformers, prefix + "ForConditionalGeneration")(config).eval()
    with torch.no_grad():  # a trained model's pad token has an embedding; a zero one would hide padding
        model.get_input_embeddings().weight[ids["<|endoftext|>"]].normal_(0.0, 0.02)  # that leaks into a state
    return _saved(model, ids, folder)
