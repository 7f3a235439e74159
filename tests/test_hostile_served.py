"""Issue 29, served frames: a served Qwen2.5-VL preset never sends more pixels than the server's
processor keeps as they are (12,845,056 by default), unless server_max_pixels says otherwise."""

import pytest

from helpers import LoopbackServer, decode_data_url, needs_openai

pytest.importorskip("PIL")

from PIL import Image

from pytest_grounding.core.types import Query

BUDGET = 12_845_056


@pytest.fixture
def server():
    running = LoopbackServer(lambda handler: (200, {"data": [{"id": "m"}]}))
    yield running
    running.close()


def sent_pixels(detector, size):
    body = detector.request_body(Query(image=Image.new("RGB", size, "white"), instruction="x"))
    image = decode_data_url(body["messages"][-1]["content"][0]["image_url"]["url"])
    return image.width * image.height


@pytest.mark.slow
@needs_openai
def test_a_served_qwen25_preset_stays_within_the_processor_budget(server):
    from pytest_grounding.detectors.served import OpenAIDetector

    default = OpenAIDetector(base_url=server.url, model="m", preset="qwen2.5-vl")
    assert sent_pixels(default, (7680, 2160)) <= BUDGET
    assert default.describe()["server_max_pixels"] == BUDGET
    larger = OpenAIDetector(base_url=server.url, model="m", preset="qwen2.5-vl", server_max_pixels=20_000_000)
    assert BUDGET < sent_pixels(larger, (7680, 2160)) <= 20_000_000
    assert sent_pixels(default, (1280, 720)) == 1288 * 728  # a small screen: unchanged (multiples of 28)
