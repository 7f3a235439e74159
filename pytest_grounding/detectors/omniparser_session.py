"""The `omniparser` detector's icon model on ONNX Runtime: where the model file is looked for, the
session (CUDA asked for when onnxruntime lists it, the providers really used read back), and the
line said when a provider asked for is not obtained. onnxruntime is imported when a session is
created, never at import of the package."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.cache import cache_root

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
MODEL_FILE = "omniparser-v2-icon-detect-640.onnx"
MODEL_ENV = "PYTEST_GROUNDING_OMNIPARSER_MODEL"
_ORT_DEFAULT_SEVERITY = 2  # onnxruntime's logger severity when nothing changed it (it has no getter)


def model_candidates(model: str | None = None) -> list[tuple[Path, str]]:
    """Where the model is looked for, in order, each with where that place came from."""
    if model:
        return [(Path(model).expanduser(), "model= option")]
    env = os.environ.get(MODEL_ENV)
    if env:
        return [(Path(env).expanduser(), f"${MODEL_ENV}")]
    return [
        (
            cache_root() / "models" / MODEL_FILE,
            "the cache folder ($PYTEST_GROUNDING_CACHE or ~/.cache/pytest-grounding)",
        )
    ]


def resolve_model(model: str | None = None) -> Path:
    """The model file, or a FileNotFoundError that says where it looked and how to make the file."""
    for path, _source in model_candidates(model):
        if path.is_file():
            return path
    path, source = model_candidates(model)[0]
    raise FileNotFoundError(
        f"omniparser: no icon detector model at {path} (from {source}). Make it from OmniParser v2's "
        f"weights/icon_detect/model.pt (AGPL-3.0, not shipped here) on a machine with PyTorch and torchvision: "
        f"`yolo export model=model.pt format=onnx imgsz=640`, then put it there, set ${MODEL_ENV}, "
        f"or pass --detector omniparser:model=PATH"
    )


def create_session(path: Path, device: str = "auto", threads: int = 1) -> tuple[Any, list[str], list[str]]:
    """An onnxruntime session on the model: CUDA asked for when onnxruntime lists it (and device is
    auto), CPU otherwise. Returns (session, providers requested, providers really used, read back).
    A listed CUDA provider that cannot run falls back to CPU with loud logger lines: they are
    silenced for the creation only, and the read-back says what runs."""
    import onnxruntime as ort

    if device not in ("auto", "cpu"):
        raise ValueError(f"omniparser: device must be 'auto' or 'cpu', not {device!r}")
    requested = [CUDA, CPU] if device == "auto" and CUDA in ort.get_available_providers() else [CPU]
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, int(threads))
    options.log_severity_level = 3
    ort.set_default_logger_severity(4)
    try:
        session = ort.InferenceSession(str(path), sess_options=options, providers=requested)
    finally:
        ort.set_default_logger_severity(_ORT_DEFAULT_SEVERITY)
    return session, requested, list(session.get_providers())


def provider_note(requested: Sequence[str], used: Sequence[str]) -> str | None:
    missing = [p for p in requested if p not in used and p != CPU]
    if not missing:
        return None
    return (
        f"onnxruntime lists {', '.join(missing)} but could not use it here; the icon detector runs on {', '.join(used)}"
    )
