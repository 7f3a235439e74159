"""Engine parity on a model that really clicks (issue 59): the same held-back screens through every
path that serves one checkpoint, each compared click by click with the in-process run.

    python ci/engines/parity.py MODEL_DIR [--count N] [--out DIR] [--paths NAME[/n2] ...] [--write-docs]

MODEL_DIR is a checkpoint `ci/engines/train_pointer.py` wrote (its `pointer.json` names the preset,
`qwen3-vl` when it names none, and the pixel budget `max_pixels`). The screens are train_pointer's
held-back ones (`--dataset DIR --count N`, four sizes). Each path is run serially and with `-n 2`
(`--paths NAME NAME/n2 ...`, default all of them both ways):

- `inprocess`: `qwenvl:model=DIR,max_pixels=P` (the reference every other run is paired with);
- `vllm-f32`, `vllm-auto`: the `vllm:` detector, with `--dtype float32` and with vLLM's default dtype;
- `openai-vllm`: `openai:` against a vLLM server this script starts (`--dtype float32`);
- `transformers`: `openai:` against `transformers serve`, started here;
- `llamacpp-f16`, `llamacpp-q8`: the `llamacpp:` detector on the F16 GGUF and on Q8_0, converted by
  `ci/engines/to_gguf.py` into `MODEL_DIR.gguf/` beside the model (once).

Each run is a suite run with `--grounding-json` and `--grounding-predictions`; `python -m
pytest_grounding compare` over all the reports (the in-process one first) is written to
OUT/compare.md, and the table's paired interval is the one that command prints (the same
function). Per run: accuracy and interval, the paired difference against in-process, how many clicks
equal the in-process one, differ by at most one answer step (10 of 1000 in the qwen3-vl frame; 3 px
of the resized image in a pixel frame), or more, the outcome flips, and the reason when the script
can tell it (a dtype read from the server's command or log, the GGUF's weight type, prompts of
another length: the server resized the screen otherwise), else "unexplained". The runs' token probe
and frame check are recorded as the reports carry them.

The pure part (pairing, counting, reasons, the table, the docs' block) takes records and facts and
returns values: tests/test_engine_parity.py checks it without an engine."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project's package
    sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent
ENGINES = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")
VLLM_PYTHON = ENGINES / "vllm" / "bin" / "python"
TF_SERVE = ENGINES / "transformers" / "bin" / "transformers"
LLAMA_SERVER = ENGINES / "llamacpp" / "bin" / "llama-server"
ENGINE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
VLLM_ARGS = "--enforce-eager --max-num-seqs 8 --no-enable-prefix-caching"
PATHS = (
    "inprocess",
    "vllm-f32",
    "vllm-auto",
    "openai-vllm",
    "transformers",
    "llamacpp-f16",
    "llamacpp-q8",
    "vllm-shrunk",
    "vllm-shrunk-unprobed",
)
# A server whose processor shrinks every screen below the preset's frame (a copy of the checkpoint
# whose preprocessor_config.json has half the pixel budget): with the token probe (it should stop the
# run) and without it (probe=false: the clicks show what the probe saw). Serial only by default.
SHRUNK = ("vllm-shrunk", "vllm-shrunk-unprobed")
DEFAULT_PATHS = [f"{p}{s}" for p in PATHS if p not in SHRUNK for s in ("", "/n2")] + list(SHRUNK)
START, END = "<!-- parity:start -->", "<!-- parity:end -->"
PIXEL_STEP = 4  # a pixel-frame preset's "one step": train_pointer's gta1 kind answers in steps of 4 px


def markers(block: str | None) -> tuple[str, str]:
    """The docs' markers of one table: the default one, or a named one (`--docs-block gta1`)."""
    return (START, END) if not block else (f"<!-- parity:{block}:start -->", f"<!-- parity:{block}:end -->")


