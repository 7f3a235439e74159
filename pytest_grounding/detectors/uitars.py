"""`uitars`: the in-process Qwen-VL detector with the UI-TARS presets as defaults (qwenvl.py)."""

from .devices import pick_device, worker_index
from .qwenvl import MODEL_ENV, QwenVLDetector, UITarsDetector

__all__ = ["MODEL_ENV", "QwenVLDetector", "UITarsDetector", "pick_device", "worker_index"]
