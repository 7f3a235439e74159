"""The fixtures a suite uses: `grounding_detector` (loaded once per process) and `grounding_check`
(predict or locate, score, record, and turn the outcome into the item's)."""

from __future__ import annotations

from typing import Any

import pytest

from ..core.record import Outcome, Record
from ..evaluate.runner import explain as explain_record
from .common.pool import DetectorLoadError
from .common.wire import RECORD
from .compat.benchmark_compat import BENCHMARK_GROUP
from .sessions import is_worker, worker_of
from .worker.baseline_hooks import judge_miss, junit_properties


class GroundingSampleError(Exception):
    """A sample that could not be scored (unreadable image, detector crash): an error, not a miss."""


class GroundingMiss(pytest.fail.Exception):  # type: ignore[name-defined]
    """A miss: the item fails with the explanation as its whole report (no traceback: the run's
    hook keeps only the frame that raised it, so pytest does not inspect ~25 frames per miss)."""


class GroundingExpectedMiss(pytest.xfail.Exception):  # type: ignore[name-defined]
    """A miss under --grounding-misses xfail (its report as short as a miss's)."""


@pytest.fixture
def grounding_detector(request, grounding_detector_name: str) -> Any:
    """The detector for this item, loaded once per worker (before the first item: a load failure
    stops the run there; here only for a detector that was not loaded then)."""
    try:
        return worker_of(request.config).pool.get(grounding_detector_name)
    except DetectorLoadError as exc:
        request.session.shouldstop = f"grounding: {exc}"
        raise GroundingSampleError(str(exc)) from None


@pytest.fixture
def grounding_check(request):
    """check(sample, detector): predict (or, with --grounding-task locate, find the element at the
    recorded click), score, record; fails the item on a miss (or xfails it when gates decide),
    reports an error for a sample that could not be scored."""
    worker = worker_of(request.config)
    settings = worker.plan.settings
    evaluator = worker.evaluator
    measure = _benchmark_available(request)

    def check(sample, detector, name: str | None = None) -> Record:
        params = getattr(request.node, "callspec", None)
        name = str(
            name
            or (params.params.get("grounding_detector_name") if params else None)
            or getattr(detector, "name", type(detector).__name__)
        )
        used: dict[str, Any] = {}

        def around(fn):
            # Asked for only when a prediction is really timed, so a sample that errs before it
            # leaves pytest-benchmark no unused fixture to warn about.
            benchmark = used["benchmark"] = request.getfixturevalue("benchmark")
            benchmark.group = BENCHMARK_GROUP
            return benchmark.pedantic(fn, rounds=1, iterations=1)

        prefetching = worker.pipeline
        prefetched = prefetching.take(request.node, sample, detector, name) if prefetching is not None else None
        # started ahead by the pipeline: the request's own time, no benchmark round
        result = prefetched or evaluator.run(sample, detector, name, around=around if measure else None)
        record = result.record
        roots = [
            d.path if d.path.is_dir() else d.path.parent for d in worker.plan.catalog.all() if d.name == sample.dataset
        ]

        def explain(record: Record) -> str:  # paths relative to the dataset's folder: JUnit XML is shared
            return explain_record(record, roots)

        if "benchmark" in used:
            used["benchmark"].extra_info.update({k: v for k, v in record.items() if k != "meta"})
        request.node.user_properties.append((RECORD, record))
        request.node.user_properties.extend(junit_properties(record, roots))
        outcome = record["outcome"]
        if outcome == Outcome.ERROR:
            detail = f"\n\n{result.traceback}" if result.traceback else ""
            raise GroundingSampleError(explain(record) + detail)
        if outcome in (Outcome.MISS, Outcome.WRONG_FORMAT):
            if settings.verdict.baseline_path is not None:
                judge_miss(settings.verdict.baseline_path, worker.judged, record, explain(record))
            if settings.verdict.misses == "xfail":
                raise GroundingExpectedMiss(explain(record))
            raise GroundingMiss(explain(record), pytrace=False)
        return record

    return check


def _benchmark_available(request) -> bool:
    """pytest-benchmark can really measure: not under xdist (it switches itself off there) and not
    with --benchmark-skip (which would skip every sample) or --benchmark-disable."""
    config = request.config
    if is_worker(config) or not config.pluginmanager.hasplugin("benchmark"):
        return False
    return not (config.getoption("benchmark_skip", False) or config.getoption("benchmark_disable", False))
