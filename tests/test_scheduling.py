"""plugin/controller/scheduling.py: the prefetch scheduler's rules (a worker's window, chunks to a screen's
end, refills that end the workers together), without xdist."""


def test_the_xdist_window_comes_from_the_spec_without_loading_the_detector():
    from pytest_grounding.detectors import builtin_registry
    from pytest_grounding.detectors.strategies import builtin_registry as strategies
    from pytest_grounding.plugin.common.specs import SpecBook
    from pytest_grounding.plugin.controller.scheduling import declared_window

    def window(spec):
        return declared_window(spec, SpecBook(builtin_registry(), strategies()))

    assert window("openai:base_url=http://127.0.0.1:9/v1,concurrency=12") == 12
    assert window("openai:base_url=http://127.0.0.1:9/v1") == 32  # auto, its default maximum
    assert window("openai:base_url=http://127.0.0.1:9/v1,concurrency=auto,max_concurrency=50") == 50
    assert window("center") == 1


def test_an_xdist_chunk_ends_with_its_screen_and_grows_by_at_most_the_spill():
    from pytest_grounding.plugin.controller.scheduling import SCREEN_SPILL, to_screen_end

    screens = ["a", "a", "a", "b", "b", "c", None, None, "d"]
    pending = list(range(len(screens)))
    assert to_screen_end(pending, 2, screens) == 3  # the rest of screen a
    assert to_screen_end(pending, 3, screens) == 3  # already at a screen's end
    assert to_screen_end(pending, 4, screens) == 5
    assert to_screen_end(pending, 7, screens) == 7  # unknown screens are never joined
    assert to_screen_end(pending, 0, screens) == 0 and to_screen_end(pending, 20, screens) == 9
    assert to_screen_end([4, 5, 3], 1, screens) == 1  # what is pending, in its order
    one_screen = ["s"] * 100
    assert to_screen_end(list(range(100)), 10, one_screen) == 10 + SCREEN_SPILL


def test_xdist_refills_keep_a_window_and_end_the_workers_together():
    from pytest_grounding.plugin.controller.scheduling import refill

    assert refill(40, 32, 100, [40, 40]) == 0  # a window in flight and the running item: enough
    assert refill(33, 32, 100, [33, 60]) == 31  # refilled to two windows
    assert refill(0, 32, 1, [0, 5]) == 1  # a worker with nothing gets something while items are left
    assert refill(3, 32, 0, [3, 3]) == 0
    assert refill(20, 32, 30, [20, 40]) == 25  # to its even share of what is left, 45, not 64

    def tail(total: int) -> int:
        """Two workers taking an item each per step, refilled after each (as check_schedule is):
        how far apart their queues are when the last item is sent."""
        pending, queues = total - 74, [37, 37]  # LoadScheduling's first quarter, split
        while pending:
            for node in (0, 1):
                queues[node] -= 1
                sent = refill(queues[node], 32, pending, queues)
                queues[node] += sent
                pending -= sent
        return abs(queues[0] - queues[1])

    # a whole refill to one worker just before the end would leave it up to a window more
    assert max(tail(total) for total in range(200, 400, 7)) <= 2
