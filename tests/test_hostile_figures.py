"""Issue 29, one definition of a target's size: sqrt(w*h) px, said the same way in every output."""

from pytest_grounding.analysis import figures
from pytest_grounding.analysis.metrics import SIZE_BUCKETS
from pytest_grounding.core.types import Box


def test_the_size_plot_says_sqrt_w_h_as_everything_else_does():
    block = {"by": {"size": [{"value": b, "accuracy": 0.5} for b in SIZE_BUCKETS]}}
    figure = figures.size_figure([("d", block)])
    assert figure is not None
    assert "sqrt(w*h)" in figure.x_label and "shorter" not in figure.x_label
    assert Box(0, 0, 4, 9).side == 6.0  # what the label names
