"""The `qwenvl` detector: a checkpoint of the Qwen2-VL, Qwen2.5-VL, Qwen3-VL or Qwen3.5 (dense or
MoE) architecture run in-process with torch + transformers, prompted and decoded by any preset
(`pytest_grounding.detectors.vlm`) whose preprocessing is the architecture's smart_resize.
`uitars` is the same detector with the UI-TARS presets as defaults (UI-TARS-1.5 is a Qwen2.5-VL,
UI-TARS 1.0 a Qwen2-VL).

The model comes from a local folder or a hub id, resolved by `hub.resolve_checkpoint` (the
user's hub cache, a download when online, the cache alone with HF_HUB_OFFLINE=1); transformers
then reads that folder only (`local_files_only`, no remote code). Under xdist each
worker takes its own GPU (gwN -> cuda:N mod count). torch and transformers are imported when the
detector is built. `predict_batch` runs up to `batch` queries in one `generate` (qwenvl_batch.py);
`predict` is a batch of one."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from ..core.types import Prediction, Query
from . import qwenvl_batch
from .answer_cache import AnswerStore
from .devices import pick_device, worker_index
from .vlm.agent import describe_budget, take_agent_options
from .vlm.agent import headline as agent_headline
from .vlm.preprocess import SmartResize
from .vlm.preset import preset_headline
from .vlm.presets import DEFAULT_PRESET, resolve_preset

UITARS_10 = "uitars-1.0"
DEFAULT_UITARS = "ByteDance-Seed/UI-TARS-1.5-7B"  # `uitars` with no model: the card's model
# The processor class and smart_resize factor (patch size x merge size) of each architecture, as
# transformers' AutoProcessor maps them (Qwen3.5 has no processor of its own: Qwen3-VL's, with the
# Qwen2-VL image processor; 16 px patches merged 2x2). The loaded image processor must agree.
ARCHITECTURES = {
    "qwen2_vl": ("Qwen2VLProcessor", 28),
    "qwen2_5_vl": ("Qwen2_5_VLProcessor", 28),
    "qwen3_vl": ("Qwen3VLProcessor", 32),
    "qwen3_5": ("Qwen3VLProcessor", 32),
    "qwen3_5_moe": ("Qwen3VLProcessor", 32),
}
# The preset a checkpoint gets when none is named.
QWENVL_DEFAULTS = {"qwen2_5_vl": "qwen2.5-vl", "qwen3_vl": "qwen3-vl", "qwen3_5": "qwen3.5", "qwen3_5_moe": "qwen3.5"}
UITARS_DEFAULTS = {"qwen2_5_vl": DEFAULT_PRESET, "qwen2_vl": UITARS_10}

MODEL_ENV = "PYTEST_GROUNDING_UITARS_MODEL"
DTYPES = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "float32": "float32",
    "fp32": "float32",
}


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


TEMPLATE_LIMIT = 4 << 20  # bytes: a chat template is a few kB


def chat_template(folder: Path, tokenizer: Any) -> str:
    """The checkpoint's chat template: chat_template.jinja / .json (processor level, as UI-TARS
    ships it), else the tokenizer's."""
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        from ..core import safefile

        return safefile.read_text(jinja, limit=TEMPLATE_LIMIT)  # a regular file, bounded
    as_json = folder / "chat_template.json"
    if as_json.is_file():
        from .hub import read_json_file

        template = read_json_file(as_json)  # the hub cache is untrusted: the bounded reader
        if not isinstance(template, dict) or not isinstance(template.get("chat_template"), str):
            raise ValueError(f"{as_json} holds no chat_template text")
        return str(template["chat_template"])
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.chat_template
    raise ValueError(f"no chat template in {folder}")


