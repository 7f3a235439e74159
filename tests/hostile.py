"""What the hostile-input tests share (docs/security.md says what each class guarantees): the shipped
suite run in a fresh process, the check that nothing crashed, and a served model that always answers."""

import os
import subprocess
import sys

from helpers import REPO

SUITE = (REPO / "suites" / "test_grounding.py").read_text()


def run_suite(folder, *args, env=None, timeout=120):
    """A pytest run of the shipped suite in `folder`, in a fresh process (this checkout's package)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_grounding.py").write_text(SUITE)
    environ = {key: value for key, value in os.environ.items() if key != "GROUNDING_SHARD"}
    environ.update({"PYTHONPATH": str(REPO), **(env or {})})
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_grounding.py", *args]
    return subprocess.run(command, cwd=folder, env=environ, capture_output=True, text=True, timeout=timeout)


def no_crash(result):
    text = result.stdout + result.stderr
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    return text


class OkModel:
    def __init__(self):
        import threading

        from helpers import LoopbackServer

        self.chats = 0
        lock = threading.Lock()

        def reply(handler):
            if handler.path.endswith("/models"):
                return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
            if not handler.path.endswith("/chat/completions"):
                return 404, {"detail": "Not Found"}
            with lock:
                self.chats += 1
            choice = {"index": 0, "message": {"content": "(60,40)"}, "finish_reason": "stop"}
            return 200, {"choices": [choice], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}

        self.server = LoopbackServer(reply)
        self.url = self.server.url
        self.spec = (
            f"openai:base_url={self.url},model=m,"
            "preset=uitars-1.5-point,retries=0,probe=false,preprocess=none,transform=abs"
        )
