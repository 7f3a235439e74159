"""A served detector's HTTP figures (analysis/throughput.py): requests in flight reached,
requests, retries, overloads and cut answers, merged over the run's processes; as one section.
They are the detector's description's (`run.detectors[spec].served`), not the summary's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from ..analysis.throughput import SUMMED, served_line
from ..analysis.tracked import _numbers
from ._render import md_table
from .base import RUN, DetectorView, Section

HEADER = ["detector", "in flight reached", "concurrency", "requests", "retries", "overloads", "cuts"]


def served_of(document: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    info = ((document.get("run") or {}).get("detectors") or {}).get(key) or {}
    found = info.get("served")
    return found if isinstance(found, Mapping) else None


class Served(Section):
    name = "served"
    title = "Served throughput"
    level = RUN  # in the detectors' descriptions (run.detectors), not in the summary
    order = 55
    not_in: ClassVar[Mapping[str, str]] = {
        "schema": "the figures are part of a detector's describe() (run.detectors[spec].served), which the "
        "report schema leaves open to every detector's own keys"
    }

    def terminal(self, view: DetectorView) -> list[str]:
        served = (view.info or {}).get("served")
        return [served_line(served)] if isinstance(served, Mapping) else []

    def markdown(self, document: Mapping[str, Any]) -> list[str]:
        rows = []
        for key in document.get("summary") or {}:
            served = served_of(document, key)
            if served is not None:
                rows.append(
                    [
                        key,
                        served.get("concurrency_reached", 0),
                        served.get("concurrency"),
                        served.get("requests", 0),
                        served.get("retries", 0),
                        served.get("overloads", 0),
                        served.get("cuts", 0),
                    ]
                )
        return ["### Served throughput", "", *md_table(HEADER, rows)] if rows else []

    def metrics(self, document: Mapping[str, Any], key: str) -> Iterable[tuple[str, float]]:
        served = served_of(document, key) or {}
        keys = (*SUMMED, "concurrency", "concurrency_reached")
        return _numbers("served", {k: served.get(k) for k in keys})

    def example(self) -> Mapping[str, Any]:
        from . import testing as _examples

        served = {"concurrency": 8, "concurrency_reached": 4, "requests": 12, "retries": 1, "overloads": 0, "cuts": 0}
        return {
            **_examples.document(_examples.plain(), self),
            "run": {"detectors": {_examples.KEY: {"served": served}}},
        }


SECTION = Served()