class QwenVLDetector:
    """Options (``--detector qwenvl:key=value,...``):

    - ``model``: a hub id (org/name) or a checkpoint folder (else $PYTEST_GROUNDING_QWENVL_MODEL);
      ``revision``: a hub branch, tag or commit (default: main). Never remote code: Qwen2-VL,
      Qwen2.5-VL, Qwen3-VL and Qwen3.5 (qwen3_5, qwen3_5_moe) architectures only.
    - ``preset`` (qwen2.5-vl for a Qwen2.5-VL checkpoint, qwen3-vl for a Qwen3-VL one, qwen3.5 for a
      Qwen3.5 one; a Qwen2-VL one needs one named): any preset whose preprocessing is smart_resize
      with the architecture's factor; every part overridable (``python -m pytest_grounding presets``; docs: presets).
    - ``device`` (auto): auto | cuda | cuda:K | cpu. auto/cuda under xdist: worker gwN -> cuda:N mod GPUs.
    - ``dtype`` (auto): bf16 on CUDA, fp32 on CPU; or bfloat16 | float16 | float32.
    - ``attn`` (sdpa): transformers' attn_implementation (sdpa | eager | flash_attention_2).
    - ``threads`` (0 = torch's default): CPU threads.
    - ``batch`` (auto = 1 on CPU, 8 on CUDA): queries per ``generate`` when the harness hands
      several over (``predict_batch``); greedy answers are batch 1's.
    """

    name = "qwenvl"
    frame_check = True  # the frame check before a run (detectors/frame_check.py)
    answer_cache: AnswerStore | None = None  # --grounding-cache: use_answer_store() sets it (qwenvl_batch.py reads it)
    model_env = "PYTEST_GROUNDING_QWENVL_MODEL"
    defaults = QWENVL_DEFAULTS
    default_model: str | None = None  # qwenvl: a model must be named

    def __init__(
        self,
        model: str | None = None,
        preset: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        attn: str = "sdpa",
        threads: int = 0,
        batch: int | str = "auto",
        **overrides: Any,
    ) -> None:
        self.agent = take_agent_options(self.name, overrides)  # agent=crop (issue 39); None: a single shot
        resolve_preset(preset or DEFAULT_PRESET, **overrides)  # bad options fail before the model loads
        from .preflight import check_device, vlm_model

        check_device(self.name, device)
        self.source = vlm_model(self.name, self.model_env, self.default_model, model, revision)
        self.folder = self.source.folder
        import torch
        import transformers
        from transformers import AutoConfig, AutoModelForImageTextToText, AutoTokenizer

        if int(threads):
            torch.set_num_threads(int(threads))
        cuda_count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        self.worker = worker_index()
        self.device = pick_device(device, cuda_count, self.worker)
        if str(dtype).lower() == "auto":
            dtype = "bfloat16" if self.device.startswith("cuda") else "float32"
        if str(dtype).lower() not in DTYPES:
            raise ValueError(f"{self.name}: dtype must be auto or one of {', '.join(DTYPES)}, not {dtype!r}")
        self.dtype = DTYPES[str(dtype).lower()]
        self.attn = str(attn)
        self.batch_size = (
            1 if self.agent else qwenvl_batch.batch_size_for(batch, self.device)
        )  # episodes: one at a time

        config = AutoConfig.from_pretrained(self.folder, local_files_only=True, trust_remote_code=False)
        self.model_type = config.model_type
        if self.model_type not in ARCHITECTURES or not hasattr(transformers, ARCHITECTURES[self.model_type][0]):
            known = ", ".join(k for k, (cls, _) in ARCHITECTURES.items() if hasattr(transformers, cls))
            raise ValueError(
                f"{self.name}: {self.folder} holds a {self.model_type!r} model; this transformers "
                f"({transformers.__version__}) runs {known} in-process (others: serve them, --detector openai)"
            )
        processor_name, factor = ARCHITECTURES[self.model_type]
        base = getattr(transformers, processor_name)
        # No preset named: the architecture's (UI-TARS 1.0 answers 0-1000; read as pixels it scores ~0).
        if not preset and self.model_type not in self.defaults:
            raise ValueError(
                f"{self.name}: a {self.model_type} checkpoint needs preset=NAME (python -m pytest_grounding presets)"
            )
        self.preset_source = "option" if preset else f"default for {self.model_type}"
        self.preset = resolve_preset(preset or self.defaults[self.model_type], **overrides)
        resize = self.preset.preprocess
        if not isinstance(resize, SmartResize) or resize.factor != factor:
            raise ValueError(
                f"{self.name}: preset {self.preset.name} preprocesses with {resize.describe()}; a {self.model_type} "
                f"model in-process sees smart_resize with factor {factor} (the openai detector sends any image)"
            )
        tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True, trust_remote_code=False)
        image_processor = _image_processor_class().from_pretrained(
            self.folder, local_files_only=True, min_pixels=resize.min_pixels, max_pixels=resize.max_pixels
        )
        self.processor = _processor_class(base)(
            image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template(self.folder, tokenizer)
        )
        self.patch = int(getattr(image_processor, "patch_size", 14))
        processor_factor = self.patch * int(getattr(image_processor, "merge_size", 2))
        if processor_factor != factor:  # the frame the preset computes would not be the one the model sees
            raise ValueError(
                f"{self.name}: {self.folder}'s image processor has {self.patch} px patches merged "
                f"{processor_factor // self.patch}x{processor_factor // self.patch} (factor {processor_factor}); "
                f"a {self.model_type} model has factor {factor}"
            )
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

    @classmethod
    def preflight(cls, model: str | None = None, revision: str | None = None, device: str = "auto", **_: Any) -> None:
        """Cheap, in the controller before any worker loads: a model named and found (downloaded
        once when online), CUDA there when device=cuda was asked (preflight.py)."""
        from .preflight import check_device, vlm_model

        check_device(cls.name, device)
        vlm_model(cls.name, cls.model_env, cls.default_model, model, revision)

    def prompt_text(self, instruction: str, size: tuple[int, int] | None = None) -> str:
        """The chat-templated text the model is given for an image of `size` as the model sees it
        (image tokens not yet expanded)."""
        return self.processor.apply_chat_template(
            self.preset.prompt.messages(instruction, size),
            tokenize=False,
            add_generation_prompt=True,
            **dict(self.preset.decoding.chat_template_kwargs),
        )

    def use_answer_store(self, store: AnswerStore) -> None:
        """--grounding-cache: answers are looked up and kept in `store` (detectors/answer_cache.KeepsAnswers)."""
        self.answer_cache = store

    def predict(self, query: Query) -> Prediction:
        if self.agent is not None:  # agent=crop: the model asks for crops over several turns
            from . import qwenvl_agent

            return qwenvl_agent.predict(self, query, *self.agent)
        return qwenvl_batch.predict(self, query)

    def predict_batch(self, queries: Sequence[Query]) -> list[Prediction]:
        """One prediction per query, in `generate` calls of up to `batch_size`; raises
        batching.BatchError, with every query's outcome, when some of them failed."""
        return qwenvl_batch.predict_batch(self, queries)

    def describe(self) -> dict[str, Any]:
        p = self.preset
        where = f"{self.architecture} from {self.source.label} on {self.device} {self.dtype} {self.attn}"
        headline = f"{where}, {preset_headline(p)}" + (f", {agent_headline(*self.agent)}" if self.agent else "")
        return {
            "headline": headline,
            **self.source.describe(),
            "architecture": self.architecture,
            "model_type": self.model_type,
            "device": self.device,
            "xdist_worker": None if self.worker is None else f"gw{self.worker}",
            "dtype": self.dtype,
            "attn_implementation": self.attn,
            "preset": p.describe(),
            "preset_from": self.preset_source,
            "agent": describe_budget(*self.agent) if self.agent else None,
            "batch_size": self.batch_size,
            "torch": str(self._torch.__version__),  # a str subclass that xdist cannot send
            "transformers": metadata.version("transformers"),
            "ui_tars": _version("ui-tars"),
        }

    def close(self) -> None:
        self.model = None
        if self.device.startswith("cuda"):
            self._torch.cuda.empty_cache()


class UITarsDetector(QwenVLDetector):
    """`qwenvl` with the UI-TARS presets as defaults: uitars-1.5-point for a Qwen2.5-VL checkpoint
    (UI-TARS-1.5), uitars-1.0 for a Qwen2-VL one. Options as for qwenvl; the model may also come
    from $PYTEST_GROUNDING_UITARS_MODEL, and is ByteDance-Seed/UI-TARS-1.5-7B when none is named."""

    name = "uitars"
    model_env = MODEL_ENV
    defaults = UITARS_DEFAULTS
    default_model = DEFAULT_UITARS


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
