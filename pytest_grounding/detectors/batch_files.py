"""Request files for batch engines (`--grounding-batch-out FILE`) and their results (`replay:
path=RESULTS,requests=FILE`): the OpenAI Batch JSONL format, which OpenAI's Batch API, `vllm
run_batch`, Ray Data's HTTP processor and LiteLLM's `/v1/batches` all read and write.

Writing: each process that predicts (the only one, or each xdist worker) appends its samples'
lines to a part of its own (`FILE.part-<process>`), one JSON object per sample: the request line
and what the manifest says of the sample. The controller, once every process has ended, joins
the parts in sample order into FILE (request lines only) and writes `FILE.manifest.json` beside it
(the file's sha256, the detector, its preset and options, the datasets' fingerprints, each
sample's id, size and the size it was sent at). Shards write one file each (the shard in its name).

Reading: a results line is `{"custom_id", "response": {"status_code", "body"}, "error"}`; the
body is decoded by the served detector's own code (`served.decode_reply`, in batch_replay.py) in the frame the
manifest names, so a batch run and a live run of the same model give the same records. Pure but
for the files."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import safefile, safejson

URL = "/v1/chat/completions"
MANIFEST_SUFFIX = ".manifest.json"
PART = ".part-"
FORMAT = "pytest-grounding batch requests 1"
MAX_RESULT_BYTES = 2 * 1024**3  # a results file of this size is read line by line, never whole


class BatchError(ValueError):
    """A requests or results file that cannot be used: a usage error naming the file."""


def manifest_path(requests: Path) -> Path:
    return requests.with_name(requests.name + MANIFEST_SUFFIX)


def sharded_path(path: Path, shard: Any) -> Path:
    """One file per shard: `requests.jsonl` -> `requests.shard2of4.jsonl`."""
    if shard is None:
        return path
    return path.with_name(f"{path.stem}.shard{shard.index}of{shard.count}{path.suffix}")


def request_line(custom_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """One OpenAI Batch line: the request a served detector would send, under the sample's uid."""
    return {"custom_id": custom_id, "method": "POST", "url": URL, "body": dict(body)}


# -- writing, in the processes that predict -------------------------------------------------------


@dataclass
class Writer:
    """This process's part of the requests file (one per process; appended, flushed each line)."""

    path: Path  # the requests file the controller will write
    process: str  # "main" or the xdist worker id
    written: int = 0
    described: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def part(self) -> Path:
        return self.path.with_name(f"{self.path.name}{PART}{self.process}")

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.part.write_text("", encoding="utf-8")  # a rerun's part starts empty

    def write(
        self, custom_id: str, body: Mapping[str, Any], entry: Mapping[str, Any], detector: Mapping[str, Any]
    ) -> None:
        """One sample's line; the detector's description once per part, before its first line."""
        text = json.dumps({"line": request_line(custom_id, body), "sample": dict(entry)}, ensure_ascii=False)
        with self.lock, self.part.open("a", encoding="utf-8") as handle:
            if not self.described:
                handle.write(json.dumps({"detector": dict(detector)}, ensure_ascii=False) + "\n")
                self.described = True
            handle.write(text + "\n")
            self.written += 1


def clear_parts(path: Path) -> None:
    """The controller, before any process writes: parts an earlier run left are not this run's."""
    for part in path.parent.glob(f"{path.name}{PART}*"):
        part.unlink(missing_ok=True)


_WRITER: Writer | None = None


def configure(path: Path | None, process: str) -> None:
    """Set (or clear, with None) this process's writer: every process, before any detector is built."""
    global _WRITER
    _WRITER = None if path is None else Writer(path, process)


def writing() -> Writer | None:
    """The writer when this run writes requests instead of sending them (served detectors ask)."""
    return _WRITER


def join_parts(path: Path, order: Sequence[str], extra: Mapping[str, Any]) -> dict | None:
    """The controller, after every process ended: the parts joined into `path` in `order` (custom
    ids; others after them, sorted), the parts removed, the manifest written. Returns the manifest
    (None: no process wrote a line)."""
    parts = sorted(path.parent.glob(f"{path.name}{PART}*"))
    rows: dict[str, dict[str, Any]] = {}
    detector: dict[str, Any] = {}
    for part in parts:
        for text in part.read_text(encoding="utf-8").splitlines():
            if text.strip():
                row = json.loads(text)
                if "detector" in row:
                    detector = row["detector"]
                else:
                    rows[row["line"]["custom_id"]] = row
    if not rows:
        for part in parts:
            part.unlink(missing_ok=True)
        return None
    rank = {custom_id: n for n, custom_id in enumerate(order)}
    ids = sorted(rows, key=lambda c: (rank.get(c, len(rank)), c))
    tmp = path.with_name(path.name + ".tmp")
    digest = hashlib.sha256()
    with tmp.open("wb") as handle:
        for custom_id in ids:
            data = (json.dumps(rows[custom_id]["line"], ensure_ascii=False) + "\n").encode("utf-8")
            digest.update(data)
            handle.write(data)
    os.replace(tmp, path)
    for part in parts:
        part.unlink(missing_ok=True)
    manifest = {
        "format": FORMAT,
        "requests": path.name,
        "sha256": digest.hexdigest(),
        "lines": len(ids),
        "url": URL,
        "detector": detector,
        **dict(extra),
        "samples": [{"custom_id": c, **rows[c]["sample"]} for c in ids],
    }
    manifest_path(path).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def continue_line(path: Path) -> str:
    """Where the requests went and how to score their results."""
    return (
        f"not run here: written to {path} ({manifest_path(path).name} beside it); run it through a batch engine "
        f"(vllm run_batch -i {path.name} -o results.jsonl, or a provider's Batch API), then score the results with "
        f"--detector 'replay:path=results.jsonl,requests={path}' (the same datasets; docs: running across machines)"
    )


