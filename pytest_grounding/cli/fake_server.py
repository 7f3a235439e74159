"""`python -m pytest_grounding fake-server`: the stand-in OpenAI-compatible server of
detectors/fake_server.py on the loopback, until Ctrl-C; it prints its URL and the detector spec
that runs against it."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

DESCRIPTION = (
    "A stand-in OpenAI-compatible server on 127.0.0.1 for dry runs and CI examples: /v1/models lists one model "
    "(fake/PRESET), /v1/chat/completions answers the centre of the image it is sent, in the preset's answer form "
    "and coordinates (the center floor over HTTP: accuracy near 0, never a misread answer); with --frame it finds the "
    "square of the colour a request names (the frame check's, fixtures/mini's) and answers in that frame instead (a "
    "frame error the check before the run and the diagnosis after it name). Prints its URL, then "
    "serves until Ctrl-C. Exit 0 on Ctrl-C; 2 for a bad option or a port in use."
)


def add_command(commands: Any) -> None:
    fake = commands.add_parser(
        "fake-server", help="a stand-in OpenAI-compatible server for dry runs", description=DESCRIPTION
    )
    fake.add_argument("--port", type=int, default=0, metavar="N", help="the port (default: a free one)")
    fake.add_argument("--preset", default="uitars-1.5-point", metavar="NAME", help="answer as this preset's model")
    fake.add_argument("--model", default=None, metavar="ID", help="the model id it lists (default fake/PRESET)")
    fake.add_argument("--delay", type=float, default=0.0, metavar="S", help="seconds before each answer")
    fake.add_argument("--errors", type=float, default=0.0, metavar="RATE", help="share of requests answered HTTP 500")
    fake.add_argument("--cut", type=float, default=0.0, metavar="RATE", help="share of answers cut short (length)")
    fake.add_argument("--seed", type=int, default=0, help="seed of which requests fail or are cut")
    fake.add_argument(
        "--frame",
        default=None,
        metavar="NAME",
        help="play a model with a frame error: answer the square of the colour a request names (the frame "
        "check's red square, fixtures/mini's squares; the centre otherwise) in this frame: as-preset, rel1000, "
        "rel1, swapped, resized-by-server:max_pixels=N (or :long_edge=L, :scale=S), offset:DX,DY (docs: why it "
        "misses)",
    )


def run(args: argparse.Namespace) -> int:
    from ..core.registry import UnknownName
    from ..core.safetext import terminal_line
    from ..detectors.fake_server import FakeServer

    try:
        server = FakeServer(
            preset=args.preset,
            model=args.model,
            delay=args.delay,
            errors=args.errors,
            cut=args.cut,
            port=args.port,
            seed=args.seed,
            frame=args.frame,
        )
    except (ValueError, UnknownName, OSError) as exc:
        print(f"error: {terminal_line(exc)}", file=sys.stderr)
        return 2
    frame = f" in frame {args.frame}" if args.frame else ""
    print(f"fake-server: {server.url} (model {server.model}, answers as {args.preset}{frame}; Ctrl-C stops it)")
    print(f'  pytest suites/ --detector "openai:base_url={server.url}" --grounding-limit 20', flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print(f"fake-server: stopped after {server.requests} chat requests")
    return 0
