"""`python -m pytest_grounding doctor`: for each built-in detector, what it needs and whether this
machine has it (extras, torch and its CUDA devices, the onnxruntime providers that really load,
models in the Hugging Face hub cache, the OmniParser model file, a server from the environment
answering /models), so a user knows before a long run. Nothing is downloaded and no model is
loaded; the hub token is only said to be set or not, never shown."""

from __future__ import annotations

import contextlib
import io
import os
import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from ..detectors import EXTRAS
from ..detectors.hub import ModelUnavailable, cached_models, hub_cache, hub_offline, resolve_checkpoint
from ..plugin.common.extras import missing_extra

# Architectures the in-process detectors run (qwenvl.ARCHITECTURES, without importing torch).
IN_PROCESS = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_5", "qwen3_5_moe")
MARKS = {True: "ok ", False: "NO ", None: "-- "}


@dataclass(frozen=True)
class Verdict:
    """One detector: ready (True), not (False) or needs a choice first (None), and why."""

    detector: str
    ready: bool | None
    needs: str
    found: tuple[str, ...] = field(default_factory=tuple)
    fix: str | None = None


@dataclass(frozen=True)
class Machine:
    """What this machine has, read once."""

    torch: str | None  # version and CUDA build, None: not installed
    cuda_devices: tuple[str, ...]  # names of the CUDA devices torch sees
    onnxruntime: str | None
    providers_listed: tuple[str, ...]
    providers_loading: tuple[str, ...] | None  # None: not tried (no model to try them on)
    hub_cache: Path
    offline: bool
    token_set: bool
    cached: tuple[Any, ...]  # hub.CachedModel
    omniparser_model: tuple[Path, str, bool]  # path, where that came from, found
    openai_url: str | None
    openai_answer: str | None  # the models listed, or why the server does not answer


def extra_line(extra: str) -> tuple[bool, str]:
    absent = missing_extra(extra)
    if absent:
        return False, f'extra {extra}: {absent} is not installed (pip install "pytest-grounding[{extra}]")'
    return True, f"extra {extra}: installed"


def torch_facts() -> tuple[str | None, tuple[str, ...]]:
    try:
        import torch
    except ImportError:
        return None, ()
    version = f"{torch.__version__} (CUDA build {torch.version.cuda or 'none'})"
    if not torch.cuda.is_available():
        return version, ()
    return version, tuple(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))


