"""The `uitars` detector: a UI-TARS checkpoint (Qwen2.5-VL architecture; Qwen2-VL for 1.0) run
in-process with torch + transformers, prompted and decoded by a preset (`pytest_grounding.vlm`).

The model comes from a local folder only (`local_files_only`, no remote code). Under xdist each
worker takes its own GPU (gwN -> cuda:N mod count). torch and transformers are imported when the
detector is built. One sample per forward pass: batching is not implemented (the harness calls
`predict` once per test item)."""

from __future__ import annotations

import inspect
import json
import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from ..types import Prediction, Query
from ..vlm.parse import answer_to_prediction
from ..vlm.presets import DEFAULT_PRESET, resolve_preset

UITARS_10 = "uitars-1.0"

MODEL_ENV = "PYTEST_GROUNDING_UITARS_MODEL"
DTYPES = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "float32": "float32",
    "fp32": "float32",
}


def worker_index() -> int | None:
    """N for xdist worker gwN, None outside xdist."""
    match = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
    return int(match.group(1)) if match else None


def pick_device(requested: str, cuda_count: int, worker: int | None) -> str:
    """auto: CUDA when there is one, else CPU. `cuda` (or auto) under xdist: worker N takes
    cuda:(N mod count), so `-n <GPUs>` runs one replica per GPU. `cuda:K` and `cpu` are kept."""
    requested = str(requested).strip().lower()
    if requested == "auto":
        requested = "cuda" if cuda_count else "cpu"
    if requested == "cuda":
        if not cuda_count:
            raise ValueError("uitars: device=cuda but torch sees no CUDA device")
        return f"cuda:{(worker or 0) % cuda_count}"
    return requested


def _image_processor_class():
    try:  # transformers 5: the PIL-backed processor (the default one needs torchvision)
        from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

        return Qwen2VLImageProcessorPil
    except ImportError:  # transformers 4.x: the slow processor is PIL-backed
        from transformers import Qwen2VLImageProcessor

        return Qwen2VLImageProcessor


def _processor_class(base: Any) -> Any:
    """The model's processor without its video part: the video processor needs torchvision, and
    grounding sends images only. transformers reads a processor's parts from its __init__."""

    class ImageOnlyProcessor(base):
        attributes = ["image_processor", "tokenizer"]  # noqa: RUF012 (transformers 4.x reads this plain list)

        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            if "video_processor" in inspect.signature(base.__init__).parameters:  # transformers >= 4.52
                kwargs["video_processor"] = None
            super().__init__(
                image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template, **kwargs
            )

    return ImageOnlyProcessor


def chat_template(folder: Path, tokenizer: Any) -> str:
    """The checkpoint's chat template: chat_template.jinja / .json (processor level, as UI-TARS
    ships it), else the tokenizer's."""
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text()
    as_json = folder / "chat_template.json"
    if as_json.is_file():
        return json.loads(as_json.read_text())["chat_template"]
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.chat_template
    raise ValueError(f"uitars: no chat template in {folder}")