# -- pure: pairing, counting, reasons, the table ---------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """What the script could read about one run besides its records."""

    path: str
    workers: int
    spec: str
    accuracy: float | None = None
    hits: int = 0
    scored: int = 0
    ci95: tuple[float, float] | None = None
    delta: float | None = None  # the paired difference against in-process (compare's), in [-1, 1]
    delta_ci: tuple[float, float] | None = None
    dtype: str | None = None  # the weights' dtype the engine ran (its command, its log, the detector's)
    weights: str | None = None  # llama.cpp's model_ftype (F16, Q8_0, ...)
    probe: str = ""  # what the token probe said (served runs)
    frame_check: str = ""  # what the frame check said
    seconds: float | None = None
    error: str = ""  # the run did not give records: why


@dataclass(frozen=True)
class Pairing:
    """One run's clicks against the in-process ones, sample by sample (paired by uid)."""

    paired: int
    equal: int
    near: int  # not equal, at most one answer step apart on both axes
    far: int  # further, or one side without a point
    flips: int  # hit <-> miss
    missing: int  # reference samples this run has no record of
    token_offsets: Mapping[int, int] = field(default_factory=dict)  # prompt tokens minus the reference's: count
    far_uids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row:
    facts: Facts
    pairing: Pairing | None
    reason: str


def coordinates(record: Mapping[str, Any]) -> tuple[float, float] | None:
    """The click in the model's own frame (meta.model_coordinates), else in screen pixels."""
    meta = record.get("meta") or {}
    found = meta.get("model_coordinates") if isinstance(meta, Mapping) else None
    if found is None:
        found = record.get("point")
    if not isinstance(found, (list, tuple)) or len(found) != 2:
        return None
    try:
        return float(found[0]), float(found[1])
    except (TypeError, ValueError):
        return None