def onnx_facts(model_file: Path | None) -> tuple[str | None, tuple[str, ...], tuple[str, ...] | None]:
    """onnxruntime's version, the providers it lists, and those that really load a model (a
    listed CUDA provider without a GPU or its libraries falls back to CPU)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None, (), None
    listed = tuple(ort.get_available_providers())
    model = _tiny_onnx() or (str(model_file) if model_file else None)
    if model is None:
        return ort.__version__, listed, None
    loading = []
    ort.set_default_logger_severity(4)  # a provider that cannot load logs loudly: its absence says it
    try:
        for provider in listed:
            try:  # onnxruntime prints its fallback notices: they would only repeat what the list says
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    session = ort.InferenceSession(model, providers=[provider])
            except Exception:
                continue
            if provider in session.get_providers():
                loading.append(provider)
    finally:
        ort.set_default_logger_severity(2)
    return ort.__version__, listed, tuple(loading)


def _tiny_onnx() -> bytes | None:
    """A one-node model (Identity) to try the providers on, when the onnx package is here."""
    try:
        from onnx import TensorProto, helper
    except ImportError:
        return None
    tensor = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "doctor",
        [tensor("x", TensorProto.FLOAT, [1])],
        [tensor("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def token_set() -> bool:
    try:
        from huggingface_hub import get_token
    except ImportError:
        return bool(os.environ.get("HF_TOKEN"))
    return get_token() is not None


def served_engine(url: str) -> str:
    """The engine behind a served URL as its record names it (served_engine.py), or why not."""
    try:
        from ..detectors.http import HttpClient
        from ..detectors.served_engine import probe_engine
    except ImportError:  # the openai extra (httpx) is not installed
        return "engine not asked (the openai extra is not installed)"
    client = HttpClient([url], timeout=5.0, retries=0)
    try:
        return probe_engine(client, None).headline
    finally:
        client.close()


def read_machine() -> Machine:
    from ..detectors.omniparser import model_candidates
    from ..detectors.preflight import server_problem
    from ..detectors.served import BASE_URL_ENV, public_url, split_urls

    torch_version, devices = torch_facts()
    omni_path, omni_source = model_candidates(None)[0]
    version, listed, loading = onnx_facts(omni_path if omni_path.is_file() else None)
    try:
        cached = tuple(cached_models())
    except ImportError:
        cached = ()
    url = os.environ.get(BASE_URL_ENV)
    answer = None
    if url:
        try:
            first = split_urls(url)[0]
        except (ValueError, IndexError) as exc:
            answer = f"not a URL ({exc})"
        else:
            url = public_url(first)
            problem = server_problem(first)
            answer = f"does not answer ({problem})" if problem else f"answers /models: {served_engine(first)}"
    return Machine(
        torch=torch_version,
        cuda_devices=devices,
        onnxruntime=version,
        providers_listed=listed,
        providers_loading=loading,
        hub_cache=hub_cache(),
        offline=hub_offline(),
        token_set=token_set(),
        cached=cached,
        omniparser_model=(omni_path, omni_source, omni_path.is_file()),
        openai_url=url,
        openai_answer=answer,
    )


def verdicts(machine: Machine) -> list[Verdict]:
    found: list[Verdict] = [Verdict("center, random", True, "nothing")]
    ok, line = extra_line("ocr")
    found.append(Verdict("ocr", ok, "the ocr extra (RapidOCR's models ship in its wheel)", (line,)))
    found.append(_omniparser(machine))
    found.append(_vlm("uitars", "PYTEST_GROUNDING_UITARS_MODEL", "ByteDance-Seed/UI-TARS-1.5-7B", machine))
    found.append(_vlm("qwenvl", "PYTEST_GROUNDING_QWENVL_MODEL", None, machine))
    found.append(_openai(machine))
    return found


def _omniparser(machine: Machine) -> Verdict:
    ok, line = extra_line(EXTRAS["omniparser"])
    path, source, present = machine.omniparser_model
    lines = [line, f"model file {path} (from {source}): {'found' if present else 'missing'}"]
    fix = (
        None
        if present
        else "export OmniParser v2's icon_detect to ONNX (docs: detectors), put it there or set "
        "$PYTEST_GROUNDING_OMNIPARSER_MODEL"
    )
    return Verdict(
        "omniparser", ok and present, "the omniparser extra and the icon detector's ONNX file", tuple(lines), fix
    )


def _vlm(name: str, model_env: str, default: str | None, machine: Machine) -> Verdict:
    ok, line = extra_line(EXTRAS[name])
    lines = [line]
    gpus = machine.cuda_devices
    lines.append(
        f"torch {machine.torch}: " + (f"{len(gpus)} CUDA device(s): {', '.join(gpus)}" if gpus else "no CUDA device")
        if machine.torch
        else "torch: not installed"
    )
    if not gpus:
        lines.append("without a GPU it runs on CPU: fine for a tiny model, far too slow for a 7B one")
    # complete and readable only: a repo listed below as incomplete or not usable cannot run
    runnable = [m for m in machine.cached if m.model_type in IN_PROCESS and m.complete and not m.problem]
    named = os.environ.get(model_env) or default
    if not named:
        listing = ", ".join(m.repo_id for m in runnable) or "none"
        lines.append(f"in the hub cache, runnable in-process: {listing}")
        return Verdict(
            name,
            None if ok else False,
            "the uitars extra and model=ORG/NAME or PATH",
            tuple(lines),
            f"--detector {name}:model=ORG/NAME (e.g. one listed above)" if ok else None,
        )
    source = f"${model_env}" if os.environ.get(model_env) else "the default"
    fix = None
    try:
        resolved = resolve_checkpoint(named, detector=name, download=False)
        lines.append(f"model {resolved.repo_id or resolved.folder} ({source}): found, {resolved.label}")
        found = True
    except ModelUnavailable as exc:
        lines.append(f"model {named} ({source}): {exc.what.split(': ', 1)[-1]} (looked in {exc.where})")
        fix = exc.fix + ("" if machine.offline else "; online, the first run downloads it")
        found = False
    except ImportError:
        lines.append("huggingface_hub is not installed: models by hub id cannot be found")
        found = False
    return Verdict(name, ok and found, f"the uitars extra and a model ({named} unless named)", tuple(lines), fix)


def _openai(machine: Machine) -> Verdict:
    ok, line = extra_line(EXTRAS["openai"])
    lines = [line]
    if not machine.openai_url:
        lines.append("$PYTEST_GROUNDING_OPENAI_BASE_URL is not set (base_url= names the server per run)")
        return Verdict("openai", None if ok else False, "the openai extra and a server (base_url=)", tuple(lines))
    answers = (machine.openai_answer or "").startswith("answers /models")
    lines.append(f"server {machine.openai_url}: {machine.openai_answer}")
    fix = None if answers else "start the server, or point $PYTEST_GROUNDING_OPENAI_BASE_URL at one that runs"
    return Verdict("openai", ok and answers, "the openai extra and a server (base_url=)", tuple(lines), fix)


def machine_lines(machine: Machine) -> list[str]:
    lines = [
        f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"pytest-grounding {_version('pytest-grounding') or '(not installed)'}"
    ]
    if machine.torch is None:
        lines.append("torch: not installed")
    elif machine.cuda_devices:
        lines.append(f"torch {machine.torch}: CUDA devices {', '.join(machine.cuda_devices)}")
    else:
        lines.append(f"torch {machine.torch}: no CUDA device (no GPU here, or no driver)")
    if machine.onnxruntime is None:
        lines.append("onnxruntime: not installed")
    else:
        loading = (
            "not tried (no model to try them on)"
            if machine.providers_loading is None
            else ", ".join(machine.providers_loading) or "none"
        )
        lines.append(
            f"onnxruntime {machine.onnxruntime}: lists {', '.join(machine.providers_listed)}; really loads {loading}"
        )
    mode = "offline ($HF_HUB_OFFLINE=1)" if machine.offline else "online"
    token = "a hub token is set (not shown)" if machine.token_set else "no hub token"
    lines.append(f"hub cache {machine.hub_cache}: {mode}, {token}; {len(machine.cached)} model(s)")
    for model in machine.cached:
        state = "complete" if model.complete else "incomplete (weights missing)"
        if model.problem:
            state = f"not usable: {model.problem}"
        commit = model.commits[0][:7] if model.commits else "?"
        refs = f" ({', '.join(model.refs)})" if model.refs else ""
        kind = model.model_type or ("config.json unread" if model.problem else "no config.json")
        lines.append(f"  {model.repo_id} @{commit}{refs}: {kind}, {state}")
    return lines


def report_lines(machine: Machine) -> list[str]:
    lines = ["pytest-grounding doctor: what each detector needs, and what this machine has", "", "machine"]
    lines += ["  " + line for line in machine_lines(machine)]
    lines += ["", "detectors (ok: ready; NO: missing something; --: needs a choice first)"]
    for verdict in verdicts(machine):
        lines.append(f"  {MARKS[verdict.ready]} {verdict.detector}: needs {verdict.needs}")
        lines += [f"       {line}" for line in verdict.found]
        if verdict.fix:
            lines.append(f"       fix: {verdict.fix}")
    return lines


def run_doctor() -> int:
    """Prints the report; exit 0 (it is a report, not a gate)."""
    for line in report_lines(read_machine()):
        print(_printable(line))
    return 0


def _printable(text: str) -> str:
    """Ids and names from the cache or a server, printed without control characters."""
    encoding = sys.stdout.encoding or "utf-8"
    cleaned = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return cleaned.encode(encoding, "replace").decode(encoding)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
