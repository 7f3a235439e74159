"""Which device a detector's replica runs on: one GPU per xdist worker (`-n <GPUs>`)."""

from __future__ import annotations

import os
import re


def worker_index() -> int | None:
    """N for xdist worker gwN, None outside xdist."""
    match = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
    return int(match.group(1)) if match else None


def cores_share(cores: int | None = None, workers: int | None = None) -> int:
    """This process's share of the machine's cores: the cores shared out between xdist workers."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if workers is None:
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, cores // max(1, workers))


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