# -- reading the results --------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    custom_id: str
    line: int
    body: Any = None  # the chat completion (response.body) when status 200
    problem: str | None = None  # an error line, a status other than 200, a body that is no object


@dataclass(frozen=True)
class Results:
    path: Path
    manifest: Mapping[str, Any]
    by_id: Mapping[str, Result]
    foreign: tuple[str, ...]  # custom ids the requests file does not hold
    samples: Mapping[str, Mapping[str, Any]]  # the manifest's entry per custom id


def read_manifest(requests: Path) -> dict[str, Any]:
    """The manifest beside a requests file, checked against the file (its sha256)."""
    where = manifest_path(requests)
    if not requests.is_file():
        raise BatchError(f"requests file {requests} not found")
    if not where.is_file():
        raise BatchError(f"{where} not found: the manifest --grounding-batch-out writes beside {requests.name}")
    try:
        manifest = safejson.read_path(where)  # a regular file, bounded in size, depth and numbers
    except (OSError, ValueError) as exc:
        raise BatchError(f"{where}: not a manifest ({type(exc).__name__}: {exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BatchError(f"{where}: not a pytest-grounding requests manifest (format {FORMAT!r})")
    try:
        found = safefile.sha256(requests)  # a regular file, in chunks
    except OSError as exc:
        raise BatchError(f"{requests}: {exc.strerror or exc}") from None
    if found != manifest.get("sha256"):
        raise BatchError(
            f"{requests}: its sha256 is not the one {where.name} records: "
            "the requests file changed after it was written"
        )
    return manifest


def read_results(results: Path, requests: Path) -> Results:
    """A results file (OpenAI Batch output, vLLM run_batch's) against the requests it answers.
    Refused (BatchError) when it answers none of the requests: the results of another file."""
    manifest = read_manifest(requests)
    samples = {str(entry["custom_id"]): entry for entry in manifest.get("samples", [])}
    if not results.is_file():
        raise BatchError(f"results file {results} not found")
    if results.stat().st_size > MAX_RESULT_BYTES:
        raise BatchError(f"{results}: larger than {MAX_RESULT_BYTES:,} bytes")
    by_id: dict[str, Result] = {}
    foreign: list[str] = []
    with results.open(encoding="utf-8", errors="replace") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = safejson.loads(text)  # bounded depth and numbers: a hostile line is that line's error
            except ValueError as exc:
                raise BatchError(
                    f"{results} line {number}: not JSON this reader takes ({str(exc)[:120]}): not an OpenAI Batch "
                    "results file"
                ) from None
            if not isinstance(row, dict) or not isinstance(row.get("custom_id"), str):
                raise BatchError(f"{results} line {number}: no custom_id: not an OpenAI Batch results file")
            custom_id = row["custom_id"]
            if custom_id not in samples:
                foreign.append(custom_id)
                continue
            by_id[custom_id] = _result(custom_id, number, row)
    if samples and not by_id:
        first = f" (first: {foreign[0]!r})" if foreign else ""
        raise BatchError(
            f"{results} answers none of the {len(samples)} requests of {requests}{first}: the results of another "
            "requests file"
        )
    model = (manifest.get("detector") or {}).get("model")
    for result in by_id.values():
        answered = result.body.get("model") if isinstance(result.body, dict) else None
        if model and isinstance(answered, str) and answered != model and not model.endswith(answered):
            raise BatchError(
                f"{results} line {result.line}: answered by model {answered!r}; {requests} asks {model!r}: "
                "the results of another requests file"
            )
    return Results(results, manifest, by_id, tuple(foreign), samples)


def _result(custom_id: str, number: int, row: Mapping[str, Any]) -> Result:
    error = row.get("error")
    if error:
        text = error.get("message", error) if isinstance(error, dict) else error
        return Result(custom_id, number, problem=f"the batch engine's error: {str(text)[:300]}")
    response = row.get("response")
    if not isinstance(response, dict):
        return Result(custom_id, number, problem="no response")
    status = response.get("status_code")
    body = response.get("body")
    if status != 200:
        return Result(custom_id, number, problem=f"status {status}: {json.dumps(body)[:300]}")
    if not isinstance(body, dict):
        return Result(custom_id, number, problem="the response's body is not a chat completion")
    return Result(custom_id, number, body=body)


def batch_id(uid: str, epoch: int | None) -> str:
    """A sample's custom_id: its uid (an epoch's own request: uid#eK)."""
    return uid if epoch is None else f"{uid}#e{epoch}"


def sample_entry(sample: Any, size: Sequence[int], sent: Sequence[int], resized: bool) -> dict[str, Any]:
    return {
        "dataset": sample.dataset,
        "id": sample.id,
        "uid": sample.uid,
        "size": list(size),
        "sent": list(sent),
        "image": "resized to sent" if resized else "original (the server resizes it to sent)",
    }


def ids_in_order(samples: Iterable[Any]) -> list[str]:
    return [s.uid for s in samples]
