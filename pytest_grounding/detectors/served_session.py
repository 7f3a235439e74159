"""What a run's served detectors share across its processes: the servers the harness started
(`vllm:`) and what each server's probe found (`served_checks`). The controller hands both to each
xdist worker before it collects (`export` / `adopt`); the session's end stops the servers this
process started (`close`). Stdlib only at import: the plugin imports it in every process."""

from __future__ import annotations

import sys
from typing import Any


def export() -> dict[str, Any]:
    """The controller's servers and probes, as plain types; {} when no served detector ran here."""
    out: dict[str, Any] = {}
    checks = sys.modules.get(f"{__package__}.served_checks")
    servers = sys.modules.get(f"{__package__}.vllm_server")
    if checks is not None:
        out["checks"] = checks.export()
    if servers is not None:
        out["servers"] = servers.export()
    return out


def adopt(sent: dict[str, Any]) -> None:
    """A worker takes the controller's word: no second server, no second probe."""
    if sent.get("checks"):
        from . import served_checks

        served_checks.adopt(sent["checks"])
    if sent.get("servers"):
        from . import vllm_server

        vllm_server.adopt(sent["servers"])


def close() -> None:
    """The session's end: stop the servers this process started, forget the probes."""
    servers = sys.modules.get(f"{__package__}.vllm_server")
    if servers is not None:
        servers.close_all()
    checks = sys.modules.get(f"{__package__}.served_checks")
    if checks is not None:
        checks.forget()
