"""Token usage and cost (pure): the price option, a record's usage, the sums per detector, the
cost of the run and per 1,000 samples, the summary lines, and a cropping strategy's sum of its calls."""

import pytest
from PIL import Image

from pytest_grounding.analysis.cost import Price, document, lines, parse_price, summarize, usd
from pytest_grounding.core.types import Prediction, Query
from pytest_grounding.core.usage import add_usage, usage_of


def record(detector="served", prompt=None, completion=None, total=None, **usage):
    counts = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total, **usage}
    counts = {k: v for k, v in counts.items() if v is not None}
    return {"detector": detector, "outcome": "hit", "meta": {"usage": counts} if counts else {}}


def test_a_price_is_prompt_and_completion_per_million():
    assert parse_price("prompt=0.3, completion=1.2", "--grounding-price") == Price(0.3, 1.2)
    assert parse_price(" completion=0,prompt=2 ", "x") == Price(2.0, 0.0)
    assert parse_price(None, "x") is None and parse_price("", "x") is None


@pytest.mark.parametrize(
    "text, message",
    [
        ("prompt=0.3", "completion missing"),
        ("0.3,1.2", "'0.3' is not KEY=VALUE"),
        ("prompt=0.3,completion=1.2,cached=0.1", "unknown key 'cached'"),
        ("prompt=-1,completion=1", "prompt=-1 must be a finite number >= 0"),
        ("prompt=cheap,completion=1", "prompt='cheap' is not a number"),
        ("prompt=nan,completion=1", "must be a finite number"),
        ("prompt=1,prompt=2,completion=1", "prompt given twice"),
    ],
)
def test_a_bad_price_says_what_and_where(text, message):
    with pytest.raises(ValueError, match=message) as caught:
        parse_price(text, "ini grounding_price")
    assert str(caught.value).startswith("ini grounding_price: ")


def test_usage_of_a_record_reads_openai_and_other_names():
    assert usage_of(record(prompt=200, completion=7, total=207)) == {
        "prompt_tokens": 200,
        "completion_tokens": 7,
        "total_tokens": 207,
    }
    assert usage_of(record(input_tokens=50, output_tokens=5)) == {
        "prompt_tokens": 50,
        "completion_tokens": 5,
        "total_tokens": 55,
    }
    assert usage_of(record()) is None
    assert usage_of({"meta": {"usage": "lots"}}) is None
    assert usage_of({"meta": {"usage": {"total_tokens": 9}}}) is None  # cannot be priced
    assert usage_of({"meta": {"usage": {"prompt_tokens": True, "completion_tokens": -3}}}) is None


def test_sums_per_detector_and_cost_of_the_run_and_per_thousand():
    records = [record(prompt=200, completion=7, total=207) for _ in range(3)]
    records += [record(detector="local"), record(prompt=1000, completion=0, detector="other")]
    price = Price(0.3, 1.2)
    blocks = summarize(records, price)
    served = blocks["served"]
    assert (served["samples"], served["with_usage"]) == (3, 3)
    assert (served["prompt_tokens"], served["completion_tokens"], served["total_tokens"]) == (600, 21, 621)
    assert served["cost_usd"] == pytest.approx((600 * 0.3 + 21 * 1.2) / 1e6)
    assert served["cost_per_1000_samples_usd"] == pytest.approx((600 * 0.3 + 21 * 1.2) / 1e6 / 3 * 1000)
    assert blocks["local"]["with_usage"] == 0 and blocks["local"]["cost_usd"] is None
    assert blocks["other"]["cost_usd"] == pytest.approx(0.0003)
    # without a price: only detectors that reported usage, no cost
    unpriced = summarize(records, None)
    assert set(unpriced) == {"served", "other"} and unpriced["served"]["cost_usd"] is None
    assert document(unpriced, None)["price"] is None
    assert document({}, None) is None
    assert document(blocks, price)["price"] == {"prompt_per_million_usd": 0.3, "completion_per_million_usd": 1.2}


def test_the_sums_do_not_depend_on_the_order_of_the_records():
    records = [record(prompt=p, completion=c) for p, c in [(101, 3), (7, 11), (123456, 9), (1, 1)]]
    price = Price(0.15, 0.6)
    assert summarize(records, price) == summarize(list(reversed(records)), price)


def test_the_summary_lines():
    price = Price(0.5, 2.0)
    records = [record(prompt=200, completion=7, total=207) for _ in range(5)] + [record()]
    block = summarize(records, price)["served"]
    assert lines(block, price) == [
        "  tokens  prompt 1,000  completion 35  total 1,035  (per sample 200 + 7.0; usage of 5 of 6 samples)",
        "  cost    $0.00057 for this run, $0.114 per 1,000 samples (prompt $0.5, completion $2 per million tokens)",
    ]
    assert lines(summarize(records[:1], None)["served"], None) == [
        "  tokens  prompt 200  completion 7  total 207  (per sample 200 + 7.0; 1 sample)"
    ]
    none = summarize([record()], price)["served"]
    assert lines(none, price) == [
        "  tokens  none reported (only served detectors report usage): the run cannot be priced"
    ]
    assert lines(None, price) == []
    assert usd(1234.5) == "$1,234.50" and usd(0) == "$0" and usd(0.0123456) == "$0.0123"


def test_add_usage():
    assert add_usage(None, None) is None
    assert add_usage(None, {"prompt_tokens": 3, "completion_tokens": 1}) == {
        "prompt_tokens": 3,
        "completion_tokens": 1,
        "total_tokens": 4,
    }
    total = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    assert add_usage(total, None) == total
    assert add_usage(total, {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12})["total_tokens"] == 16


class Served:
    """Answers the centre of whatever it is shown and reports usage that grows with the image."""

    name = "served"

    def __init__(self):
        self.calls = []

    def predict(self, query):
        width, height = query.image.size
        self.calls.append((width, height))
        usage = {"prompt_tokens": width * height // 1000, "completion_tokens": 5, "total_tokens": 0}
        usage["total_tokens"] = usage["prompt_tokens"] + 5
        return Prediction(point=(width / 2, height / 2), raw="(x,y)", meta={"usage": usage})


def test_a_cropping_strategy_sums_the_usage_of_every_call():
    from pytest_grounding.detectors.strategies.wrappers import Regrounding

    inner = Served()
    strategy = Regrounding(inner, size=512)
    prediction = strategy.predict(Query(Image.new("RGB", (2000, 1000)), "anything"))
    assert inner.calls == [(2000, 1000), (512, 512)]  # the screen, then the crop around the answer
    expected_prompt = 2000 * 1000 // 1000 + 512 * 512 // 1000
    assert prediction.meta["attempts"] == 2
    assert prediction.meta["usage"] == {
        "prompt_tokens": expected_prompt,
        "completion_tokens": 10,
        "total_tokens": expected_prompt + 10,
    }
    assert prediction.meta["inner"]["usage"]["prompt_tokens"] == 512 * 512 // 1000  # the last call's own
