"""Where the project keeps what it makes once and reuses: the synthetic set, hub datasets'
extracted images, downloaded model files. `$PYTEST_GROUNDING_CACHE`, else ~/.cache/pytest-grounding."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "PYTEST_GROUNDING_CACHE"


def cache_root() -> Path:
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "pytest-grounding"
