"""The default run's published figures reproduce: `benchmarks/bench_default.py --check` runs
`pytest suites/` once and compares the README's summary example (fingerprint, accuracy, hits and the
tables) and every other published figure of that run with what the code produces now; then the same
check on a report whose figures were changed must fail and name what differs."""

import json
import subprocess
import sys

import pytest

from helpers import REPO

# The published figures are the default detector's, `ocr`, which needs its extra.
for _module in ("rapidfuzz", "rapidocr", "onnxruntime"):
    pytest.importorskip(_module)

SCRIPT = REPO / "benchmarks" / "bench_default.py"


def check(*args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--check", *args], cwd=REPO, capture_output=True, text=True, timeout=3600
    )


@pytest.mark.slow
def test_the_published_default_run_is_what_the_code_produces(tmp_path):
    done = check("--keep", str(tmp_path))
    assert done.returncode == 0, f"{done.stderr[-4000:]}\n{done.stdout[-2000:]}"
    document = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    block = document["summary"]["ocr"]
    fingerprint = document["run"]["datasets"][0]["fingerprint"]
    assert f"fingerprint {fingerprint}" in (REPO / "README.md").read_text(encoding="utf-8")

    # The check can fail: one more hit in the report is a README line that no longer matches.
    block["hits"] += 1
    block["misses"] -= 1
    block["accuracy"] = block["hits"] / block["scored"]
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(document), encoding="utf-8")
    done = check("--report", str(changed))
    assert done.returncode == 1, done.stderr[-3000:]
    assert "README.md:" in done.stderr and "docs/getting-started.md:" in done.stderr
    hits = block["hits"]
    assert f"+  samples {block['samples']}   hits {hits}   misses {block['misses']}" in done.stderr
    assert f"-  samples {block['samples']}   hits {hits - 1}   " in done.stderr
