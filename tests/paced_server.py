"""A paced OpenAI-compatible loopback model for the pipeline tests and bench_served: each request
takes `latency` seconds, at most `capacity` at once (more get 503, or wait with `queue=True`), the
in-flight peak and every request counted. Its answer depends on the instruction and the image it
received only (never the ground truth), so answers swapped between items would show."""

import hashlib
import json
import threading
import time

from helpers import LoopbackServer


class PacedModel:
    def __init__(self, latency=0.0, capacity=64, overload_status=None):
        self.latency = latency
        self.capacity = capacity
        self.overload_status = overload_status  # e.g. 429: refuse past `capacity` instead of queueing
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(capacity)
        self.in_flight = 0
        self.peak = 0
        self.chats = []  # the instruction texts, in arrival order
        self.refused = 0
        self.fail_next = 0  # the next n chats answer with `overload_status`, whatever the load
        self.first = self.last = None  # wall clock (time.time) of the first chat's start, the last's end
        self.first_sample = None  # wall clock of the first chat that is not the frame check's calibration

    def reset(self, settle=30.0):
        """Forget the chats so far, once the requests still in flight have ended: a killed or
        interrupted run's last requests finish in the server after the run exits, and would count
        against the next run (their chats are appended when their answer is made)."""
        deadline = time.monotonic() + settle
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.02)
        with self.lock:
            self.chats.clear()

    def reply(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length)) if length else None
        if handler.path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "paced", "object": "model"}]}
        with self.lock:
            if self.fail_next > 0 or (self.overload_status and self.in_flight >= self.capacity):
                self.fail_next = max(0, self.fail_next - 1)
                self.refused += 1
                return self.overload_status or 429, {"error": {"message": "slow down"}}
        with self.slots:
            with self.lock:
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
                if self.first is None:
                    self.first = time.time()
                parts = body["messages"][-1]["content"]
                texts = (
                    [part.get("text", "") for part in parts if isinstance(part, dict)]
                    if isinstance(parts, list)
                    else []
                )
                if self.first_sample is None and not any("Click the red square." in text for text in texts):
                    self.first_sample = time.time()
            try:
                time.sleep(self.latency)
                content = body["messages"][-1]["content"]
                text = next(part["text"] for part in content if part["type"] == "text")
                image = next(part["image_url"]["url"] for part in content if part["type"] == "image_url")
                digest = hashlib.sha256((text + image[-64:]).encode()).digest()
                x, y = digest[0] * 4 + digest[1] % 4, digest[2] * 4 + digest[3] % 4  # within 1024
                with self.lock:
                    self.chats.append(text)
            finally:
                with self.lock:
                    self.in_flight -= 1
                    self.last = time.time()
        return 200, {
            "id": "c",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": f"({x},{y})"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
        }


def paced_server(**kwargs):
    model = PacedModel(**kwargs)
    return model, LoopbackServer(model.reply)