def prompt_tokens(record: Mapping[str, Any]) -> int | None:
    meta = record.get("meta") or {}
    if not isinstance(meta, Mapping):
        return None
    usage = meta.get("usage")  # a served answer's `usage`; in-process, meta.prompt_tokens
    value = usage.get("prompt_tokens") if isinstance(usage, Mapping) else meta.get("prompt_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pair(reference: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]], step: float) -> Pairing:
    """Pair `other`'s records with `reference`'s by uid and count equal / near / far clicks and
    hit<->miss flips. `step` is the model's resolution in its own frame."""
    mine = {str(r["uid"]): r for r in reference}
    theirs = {str(r["uid"]): r for r in other}
    equal = near = far = flips = 0
    offsets: Counter[int] = Counter()
    far_uids = []
    for uid in sorted(mine.keys() & theirs.keys()):
        a, b = mine[uid], theirs[uid]
        if (a.get("outcome") == "hit") != (b.get("outcome") == "hit"):
            flips += 1
        first, second = coordinates(a), coordinates(b)
        if first == second and (first is not None or a.get("raw") == b.get("raw")):
            equal += 1  # the same click, or the same answer with no click in it (a wrong format)
        elif (
            first is not None
            and second is not None
            and max(abs(first[0] - second[0]), abs(first[1] - second[1])) <= step
        ):
            near += 1
        else:
            far += 1
            far_uids.append(uid)
        ta, tb = prompt_tokens(a), prompt_tokens(b)
        if ta is not None and tb is not None:
            offsets[tb - ta] += 1
    return Pairing(
        paired=len(mine.keys() & theirs.keys()),
        equal=equal,
        near=near,
        far=far,
        flips=flips,
        missing=len(mine.keys() - theirs.keys()),
        token_offsets=dict(offsets),
        far_uids=tuple(far_uids),
    )


TEMPLATE_TOKENS = 8  # the most a chat template's difference adds to every prompt (an image resized: tens)


def resized(pairing: Pairing) -> int:
    """Samples whose prompt length differs from the run's usual offset to the reference's (a template
    may add a few tokens to every prompt; an image resized otherwise changes tens, by its size): the
    screens the server saw at another size. The usual offset is the commonest of at most
    TEMPLATE_TOKENS; with none that small (a server that resized every screen), every one counts."""
    small = {offset: n for offset, n in pairing.token_offsets.items() if abs(offset) <= TEMPLATE_TOKENS}
    if not small:
        return sum(pairing.token_offsets.values())
    usual = max(small.items(), key=lambda item: (item[1], -abs(item[0])))[0]
    return sum(n for offset, n in pairing.token_offsets.items() if offset != usual)


def reason(facts: Facts, pairing: Pairing | None, reference_dtype: str | None) -> str:
    """Why the clicks differ, from what was read (never guessed): "" when they do not differ."""
    if pairing is None:
        return ""
    if pairing.near == pairing.far == 0 and pairing.flips == 0:
        return ""
    found = []
    if facts.dtype and reference_dtype and facts.dtype != reference_dtype:
        found.append(f"{facts.dtype} (in-process {reference_dtype})")
    if facts.weights:
        kind = facts.weights.upper()
        if "F32" not in kind:
            found.append(f"{'quantization ' if 'Q' in kind else ''}{facts.weights} weights")
    others = resized(pairing)
    if others:
        found.append(f"resize: {others} screens sent at another size (prompt length)")
    return "; ".join(found) or "unexplained"


def rows(
    reference: Sequence[Mapping[str, Any]],
    runs: Sequence[tuple[Facts, Sequence[Mapping[str, Any]] | None]],
    step: float,
) -> list[Row]:
    """Each run paired with the reference records (the first run's Facts name its dtype)."""
    reference_dtype = next((f.dtype for f, _ in runs if f.path == "inprocess" and f.workers == 1), None)
    out = []
    for facts, records in runs:
        pairing = None if records is None else pair(reference, records, step)
        out.append(Row(facts, pairing, reason(facts, pairing, reference_dtype)))
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _interval(bounds: tuple[float, float] | None, signed: bool = False) -> str:
    if bounds is None:
        return "-"
    if signed:
        return f"{100 * bounds[0]:+.1f} to {100 * bounds[1]:+.1f}"
    return f"{100 * bounds[0]:.1f}-{100 * bounds[1]:.1f}%"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "-"


def table(found: Sequence[Row], step_words: str) -> str:
    """The Markdown table: one line a run."""
    head = (
        "| path | workers | accuracy | 95% CI | vs in-process (paired, 95% CI) | same click | within "
        f"{step_words} | further | flips | reason | probe / frame check |"
    )
    lines = [head, "|" + "---|" * 11]
    for row in found:
        f, p = row.facts, row.pairing
        if f.error or p is None:
            lines.append(f"| {f.path} | {f.workers} | - | - | - | - | - | - | - | {_cell('no run: ' + f.error)} | - |")
            continue
        delta = "-" if f.delta is None else f"{100 * f.delta:+.1f} ({_interval(f.delta_ci, signed=True)})"
        if f.path == "inprocess" and f.workers == 1:
            delta = "reference"
        checks = "; ".join(x for x in (f.probe, f.frame_check) if x)
        lines.append(
            f"| {f.path} | {f.workers} | {_pct(f.accuracy)} ({f.hits}/{f.scored}) | {_interval(f.ci95)} | {delta} "
            f"| {p.equal}/{p.paired} | {p.near} | {p.far} | {p.flips} | {_cell(row.reason)} | {_cell(checks)} |"
        )
    return "\n".join(lines)


def replace_block(text: str, block: str, name: str | None = None) -> str:
    """`text` with what lies between the parity markers (the default ones, or those named `name`)
    replaced by `block`; a ValueError when the markers are not there once each, in that order."""
    start, end = markers(name)
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ValueError(f"the markers {start} and {end} are not there once each, in that order")
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    return f"{before}{start}\n{block.strip()}\n{end}{after}"


def twins(runs: Sequence[tuple[Facts, Sequence[Mapping[str, Any]] | None]], step: float) -> list[tuple[str, Pairing]]:
    """Each path run both serially and with -n 2: the -n 2 run's clicks paired with the serial one's."""
    serial = {f.path: r for f, r in runs if f.workers == 1 and r is not None}
    return [(f.path, pair(serial[f.path], r, step)) for f, r in runs if f.workers > 1 and r and f.path in serial]


def twin_sentence(found: Sequence[tuple[str, Pairing]]) -> str:
    """One sentence: whether -n 2 clicked as the serial run did, path by path."""
    if not found:
        return ""
    same = [path for path, p in found if p.equal == p.paired and not p.missing]
    other = [f"`{path}` ({p.equal} of {p.paired + p.missing} the same)" for path, p in found if path not in same]
    words = f"With `-n 2`, {len(same)} of {len(found)} paths gave the serial run's clicks on every sample"
    return words + (f"; not {', '.join(other)}." if other else ".")


def docs_block(
    found: Sequence[Row], step_words: str, header: Mapping[str, str], pairs: Sequence[tuple[str, Pairing]] = ()
) -> str:
    """The table, whether -n 2 changed any click, and a sentence for each run whose clicks differ,
    with its reason."""
    lines = [
        f"Made by `{header['command']}` on {header['machine']}, {header['date']} ({header['screens']}; "
        f"{header['seconds']}).",
        "",
        table(found, step_words),
        "",
    ]
    if pairs:
        lines += [twin_sentence(pairs), ""]
    for row in found:
        f, p = row.facts, row.pairing
        if p is None or not row.reason:
            continue
        label = f"`{f.path}`" + (" with `-n 2`" if f.workers > 1 else "")
        lines.append(
            f"- {label}: {p.equal} of {p.paired} clicks the in-process one, {p.near} within {step_words}, "
            f"{p.far} further, {p.flips} outcomes flipped; reason: {row.reason}."
        )
    return "\n".join(lines).rstrip() + "\n"


# -- what the reports say --------------------------------------------------------------------------


def checks_of(report: Mapping[str, Any], served: bool, probed: bool = True) -> tuple[str, str]:
    """(what the token probe said, the frame check's verdict) as the report carries them: the probe
    writes a note only where it finds something (a screen enlarged or shrunk, a field refused);
    `probed`: False for a run with probe=false."""
    notes = [
        str(n)
        for n in report.get("notes") or ()
        if ("probe" in str(n) or "shrank" in str(n)) and not str(n).startswith("frame check")
    ]
    probe = "; ".join(notes) if notes else ("probe: no finding" if probed else "probe: off") if served else ""
    frame = []
    for check in (report.get("frame_check") or {}).values():
        if isinstance(check, Mapping):
            words = f"frame check: {check.get('name')}"
            if check.get("readable") is not None:
                words += f" ({check.get('readable')} of {check.get('requests')} answers readable)"
            frame.append(words)
    return probe, "; ".join(frame)


def dtype_of(text: str) -> str | None:
    """The dtype a server command line or log names (`--dtype float32`, vLLM's `dtype=torch.bfloat16`)."""
    found = re.findall(r"dtype[= ](?:torch\.)?(bfloat16|float16|float32|half|float)\b", text)
    return {"half": "float16", "float": "float32"}.get(found[-1], found[-1]) if found else None


# -- I/O: the screens, the servers, the runs -------------------------------------------------------


def load_script(name: str) -> Any:
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def write_screens(folder: Path, count: int) -> Path:
    """train_pointer's held-back screens: what `train_pointer.py --dataset DIR --count N` writes."""
    load_script("train_pointer").write_dataset(folder, count, seed=10_000)
    return folder


def recipe(model: Path) -> tuple[str | None, int | None, str]:
    """The preset, pixel budget and other detector options train_pointer.py's stamp names (qwen3-vl
    when it names no preset; `factor=32` for its gta1 kind); (None, None, "") for another checkpoint."""
    if not (model / "pointer.json").is_file():
        return None, None, ""
    found = json.loads((model / "pointer.json").read_text()).get("recipe") or {}
    options = [o for o in str(found.get("detector") or "").split(",") if o and o.split("=")[0] not in PRESET_KEYS]
    return str(found.get("preset") or "qwen3-vl"), int(found.get("max_pixels") or 100_000), ",".join(options)


PRESET_KEYS = ("preset", "max_pixels")


def shrunk_copy(model: Path, out: Path, max_pixels: int) -> Path:
    """The checkpoint with half the pixel budget in its processor's config (its other files linked):
    what a server that reads it resizes every screen to."""
    copy = out / f"{model.name}-shrunk"
    copy.mkdir(parents=True, exist_ok=True)
    for item in model.iterdir():
        target = copy / item.name
        if item.name == "preprocessor_config.json":
            config = json.loads(item.read_text())
            config["max_pixels"] = max_pixels // 2
            if isinstance(config.get("size"), dict) and "longest_edge" in config["size"]:
                config["size"]["longest_edge"] = max_pixels // 2
            target.write_text(json.dumps(config, indent=2))
        elif not target.exists() and item.is_file():
            target.symlink_to(item.resolve())
    return copy


def gguf_dir(model: Path, out: Path) -> Path:
    """model.gguf, mmproj.gguf and model-Q8_0.gguf beside the model (made again when the checkpoint's
    weights are newer than them)."""
    target = model.parent / f"{model.name}.gguf"
    try:
        target.mkdir(exist_ok=True)
    except OSError:
        target = out / "gguf"
    weights = [p.stat().st_mtime for p in model.glob("*.safetensors")] or [0.0]
    made = [target / name for name in ("model.gguf", "mmproj.gguf", "model-Q8_0.gguf")]
    if not all(p.is_file() for p in made) or min(p.stat().st_mtime for p in made) < max(weights):
        command = [sys.executable, str(HERE / "to_gguf.py"), str(model), str(target), "--quant", "Q8_0"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"to_gguf failed: {done.stderr[-800:]}")
    return target


class Server:
    """A server this script started (the library's own process handling)."""

    def __init__(self, argv: Sequence[str], name: str, port: int, log: Path) -> None:
        from pytest_grounding.detectors.vllm_server import LaunchPlan, ServerProcess

        self.process = ServerProcess(LaunchPlan(tuple(argv), name, port, None), log)
        self.log = log
        self.command = shlex.join(argv)
        try:
            self.process.wait_ready(600, lambda line: None)
        except BaseException:
            self.process.stop()
            raise
        self.url = self.process.plan.base_url
        self.name = name

    def stop(self) -> None:
        self.process.stop()


def start_vllm(model: Path, preset: str, max_pixels: int | None, out: Path, options: str = "") -> Server:
    from pytest_grounding.detectors.vllm_server import free_port, launch_plan
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    port = free_port()
    extra = dict(o.split("=", 1) for o in options.split(",") if o)
    plan = launch_plan(
        str(model),
        resolve_preset(preset, **({"max_pixels": max_pixels} if max_pixels else {}), **extra),
        port=port,
        server=str(VLLM_PYTHON),
        server_args=f"{VLLM_ARGS} --dtype float32",
    )
    return Server(plan.argv, plan.served_name, port, out / "openai-vllm-server.log")


def start_transformers(model: Path, out: Path) -> Server:
    from pytest_grounding.detectors.vllm_server import free_port

    port = free_port()
    argv = [str(TF_SERVE), "serve", str(model), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    return Server(argv, model.name, port, out / "transformers-server.log")


def spec_of(
    path: str,
    model: Path,
    preset: str,
    max_pixels: int | None,
    gguf: Path | None,
    server: Server | None,
    options: str = "",
    shrunk: Path | None = None,
) -> str:
    common = (
        f"preset={preset}" + (f",max_pixels={max_pixels}" if max_pixels else "") + (f",{options}" if options else "")
    )
    if path == "inprocess":
        return f"qwenvl:model={model},{common}"
    if path in ("vllm-f32", "vllm-auto"):
        flags = VLLM_ARGS + (" --dtype float32" if path == "vllm-f32" else "")
        return f"vllm:model={model},{common},server={VLLM_PYTHON},server_args='{flags}'"
    if path in SHRUNK:
        assert shrunk is not None
        probe = ",probe=false" if path == "vllm-shrunk-unprobed" else ""
        flags = f"{VLLM_ARGS} --dtype float32"
        return f"vllm:model={shrunk},{common}{probe},server={VLLM_PYTHON},server_args='{flags}'"
    if path in ("openai-vllm", "transformers"):
        assert server is not None
        named = f",model={server.name}" if path == "openai-vllm" else ""
        return f"openai:base_url={server.url}{named},{common}"
    assert gguf is not None
    name = "model.gguf" if path == "llamacpp-f16" else "model-Q8_0.gguf"
    return f"llamacpp:model={gguf / name},{common},server={LLAMA_SERVER}"


def suite_run(spec: str, dataset: Path | str, out: Path, label: str, workers: int) -> tuple[Path, float, str]:
    folder = out / label
    command = [sys.executable, "-m", "pytest", "suites/", "-p", "no:cacheprovider", "-q", "--dataset", str(dataset)]
    command += ["--detector", spec, "--grounding-json", str(folder / "report.json")]
    command += ["--grounding-predictions", str(folder / "predictions.jsonl"), "--basetemp", str(out / "tmp" / label)]
    # a frame the check names is a finding of the table's, never a stopped run: warn keeps every click
    command += ["--grounding-frame-check=warn"]
    command += ["-n", str(workers)] if workers > 1 else ["-n", "0"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - started
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "output.txt").write_text(done.stdout + "\n" + done.stderr)
    if done.returncode not in (0, 1):
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
        said = " ".join(tail).replace(f"--detector {spec}: ", "")  # the row names its path
        return folder, seconds, f"exit status {done.returncode}: {said[:300]}"
    return folder, seconds, ""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def facts_of(
    path: str, workers: int, spec: str, folder: Path, seconds: float, reference: Path | None, server: Server | None
) -> Facts:
    from pytest_grounding.analysis.compare import methods_from_reports, paired

    report = json.loads((folder / "report.json").read_text())
    (block,) = report["summary"].values()
    (info,) = report["run"]["detectors"].values()
    delta = delta_ci = None
    if reference is not None:
        documents = [("inprocess", json.loads(reference.read_text())), (path, report)]
        methods, _ = methods_from_reports(documents)
        found = paired(methods[0], methods[1])
        if found.difference is not None:
            delta = found.difference.delta
            delta_ci = (found.difference.low, found.difference.high)
    dtype = info.get("dtype")
    command = ((info.get("server") or {}).get("command") or "") if isinstance(info.get("server"), Mapping) else ""
    log = ((info.get("server") or {}).get("log") or "") if isinstance(info.get("server"), Mapping) else ""
    if server is not None:
        command, log = server.command, str(server.log)
    if not dtype and log:
        logged = Path(log).expanduser()
        dtype = dtype_of(logged.read_text(errors="replace")) if logged.is_file() else None
    dtype = dtype or dtype_of(command)
    engine = info.get("engine") or {}
    weights = (engine.get("settings") or {}).get("model_ftype") if isinstance(engine, Mapping) else None
    probe, frame = checks_of(report, served=not spec.startswith("qwenvl:"), probed="probe=false" not in spec)
    ci = block.get("ci95")
    return Facts(
        path=path,
        workers=workers,
        spec=spec,
        accuracy=block.get("accuracy"),
        hits=int(block.get("hits") or 0),
        scored=int(block.get("scored") or 0),
        ci95=(ci[0], ci[1]) if isinstance(ci, (list, tuple)) and len(ci) == 2 else None,
        delta=delta,
        delta_ci=delta_ci,
        dtype=dtype,
        weights=str(weights) if weights else None,
        probe=probe,
        frame_check=frame,
        seconds=round(seconds, 1),
    )


def floors(dataset: Path | str, out: Path) -> dict[str, float]:
    """center's and random's accuracy on the same screens (one run of both)."""
    folder = out / "floors"
    command = [sys.executable, "-m", "pytest", "suites/", "-p", "no:cacheprovider", "-q", "--dataset", str(dataset)]
    command += ["--detector", "center", "--detector", "random", "--grounding-json", str(folder / "report.json")]
    command += ["--basetemp", str(out / "tmp" / "floors"), "-n", "0"]
    subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    try:
        report = json.loads((folder / "report.json").read_text())
    except (OSError, ValueError):
        return {}
    return {name.split(":")[0]: float(block.get("accuracy") or 0.0) for name, block in report["summary"].items()}


def wanted(paths: Sequence[str]) -> list[tuple[str, int]]:
    out = []
    for item in paths:
        name, _, suffix = item.partition("/")
        if name not in PATHS or suffix not in ("", "n2"):
            raise SystemExit(f"parity: unknown path {item!r}: one of {', '.join(PATHS)}, each with an optional /n2")
        out.append((name, 2 if suffix else 1))
    if ("inprocess", 1) not in out:
        out.insert(0, ("inprocess", 1))  # the reference
    return sorted(out, key=lambda p: (PATHS.index(p[0]), p[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a checkpoint train_pointer.py wrote (pointer.json in it)")
    parser.add_argument("--count", type=int, default=40, help="held-back screens of the four sizes (40)")
    parser.add_argument("--dataset", help="another dataset the harness reads (a folder or a name) instead")
    parser.add_argument("--preset", help="the preset (default: what pointer.json names)")
    parser.add_argument("--max-pixels", type=int, help="the pixel budget (default: what pointer.json names)")
    parser.add_argument("--options", help="more detector options, k=v,k=v (default: what pointer.json names)")
    parser.add_argument("--docs-block", help="the named table to write (markers <!-- parity:NAME:start -->)")
    parser.add_argument(
        "--out", type=Path, default=Path("grounding-runs") / "parity", help="where the runs and the table go"
    )
    parser.add_argument("--paths", nargs="+", default=DEFAULT_PATHS)
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/engines.md")
    args = parser.parse_args(argv)
    stamped, budget, stamped_options = recipe(args.model)
    preset, max_pixels = args.preset or stamped, args.max_pixels or budget
    options = stamped_options if args.options is None else args.options
    if preset is None:
        print(
            f"parity: {args.model} has no pointer.json (python ci/engines/train_pointer.py {args.model}): "
            "name its --preset",
            file=sys.stderr,
        )
        return 2
    os.environ.update(ENGINE_ENV)
    step, step_words = (10.0, "one step (10 of 1000)") if rel1000(preset) else (PIXEL_STEP, f"{PIXEL_STEP} px")
    runs = wanted(args.paths)
    args.out.mkdir(parents=True, exist_ok=True)
    dataset = args.dataset or write_screens(args.out / "screens", args.count)
    (args.out / "tmp").mkdir(exist_ok=True)
    started = time.monotonic()
    import fcntl
    import tempfile

    lock = open(Path(tempfile.gettempdir()) / "pytest-grounding-engines.lock", "w")  # noqa: SIM115
    fcntl.flock(lock, fcntl.LOCK_EX)  # one engine user at a time on the machine (the suite's lock)
    gguf, gguf_error = None, ""
    if any(name.startswith("llamacpp") for name, _ in runs):
        try:
            gguf = gguf_dir(args.model, args.out)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:  # those rows say so
            gguf_error = str(exc)[:300]
    results: list[tuple[Facts, list[dict[str, Any]] | None]] = []
    reference_report = None
    servers: dict[str, Server] = {}
    refused: dict[str, str] = {}
    try:
        for index, (name, workers) in enumerate(runs):
            label = name + ("-n2" if workers > 1 else "")
            if name in ("openai-vllm", "transformers") and name not in servers and name not in refused:
                try:
                    servers[name] = (
                        start_vllm(args.model, preset, max_pixels, args.out, options)
                        if name == "openai-vllm"
                        else start_transformers(args.model, args.out)
                    )
                except Exception as exc:  # a server that does not start: that path's rows say so
                    refused[name] = f"server did not start: {exc}"[:300]
            server = servers.get(name)
            if name in refused:
                results.append((Facts(name, workers, "", error=refused[name]), None))
                continue
            if name.startswith("llamacpp") and gguf is None:
                results.append((Facts(name, workers, "", error=f"no GGUF: {gguf_error}"), None))
                continue
            shrunk = shrunk_copy(args.model, args.out, max_pixels or 100_000) if name in SHRUNK else None
            spec = spec_of(name, args.model, preset, max_pixels, gguf, server, options, shrunk)
            print(f"parity: {label}: {spec}", flush=True)
            folder, seconds, error = suite_run(spec, dataset, args.out, label, workers)
            if error or not (folder / "predictions.jsonl").is_file():
                results.append(
                    (Facts(name, workers, spec, seconds=round(seconds, 1), error=error or "no predictions"), None)
                )
                print(f"parity: {label}: {error}", flush=True)
                continue
            facts = facts_of(name, workers, spec, folder, seconds, reference_report, server)
            if name == "inprocess" and workers == 1:
                reference_report = folder / "report.json"
            results.append((facts, read_jsonl(folder / "predictions.jsonl")))
            print(f"parity: {label}: {_pct(facts.accuracy)} in {seconds:.0f} s", flush=True)
            if name in servers and all(n != name for n, _ in runs[index + 1 :]):
                servers.pop(name).stop()  # its last run
    finally:
        for server in servers.values():
            server.stop()
        lock.close()
    reference = next((records for facts, records in results if facts.path == "inprocess" and facts.workers == 1), None)
    if reference is None:
        print("parity: the in-process run gave no records: nothing to compare with", file=sys.stderr)
        return 1
    found = rows(reference, results, step)
    bases = floors(dataset, args.out)
    reports = [
        str(args.out / (f.path + ("-n2" if f.workers > 1 else "")) / "report.json") for f, r in results if r is not None
    ]
    compared = subprocess.run(
        [sys.executable, "-m", "pytest_grounding", "compare", "--markdown", *reports],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    (args.out / "compare.md").write_text(compared.stdout + compared.stderr)
    seconds = time.monotonic() - started
    screens = str(args.dataset) if args.dataset else f"{args.count} held-back screens of train_pointer's four sizes"
    floors_words = ", ".join(f"{k} {_pct(v)}" for k, v in sorted(bases.items()))
    header = {
        "command": command_line(args),
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "screens": f"{screens}; floors on them: {floors_words}",
        "seconds": f"{seconds / 60:.0f} minutes in all",
    }
    block = docs_block(found, step_words, header, twins(results, step))
    (args.out / "parity.md").write_text(block)
    document = {
        "model": str(args.model),
        "preset": preset,
        "max_pixels": max_pixels,
        "floors": bases,
        "seconds": round(seconds, 1),
        "rows": [
            {
                "path": r.facts.path,
                "workers": r.facts.workers,
                "spec": r.facts.spec,
                "accuracy": r.facts.accuracy,
                "hits": r.facts.hits,
                "scored": r.facts.scored,
                "delta": r.facts.delta,
                "dtype": r.facts.dtype,
                "weights": r.facts.weights,
                "error": r.facts.error,
                "seconds": r.facts.seconds,
                "pairing": None
                if r.pairing is None
                else {**r.pairing.__dict__, "token_offsets": {str(k): v for k, v in r.pairing.token_offsets.items()}},
                "reason": r.reason,
            }
            for r in found
        ],
    }
    (args.out / "parity.json").write_text(json.dumps(document, indent=1))
    print(block)
    if args.write_docs:
        docs = ROOT / "docs" / "engines.md"
        docs.write_text(replace_block(docs.read_text(), block, args.docs_block))
        print(f"parity: the table written into {docs}")
    return 0


def command_line(args: argparse.Namespace) -> str:
    """The command that made the table, the model named MODEL_DIR and the output folder left out."""
    words = ["python", "ci/engines/parity.py", "MODEL_DIR"]
    words += ["--dataset", str(args.dataset)] if args.dataset else ["--count", str(args.count)]
    words += ["--preset", args.preset] if args.preset else []
    words += ["--max-pixels", str(args.max_pixels)] if args.max_pixels else []
    words += ["--options", args.options] if args.options is not None else []
    if args.paths != DEFAULT_PATHS:
        words += ["--paths", *args.paths]
    words += ["--docs-block", args.docs_block] if args.docs_block else []
    return shlex.join([*words, *(["--write-docs"] if args.write_docs else [])])


def rel1000(preset: str) -> bool:
    """Whether the preset answers in 0-1000 of the image (one step: 10), not in pixels."""
    from pytest_grounding.detectors.vlm.presets import resolve_preset

    return "rel1000" in str(resolve_preset(preset).transform)


def machine() -> str:
    cores = os.cpu_count() or 0
    try:
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        model = "a CPU"
    return f"{cores} CPU cores ({model}), no GPU"


if __name__ == "__main__":
    raise SystemExit(main())
