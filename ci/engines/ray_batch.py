"""Run a `--grounding-batch-out` requests file through Ray Data's HTTP processor
(`ray.data.llm.HttpRequestProcessorConfig`) against an OpenAI-compatible endpoint, and write an
OpenAI Batch output file that `replay:path=RESULTS,requests=FILE` scores.

    RAY_PYTHON ci/engines/ray_batch.py REQUESTS RESULTS --base-url http://HOST:PORT/v1 \
        [--concurrency N] [--qps Q] [--batch-size B] [--max-retries R] [--timeout S] \
        [--api-key-env NAME] [--address auto] [--resume]

RAY_PYTHON is a Python with `ray[data]`, pydantic and aiohttp (`bash ci/engines/install.sh ray`
makes one in $GROUNDING_ENGINES_DIR/ray). With no --address, `ray.init()` starts a local Ray on
this machine and stops it at the end; `--address auto` joins a running cluster (then REQUESTS must
be readable by its workers: a shared path). Ray's usage statistics are off unless
RAY_USAGE_STATS_ENABLED is set.

Each line's `body` reaches the server as the harness wrote it, and each answer comes back as the
server sent it, with its status code. Ray Data keeps rows as Arrow tables, and Arrow gives every
dict in a list the union of their keys (a text part would gain `"image_url": null`), so the body
travels as JSON text, and a session of our own (`session_factory`, a documented field of the
config) posts that text and returns the response's text and status; the stage's `payload` and
`http_response` columns are the ones Ray's HTTP stage documents. A status of 200 is a result; any
other status is that line's `response` with its status (`replay` names it as the sample's error);
Ray's own retries (429, 408, 502, 503, 504; `--max-retries`) come first. `--resume` keeps the
200 lines of an existing RESULTS file and sends only the others."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report to Ray's servers unless asked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requests", type=Path, help="the --grounding-batch-out file")
    parser.add_argument("results", type=Path, help="the OpenAI Batch output file to write")
    parser.add_argument("--base-url", required=True, help="the endpoint's base URL, as the openai detector's (…/v1)")
    parser.add_argument("--concurrency", type=int, default=1, help="HTTP workers (Ray actors; 1)")
    parser.add_argument("--qps", type=int, default=None, help="at most Q requests a second per worker")
    parser.add_argument("--batch-size", type=int, default=16, help="rows per HTTP batch (16)")
    parser.add_argument("--max-retries", type=int, default=2, help="Ray's retries of 429/408/5xx and lost connections")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per request (600)")
    parser.add_argument("--api-key-env", default=None, help="the NAME of the variable holding the API key")
    parser.add_argument("--address", default=None, help="a running Ray cluster (auto); none: a local ray.init()")
    parser.add_argument("--resume", action="store_true", help="keep RESULTS' 200 lines; send only the others")
    args = parser.parse_args(argv)

    order, url = _read_index(args.requests)
    kept = _kept(args.results, order) if args.resume else {}
    todo = len(order) - len(kept)
    headers = {}
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            print(f"ray_batch: --api-key-env {args.api_key_env}: the variable is not set", file=sys.stderr)
            return 2
        headers["Authorization"] = f"Bearer {key}"
    endpoint = args.base_url.rstrip("/") + (url[3:] if url.startswith("/v1/") else url)

    started = time.monotonic()
    answered = _run(args, endpoint, headers, set(kept)) if todo else []
    rows = dict(kept)
    for row in answered:
        rows[row["custom_id"]] = _batch_line(row["custom_id"], int(row["status"]), row["text"])
    args.results.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.results.with_name(args.results.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for custom_id in order:
            if custom_id in rows:
                out.write(json.dumps(rows[custom_id]) + "\n")
    tmp.replace(args.results)
    bad = sum(1 for row in rows.values() if (row.get("response") or {}).get("status_code") != 200)
    print(
        f"ray_batch: {len(answered)} sent, {len(kept)} kept, {bad} not 200, {len(order) - len(rows)} missing: "
        f"{args.results} ({time.monotonic() - started:.1f} s in all)"
    )
    return 0 if len(rows) == len(order) else 1


def _read_index(requests: Path) -> tuple[list[str], str]:
    """The requests' custom_ids in file order, and their one URL (the file is read here once, line
    by line; Ray reads it again as text)."""
    order: list[str] = []
    urls = set()
    with requests.open(encoding="utf-8") as handle:
        for text in handle:
            if text.strip():
                line = json.loads(text)
                order.append(line["custom_id"])
                urls.add(line.get("url", "/v1/chat/completions"))
    if len(urls) > 1:
        raise SystemExit(f"ray_batch: {requests}: lines for several URLs ({sorted(urls)}): one processor posts to one")
    return order, urls.pop() if urls else "/v1/chat/completions"


def _kept(results: Path, order: list[str]) -> dict[str, dict[str, Any]]:
    if not results.is_file():
        return {}
    wanted = set(order)
    kept = {}
    for text in results.read_text(encoding="utf-8").splitlines():
        row = json.loads(text) if text.strip() else {}
        if row.get("custom_id") in wanted and (row.get("response") or {}).get("status_code") == 200:
            kept[row["custom_id"]] = row
    return kept


def _run(args: argparse.Namespace, endpoint: str, headers: dict[str, str], skip: set[str]) -> list[dict[str, Any]]:
    import aiohttp
    import ray
    from ray.data.llm import HttpRequestProcessorConfig, build_processor

    timeout = args.timeout

    class KeptResponse(aiohttp.ClientResponse):
        """`json()` is what Ray's HTTP stage files under `http_response`: here the status and the
        text as they came (no Arrow re-typing of the answer either)."""

        async def json(self, *_: Any, **__: Any) -> dict[str, Any]:
            return {"status": self.status, "text": await self.text()}

    class VerbatimSession:
        """The session Ray's HTTP stage posts through: its payload is the body's JSON text, sent as it is."""

        async def __aenter__(self) -> VerbatimSession:
            self.session = aiohttp.ClientSession(
                response_class=KeptResponse, timeout=aiohttp.ClientTimeout(total=timeout)
            )
            return self

        async def __aexit__(self, *exc: Any) -> None:
            await self.session.close()

        def post(self, url: str, *, data: str, **kwargs: Any) -> Any:
            return self.session.post(url, data=json.loads(data).encode(), **kwargs)

    def parse(row: dict[str, Any]) -> dict[str, Any]:
        line = json.loads(row["text"])
        return {"custom_id": line["custom_id"], "payload": json.dumps(line["body"])}

    # before the processor: building it starts Ray itself (its usage telemetry) if none is up
    started = time.monotonic()
    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    up = time.monotonic()
    config = HttpRequestProcessorConfig(
        url=endpoint,
        headers=headers or None,
        qps=args.qps,
        max_retries=args.max_retries,
        batch_size=args.batch_size,
        concurrency=args.concurrency,
        session_factory=VerbatimSession,
    )
    try:
        processor = build_processor(
            config,
            postprocess=lambda row: {
                "custom_id": row["custom_id"],
                "status": row["http_response"]["status"],
                "text": row["http_response"]["text"],
            },
        )
        data = ray.data.read_text(str(args.requests.resolve())).map(parse)
        if skip:
            data = data.filter(lambda row: row["custom_id"] not in skip)
        rows = processor(data).take_all()
        took = time.monotonic() - up
        print(f"ray_batch: Ray up in {up - started:.1f} s, {len(rows)} requests through Ray Data in {took:.1f} s")
        return rows
    finally:
        ray.shutdown()


def _batch_line(custom_id: str, status: int, text: str) -> dict[str, Any]:
    """One OpenAI Batch output line (the API's and `vllm run_batch`'s shape)."""
    try:
        body = json.loads(text)
    except ValueError:
        return {
            "id": None,
            "custom_id": custom_id,
            "response": None,
            "error": {"message": f"status {status}: {text[:300]}"},
        }
    return {
        "id": f"batch_req_{custom_id}",
        "custom_id": custom_id,
        "response": {"status_code": status, "request_id": None, "body": body},
        "error": None,
    }


if __name__ == "__main__":
    sys.exit(main())