class UITarsDetector:
    """Options (``--detector uitars:key=value,...``):

    - ``model``: the checkpoint folder (else $PYTEST_GROUNDING_UITARS_MODEL). Never fetched from a hub.
    - ``preset`` (uitars-1.5-point; uitars-1.0 for a Qwen2-VL checkpoint): uitars-1.5-point,
      uitars-1.5-computer-use, uitars-1.0; any part
      overridable: prompt, system, image_first, factor, min_pixels, max_pixels, extractors, transform,
      refusal, max_new_tokens, temperature, top_p, greedy.
    - ``device`` (auto): auto | cuda | cuda:K | cpu. auto/cuda under xdist: worker gwN -> cuda:N mod GPUs.
    - ``dtype`` (auto): bf16 on CUDA, fp32 on CPU; or bfloat16 | float16 | float32.
    - ``attn`` (sdpa): transformers' attn_implementation (sdpa | eager | flash_attention_2).
    - ``threads`` (0 = torch's default): CPU threads.
    """

    name = "uitars"

    def __init__(
        self,
        model: str | None = None,
        preset: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        attn: str = "sdpa",
        threads: int = 0,
        **overrides: Any,
    ) -> None:
        resolve_preset(preset or DEFAULT_PRESET, **overrides)  # bad options fail before the model loads
        folder = model or os.environ.get(MODEL_ENV)
        if not folder:
            raise ValueError(f"uitars needs a checkpoint folder: --detector uitars:model=PATH or ${MODEL_ENV}")
        self.folder = Path(str(folder)).expanduser().resolve()
        if not (self.folder / "config.json").is_file():
            raise ValueError(
                f"uitars: {self.folder} is not a checkpoint folder (no config.json); "
                "models are never downloaded at run time"
            )
        import torch
        from transformers import AutoConfig, AutoModelForImageTextToText, AutoTokenizer

        if int(threads):
            torch.set_num_threads(int(threads))
        cuda_count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        self.worker = worker_index()
        self.device = pick_device(device, cuda_count, self.worker)
        if str(dtype).lower() == "auto":
            dtype = "bfloat16" if self.device.startswith("cuda") else "float32"
        if str(dtype).lower() not in DTYPES:
            raise ValueError(f"uitars: dtype must be auto or one of {', '.join(DTYPES)}, not {dtype!r}")
        self.dtype = DTYPES[str(dtype).lower()]
        self.attn = str(attn)

        config = AutoConfig.from_pretrained(self.folder, local_files_only=True, trust_remote_code=False)
        self.model_type = config.model_type
        base: Any
        if self.model_type == "qwen2_5_vl":
            from transformers import Qwen2_5_VLProcessor as base
        elif self.model_type == "qwen2_vl":
            from transformers import Qwen2VLProcessor as base
        else:
            raise ValueError(
                f"uitars: {self.folder} holds a {self.model_type!r} model; "
                "expected qwen2_5_vl (UI-TARS-1.5) or qwen2_vl (UI-TARS 1.0)"
            )
        # No preset named: the architecture's (UI-TARS 1.0 answers 0-1000; read as pixels it scores ~0).
        self.preset_source = "option" if preset else f"default for {self.model_type}"
        preset = preset or (UITARS_10 if self.model_type == "qwen2_vl" else DEFAULT_PRESET)
        self.preset = resolve_preset(preset, **overrides)
        tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True, trust_remote_code=False)
        resize = self.preset.preprocess
        image_processor = _image_processor_class().from_pretrained(
            self.folder, local_files_only=True, min_pixels=resize.min_pixels, max_pixels=resize.max_pixels
        )
        self.processor = _processor_class(base)(
            image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template(self.folder, tokenizer)
        )
        self.patch = int(getattr(image_processor, "patch_size", 14))
        auto_model: Any = AutoModelForImageTextToText  # its stub types .to() as taking a model
        self.model = (
            auto_model.from_pretrained(
                self.folder,
                local_files_only=True,
                trust_remote_code=False,
                dtype=getattr(torch, self.dtype),
                attn_implementation=self.attn,
            )
            .to(self.device)
            .eval()
        )
        self.architecture = type(self.model).__name__
        self._torch = torch

    def prompt_text(self, instruction: str) -> str:
        """The chat-templated text the model is given (image tokens not yet expanded)."""
        return self.processor.apply_chat_template(
            self.preset.prompt.messages(instruction), tokenize=False, add_generation_prompt=True
        )

    def predict(self, query: Query) -> Prediction:
        image, frame = self.preset.preprocess.apply(query.image)
        inputs = self.processor(text=[self.prompt_text(query.instruction)], images=[image], return_tensors="pt")
        grid = inputs["image_grid_thw"][0].tolist()  # t, h, w in patches: what the vision tower saw
        seen = (int(grid[2]) * self.patch, int(grid[1]) * self.patch)
        inputs = inputs.to(self.device)
        decoding = self.preset.decoding
        sampling: dict[str, Any] = (
            {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
            if decoding.greedy
            else {"do_sample": True, "temperature": decoding.temperature, "top_p": decoding.top_p}
        )
        prompt_tokens = int(inputs["input_ids"].shape[1])
        with self._torch.inference_mode():
            output = self.model.generate(**inputs, max_new_tokens=decoding.max_new_tokens, **sampling)
        new_tokens = output[0, prompt_tokens:]
        answer = self.processor.tokenizer.decode(new_tokens, skip_special_tokens=True).strip()
        meta = {
            "device": self.device,
            "model_image": list(seen),
            "prompt_tokens": prompt_tokens,
            "new_tokens": int(new_tokens.shape[0]),
        }
        if seen != frame.model:  # the processor resized again: the transform would be off
            raise RuntimeError(
                f"uitars: the processor gave a {seen[0]}x{seen[1]} image, "
                f"the preset's smart_resize {frame.model[0]}x{frame.model[1]}"
            )
        p = self.preset
        return answer_to_prediction(
            answer, frame, extractors=p.extractors, transform=p.transform, refusal=p.refusal, meta=meta
        )

    def describe(self) -> dict[str, Any]:
        p = self.preset
        pixels = p.preprocess
        decoding = "greedy" if p.decoding.greedy else f"sampling t={p.decoding.temperature:g}"
        headline = (
            f"{self.architecture} from {self.folder.name} on {self.device} {self.dtype} {self.attn}, "
            f"preset {p.name}, max_pixels {pixels.max_pixels}, {decoding}, "
            f"max_new_tokens {p.decoding.max_new_tokens}"
        )
        return {
            "headline": headline,
            "model": str(self.folder),
            "architecture": self.architecture,
            "model_type": self.model_type,
            "device": self.device,
            "xdist_worker": None if self.worker is None else f"gw{self.worker}",
            "dtype": self.dtype,
            "attn_implementation": self.attn,
            "preset": p.describe(),
            "preset_from": self.preset_source,
            "batch_size": 1,
            "torch": str(self._torch.__version__),  # a str subclass that xdist cannot send
            "transformers": metadata.version("transformers"),
            "ui_tars": _version("ui-tars"),
        }

    def close(self) -> None:
        self.model = None
        if self.device.startswith("cuda"):
            self._torch.cuda.empty_cache()


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
