"""Parity runs: one feature family's whole run serially and with `-n 2`, the two JSON documents equal
apart from timings and the fields that name how the run was spread (workers, per-worker shares).
These stand for the xdist twins of the scenarios whose code path distribution does not change
(tests/helpers.py: SERIAL); the scenarios whose path it does change keep their twin (XDIST)."""

import json

import pytest
from paced_server import paced_server

from helpers import FIXTURES, make_project, read_json

MINI = str(FIXTURES / "mini")
ERRATA = [
    {"id": "m01", "action": "fix", "bbox": [70, 50, 90, 70], "reason": "the box was on another element"},
    {"id": "m02", "action": "drop", "reason": "ambiguous"},
]
# Fields that differ between two runs of the same samples however they are spread: wall clock,
# latencies, rates, the machine's state, and the names of the workers.
VOLATILE = ("time", "latency", "seconds", "duration", "started", "finished", "elapsed", "rate", "date", "wall")


def timing(key):
    key = key.lower()
    return (
        key.endswith(("_ms", "_s", "_per_s"))
        or key in ("ms", "s", "throughput")
        or any(word in key for word in VOLATILE)
    )


def stable(value, key=""):
    """The document with the volatile fields left out and its lists of records in a fixed order."""
    if isinstance(value, dict):
        return {k: stable(v, k) for k, v in value.items() if not timing(k) and k not in DISTRIBUTION}
    if isinstance(value, list):
        items = [stable(v, key) for v in value]
        if items and all(isinstance(v, dict) for v in items):
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return value


# How the run was spread, said on purpose: the command line, the worker count, each process's
# served figures (how many requests each sent, its peak concurrency, the screens each encoded once
# and reused) and whether a budget was shared.
DISTRIBUTION = {
    "args", "workers", "worker", "xdist_worker", "per_worker", "processes",
    "concurrency_reached", "screens_encoded", "screens_reused",
}  # fmt: skip


def both_ways(pytester, tmp_path, *args, cache=False):
    documents = []
    for mode, workers in (("serial", []), ("xdist", ["-n", "2"])):
        report = tmp_path / f"{mode}.json"
        own_cache = ["--grounding-cache", str(tmp_path / f"cache-{mode}")] if cache else []
        result = pytester.runpytest_subprocess(*args, *own_cache, "--grounding-json", str(report), *workers)
        assert report.is_file(), result.stdout.str()[-3000:]
        documents.append(read_json(report))
    return documents


def differences(left, right, path="$"):
    """The paths where two documents differ (a readable failure, not two whole documents)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return [
            d
            for key in sorted(set(left) | set(right))
            for d in differences(left.get(key), right.get(key), f"{path}.{key}")
        ]
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [d for i, (a, b) in enumerate(zip(left, right, strict=True)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if left == right else [f"{path}: {json.dumps(left)[:160]} != {json.dumps(right)[:160]}"]


def assert_same(serial, xdist):
    found = differences(stable(serial), stable(xdist))
    assert not found, "\n".join(found[:40])


@pytest.fixture
def paced():
    model, server = paced_server(latency=0.0)
    yield model, server
    server.close()


@pytest.mark.parity  # slow: two pytest processes per family
def test_a_served_run_with_epochs_sweep_cache_errata_frame_check_and_budget_is_the_same_under_xdist(
    pytester, paced, tmp_path
):
    pytest.importorskip("httpx")
    pytest.importorskip("ui_tars")
    _, server = paced
    make_project(pytester)
    errata = tmp_path / "errata.jsonl"
    errata.write_text("".join(json.dumps(row) + "\n" for row in ERRATA))
    spec = f"openai:base_url={server.url},model=paced,preset=uitars-1.5-point,retries=0"
    serial, xdist = both_ways(
        pytester,
        tmp_path,
        f"--dataset={MINI}",
        "--detector",
        spec,
        "--detector",
        "center",
        "--grounding-epochs",
        "2",
        "--grounding-perturb",
        "invert",
        f"--grounding-errata={errata}",
        "--grounding-frame-check=warn",
        "--grounding-budget=requests=1000",
        cache=True,
    )
    # each family is in the document, with figures
    assert serial["summary"][spec]["epochs"]["epochs"] == 2
    assert serial["summary"][spec]["robustness"]["variants"]
    assert serial["summary"][spec]["cache"]["stored"] > 0
    assert serial["errata"]["detectors"]["center"]["corrected_n"] == 5
    assert serial["frame_check"][spec]["requests"] == 12
    assert serial["budget"]["limits"] == {"requests": 1000}
    assert_same(serial, xdist)


@pytest.mark.parity
@pytest.mark.parametrize("task", ["grounding", "locate"])
def test_a_run_of_labelled_local_detectors_with_a_gate_is_the_same_under_xdist(project, tmp_path, task):
    serial, xdist = both_ways(
        project,
        tmp_path,
        f"--dataset={MINI}",
        "--detector",
        "colour:label=paint",
        "--detector",
        "center",
        "--grounding-task",
        task,
        "--grounding-min-accuracy=0.3",
        "--grounding-misses=xfail",
    )
    assert serial["run"]["settings"]["task"] == task and len(serial["summary"]) == 2
    assert serial["gates"], serial.keys()
    assert_same(serial, xdist)


def test_the_comparison_sees_a_changed_outcome_and_not_a_timing():
    document = {"samples": [{"id": "a", "outcome": "hit", "latency_ms": 3.0}, {"id": "b", "outcome": "miss"}]}
    other = json.loads(json.dumps(document))
    other["samples"].reverse()
    other["samples"][0]["latency_ms"] = 9.0
    assert differences(stable(document), stable(other)) == []
    other["samples"][0]["outcome"] = "hit"
    assert differences(stable(document), stable(other))
