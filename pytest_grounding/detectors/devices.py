"""Which device a detector's replica runs on: one GPU per xdist worker (`-n <GPUs>`)."""

from __future__ import annotations

import os
import re


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
            raise ValueError("device=cuda but torch sees no CUDA device")
        return f"cuda:{(worker or 0) % cuda_count}"
    return requested
