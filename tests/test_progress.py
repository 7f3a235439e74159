"""plugin/controller/progress.py: the progress line, at most one per interval and one per quarter of the run."""

from pytest_grounding.plugin.controller.progress import INTERVAL_S, Progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_line_at_each_quarter_and_otherwise_once_per_interval():
    clock = Clock()
    progress = Progress(enabled=True, clock=clock)
    progress.expect(8)
    clock.now += 1
    assert progress.advance("ocr") is None  # 1 of 8: no quarter yet, within the interval
    clock.now += 1
    line = progress.advance("ocr")  # 2 of 8: the first quarter
    assert line is not None and "2/8" in line
    clock.now += INTERVAL_S + 1
    assert progress.advance("ocr", ("gw0", 5)) is not None  # the interval passed
    assert progress.in_flight == {"gw0": 5}


def test_off_counts_but_says_nothing():
    progress = Progress(enabled=False)
    progress.expect(2)
    assert progress.advance("ocr") is None and progress.advance("ocr") is None
    assert progress.done == {"ocr": 2}
