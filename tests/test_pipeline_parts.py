"""plugin/worker/pipeline_parts.py: a batch gathered from several items, and the reused threads that run
the evaluations."""


def test_a_failing_query_in_a_prefetched_batch_loses_no_other_answer():
    """The pipeline's batch keeps each query's own outcome (detectors.batching.BatchError): one
    query that fails is that sample's error, the others keep their predictions."""
    import threading

    from pytest_grounding.core.types import Prediction
    from pytest_grounding.detectors.batching import BatchError
    from pytest_grounding.plugin.worker.pipeline import BatchGroup

    class HalfBroken:
        batch_size = 3

        def predict(self, query):
            return self.predict_batch([query])[0]

        def predict_batch(self, queries):
            outcomes = [ValueError("no answer") if q == "bad" else Prediction(point=(1.0, 2.0)) for q in queries]
            if any(isinstance(o, Exception) for o in outcomes):
                raise BatchError(outcomes)
            return outcomes

    group = BatchGroup(HalfBroken(), [0, 1, 2], threading.Lock())
    results: dict[int, object] = {}

    def ask(index, query):
        try:
            results[index] = group.member(index).predict(query)
        except Exception as exc:
            results[index] = exc

    threads = [threading.Thread(target=ask, args=(i, q)) for i, q in enumerate(["a", "bad", "c"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert isinstance(results[1], ValueError)
    assert results[0] == results[2] == Prediction(point=(1.0, 2.0))
    assert group.sizes == [3]


def test_the_pipeline_threads_are_reused_grow_only_when_all_are_busy_and_end_on_close():
    """Evaluations run on a few reused daemon threads (not one new thread per item): as many as
    ever ran at once, so a job never waits for a thread; close() ends them after their jobs."""
    import threading

    from pytest_grounding.plugin.worker.pipeline import Workers

    workers = Workers()
    release, ran = threading.Event(), []
    for i in range(3):  # three held at once: three threads
        workers.submit(lambda i=i: (release.wait(5), ran.append(i)))
    assert workers.count == 3
    release.set()
    deadline = threading.Event()
    while len(ran) < 3 and not deadline.wait(0.01):
        pass

    def all_idle():  # a thread counts itself idle just after its job: up to 5 s on a busy machine
        for _ in range(500):
            if workers.idle == 3:
                return
            deadline.wait(0.01)

    all_idle()
    for _ in range(20):  # one at a time afterwards: no new thread
        done = threading.Event()
        workers.submit(done.set)
        assert done.wait(5)
        all_idle()
    assert workers.count == 3
    names = {t.name for t in threading.enumerate() if t.name.startswith("grounding-prefetch-")}
    assert len(names) >= 3 and all(t.daemon for t in threading.enumerate() if t.name in names)
    workers.close()
    for thread in [t for t in threading.enumerate() if t.name in names]:
        thread.join(5)
        assert not thread.is_alive()
